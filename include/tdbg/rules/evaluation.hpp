#pragma once
/// \file
/// What evaluating a rule over a run found: the steps where its condition was
/// met, where it was not, and where it could not be evaluated (by the smdebug
/// exception that said why), with SageMaker's evaluation status; and the
/// "smdebug-rules/1" JSON document (the schema of the reference fixtures'
/// `*.rules.json`) and the text a person reads.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::rules {

/// SageMaker's RuleEvaluationStatus once an evaluation is over.
enum class evaluation_status {
    no_issues_found,
    issues_found,
    error,
    stopped, ///< interrupted before its end, with no issue found in the steps it evaluated
    /// tdbg only: the evaluation ended without evaluating any step (no error, no trigger,
    /// not interrupted), so it cannot say there is no issue: a rule whose tensor_regex
    /// matches nothing, a run without the steps asked for. SageMaker would say NoIssuesFound.
    nothing_evaluated
};

/// "NoIssuesFound", "IssuesFound", "Error" or "Stopped", as SageMaker reports them,
/// and tdbg's "NothingEvaluated".
[[nodiscard]] constexpr std::string_view status_name(evaluation_status s) noexcept {
    switch (s) {
    case evaluation_status::no_issues_found: return "NoIssuesFound";
    case evaluation_status::issues_found: return "IssuesFound";
    case evaluation_status::error: return "Error";
    case evaluation_status::stopped: return "Stopped";
    case evaluation_status::nothing_evaluated: return "NothingEvaluated";
    }
    return "Error";
}

/// Why an evaluation stopped.
enum class evaluation_end {
    end_step,     ///< it reached end_step
    no_more_data, ///< the run ended (smdebug's NoMoreData)
    condition_met, ///< raise_eval_cond: it stopped at the first step where the condition was met
    interrupted,   ///< stopped from outside (a signal) before next_step: later steps were not evaluated
    end_of_rule    ///< the rule threw rule_evaluation_condition_met with end_of_rule at its last step
};

/// "end_step", "no_more_data", "condition_met", "interrupted" or "end_of_rule".
[[nodiscard]] constexpr std::string_view evaluation_end_name(evaluation_end e) noexcept {
    switch (e) {
    case evaluation_end::end_step: return "end_step";
    case evaluation_end::no_more_data: return "no_more_data";
    case evaluation_end::condition_met: return "condition_met";
    case evaluation_end::interrupted: return "interrupted";
    case evaluation_end::end_of_rule: return "end_of_rule";
    }
    return "end_step";
}

/// smdebug's names for the exceptions that make invoke_rule skip a step.
namespace skip_reason {
inline constexpr std::string_view tensor_unavailable_for_step = "TensorUnavailableForStep";
inline constexpr std::string_view step_unavailable = "StepUnavailable";
inline constexpr std::string_view tensor_unavailable = "TensorUnavailable";
/// tdbg only: a step of a live run that was not there yet when a non-waiting evaluation reached it.
inline constexpr std::string_view step_not_yet_available = "StepNotYetAvailable";
} // namespace skip_reason

/// A set of global steps, kept as ascending runs of consecutive steps: the
/// steps a run never saved between two saved ones far apart cost one entry,
/// however many they are.
class step_set {
public:
    /// The consecutive steps first..last, both included.
    struct run {
        std::int64_t first = 0;
        std::int64_t last = 0;
        /// How many steps the run holds.
        [[nodiscard]] std::uint64_t size() const noexcept {
            return static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(first) + 1;
        }
        friend bool operator==(const run& a, const run& b) noexcept { return a.first == b.first && a.last == b.last; }
        friend bool operator!=(const run& a, const run& b) noexcept { return !(a == b); }
    };

    step_set() = default;
    /// The steps listed, in any order.
    step_set(std::initializer_list<std::int64_t> steps) { add_all(steps.begin(), steps.end()); }
    /// The steps listed, in any order (also what a list compares equal to).
    step_set(const std::vector<std::int64_t>& steps) { add_all(steps.begin(), steps.end()); } // NOLINT(google-explicit-constructor)

    /// Adds one step.
    void add(std::int64_t step) { add(step, step); }
    /// Adds the steps first..last, both included (usage_error when last < first).
    TDBG_DECL void add(std::int64_t first, std::int64_t last);
    /// Adds every step of `other`.
    void add(const step_set& other) {
        for (const run& r : other.runs_) {
            add(r.first, r.last);
        }
    }

