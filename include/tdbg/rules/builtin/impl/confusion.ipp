#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/confusion.hpp.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/confusion.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL confusion::confusion(trial base, const rule_params& params)
    : rule(std::move(base), params), category_no_(params.get_optional<std::int64_t>("category_no")),
      labels_name_(params.get("labels", "labels")), predictions_name_(params.get("predictions", "predictions")),
      labels_({params.get("labels_collection", "labels")}, {}, false),
      predictions_({params.get("predictions_collection", "predictions")}, {}, false),
      min_diag_(params.get("min_diag", 0.9, non_negative)),
      max_off_diag_(params.get("max_off_diag", 0.1, non_negative)) {
    if (category_no_ && (*category_no_ < 2 || *category_no_ > std::numeric_limits<std::int32_t>::max())) {
        throw config_error(
            fmt::format("rule Confusion: parameter 'category_no' must be at least 2, got {}", *category_no_));
    }
}

TDBG_DECL std::vector<tensor_request> confusion::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    for (const std::string& tensor_name : names_of(labels_, labels_name_)) {
        out.push_back(value_request(tensor_name, step, true));
    }
    for (const std::string& tensor_name : names_of(predictions_, predictions_name_)) {
        out.push_back(value_request(tensor_name, step, true));
    }
    return out;
}

TDBG_DECL verdict confusion::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    const std::size_t label_count = names_of(labels_, labels_name_).size();
    const auto labels = values_at(inputs, 0, label_count);
    const auto predictions = values_at(inputs, label_count, inputs.size());
    const std::size_t pairs = std::min(labels.size(), predictions.size());
    if (pairs == 0) {
        throw tensor_unavailable_for_step(fmt::format("rule Confusion: no labels and predictions at step {}", step), {},
                                          step, tdbg::mode::global);
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> samples;
    std::int64_t largest = 0;
    for (std::size_t i = 0; i < pairs; ++i) {
        const auto l = detail::class_ids(*labels[i], false);
        const auto p = detail::class_ids(*predictions[i], true);
        for (std::size_t k = 0; k < std::min(l.size(), p.size()); ++k) {
            samples.emplace_back(l[k], p[k]);
            largest = std::max({largest, l[k], p[k]});
        }
    }
    const std::int64_t n = category_no_ ? *category_no_ : largest + 1;
    // Sparse: only the cells that occur (the ids come from the data and may be large).
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> cells; // (prediction, label) -> count
    std::map<std::int64_t, std::int64_t> columns; // prediction -> count
    for (const auto& [l, p] : samples) {
        if (l >= 0 && p >= 0 && l < n && p < n) {
            ++cells[{p, l}];
            ++columns[p];
        }
    }
    for (const auto& [i, column] : columns) {
        const auto diag_cell = cells.find({i, i});
        const double diag =
            static_cast<double>(diag_cell == cells.end() ? 0 : diag_cell->second) / static_cast<double>(column);
        if (diag < min_diag_) {
            return condition_met(fmt::format("only {:.6g} of the samples predicted as {} are of that class", diag, i));
        }
        for (auto it = cells.lower_bound({i, std::numeric_limits<std::int64_t>::min()});
             it != cells.end() && it->first.first == i; ++it) {
            const double off = static_cast<double>(it->second) / static_cast<double>(column);
            if (it->first.second != i && off > max_off_diag_) {
                return condition_met(
                    fmt::format("{:.6g} of the samples predicted as {} are of class {}", off, i, it->first.second));
            }
        }
    }
    return false;
}

TDBG_DECL std::vector<std::string> confusion::names_of(const detail::tensor_selection& selection,
                                                       const std::string& tensor_name) const {
    std::vector<std::string> names = selection.names(base_trial());
    if (base_trial().has_tensor(tensor_name) && std::find(names.begin(), names.end(), tensor_name) == names.end()) {
        names.insert(names.begin(), tensor_name);
    }
    return names;
}

TDBG_DECL std::vector<const tensor_value*> confusion::values_at(const step_inputs& inputs, std::size_t first,
                                                                std::size_t last) {
    std::vector<const tensor_value*> out;
    for (std::size_t i = first; i < last && i < inputs.size(); ++i) {
        const tensor_value* v = detail::value_if_saved(inputs, inputs[i]);
        if (v != nullptr && is_real_valued(v->type())) {
            out.push_back(v);
        }
    }
    return out;
}

TDBG_DECL rule_description confusion::describe() {
    return {"The confusion matrix is not diagonal enough.",
            "Met at a step when the confusion matrix of labels against predictions has too little on its diagonal "
            "or too much off it: for some predicted class i, the share of its samples truly of class i is below "
            "min_diag, or the share of some other class is above max_off_diag.\n\nLabels are the tensor named "
            "labels and the tensors of the collection labels_collection, predictions likewise; the i-th of each, "
            "in name order, are paired. Class ids outside [0, category_no) are left out; a class nothing was "
            "predicted as is not judged.",
            {{"category_no", "None", "the number of classes (None: found from the labels and predictions)"},
             {"labels", "labels", "the name of the labels tensor"},
             {"predictions", "predictions", "the name of the predictions tensor"},
             {"labels_collection", "labels", "the collection of further labels"},
             {"predictions_collection", "predictions", "the collection of further predictions"},
             {"min_diag", "0.9", "the smallest share of a column on the diagonal"},
             {"max_off_diag", "0.1", "the largest share of a column in one cell off the diagonal"}},
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_RULE_BASES(template, confusion)
#endif
