#pragma once
/// \file
/// LossNotDecreasing: met when a loss has not gone down by at least
/// `diff_percent` percent over `num_steps` steps, or has risen more than
/// `increase_threshold_percent` percent above its lowest.
///
/// Parameters (AWS's published names and defaults): `collection_names` (list,
/// None), `tensor_regex` (list, None), `use_losses_collection` (bool, True),
/// `num_steps` (int, 10), `diff_percent` (float percent, 0.1),
/// `increase_threshold_percent` (float percent, 5; "None" turns that check
/// off), `mode` (GLOBAL, the default AWS's table gives; "None" picks a mode as
/// AWS's description says).
/// Tensors: the union of the lists and, with use_losses_collection and when
/// the run has it, the "losses" collection; only single-element values count.
/// Mode: `mode`; with mode "None", the first of EVAL, TRAIN, GLOBAL in which a
/// selected tensor has steps (chosen at the first evaluated step). The rule
/// works in that mode's step numbers; global steps of another mode evaluate to False.
/// Per tensor, a check happens at mode step s where the tensor was saved when
/// no check happened yet or s >= last check + num_steps, and some saved step
/// b <= s - num_steps exists (the largest is taken); the check then sets the
/// last check to s and is met when
///   - loss(s) >= loss(b) - |loss(b)| * diff_percent / 100 (the loss did not
///     go down enough; diff_percent 0: it is not strictly lower), or
///   - loss(s) > lowest + |lowest| * increase_threshold_percent / 100, where
///     lowest is the lowest of the losses this rule compared before for that
///     tensor (loss(b) included): interpretation of AWS's "the maximum
///     threshold percent that loss is allowed to increase in case loss has
///     been increasing", a loss that went up and has not come back down.
///   - either loss is NaN (a NaN loss is not decreasing; the lowest ignores it).
/// Values of the first worker that wrote the step. Keeps state between steps:
/// evaluated sequentially.
/// What it compared (comparisons()): the steps of its mode it looked at and the checks made,
/// "3 EVAL steps, 0 windows of 10"; an evaluation without a check is NothingEvaluated. In
/// GLOBAL mode a loss saved in TRAIN and EVAL steps is one series (as smdebug reads it: a
/// per-batch TRAIN loss is compared with an EVAL loss of the same name); the coverage then
/// notes that the series mixes modes.
/// Its inputs are not declared (required_tensors): which losses a step reads
/// depends on what earlier steps read (a loss is checked again num_steps after its
/// last check, and a check counts only when both values were scalars), and the
/// mode is picked, and kept, at the first step where a loss has steps.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// LossNotDecreasing (see the file comment).
class loss_not_decreasing : public rule<loss_not_decreasing> {
public:
    static constexpr std::string_view rule_name = "LossNotDecreasing";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit loss_not_decreasing(trial base, const rule_params& params = rule_params());

    /// Met when some loss was checked at `step` and had not decreased enough.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step);

    /// The steps of its mode it looked at and the checks it made, with a note for a series that mixes modes.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const {
        if (use_losses_collection_) {
            return {&selection_, &losses_};
        }
        return {&selection_};
    }

private:
    // The selected tensors and, when used and present, the "losses" collection's.
    [[nodiscard]] TDBG_DECL std::vector<std::string> losses() const;
    // The first of EVAL, TRAIN, GLOBAL in which one of `names` has steps.
    [[nodiscard]] TDBG_DECL std::optional<mode> pick_mode(const std::vector<std::string>& names) const;
    // One tensor at mode step s: met when a check happened and was met.
    [[nodiscard]] TDBG_DECL verdict check(const std::string& tensor_name, std::int64_t s, mode m);
    // `increase_threshold_percent`: 5 when not given, nullopt (no check) for "None".
    [[nodiscard]] TDBG_DECL static std::optional<double> increase_threshold(const rule_params& params);

    detail::tensor_selection selection_;
    detail::tensor_selection losses_{{"losses"}, {}, false};
    bool use_losses_collection_;
    std::int64_t num_steps_;
    double diff_percent_;
    std::optional<double> increase_threshold_percent_;
    std::optional<mode> mode_;
    std::map<std::string, std::int64_t> last_check_;
    std::map<std::string, double> lowest_; // per tensor, the lowest loss compared so far
    std::uint64_t mode_steps_ = 0; // the steps of its mode looked at
    std::uint64_t checks_ = 0;     // the checks made (a loss compared with its value num_steps steps before)
    std::map<std::string, std::set<mode>> compared_modes_; // GLOBAL: per tensor, the modes of the steps compared
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/loss_not_decreasing.ipp"
#else
TDBG_DETAIL_RULE_BASES(extern template, loss_not_decreasing)
#endif
