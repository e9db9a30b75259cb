#pragma once
/// \file
/// smdebug's ReductionConfig: which reductions of a tensor the hook saves, and
/// whether it also saves the raw tensor and its shape.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"

namespace tdbg {

/// smdebug's ReductionConfig. `reductions` and `abs_reductions` take min, max,
/// mean, std, variance, sum and prod; `norms` and `abs_norms` take l1 and l2.
/// A default-constructed config saves nothing, as smdebug's does; the hook's
/// own default (no config given) is `raw_only()`.
struct reduction_config {
    std::vector<reduction_kind> reductions;
    std::vector<reduction_kind> abs_reductions;
    std::vector<reduction_kind> norms;
    std::vector<reduction_kind> abs_norms;
    bool save_raw_tensor = false;
    bool save_shape = false;

    /// The raw tensor and nothing else: what the hook saves when no reduction config is given.
    [[nodiscard]] static reduction_config raw_only() {
        reduction_config config;
        config.save_raw_tensor = true;
        return config;
    }

    /// Parses smdebug's comma-separated spelling ("min, abs_max,l2_norm,abs_l1_norm");
    /// spaces around items and empty items are ignored. Throws config_error naming the bad item.
    [[nodiscard]] static reduction_config parse(std::string_view text, bool save_raw_tensor = false,
                                                bool save_shape = false) {
        reduction_config config;
        config.save_raw_tensor = save_raw_tensor;
        config.save_shape = save_shape;
        std::size_t start = 0;
        while (start <= text.size()) {
            std::size_t end = text.find(',', start);
            if (end == std::string_view::npos) {
                end = text.size();
            }
            std::string_view item = text.substr(start, end - start);
            while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
                item.remove_prefix(1);
            }
            while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
                item.remove_suffix(1);
            }
            if (!item.empty()) {
                const auto r = parse_reduction(item);
                if (!r) {
                    throw config_error("unknown reduction '" + std::string(item) +
                                       "' (expected min, max, mean, std, variance, sum, prod, l1_norm or l2_norm, "
                                       "each optionally prefixed with abs_)");
                }
                config.add(*r);
            }
            start = end + 1;
        }
        return config;
    }

    /// Adds one reduction to the list smdebug keeps it in (norms apart); a repeat is ignored.
    reduction_config& add(reduction r) {
        auto& list = r.abs ? (is_norm(r.kind) ? abs_norms : abs_reductions) : (is_norm(r.kind) ? norms : reductions);
        if (std::find(list.begin(), list.end(), r.kind) == list.end()) {
            list.push_back(r.kind);
        }
        return *this;
    }

    /// Every reduction, in the order smdebug computes and writes them:
    /// reductions, norms, abs_reductions, abs_norms.
    [[nodiscard]] std::vector<reduction> all() const {
        std::vector<reduction> out;
        for (auto k : reductions) {
            out.push_back({k, false});
        }
        for (auto k : norms) {
            out.push_back({k, false});
        }
        for (auto k : abs_reductions) {
            out.push_back({k, true});
        }
        for (auto k : abs_norms) {
            out.push_back({k, true});
        }
        return out;
    }

    /// True when no reduction is asked for.
    [[nodiscard]] bool no_reductions() const noexcept {
        return reductions.empty() && abs_reductions.empty() && norms.empty() && abs_norms.empty();
    }

    /// The spelling of collection files: "min,max,l2_norm,abs_mean".
    [[nodiscard]] std::string to_string() const {
        std::string out;
        for (const reduction r : all()) {
            if (!out.empty()) {
                out += ',';
            }
            out += reduction_config_name(r);
        }
        return out;
    }

    /// Throws config_error when a norm sits in a reduction list or the other way round.
    void validate() const {
        auto check = [](const std::vector<reduction_kind>& list, bool norms_wanted, const char* what) {
            for (auto k : list) {
                if (is_norm(k) != norms_wanted) {
                    throw config_error(std::string("reduction_config.") + what + ": '" +
                                       std::string(reduction_kind_name(k)) + "' is not allowed there (expected " +
                                       (norms_wanted ? "l1 or l2" : "min, max, mean, std, variance, sum or prod") +
                                       ")");
                }
            }
        };
        check(reductions, false, "reductions");
        check(abs_reductions, false, "abs_reductions");
        check(norms, true, "norms");
        check(abs_norms, true, "abs_norms");
    }

    friend bool operator==(const reduction_config& a, const reduction_config& b) {
        return a.reductions == b.reductions && a.abs_reductions == b.abs_reductions && a.norms == b.norms &&
               a.abs_norms == b.abs_norms && a.save_raw_tensor == b.save_raw_tensor && a.save_shape == b.save_shape;
    }
    friend bool operator!=(const reduction_config& a, const reduction_config& b) { return !(a == b); }
};

} // namespace tdbg
