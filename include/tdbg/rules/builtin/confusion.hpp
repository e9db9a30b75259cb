#pragma once
/// \file
/// Confusion: met at a step when the confusion matrix of labels against
/// predictions is not good enough: too little on the diagonal, or too much
/// off it.
///
/// Parameters (AWS's published defaults): `category_no` (int, default: the
/// larger of the number of categories in labels and predictions), `labels`
/// (string, "labels"), `predictions` (string, "predictions"),
/// `labels_collection` (string, "labels"), `predictions_collection` (string,
/// "predictions"), `min_diag` (float, 0.9), `max_off_diag` (float, 0.1).
/// Interpretation: the labels are the tensor named `labels` and those of
/// collection labels_collection (likewise for predictions); the i-th of each,
/// in name order, are paired. The matrix counts confusion[label][prediction]
/// over the step's pairs (ids outside [0, category_no) are left out).
/// AWS's formulas are read per column i (every sample predicted as i) with
/// n_i = sum_j confusion[j][i]: met when confusion[i][i] / n_i < min_diag or
/// confusion[j][i] / n_i > max_off_diag for some j != i (empty columns are
/// not judged). A step without labels and predictions is skipped
/// (TensorUnavailableForStep). Parallel steps.
/// What a step reads is declared (required_tensors) and fetched up front.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// Confusion (see the file comment).
class confusion : public rule<confusion> {
public:
    static constexpr std::string_view rule_name = "Confusion";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit confusion(trial base, const rule_params& params = rule_params());

    /// The values of the labels, then of the predictions, at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when the step's confusion matrix fails min_diag or max_off_diag.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&labels_, &predictions_}; }

private:
    // The tensor `tensor_name` (first, when the trial has it) and those `selection` names.
    [[nodiscard]] TDBG_DECL std::vector<std::string> names_of(const detail::tensor_selection& selection,
                                                              const std::string& tensor_name) const;
    // The real-valued values among inputs [first, last) (not saved at the step: left out).
    [[nodiscard]] TDBG_DECL static std::vector<const tensor_value*> values_at(const step_inputs& inputs,
                                                                              std::size_t first, std::size_t last);

    std::optional<std::int64_t> category_no_;
    std::string labels_name_;
    std::string predictions_name_;
    detail::tensor_selection labels_;
    detail::tensor_selection predictions_;
    double min_diag_;
    double max_off_diag_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/confusion.ipp"
#else
TDBG_DETAIL_RULE_BASES(extern template, confusion)
#endif
