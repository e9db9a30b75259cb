#pragma once
/// \file
/// smdebug's ReductionConfig: which reductions of a tensor the hook saves, and
/// whether it also saves the raw tensor and its shape.

#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
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
    [[nodiscard]] static TDBG_DECL reduction_config parse(std::string_view text, bool save_raw_tensor = false,
                                                          bool save_shape = false);

    /// Adds one reduction to the list smdebug keeps it in (norms apart); a repeat is ignored.
    TDBG_DECL reduction_config& add(reduction r);

    /// Every reduction, in the order smdebug computes and writes them:
    /// reductions, norms, abs_reductions, abs_norms.
    [[nodiscard]] TDBG_DECL std::vector<reduction> all() const;

    /// Calls `f(reduction)` for each reduction in all()'s order, without building the list.
    template <class F>
    void for_each(F&& f) const {
        for (const reduction_kind k : reductions) {
            f(reduction{k, false});
        }
        for (const reduction_kind k : norms) {
            f(reduction{k, false});
        }
        for (const reduction_kind k : abs_reductions) {
            f(reduction{k, true});
        }
        for (const reduction_kind k : abs_norms) {
            f(reduction{k, true});
        }
    }

    /// True when no reduction is asked for.
    [[nodiscard]] bool no_reductions() const noexcept {
        return reductions.empty() && abs_reductions.empty() && norms.empty() && abs_norms.empty();
    }

    /// The spelling of collection files: "min,max,l2_norm,abs_mean".
    [[nodiscard]] TDBG_DECL std::string to_string() const;

    /// Throws config_error when a norm sits in a reduction list or the other way round.
    TDBG_DECL void validate() const;

    friend bool operator==(const reduction_config& a, const reduction_config& b) {
        return a.reductions == b.reductions && a.abs_reductions == b.abs_reductions && a.norms == b.norms &&
               a.abs_norms == b.abs_norms && a.save_raw_tensor == b.save_raw_tensor && a.save_shape == b.save_shape;
    }
    friend bool operator!=(const reduction_config& a, const reduction_config& b) { return !(a == b); }
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/hook/impl/reduction_config.ipp"
#endif
