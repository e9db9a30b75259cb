#pragma once
/// \file
/// What evaluating a rule over a run found: the steps where its condition was
/// met, where it was not, and where it could not be evaluated (by the smdebug
/// exception that said why), with SageMaker's evaluation status; and the
/// "smdebug-rules/1" JSON document (the schema of the reference fixtures'
/// `*.rules.json`) and the text a person reads.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::rules {

/// SageMaker's RuleEvaluationStatus once an evaluation is over.
enum class evaluation_status { no_issues_found, issues_found, error };

/// "NoIssuesFound", "IssuesFound" or "Error", as SageMaker reports them.
[[nodiscard]] constexpr std::string_view status_name(evaluation_status s) noexcept {
    switch (s) {
    case evaluation_status::no_issues_found: return "NoIssuesFound";
    case evaluation_status::issues_found: return "IssuesFound";
    case evaluation_status::error: return "Error";
    }
    return "Error";
}

/// Why an evaluation stopped.
enum class evaluation_end {
    end_step,     ///< it reached end_step
    no_more_data, ///< the run ended (smdebug's NoMoreData)
    condition_met ///< raise_eval_cond: it stopped at the first step where the condition was met
};

/// "end_step", "no_more_data" or "condition_met".
[[nodiscard]] constexpr std::string_view evaluation_end_name(evaluation_end e) noexcept {
    switch (e) {
    case evaluation_end::end_step: return "end_step";
    case evaluation_end::no_more_data: return "no_more_data";
    case evaluation_end::condition_met: return "condition_met";
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
    /// Global steps evaluated where it was not, ascending.
    std::vector<std::int64_t> not_triggered_steps;
    /// Global steps not evaluated, by the smdebug exception that said why (skip_reason).
    std::map<std::string, std::vector<std::int64_t>> skipped_steps;
    /// The first global step looked at, if any.
    std::optional<std::int64_t> first_step;
    /// One past the last global step looked at.
    std::optional<std::int64_t> next_step;
    /// Why the evaluation stopped.
    evaluation_end end = evaluation_end::end_step;
    /// The error that ended the evaluation (status Error), empty otherwise.
    std::string error;

    /// SageMaker's status: Error when an error ended it, IssuesFound when the condition was met at some step.
    [[nodiscard]] evaluation_status status() const noexcept {
        if (!error.empty()) {
            return evaluation_status::error;
        }
        return triggered_steps.empty() ? evaluation_status::no_issues_found : evaluation_status::issues_found;
    }
    /// The name reports use: the configuration name, else the rule's.
    [[nodiscard]] const std::string& display_name() const noexcept {
        return configuration_name.empty() ? rule : configuration_name;
    }
    /// Every skipped step, ascending.
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> all_skipped_steps() const;
};

/// "7, 8, 9" or "7-39" style text for a list of steps: runs of consecutive
/// steps shortened, at most `limit` items shown.
[[nodiscard]] TDBG_DECL std::string format_steps(const std::vector<std::int64_t>& steps, std::size_t limit = 20);

/// One entry of the "results" array of a "smdebug-rules/1" document, plus
/// tdbg's additions (status, configuration_name, end, error).
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
