#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/exploding_tensor.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/builtin/exploding_tensor.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL exploding_tensor::exploding_tensor(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, true)),
      only_nan_(params.get("only_nan", false)) {}

TDBG_DECL std::vector<tensor_request> exploding_tensor::required_tensors(std::int64_t step) const {
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

TDBG_DECL verdict exploding_tensor::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    const std::vector<detail::input_range> tensors = detail::tensor_groups(inputs);
    return detail::any_tensor_index(tensors.size(), step, name(), [&](std::size_t i) -> std::optional<verdict> {
        bool evaluated = false;
        for (std::size_t k = tensors[i].first; k < tensors[i].last; ++k) {
            const tensor_value* v = detail::value_if_saved(inputs, inputs[k]);
            if (v == nullptr) {
                continue; // this worker saved only reductions or a shape
            }
            if (has_non_finite(*v, only_nan_)) {
                return condition_met(
                    fmt::format("{} ({}) holds {}", inputs[k].request.name, *inputs[k].request.worker,
                                only_nan_ ? "a NaN" : "a NaN or an infinity"));
            }
            evaluated = true;
        }
        if (!evaluated) {
            return std::nullopt;
        }
        return verdict(false);
    });
}

TDBG_DECL rule_description exploding_tensor::describe() {
    return {"A tensor holds NaN or infinite values.",
            "Met at a step when the value of a selected tensor holds a NaN or, unless only_nan, an infinity: "
            "values have exploded (a learning rate too high, a division by zero, an overflow).\n\nWith neither "
            "collection_names nor tensor_regex every tensor is checked. Every worker's value is checked: a NaN on "
            "one rank is an explosion. Only floating-point and complex values can be non-finite; a tensor saved "
            "only as reductions is not evaluated.",
            {{"collection_names", "None", "collections whose tensors are checked (comma-separated)"},
             {"tensor_regex", "None", "regular expressions of the names of tensors to check (comma-separated)"},
             {"only_nan", "False", "True: only NaN values count, not infinities"}}};
}

} // namespace tdbg::rules
