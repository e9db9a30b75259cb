#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/exploding_tensor.hpp.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/builtin/exploding_tensor.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL exploding_tensor::exploding_tensor(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params, detail::selection_from(params, true)),
      only_nan_(params.get("only_nan", false)) {}

namespace detail::exploding {

// What stored reductions say of NaN and infinity in a value (numpy's propagation, which
// the hook and smdebug follow): every reduction of data holding a NaN is NaN but for the
// abs_ forms that infinities also make NaN; min and max (and their abs_ forms) are infinite
// exactly when an element is; any reduction but min and abs_min is finite only when every
// element is (a NaN propagates, an infinity gives an infinity or a NaN).

constexpr reduction r(reduction_kind k, bool abs = false) noexcept { return reduction{k, abs}; }

/// NaN here: the value holds a NaN.
inline const std::vector<reduction> nan_decides{r(reduction_kind::min),        r(reduction_kind::max),
                                                r(reduction_kind::min, true),  r(reduction_kind::max, true),
                                                r(reduction_kind::mean, true), r(reduction_kind::sum, true),
                                                r(reduction_kind::l1),         r(reduction_kind::l1, true),
                                                r(reduction_kind::l2),         r(reduction_kind::l2, true)};
/// An infinity here: the value holds an infinity.
inline const std::vector<reduction> infinity_decides{r(reduction_kind::min), r(reduction_kind::max),
                                                     r(reduction_kind::min, true), r(reduction_kind::max, true)};
/// NaN or an infinity here: the value holds a NaN or an infinity (their difference, or an overflow
/// of values past the dtype's range, which is an explosion too).
inline const std::vector<reduction> non_finite_decides{r(reduction_kind::mean), r(reduction_kind::sum)};
/// Finite here: every element is.
inline const std::vector<reduction> finite_decides{
    r(reduction_kind::mean),       r(reduction_kind::sum),        r(reduction_kind::std),
    r(reduction_kind::variance),   r(reduction_kind::prod),       r(reduction_kind::l1),
    r(reduction_kind::l2),         r(reduction_kind::mean, true), r(reduction_kind::sum, true),
    r(reduction_kind::max, true),  r(reduction_kind::std, true),  r(reduction_kind::variance, true),
    r(reduction_kind::prod, true), r(reduction_kind::l1, true),   r(reduction_kind::l2, true)};

inline bool among(const std::vector<reduction>& set, reduction x) noexcept {
    return std::find(set.begin(), set.end(), x) != set.end();
}

/// Every reduction that can decide.
inline std::vector<reduction> deciding() {
    std::vector<reduction> out;
    for (bool abs : {false, true}) {
        for (const reduction_kind k : all_reduction_kinds) {
            out.push_back(reduction{k, abs});
        }
    }
    return out;
}

/// A worker's stored reductions: met (with the reason), not met (nullopt inside), or
/// undecided (nullopt).
inline std::optional<std::optional<std::string>> decide(const worker_inputs& w, bool only_nan) {
    for (const auto& [which, x] : w.reductions) {
        const std::string name = reduction_name(which);
        if (std::isnan(x) && among(nan_decides, which)) {
            return std::optional<std::string>(fmt::format("holds a NaN (its stored {} is nan)", name));
        }
        if (!only_nan && std::isinf(x) && among(infinity_decides, which)) {
            return std::optional<std::string>(fmt::format("holds an infinity (its stored {} is {})", name, x));
        }
        if (!only_nan && !std::isfinite(x) && among(non_finite_decides, which)) {
            return std::optional<std::string>(fmt::format("holds a NaN or an infinity (its stored {} is {})", name, x));
        }
    }
    const auto finite = [&](reduction which) {
        const auto x = w.get(which);
        return x && std::isfinite(*x);
    };
    for (const auto& item : w.reductions) {
        if (std::isfinite(item.second) &&
            (among(finite_decides, item.first) || (only_nan && among(nan_decides, item.first)))) {
            return std::optional<std::string>();
        }
    }
    if (finite(r(reduction_kind::min)) && finite(r(reduction_kind::max))) {
        return std::optional<std::string>();
    }
    return std::nullopt;
}

} // namespace detail::exploding

TDBG_DECL std::vector<tensor_request> exploding_tensor::tensor_requests(const tdbg::tensor& t,
                                                                        std::int64_t step) const {
    static const std::vector<reduction> deciding = detail::exploding::deciding();
    return detail::value_or_reductions(t, step, deciding);
}

TDBG_DECL std::optional<verdict> exploding_tensor::check_tensor(const step_inputs& inputs,
                                                                detail::input_range tensor_inputs,
                                                                std::int64_t /*step*/) const {
    const std::string& tensor_name = inputs[tensor_inputs.first].request.name;
    return detail::any_worker(inputs, tensor_inputs, [&](const detail::worker_inputs& w) -> std::optional<verdict> {
        if (w.value != nullptr) {
            if (has_non_finite(*w.value, only_nan_)) {
                return condition_met(fmt::format("{} ({}) holds {}", tensor_name, w.worker_name(),
                                                 only_nan_ ? "a NaN" : "a NaN or an infinity"));
            }
            return verdict(false);
        }
        // Saved as reductions only: decided by them where they can decide.
        const auto decided = detail::exploding::decide(w, only_nan_);
        if (!decided) {
            return std::nullopt;
        }
        if (*decided) {
            return condition_met(
                fmt::format("{} ({}) {}, saved as reductions only", tensor_name, w.worker_name(), **decided));
        }
        return verdict(false);
    });
}

TDBG_DECL rule_description exploding_tensor::describe() {
    return {"A tensor holds NaN or infinite values.",
            "Met at a step when the value of a selected tensor holds a NaN or, unless only_nan, an infinity: "
            "values have exploded (a learning rate too high, a division by zero, an overflow).\n\nWith neither "
            "collection_names nor tensor_regex every tensor is checked. Every worker's value is checked: a NaN on "
            "one rank is an explosion. Only floating-point and complex values can be non-finite.\n\nA tensor saved "
            "as reductions only is decided by them (better than smdebug, which skips it): a NaN in its stored min, "
            "max, abs_min, abs_max, abs_mean, l1 or l2, an infinity in its min, max, abs_min or abs_max, or (unless "
            "only_nan) a non-finite mean or sum meets the condition; a finite mean, sum, std, variance, l1 or l2 "
            "(or a finite min and max) says every element is finite. Where its reductions cannot say (only "
            "abs_min, say), it is not evaluated.",
            detail::selection_parameters(false, {{"only_nan", "False", "True: only NaN values count, not infinities"}}),
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, exploding_tensor)
#endif
