#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/unchanged_tensor.hpp.

#include <cstddef>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/builtin/unchanged_tensor.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL unchanged_tensor::unchanged_tensor(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params, detail::required_selection_from(params, rule_name)),
      num_steps_(params.get<std::int64_t>("num_steps", 3, at_least(2))), rtol_(params.get("rtol", 1e-05, non_negative)),
      atol_(params.get("atol", 1e-08, non_negative)), equal_nan_(params.get("equal_nan", false)) {}

TDBG_DECL std::vector<tensor_request> unchanged_tensor::tensor_requests(const tdbg::tensor& t,
                                                                        std::int64_t step) const {
    std::vector<tensor_request> out;
    const std::vector<std::int64_t> prev = t.prev_steps(step, static_cast<std::size_t>(num_steps_));
    if (prev.empty() || prev.back() != step || prev.size() < static_cast<std::size_t>(num_steps_)) {
        return out; // not evaluated: fewer than num_steps steps so far, or none at this step
    }
    for (const std::string& worker : detail::workers_at(t, step)) {
        for (const std::int64_t s : prev) {
            tensor_request r = value_request(t.name(), s, true);
            r.worker = worker;
            out.push_back(std::move(r));
        }
    }
    return out;
}

TDBG_DECL std::optional<verdict>
unchanged_tensor::check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const {
    // num_steps inputs per worker, the steps in order.
    const auto per_worker = static_cast<std::size_t>(num_steps_);
    bool evaluated = false;
    for (std::size_t first = tensor_inputs.first; first + per_worker <= tensor_inputs.last; first += per_worker) {
        std::vector<const tensor_value*> values;
        try {
            for (std::size_t k = first; k < first + per_worker; ++k) {
                values.push_back(&detail::value_of(inputs, inputs[k]));
            }
        } catch (const tensor_unavailable_for_step&) {
            continue;
        } catch (const invalid_worker&) {
            continue; // this worker did not write one of the steps
        }
        evaluated = true;
        windows_.add();
        bool same = true;
        for (std::size_t i = 1; i < values.size() && same; ++i) {
            same = allclose(*values[i], *values[i - 1], rtol_, atol_, equal_nan_);
        }
        if (same) {
            const tensor_request& oldest = inputs[first].request;
            return condition_met(
                fmt::format("{} ({}) unchanged over steps {}..{}", oldest.name, *oldest.worker, oldest.step, step));
        }
    }
    if (!evaluated) {
        return std::nullopt;
    }
    return verdict(false);
}

TDBG_DECL comparison_coverage unchanged_tensor::comparisons() const {
    const std::uint64_t windows = windows_.get();
    return {windows, fmt::format("{} window{} of {} saved steps", windows, windows == 1 ? "" : "s", num_steps_)};
}

TDBG_DECL rule_description unchanged_tensor::describe() {
    return {
        "A tensor stopped changing over its last saved steps.",
        "Met at a step when a selected tensor's values at the last num_steps steps where it was saved (this "
        "one included, not necessarily consecutive) are all close to each other, as numpy.allclose judges with "
        "rtol, atol and equal_nan: weights that no longer learn, a layer that is stuck.\n\nGive "
        "collection_names or tensor_regex (or both). Steps of every mode count. A tensor saved at fewer than "
        "num_steps steps so far is not evaluated. Strings must be equal; a changed shape is a change. Each "
        "worker is compared with itself.",
        detail::selection_parameters(true, {{"num_steps", "3", "how many saved steps must agree (at least 2)"},
                                            {"rtol", "1e-05", "relative tolerance of the comparison"},
                                            {"atol", "1e-08", "absolute tolerance of the comparison"},
                                            {"equal_nan", "False", "True: NaNs in the same places count as equal"}}),
        step_dependence::earlier_steps};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, unchanged_tensor)
#endif
