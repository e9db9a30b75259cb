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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
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

/// Confusion over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_confusion : public rule<basic_confusion<Storage>, Storage> {
    using base = rule<basic_confusion<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "Confusion";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_confusion(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), category_no_(params.get_optional<std::int64_t>("category_no")),
          labels_name_(params.get("labels", "labels")), predictions_name_(params.get("predictions", "predictions")),
          labels_({params.get("labels_collection", "labels")}, {}, false),
          predictions_({params.get("predictions_collection", "predictions")}, {}, false),
          min_diag_(params.get("min_diag", 0.9)), max_off_diag_(params.get("max_off_diag", 0.1)) {
        if (category_no_ && (*category_no_ < 2 || *category_no_ > std::numeric_limits<std::int32_t>::max())) {
            throw config_error("rule Confusion: parameter 'category_no' must be at least 2, got " +
                               std::to_string(*category_no_));
        }
    }

    /// True when the step's confusion matrix fails min_diag or max_off_diag.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        const auto labels = values_at(labels_, labels_name_, step);
        const auto predictions = values_at(predictions_, predictions_name_, step);
        const std::size_t pairs = std::min(labels.size(), predictions.size());
        if (pairs == 0) {
            throw tensor_unavailable_for_step("rule Confusion: no labels and predictions at step " + std::to_string(step));
        }
        std::vector<std::pair<std::int64_t, std::int64_t>> samples;
        std::int64_t largest = 0;
        for (std::size_t i = 0; i < pairs; ++i) {
            const auto l = detail::class_ids(labels[i], false);
            const auto p = detail::class_ids(predictions[i], true);
            for (std::size_t k = 0; k < std::min(l.size(), p.size()); ++k) {
                samples.emplace_back(l[k], p[k]);
                largest = std::max({largest, l[k], p[k]});
            }
        }
        const std::int64_t n = category_no_ ? *category_no_ : largest + 1;
        // Sparse: only the cells that occur (the ids come from the data and may be large).
        std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> cells; // (prediction, label) -> count
        std::map<std::int64_t, std::int64_t> columns;                        // prediction -> count
        for (const auto& [l, p] : samples) {
            if (l >= 0 && p >= 0 && l < n && p < n) {
                ++cells[{p, l}];
                ++columns[p];
            }
        }
        for (const auto& [i, column] : columns) {
            const auto diag_cell = cells.find({i, i});
            const double diag = static_cast<double>(diag_cell == cells.end() ? 0 : diag_cell->second) /
                                static_cast<double>(column);
            if (diag < min_diag_) {
                this->set_reason("only " + std::to_string(diag) + " of the samples predicted as " + std::to_string(i) +
                                 " are of that class");
                return true;
            }
            for (auto it = cells.lower_bound({i, std::numeric_limits<std::int64_t>::min()});
                 it != cells.end() && it->first.first == i; ++it) {
                const double off = static_cast<double>(it->second) / static_cast<double>(column);
                if (it->first.second != i && off > max_off_diag_) {
                    this->set_reason(std::to_string(off) + " of the samples predicted as " + std::to_string(i) +
                                     " are of class " + std::to_string(it->first.second));
                    return true;
                }
            }
        }
        return false;
    }

private:
    [[nodiscard]] std::vector<tensor_value> values_at(const detail::tensor_selection<Storage>& selection, const std::string& name,
                                                      std::int64_t step) const {
        std::vector<std::string> names = selection.names(this->base_trial());
        if (this->base_trial().has_tensor(name) && std::find(names.begin(), names.end(), name) == names.end()) {
            names.insert(names.begin(), name);
        }
        std::vector<tensor_value> out;
        for (const std::string& n : names) {
            try {
                tensor_value v = this->value(n, step);
                if (is_real_valued(v.type())) {
                    out.push_back(std::move(v));
                }
            } catch (const tensor_unavailable_for_step&) {
            }
        }
        return out;
    }

    std::optional<std::int64_t> category_no_;
    std::string labels_name_;
    std::string predictions_name_;
    detail::tensor_selection<Storage> labels_;
    detail::tensor_selection<Storage> predictions_;
    double min_diag_;
    double max_off_diag_;
};

/// Confusion over local runs.
using confusion = basic_confusion<>;

} // namespace tdbg::rules
