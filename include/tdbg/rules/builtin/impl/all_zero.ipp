#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/all_zero.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/builtin/all_zero.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL all_zero::all_zero(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, false)),
      threshold_(params.get("threshold", 100.0, non_negative)) {
    if (selection_.unspecified()) {
        throw config_error("rule AllZero: give collection_names or tensor_regex (or both)");
    }
}

TDBG_DECL std::vector<tensor_request> all_zero::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    for (const std::string& tensor_name : selection_.names(base_trial())) {
        for (std::string& worker : detail::workers_at(tensor(tensor_name), step)) {
            tensor_request r = value_request(tensor_name, step, true);
            r.worker = std::move(worker);
            out.push_back(std::move(r));
        }
    }
    return out;
}

TDBG_DECL verdict all_zero::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    const std::vector<detail::input_range> tensors = detail::tensor_groups(inputs);
    return detail::any_tensor_index(tensors.size(), step, name(), [&](std::size_t i) -> std::optional<verdict> {
        bool evaluated = false;
        for (std::size_t k = tensors[i].first; k < tensors[i].last; ++k) {
            const tensor_value* v = detail::value_if_saved(inputs, inputs[k]);
            if (v == nullptr || v->type() == dtype::string || v->size() == 0) {
                continue;
            }
            evaluated = true;
            const double percent = 100.0 * static_cast<double>(count_zeros(*v)) / static_cast<double>(v->size());
            if (percent >= threshold_) {
                return condition_met(fmt::format("{} ({}) is {:.6g}% zeros, at least {:g}%",
                                                 inputs[k].request.name, *inputs[k].request.worker, percent,
                                                 threshold_));
            }
        }
        if (!evaluated) {
            return std::nullopt;
        }
        return verdict(false);
    });
}

TDBG_DECL rule_description all_zero::describe() {
    return {"A tensor is all (or mostly) zeros.",
            "Met at a step when at least threshold percent of the elements of a selected tensor are exactly zero: "
            "a layer that outputs nothing, weights left at zero, gradients that no longer flow.\n\nGive "
            "collection_names or tensor_regex (or both); the tensors of both are checked, each worker's value. "
            "String and empty values, and tensors saved only as reductions, are not evaluated.",
            {{"collection_names", "None", "collections whose tensors are checked (this or tensor_regex is required)"},
             {"tensor_regex", "None", "regular expressions of tensor names (this or collection_names is required)"},
             {"threshold", "100", "the percentage of zero elements at which the rule is met"}}};
}

} // namespace tdbg::rules
