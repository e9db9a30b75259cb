#pragma once
// The documents `tdbg rules` writes of its results (cmd_rules.cpp): the text or the
// "smdebug-rules/1" JSON for standard output or -o, the --junit XML and the --sarif log, each
// saying when a stop cut an evaluation short. The library writes the documents
// (tdbg/rules/evaluation.hpp, junit.hpp, sarif.hpp); this is what the command adds to them.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "open_run.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/junit.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/sarif.hpp"

namespace tdbg::cli {

/// True when a stop cut one of `results` short (it ended `interrupted`).
[[nodiscard]] inline bool any_interrupted(const std::vector<tdbg::rules::evaluation_result>& results) {
    for (const tdbg::rules::evaluation_result& r : results) {
        if (r.end == tdbg::rules::evaluation_end::interrupted) {
            return true;
        }
    }
    return false;
}

/// The "smdebug-rules/1" document; when a stop cut evaluations short, its "interrupted" member
/// names the stop (`stop`: "SIGINT").
[[nodiscard]] inline tdbg::format::json_value
rules_json_document(const std::vector<tdbg::rules::evaluation_result>& results, const std::string& trial_name,
                    const tdbg::rules::invoke_record& invoked, std::string_view stop) {
    tdbg::format::json_value doc = tdbg::rules::rules_document(results, trial_name, invoked);
    if (any_interrupted(results)) {
        doc["interrupted"] = stop;
    }
    return doc;
}

/// The results as standard output (or -o) gets them: text, or the --json document.
[[nodiscard]] inline std::string rules_results_text(const commands::rules_options& o,
                                                    const std::vector<tdbg::rules::evaluation_result>& results,
                                                    const std::string& trial_name,
                                                    const tdbg::rules::invoke_record& invoked, std::string_view stop) {
    if (o.json) {
        return json_document_text(rules_json_document(results, trial_name, invoked, stop));
    }
    std::string printed = "run " + tdbg::terminal_safe(o.run) + " (trial " + tdbg::terminal_safe(trial_name) + ")\n";
    for (const tdbg::rules::evaluation_result& r : results) {
        printed += tdbg::rules::to_text(r);
    }
    return printed;
}

/// The --junit document, its suite named after the trial (and the stop, when one cut an
/// evaluation short): an evaluation cut short that found no issue is an error (status Stopped).
[[nodiscard]] inline std::string rules_junit_text(const std::vector<tdbg::rules::evaluation_result>& results,
                                                  const std::string& trial_name, double seconds, std::string_view stop,
                                                  bool allow_empty) {
    const std::string suite = any_interrupted(results)
                                  ? fmt::format("tdbg rules: {} (interrupted by {})", trial_name, stop)
                                  : fmt::format("tdbg rules: {}", trial_name);
    return tdbg::rules::to_junit_xml(results, suite, seconds, allow_empty);
}

/// The --sarif document: located at the run, each rule described by its registered summary,
/// the tool at `tool_version`.
[[nodiscard]] inline std::string rules_sarif_text(const commands::rules_options& o,
                                                  const std::vector<tdbg::rules::evaluation_result>& results,
                                                  std::string tool_version) {
    tdbg::rules::sarif_options sarif;
    sarif.run_location = o.run;
    sarif.tool_version = std::move(tool_version);
    sarif.rule_description = [](const tdbg::rules::evaluation_result& r) {
        const auto d = tdbg::rules::registry::lookup(r.rule) ? tdbg::rules::registry::describe(r.rule) : std::nullopt;
        return d ? d->summary : std::string();
    };
    return tdbg::rules::to_sarif(results, sarif);
}

} // namespace tdbg::cli
