#pragma once
/// \file
/// Rule results as JUnit XML, the report format CI systems (Jenkins, GitLab,
/// GitHub Actions' test reporters) read: one testsuite for the run, one
/// testcase per rule; a rule whose condition was met is a <failure> listing
/// the triggered steps, a rule that could not be evaluated an <error>.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/rule_params.hpp"

namespace tdbg::rules {

namespace detail {

/// `text` escaped for XML attribute values and character data; characters
/// XML 1.0 cannot hold become '?'.
inline std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default:
            if (u < 0x20 && c != '\n' && c != '\t' && c != '\r') {
                out += '?';
            } else {
                out += c;
            }
        }
    }
    return out;
}

} // namespace detail

/// The JUnit XML document for `results` of the run `suite_name`
/// (`seconds`: the time the evaluation took, reported on the suite).
[[nodiscard]] inline std::string to_junit_xml(const std::vector<evaluation_result>& results, const std::string& suite_name,
                                              double seconds = 0.0) {
    std::size_t failures = 0;
    std::size_t errors = 0;
    for (const auto& r : results) {
        failures += r.status() == evaluation_status::issues_found ? 1 : 0;
        errors += r.status() == evaluation_status::error ? 1 : 0;
    }
    const std::string counts = detail::concat(R"(tests=")", std::to_string(results.size()), R"(" failures=")",
                                      std::to_string(failures), R"(" errors=")", std::to_string(errors), "\"");
    const std::string time = std::to_string(seconds);
    std::string out = R"(<?xml version="1.0" encoding="UTF-8"?>)" "\n";
    out += detail::concat(R"(<testsuites name="tdbg rules" )", counts, R"( time=")", time, "\">\n");
    out += detail::concat(R"(  <testsuite name=")", detail::xml_escape(suite_name), "\" ", counts, R"( skipped="0" time=")", time,
                  "\">\n");
    for (const auto& r : results) {
        out += detail::concat(R"(    <testcase classname="tdbg.rules.)", detail::xml_escape(r.rule), R"(" name=")",
                      detail::xml_escape(r.display_name()), "\">\n");
        if (r.status() == evaluation_status::issues_found) {
            std::string steps;
            for (auto s : r.triggered_steps) {
                steps.append(steps.empty() ? "" : ", ").append(std::to_string(s));
            }
            out += detail::concat(R"(      <failure type="IssuesFound" message=")",
                          detail::xml_escape(detail::concat(r.display_name(), " triggered at steps ", format_steps(r.triggered_steps))),
                          "\">", detail::xml_escape("triggered at steps: " + steps), "</failure>\n");
        } else if (r.status() == evaluation_status::error) {
            out += detail::concat(R"(      <error type="Error" message=")", detail::xml_escape(r.error), "\">",
                          detail::xml_escape(r.error), "</error>\n");
        }
        out += "      <system-out>" + detail::xml_escape(to_text(r)) + "</system-out>\n";
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

} // namespace tdbg::rules
