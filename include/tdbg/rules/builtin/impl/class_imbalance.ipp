#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/class_imbalance.hpp.

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/class_imbalance.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL class_imbalance::class_imbalance(trial base, const rule_params& params)
    : rule(std::move(base), params), threshold_imbalance_(params.get("threshold_imbalance", 10.0, non_negative)),
      threshold_misprediction_(params.get("threshold_misprediction", 0.7, non_negative)),
      samples_(params.get<std::int64_t>("samples", 500, non_negative)), argmax_(params.get("argmax", false)),
      labels_({}, {params.get("labels_regex", ".*labels")}, false),
      predictions_({}, {params.get("predictions_regex", ".*predictions")}, false) {}

TDBG_DECL std::vector<tensor_request> class_imbalance::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    for (const detail::tensor_selection* selection : {&labels_, &predictions_}) {
        for (const std::string& tensor_name : selection->names(base_trial())) {
            out.push_back(value_request(tensor_name, step, true));
        }
    }
    return out;
}

TDBG_DECL verdict class_imbalance::invoke_at_step(std::int64_t step, const step_inputs& inputs) {
    const std::size_t label_count = labels_.names(base_trial()).size();
    const auto labels = values_at(inputs, 0, label_count);
    const auto predictions = values_at(inputs, label_count, inputs.size());
    const std::size_t pairs = std::min(labels.size(), predictions.size());
    if (pairs == 0) {
        throw tensor_unavailable_for_step(
            fmt::format("rule ClassImbalance: no labels and predictions at step {}", step), {}, step,
            tdbg::mode::global);
    }
    for (std::size_t i = 0; i < pairs; ++i) {
        const auto l = detail::class_ids(*labels[i], false);
        const auto p = detail::class_ids(*predictions[i], argmax_);
        for (std::size_t k = 0; k < l.size(); ++k) {
            auto& c = counts_[l[k]];
            ++c.samples;
            if (k < p.size() && p[k] != l[k]) {
                ++c.mispredicted;
            }
            ++total_;
        }
    }
    if (total_ < samples_ || counts_.empty()) {
        return false;
    }
    ++judged_;
    std::int64_t smallest = counts_.begin()->second.samples;
    std::int64_t largest = smallest;
    for (const auto& [cls, c] : counts_) {
        smallest = std::min(smallest, c.samples);
        largest = std::max(largest, c.samples);
        const double wrong = static_cast<double>(c.mispredicted) / static_cast<double>(c.samples);
        if (wrong > threshold_misprediction_) {
            return condition_met(fmt::format("class {} is mispredicted in {:.6g}% of its samples", cls, wrong * 100));
        }
    }
    if (static_cast<double>(largest) / static_cast<double>(smallest) > threshold_imbalance_) {
        return condition_met(fmt::format("the largest class has {} samples, the smallest {}", largest, smallest));
    }
    return false;
}

TDBG_DECL std::vector<const tensor_value*> class_imbalance::values_at(const step_inputs& inputs, std::size_t first,
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

TDBG_DECL comparison_coverage class_imbalance::comparisons() const {
    return {judged_, fmt::format("{} label{} counted, {} step{} judged (samples {})", total_, total_ == 1 ? "" : "s",
                                 judged_, judged_ == 1 ? "" : "s", samples_)};
}

TDBG_DECL rule_description class_imbalance::describe() {
    return {"The classes are imbalanced, or a class is mispredicted too often.",
            "Met when the classes seen in the labels are too imbalanced (the largest class count over the smallest "
            "exceeds threshold_imbalance), or when the share of mispredicted samples of some class exceeds "
            "threshold_misprediction. The counts accumulate over the steps and are judged once at least samples "
            "labels were seen.\n\nLabels are the tensors matching labels_regex, predictions those matching "
            "predictions_regex; the i-th of each, in name order, are paired. Labels are class ids; predictions are "
            "class ids or, with argmax, scores whose last axis is reduced by argmax.",
            {{"threshold_imbalance", "10", "the largest ratio of the largest to the smallest class count"},
             {"threshold_misprediction", "0.7", "the largest share of mispredicted samples of a class"},
             {"samples", "500", "how many labels must be seen before anything is judged"},
             {"argmax", "False", "True: predictions are scores, reduced by argmax over the last axis"},
             {"labels_regex", ".*labels", "regular expression of the names of the labels"},
             {"predictions_regex", ".*predictions", "regular expression of the names of the predictions"}},
            step_dependence::carried_state};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_RULE_BASES(template, class_imbalance)
#endif
