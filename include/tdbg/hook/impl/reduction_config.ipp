#pragma once
/// \file
/// Definitions of tdbg/hook/reduction_config.hpp.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/reduction_config.hpp"

namespace tdbg {

TDBG_DECL reduction_config reduction_config::parse(std::string_view text, bool save_raw_tensor, bool save_shape) {
    reduction_config config;
    config.save_raw_tensor = save_raw_tensor;
    config.save_shape = save_shape;
    for (const reduction r : parse_reduction_list(text)) {
        config.add(r);
    }
    return config;
}

TDBG_DECL reduction_config& reduction_config::add(reduction r) {
    auto& list = r.abs ? (is_norm(r.kind) ? abs_norms : abs_reductions) : (is_norm(r.kind) ? norms : reductions);
    if (std::find(list.begin(), list.end(), r.kind) == list.end()) {
        list.push_back(r.kind);
    }
    return *this;
}

TDBG_DECL std::vector<reduction> reduction_config::all() const {
    std::vector<reduction> out;
    out.reserve(reductions.size() + norms.size() + abs_reductions.size() + abs_norms.size());
    for_each([&](reduction r) { out.push_back(r); });
    return out;
}

TDBG_DECL std::string reduction_config::to_string() const {
    std::string out;
    for (const reduction r : all()) {
        if (!out.empty()) {
            out += ',';
        }
        out += reduction_config_name(r);
    }
    return out;
}

TDBG_DECL void reduction_config::validate() const {
    const auto check = [](const std::vector<reduction_kind>& list, bool norms_wanted, const char* what) {
        for (const reduction_kind k : list) {
            if (is_norm(k) != norms_wanted) {
                throw config_error(fmt::format("reduction_config.{}: '{}' is not allowed there (expected {})", what,
                                               reduction_kind_name(k),
                                               norms_wanted ? "l1 or l2" : "min, max, mean, std, variance, sum or prod"));
            }
        }
    };
    check(reductions, false, "reductions");
    check(abs_reductions, false, "abs_reductions");
    check(norms, true, "norms");
    check(abs_norms, true, "abs_norms");
}

} // namespace tdbg
