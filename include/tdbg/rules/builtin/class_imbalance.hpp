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
/// What a step reads is declared (required_tensors) and fetched up front.
/// What it compared (comparisons()): the labels counted and the steps judged once `samples`
/// were, "40 labels counted, 0 steps judged (samples 500)"; an evaluation that judged no step
/// (a run with fewer labels) is NothingEvaluated.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// ClassImbalance (see the file comment).
class class_imbalance : public rule<class_imbalance> {
public:
    static constexpr std::string_view rule_name = "ClassImbalance";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit class_imbalance(trial base, const rule_params& params = rule_params());

    /// The values of the labels, then of the predictions, at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Counts the step's labels; met once enough are counted and the classes are imbalanced.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs);

    /// The labels it counted and the steps it judged.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&labels_, &predictions_}; }

private:
    struct class_count {
        std::int64_t samples = 0;
        std::int64_t mispredicted = 0;
    };

    // The real-valued values among inputs [first, last) (not saved at the step: left out).
    [[nodiscard]] TDBG_DECL static std::vector<const tensor_value*> values_at(const step_inputs& inputs,
                                                                              std::size_t first, std::size_t last);

    double threshold_imbalance_;
    double threshold_misprediction_;
    std::int64_t samples_;
    bool argmax_;
    detail::tensor_selection labels_;
    detail::tensor_selection predictions_;
    std::map<std::int64_t, class_count> counts_;
    std::int64_t total_ = 0;
    std::uint64_t judged_ = 0; // the steps judged, once samples_ labels were counted
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/class_imbalance.ipp"
#else
TDBG_DETAIL_RULE_BASES(extern template, class_imbalance)
#endif
