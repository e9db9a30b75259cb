#pragma once
/// \file
/// Definitions of tdbg/reduce/compute.hpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/partial.hpp"

namespace tdbg {

TDBG_DECL std::vector<reduction> parse_reduction_list(std::string_view text) {
    std::vector<reduction> out;
    const auto trim = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
            s.remove_prefix(1);
        }
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
            s.remove_suffix(1);
        }
        return s;
    };
    if (trim(text).empty()) {
        return out;
    }
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item = trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        const auto r = parse_reduction(item);
        if (!r) {
            throw config_error("unknown reduction \"" + std::string(item) + "\" in \"" + std::string(text) +
                               "\": expected min, max, mean, std, variance, sum, prod, l1, l2 (norms also as "
                               "l1_norm, l2_norm), each optionally with the prefix abs_");
        }
        out.push_back(*r);
        if (comma == std::string_view::npos) {
            return out;
        }
        start = comma + 1;
    }
}

TDBG_DECL std::vector<tensor_value> compute_reductions(const tensor_value& value, const std::vector<reduction>& which,
                                                      const reduce::options& opts) {
    std::vector<tensor_value> out;
    if (which.empty()) {
        return out;
    }
    out.reserve(which.size());
    visit_dtype(value.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            throw dtype_mismatch("reduction " + reduction_name(which.front()) +
                                 " needs a numeric tensor, found a str tensor");
        } else {
            const auto partial = reduce::accumulate(value.data_as<T>(), value.size(), which, opts);
            for (const reduction r : which) {
                out.push_back(partial.result(r));
            }
        }
    });
    return out;
}

TDBG_DECL tensor_value compute_reduction(const tensor_value& value, reduction r) {
    return std::move(compute_reductions(value, std::vector<reduction>{r}).front());
}

} // namespace tdbg