    /// The runs, ascending, neither overlapping nor touching.
    [[nodiscard]] const std::vector<run>& runs() const noexcept { return runs_; }
    /// How many steps the set holds.
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return runs_.empty(); }
    [[nodiscard]] TDBG_DECL bool contains(std::int64_t step) const noexcept;
    /// Every step, ascending; usage_error when there are more than `limit`
    /// (a set can hold more steps than memory).
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> steps(std::uint64_t limit = 10'000'000) const;

    friend bool operator==(const step_set& a, const step_set& b) noexcept { return a.runs_ == b.runs_; }
    friend bool operator!=(const step_set& a, const step_set& b) noexcept { return !(a == b); }
    /// "1, 3, 5-9", as format_steps writes it (for test failures and logs).
    TDBG_DECL friend std::ostream& operator<<(std::ostream& out, const step_set& steps);

private:
    template <class It>
    void add_all(It first, It last) {
        for (; first != last; ++first) {
            add(*first);
        }
    }
    std::vector<run> runs_;
    std::uint64_t size_ = 0;
};

/// What a rule that compares steps with each other (a window of steps, a pair of steps, a
/// patience) compared over an evaluation, as it reports it (tdbg only): a step it looked at
/// without comparing anything (a window not filled yet, a step of another mode) is recorded
/// not triggered, as smdebug records it, and says nothing of the run.
struct comparison_coverage {
    /// How many comparisons it made (windows, pairs, patiences filled); 0: it compared nothing.
    std::uint64_t compared = 0;
    /// The steps of its mode and what it compared, in its words: "3 EVAL steps, 0 windows of
    /// 10", with a note where it says something more ("its GLOBAL series of 'loss' mixes TRAIN
    /// and EVAL steps").
    std::string text;
};

/// The outcome of one rule over a range of steps.
struct evaluation_result {
    /// The rule's name (SageMaker's rule_to_invoke, e.g. "VanishingGradient").
    std::string rule;
    /// SageMaker's RuleConfigurationName; the rule's name unless set.
    std::string configuration_name;
    /// The parameters as given (strings).
    std::map<std::string, std::string> params;
    /// Every parameter the rule used, with the value it resolved to (defaults included).
    format::json_value resolved_params = format::json_value::object();
    /// Global steps where the condition was met, ascending.
    std::vector<std::int64_t> triggered_steps;
    /// Why the condition was met, by triggered step (the reason of the rule's verdict,
    /// condition_met(reason)); a step whose rule gave none is not in it (tdbg only).
    std::map<std::int64_t, std::string> trigger_reasons;
    /// Global steps evaluated where it was not, ascending.
    std::vector<std::int64_t> not_triggered_steps;
    /// Global steps not evaluated, by the smdebug exception that said why (skip_reason).
    /// Steps never saved between two saved steps are recorded as one run, not walked one by one.
    std::map<std::string, step_set> skipped_steps;
    /// The steps the run does not have at all (never saved: its save configuration did not
    /// mean to), which smdebug records under StepUnavailable in skipped_steps as well.
    /// describe_coverage() does not count them as skipped (tdbg only).
    step_set unsaved_steps;
    /// With status NothingEvaluated: why no step was evaluated, for a person (what the
    /// rule's selection named and the run's nearest names, the skips counted). tdbg only.
    std::string nothing_evaluated_reason;
    /// Of the tensors the rule selects, those saved as reductions only, and whether the rule
    /// decided them by their stored reductions or could not evaluate them ("12 of 13 selected
    /// tensors saved as reductions only, which DeadRelu reads as values: not evaluated");
    /// empty when none are. describe_coverage() adds it. tdbg only.
    std::string tensor_coverage;
    /// What the rule compared, for a rule that compares steps with each other (LossNotDecreasing,
    /// UnchangedTensor, Overfit, ...); nullopt for the others. describe_coverage() adds its text,
    /// and status() is NothingEvaluated when it compared nothing. tdbg only.
    std::optional<comparison_coverage> comparisons;
    /// The first global step looked at, if any.
    std::optional<std::int64_t> first_step;
    /// One past the last global step looked at.
    std::optional<std::int64_t> next_step;
    /// Why the evaluation stopped.
    evaluation_end end = evaluation_end::end_step;
    /// The error that ended the evaluation (status Error), empty otherwise.
    std::string error;

