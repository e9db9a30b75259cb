#pragma once
/// \file
/// ClassImbalance: met when the classes seen in the labels are too
/// imbalanced, or when some class is mispredicted too often.
///
/// Parameters (AWS's published defaults): `threshold_imbalance` (float, 10),
/// `threshold_misprediction` (float fraction, 0.7), `samples` (int, 500),
/// `argmax` (bool, False), `labels_regex` (string, ".*labels"),
/// `predictions_regex` (string, ".*predictions"). Interpretation: at every
/// step where a labels tensor and a predictions tensor both have values (the
/// i-th of each, in name order, are paired; labels are class ids, predictions
/// are class ids or, with argmax, scores whose last axis is argmax'ed), the
/// pairs are counted per class (of the label). Once at least `samples` labels
/// were counted, the condition is met when the largest class count divided by
/// the smallest exceeds threshold_imbalance, or when the fraction of
/// mispredicted samples of some class exceeds threshold_misprediction. A step
/// without labels and predictions is skipped (TensorUnavailableForStep).
/// Counts accumulate: evaluated sequentially.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// ClassImbalance over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_class_imbalance : public rule<basic_class_imbalance<Storage>, Storage> {
    using base = rule<basic_class_imbalance<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "ClassImbalance";

    /// The rule over `trial`, configured by `params`.
    explicit basic_class_imbalance(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), threshold_imbalance_(params.get("threshold_imbalance", 10.0)),
          threshold_misprediction_(params.get("threshold_misprediction", 0.7)),
          samples_(params.get<std::int64_t>("samples", 500)), argmax_(params.get("argmax", false)),
          labels_({}, {params.get("labels_regex", ".*labels")}, false),
          predictions_({}, {params.get("predictions_regex", ".*predictions")}, false) {}

    /// Counts the step's labels; true once enough are counted and the classes are imbalanced.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) {
        const auto labels = values_at(labels_, step);
        const auto predictions = values_at(predictions_, step);
        const std::size_t pairs = std::min(labels.size(), predictions.size());
        if (pairs == 0) {
            throw tensor_unavailable_for_step("rule ClassImbalance: no labels and predictions at step " + std::to_string(step));
        }
        for (std::size_t i = 0; i < pairs; ++i) {
            const auto l = detail::class_ids(labels[i], false);
            const auto p = detail::class_ids(predictions[i], argmax_);
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
        std::int64_t smallest = counts_.begin()->second.samples;
        std::int64_t largest = smallest;
        for (const auto& [cls, c] : counts_) {
            smallest = std::min(smallest, c.samples);
            largest = std::max(largest, c.samples);
            const double wrong = static_cast<double>(c.mispredicted) / static_cast<double>(c.samples);
            if (wrong > threshold_misprediction_) {
                this->set_reason("class " + std::to_string(cls) + " is mispredicted in " + std::to_string(wrong * 100) +
                                 "% of its samples");
                return true;
            }
        }
        if (static_cast<double>(largest) / static_cast<double>(smallest) > threshold_imbalance_) {
            this->set_reason("the largest class has " + std::to_string(largest) + " samples, the smallest " +
                             std::to_string(smallest));
            return true;
        }
        return false;
    }

private:
    struct class_count {
        std::int64_t samples = 0;
        std::int64_t mispredicted = 0;
    };

    [[nodiscard]] std::vector<tensor_value> values_at(const detail::tensor_selection<Storage>& selection, std::int64_t step) const {
        std::vector<tensor_value> out;
        for (const std::string& name : selection.names(this->base_trial())) {
            try {
                tensor_value v = this->value(name, step);
                if (is_real_valued(v.type())) {
                    out.push_back(std::move(v));
                }
            } catch (const tensor_unavailable_for_step&) {
            }
        }
        return out;
    }

    double threshold_imbalance_;
    double threshold_misprediction_;
    std::int64_t samples_;
    bool argmax_;
    detail::tensor_selection<Storage> labels_;
    detail::tensor_selection<Storage> predictions_;
    std::map<std::int64_t, class_count> counts_;
    std::int64_t total_ = 0;
};

/// ClassImbalance over local runs.
using class_imbalance = basic_class_imbalance<>;

} // namespace tdbg::rules
