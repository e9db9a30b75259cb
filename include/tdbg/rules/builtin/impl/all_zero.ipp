#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/all_zero.hpp.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/builtin/all_zero.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL all_zero::all_zero(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params, detail::required_selection_from(params, rule_name)),
      threshold_(params.get("threshold", 100.0, non_negative)) {}

namespace detail::all_zeros {

constexpr reduction r(reduction_kind k, bool abs = false) noexcept { return reduction{k, abs}; }

/// The stored reductions that can say a value is all zeros, has none, or is not all zeros.
inline const std::vector<reduction> deciding{
    r(reduction_kind::min),        r(reduction_kind::max),      r(reduction_kind::min, true),
    r(reduction_kind::max, true),  r(reduction_kind::l1),       r(reduction_kind::l1, true),
    r(reduction_kind::l2),         r(reduction_kind::l2, true), r(reduction_kind::sum, true),
    r(reduction_kind::mean, true), r(reduction_kind::sum),      r(reduction_kind::mean)};

/// A worker's stored reductions: the percentage of zeros where they say it (100 or 0), a
/// percentage below 100 where they say only that (-1), or nullopt.
inline std::optional<double> zeros_percent(const worker_inputs& w) {
    const auto is = [&](reduction which, auto&& test) {
        const auto x = w.get(which);
        return x && test(*x);
    };
    const auto zero = [](double x) { return x == 0.0; };
    const auto nonzero = [](double x) { return x != 0.0; }; // a NaN element is not a zero
    // All zeros: its largest magnitude, or a norm, is 0; or its min and max are.
    if (is(r(reduction_kind::max, true), zero) || is(r(reduction_kind::l1), zero) ||
        is(r(reduction_kind::l1, true), zero) || is(r(reduction_kind::l2), zero) ||
        is(r(reduction_kind::l2, true), zero) || is(r(reduction_kind::sum, true), zero) ||
        is(r(reduction_kind::mean, true), zero) ||
        (is(r(reduction_kind::min), zero) && is(r(reduction_kind::max), zero))) {
        return 100.0;
    }
    // No zeros: the smallest magnitude is above 0, or every element is on one side of it.
    if (is(r(reduction_kind::min, true), [](double x) { return x > 0.0; }) ||
        is(r(reduction_kind::min), [](double x) { return x > 0.0; }) ||
        is(r(reduction_kind::max), [](double x) { return x < 0.0; })) {
        return 0.0;
    }
    // Not all zeros.
    for (const reduction which : deciding) {
        if (is(which, nonzero)) {
            return -1.0;
        }
    }
    return std::nullopt;
}

} // namespace detail::all_zeros

TDBG_DECL std::vector<tensor_request> all_zero::tensor_requests(const tdbg::tensor& t, std::int64_t step) const {
    return detail::value_or_reductions(t, step, detail::all_zeros::deciding);
}

TDBG_DECL std::optional<verdict> all_zero::check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs,
                                                        std::int64_t /*step*/) const {
    const std::string& tensor_name = inputs[tensor_inputs.first].request.name;
    return detail::any_worker(inputs, tensor_inputs, [&](const detail::worker_inputs& w) -> std::optional<verdict> {
        if (w.value == nullptr) {
            // Saved as reductions only: decided by them where they can decide.
            const auto percent = detail::all_zeros::zeros_percent(w);
            if (!percent || (*percent < 0.0 && threshold_ < 100.0)) {
                return std::nullopt; // "not all zeros" decides only the default threshold of 100%
            }
            if (*percent >= 0.0 && *percent >= threshold_) {
                return condition_met(fmt::format("{} ({}) is all zeros (its stored reductions say so), at least {:g}%",
                                                 tensor_name, w.worker_name(), threshold_));
            }
            return verdict(false);
        }
        const tensor_value* v = w.value;
        if (v->type() == dtype::string || v->size() == 0) {
            return std::nullopt;
        }
        const double percent = 100.0 * static_cast<double>(count_zeros(*v)) / static_cast<double>(v->size());
        if (percent >= threshold_) {
            return condition_met(fmt::format("{} ({}) is {:.6g}% zeros, at least {:g}%", tensor_name, w.worker_name(),
                                             percent, threshold_));
        }
        return verdict(false);
    });
}

TDBG_DECL rule_description all_zero::describe() {
    return {"A tensor is all (or mostly) zeros.",
            "Met at a step when at least threshold percent of the elements of a selected tensor are exactly zero: "
            "a layer that outputs nothing, weights left at zero, gradients that no longer flow.\n\nGive "
            "collection_names or tensor_regex (or both); the tensors of both are checked, each worker's value. "
            "String and empty values are not evaluated.\n\nA tensor saved as reductions only is decided by them "
            "(better than smdebug, which skips it): an abs_max, l1, l2, abs_sum or abs_mean of 0, or a min and max "
            "of 0, say it is all zeros; an abs_min above 0 (or a min above 0, a max below 0) that it has none; any "
            "of them not 0, that it is not all zeros, which decides the default threshold of 100%. Where they "
            "cannot say, it is not evaluated.",
            detail::selection_parameters(
                true, {{"threshold", "100", "the percentage of zero elements at which the rule is met"}}),
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, all_zero)
#endif