    /// SageMaker's status: Error when an error ended it, IssuesFound when the condition was met at
    /// some step, Stopped when it was interrupted before finding any (it cannot say there is none);
    /// tdbg's NothingEvaluated when it ended without evaluating a single step, or when the rule
    /// compares steps and compared none (nor can it then).
    [[nodiscard]] evaluation_status status() const noexcept {
        if (!error.empty()) {
            return evaluation_status::error;
        }
        if (!triggered_steps.empty()) {
            return evaluation_status::issues_found;
        }
        if (end == evaluation_end::interrupted) {
            return evaluation_status::stopped;
        }
        if (not_triggered_steps.empty() || (comparisons && comparisons->compared == 0)) {
            return evaluation_status::nothing_evaluated;
        }
        return evaluation_status::no_issues_found;
    }
    /// How many steps were evaluated (the condition met or not).
    [[nodiscard]] std::size_t evaluated_steps() const noexcept {
        return triggered_steps.size() + not_triggered_steps.size();
    }
    /// The name reports use: the configuration name, else the rule's.
    [[nodiscard]] const std::string& display_name() const noexcept {
        return configuration_name.empty() ? rule : configuration_name;
    }
    /// Every skipped step, whatever the reason.
    [[nodiscard]] TDBG_DECL step_set all_skipped_steps() const;
};

/// The skipped steps that count, by reason, most skipped first (ties in the order of the
/// reasons): a step the run does not have at all (unsaved_steps) was never meant to be
/// evaluated and is not counted. What describe_coverage() and the report's table show.
[[nodiscard]] TDBG_DECL std::vector<std::pair<std::string, std::uint64_t>> counted_skips(const evaluation_result& r);

/// How much of the run the evaluation covered, in one line a person reads:
/// "evaluated 30 of 220 steps; 190 skipped: 150 TensorUnavailableForStep, 40 TensorUnavailable",
/// then what a rule that compares steps compared ("; 3 EVAL steps, 0 windows of 10"), then the
/// tensor coverage when it says something ("; 12 of 13 selected tensors saved as reductions only, ..."). Steps the run does not have (unsaved_steps) are neither counted nor skipped.
[[nodiscard]] TDBG_DECL std::string describe_coverage(const evaluation_result& r);

/// The reasons of the triggered steps, "step 7: <reason>", at most `limit` of them, then
/// "... and N more" (steps without a reason are left out).
[[nodiscard]] TDBG_DECL std::vector<std::string> trigger_reason_lines(const evaluation_result& r,
                                                                      std::size_t limit = 10);

/// "7, 8, 9" or "7-39" style text for a list of steps: runs of consecutive
/// steps shortened, at most `limit` items shown.
/// (A list of steps converts to a step_set.)
[[nodiscard]] TDBG_DECL std::string format_steps(const step_set& steps, std::size_t limit = 20);

/// In JSON documents, a run of more consecutive skipped steps than this is
/// written as a two-item array [first, last] instead of step by step.
inline constexpr std::uint64_t json_step_run_limit = 1000;

namespace detail {
/// `steps` as the documents list them: step by step, a run longer than json_step_run_limit as [first, last].
[[nodiscard]] TDBG_DECL format::json_value step_list_json(const step_set& steps);
} // namespace detail

/// One entry of the "results" array of a "smdebug-rules/1" document, plus
/// tdbg's additions (status, configuration_name, end, error, trigger_reasons
/// [{step, reason}], coverage {evaluated, skipped, unsaved, text, unsaved_steps, first_step,
/// next_step, tensor_coverage when there is one, and compared and compared_text for a rule
/// that compares steps} and, with
/// status NothingEvaluated, nothing_evaluated_reason). Skipped steps
/// are listed step by step, as smdebug's reader records them, except runs
/// longer than json_step_run_limit, written [first, last].
[[nodiscard]] TDBG_DECL format::json_value to_json(const evaluation_result& r);

/// How the rules of a document were invoked (its "invoke" member).
struct invoke_record {
    std::optional<std::int64_t> start_step;
    std::optional<std::int64_t> end_step;
    bool raise_eval_cond = false;
};

/// The "smdebug-rules/1" document: {format, invoke, producer, results, trial_name}.
[[nodiscard]] TDBG_DECL format::json_value rules_document(const std::vector<evaluation_result>& results,
                                                          const std::string& trial_name, const invoke_record& invoked = {});

/// The text a person reads: one headline, then the steps.
[[nodiscard]] TDBG_DECL std::string to_text(const evaluation_result& r);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/evaluation.ipp"
#endif
