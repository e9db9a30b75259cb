#pragma once
/// \file
/// Rule results as SARIF 2.1.0 (Static Analysis Results Interchange Format),
/// the format code-scanning pipelines ingest: one run of the tool "tdbg", its
/// rules in tool.driver.rules (the display name as id, the rule as name, the
/// parameters in properties), one result per rule and step at which the rule
/// triggered, located at the run evaluated; an evaluation that could not say
/// whether its rule holds (an error, nothing evaluated, an interruption) is a tool execution
/// notification of level "error", and the invocation did not succeed.
///
///     sarif_options o;
///     o.run_location = "runs/train";
///     write_file("rules.sarif", tdbg::rules::to_sarif(results, o));

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::rules {

/// What to_sarif writes beside the results.
struct sarif_options {
    /// The run evaluated, the artifact every result is located at: a URI (s3://bucket/prefix)
    /// as it is, an absolute path as a file:// URI, a relative path as a relative reference.
    std::string run_location;
    /// tool.driver.version (left out when empty).
    std::string tool_version;
    /// A rule's description (its fullDescription in tool.driver.rules); left out when it
    /// returns "" or is not set.
    std::function<std::string(const evaluation_result&)> rule_description;
    /// Why a rule triggered at a step, appended to that result's message ("VanishingGradient
    /// triggered at step 12: <reason>"); when not set, the rule's own reason for the step
    /// (evaluation_result::trigger_reasons); nothing is appended for an empty reason.
    std::function<std::string(const evaluation_result&, std::int64_t step)> step_reason;
};

/// How an evaluation that says nothing about its rule is reported: a tool execution
/// notification of this level ("error"), with the status as the descriptor's id.
struct sarif_notification {
    std::string_view level;
    std::string message;
};

/// The notification for `r`, or none when its status is an answer (NoIssuesFound,
/// IssuesFound): the one place statuses map to notifications (Error, NothingEvaluated and
/// Stopped are errors).
[[nodiscard]] TDBG_DECL std::optional<sarif_notification> sarif_notification_of(const evaluation_result& r);

/// The artifact URI of a run's location (see sarif_options::run_location).
[[nodiscard]] TDBG_DECL std::string sarif_artifact_uri(std::string_view run_location);

/// The SARIF 2.1.0 log for `results` (one run), as a JSON value.
[[nodiscard]] TDBG_DECL format::json_value sarif_document(const std::vector<evaluation_result>& results,
                                                          const sarif_options& options = {});

/// sarif_document as text (indented; bytes that are not UTF-8 become U+FFFD), a newline last.
[[nodiscard]] TDBG_DECL std::string to_sarif(const std::vector<evaluation_result>& results,
                                             const sarif_options& options = {});

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/sarif.ipp"
#endif
