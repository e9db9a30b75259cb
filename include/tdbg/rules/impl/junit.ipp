#pragma once
/// \file
/// Definitions of tdbg/rules/junit.hpp.

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tdbg/core/detail/markup.hpp"
#include "tdbg/rules/junit.hpp"

namespace tdbg::rules {

TDBG_DECL std::string to_junit_xml(const std::vector<evaluation_result>& results, const std::string& suite_name,
                                   double seconds, bool allow_empty) {
    using tdbg::detail::markup_escape;
    std::size_t failures = 0;
    std::size_t errors = 0;
    std::size_t skipped = 0;
    for (const auto& r : results) {
        const evaluation_status status = r.status();
        failures += status == evaluation_status::issues_found ? 1 : 0;
        errors += status == evaluation_status::error || status == evaluation_status::stopped ||
                          (status == evaluation_status::nothing_evaluated && !allow_empty)
                      ? 1
                      : 0;
        skipped += status == evaluation_status::nothing_evaluated && allow_empty ? 1 : 0;
    }
    const std::string counts =
        fmt::format(R"(tests="{}" failures="{}" errors="{}")", results.size(), failures, errors);
    const std::string time = fmt::format("{:.6f}", seconds);
    std::string out = R"(<?xml version="1.0" encoding="UTF-8"?>)" "\n";
    out += fmt::format(R"(<testsuites name="tdbg rules" {} time="{}">)" "\n", counts, time);
    out += fmt::format(R"(  <testsuite name="{}" {} skipped="{}" time="{}">)" "\n", markup_escape(suite_name), counts,
                       skipped, time);
    for (const auto& r : results) {
        out += fmt::format(R"(    <testcase classname="tdbg.rules.{}" name="{}">)" "\n", markup_escape(r.rule),
                           markup_escape(r.display_name()));
        if (r.status() == evaluation_status::issues_found) {
            // The message says why (the first reasons); the body lists every step and the reasons, capped.
            std::string message = fmt::format("{} triggered at steps {}", r.display_name(), format_steps(r.triggered_steps));
            const std::vector<std::string> first = trigger_reason_lines(r, 3);
            if (!first.empty()) {
                message += fmt::format(": {}", fmt::join(first, "; "));
            }
            std::string body = fmt::format("triggered at steps: {}", fmt::join(r.triggered_steps, ", "));
            for (const std::string& line : trigger_reason_lines(r, 20)) {
                body += fmt::format("\n{}", line);
            }
            out += fmt::format(R"(      <failure type="IssuesFound" message="{}">{}</failure>)" "\n",
                               markup_escape(message), markup_escape(body));
        } else if (r.status() == evaluation_status::error) {
            out += fmt::format(R"(      <error type="Error" message="{}">{}</error>)" "\n", markup_escape(r.error),
                               markup_escape(r.error));
        } else if (r.status() == evaluation_status::stopped) {
            // An evaluation cut short must not pass a gate: it is an error, saying where it stopped.
            const std::string message =
                r.next_step ? fmt::format("{} was interrupted before step {}", r.display_name(), *r.next_step)
                            : fmt::format("{} was interrupted before its first step", r.display_name());
            out += fmt::format(R"(      <error type="Stopped" message="{}">{}</error>)" "\n", markup_escape(message),
                               markup_escape(message));
        } else if (r.status() == evaluation_status::nothing_evaluated) {
            // Nothing checked is no pass: an error, saying why nothing was evaluated.
            const std::string message =
                fmt::format("{} evaluated no step: {}", r.display_name(), r.nothing_evaluated_reason);
            if (allow_empty) {
                out += fmt::format(R"(      <skipped message="{}"/>)" "\n", markup_escape(message));
            } else {
                out += fmt::format(R"(      <error type="NothingEvaluated" message="{}">{}</error>)" "\n",
                                   markup_escape(message),
                                   markup_escape(fmt::format("{}\n{}", message, describe_coverage(r))));
            }
        }
        out += fmt::format("      <system-out>{}</system-out>\n", markup_escape(to_text(r)));
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

} // namespace tdbg::rules
