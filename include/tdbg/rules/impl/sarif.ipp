#pragma once
/// \file
/// Definitions of tdbg/rules/sarif.hpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/format/json.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/sarif.hpp"

namespace tdbg::rules {

namespace detail {

/// True when `location` starts with a URI scheme and "://" (s3://bucket/prefix, file:///x).
inline bool has_uri_scheme(std::string_view location) {
    const auto colon = location.find("://");
    if (colon == std::string_view::npos || colon == 0) {
        return false;
    }
    const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (!letter(location[0])) {
        return false;
    }
    for (std::size_t i = 1; i < colon; ++i) {
        const char c = location[i];
        if (!letter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') {
            return false;
        }
    }
    return true;
}

/// `path` with every byte but unreserved characters and '/' percent-encoded.
inline std::string percent_encoded_path(std::string_view path) {
    std::string out;
    for (const char c : path) {
        const auto byte = static_cast<unsigned char>(c);
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                           c == '.' || c == '_' || c == '~' || c == '/';
        out += plain ? std::string(1, c) : fmt::format("%{:02X}", byte);
    }
    return out;
}

inline format::json_value sarif_message(std::string text) {
    return format::json_value::object({{"text", std::move(text)}});
}

/// tool.driver.rules' entry for `r`: its display name as id, the rule as name, its parameters
/// and status in properties.
inline format::json_value sarif_rule(const evaluation_result& r, const sarif_options& options) {
    using format::json_value;
    auto rule = json_value::object();
    rule["id"] = r.display_name();
    rule["name"] = r.rule;
    rule["shortDescription"] = sarif_message(fmt::format("tdbg rule {}", r.rule));
    if (options.rule_description) {
        if (std::string description = options.rule_description(r); !description.empty()) {
            rule["fullDescription"] = sarif_message(std::move(description));
        }
    }
    rule["defaultConfiguration"] = json_value::object({{"level", "error"}});
    auto properties = json_value::object();
    auto given = json_value::object();
    for (const auto& [key, value] : r.params) {
        given[key] = value;
    }
    properties["parameters"] = std::move(given);
    properties["resolved_parameters"] = r.resolved_params;
    properties["status"] = std::string(status_name(r.status()));
    rule["properties"] = std::move(properties);
    return rule;
}

/// Appends to `out` a result per step at which `r` (the rule at `index` of the driver's rules)
/// triggered, each located at the artifact `uri` when `located`.
inline void append_sarif_results(format::json_value& out, const evaluation_result& r, std::size_t index,
                                 const sarif_options& options, bool located, const std::string& uri) {
    using format::json_value;
    for (const std::int64_t step : r.triggered_steps) {
        std::string text = fmt::format("{} triggered at step {}", r.display_name(), step);
        // The rule's own reason for the step, unless the caller gives another.
        const auto own = r.trigger_reasons.find(step);
        const std::string reason = options.step_reason ? options.step_reason(r, step)
                                   : own != r.trigger_reasons.end() ? own->second
                                                                    : std::string();
        if (!reason.empty()) {
            text += ": " + reason;
        }
        auto result = json_value::object();
        result["ruleId"] = r.display_name();
        result["ruleIndex"] = index;
        result["level"] = "error";
        result["message"] = sarif_message(std::move(text));
        if (located) {
            auto artifact = json_value::object({{"uri", uri}, {"index", 0}});
            auto physical = json_value::object({{"artifactLocation", std::move(artifact)}});
            auto location = json_value::object({{"physicalLocation", std::move(physical)}});
            result["locations"] = json_value::array();
            result["locations"].push_back(std::move(location));
        }
        result["properties"] = json_value::object({{"step", step}});
        out.push_back(std::move(result));
    }
}

/// The tool execution notification of `r` (the rule at `index` of the driver's rules), or
/// none when its status is an answer (sarif_notification_of).
inline std::optional<format::json_value> sarif_notification_json(const evaluation_result& r, std::size_t index) {
    using format::json_value;
    auto notification = sarif_notification_of(r);
    if (!notification) {
        return std::nullopt;
    }
    auto n = json_value::object();
    n["level"] = std::string(notification->level);
    n["message"] = sarif_message(std::move(notification->message));
    n["descriptor"] = json_value::object({{"id", std::string(status_name(r.status()))}});
    n["associatedRule"] = json_value::object({{"id", r.display_name()}, {"index", index}});
    return n;
}

/// The one run of the log: the tool with its `rules`, the invocation (successful when there is
/// no notification), the artifact `uri` when `located`, and the results.
inline format::json_value sarif_run(format::json_value rules, format::json_value results,
                                    format::json_value notifications, const sarif_options& options, bool located,
                                    const std::string& uri) {
    using format::json_value;
    auto driver = json_value::object();
    driver["name"] = "tdbg";
    if (!options.tool_version.empty()) {
        driver["version"] = options.tool_version;
    }
    driver["rules"] = std::move(rules);
    auto invocation = json_value::object();
    invocation["executionSuccessful"] = notifications.size() == 0;
    invocation["toolExecutionNotifications"] = std::move(notifications);

    auto run = json_value::object();
    run["tool"] = json_value::object({{"driver", std::move(driver)}});
    run["invocations"] = json_value::array();
    run["invocations"].push_back(std::move(invocation));
    if (located) {
        run["artifacts"] = json_value::array();
        run["artifacts"].push_back(json_value::object({{"location", json_value::object({{"uri", uri}})}}));
    }
    run["results"] = std::move(results);
    return run;
}

} // namespace detail

TDBG_DECL std::optional<sarif_notification> sarif_notification_of(const evaluation_result& r) {
    switch (r.status()) {
    case evaluation_status::no_issues_found:
    case evaluation_status::issues_found: return std::nullopt;
    case evaluation_status::error: return sarif_notification{"error", r.error};
    case evaluation_status::nothing_evaluated:
        // Nothing checked is not a pass.
        return sarif_notification{"error", fmt::format("{} evaluated nothing: {}", r.display_name(),
                                                       r.nothing_evaluated_reason.empty() ? std::string("no step was evaluated")
                                                                                           : r.nothing_evaluated_reason)};
    case evaluation_status::stopped:
        // Cut short, it cannot say there is no issue: an error, as in the JUnit report.
        return sarif_notification{"error", r.next_step ? fmt::format("{} was interrupted before step {}",
                                                                     r.display_name(), *r.next_step)
                                                       : fmt::format("{} was interrupted before its first step",
                                                                     r.display_name())};
    }
    return sarif_notification{"error", r.error};
}

TDBG_DECL std::string sarif_artifact_uri(std::string_view run_location) {
    if (detail::has_uri_scheme(run_location)) {
        return std::string(run_location);
    }
    if (!run_location.empty() && run_location.front() == '/') {
        return "file://" + detail::percent_encoded_path(run_location);
    }
    return detail::percent_encoded_path(run_location);
}

TDBG_DECL format::json_value sarif_document(const std::vector<evaluation_result>& results,
                                            const sarif_options& options) {
    using format::json_value;
    const bool located = !options.run_location.empty();
    const std::string uri = sarif_artifact_uri(options.run_location);

    auto rules = json_value::array();
    auto sarif_results = json_value::array();
    auto notifications = json_value::array();
    for (std::size_t index = 0; index < results.size(); ++index) {
        const evaluation_result& r = results[index];
        rules.push_back(detail::sarif_rule(r, options));
        detail::append_sarif_results(sarif_results, r, index, options, located, uri);
        if (auto n = detail::sarif_notification_json(r, index)) {
            notifications.push_back(std::move(*n));
        }
    }

    auto doc = json_value::object();
    doc["$schema"] = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
    doc["version"] = "2.1.0";
    doc["runs"] = json_value::array();
    doc["runs"].push_back(
        detail::sarif_run(std::move(rules), std::move(sarif_results), std::move(notifications), options, located, uri));
    return doc;
}

TDBG_DECL std::string to_sarif(const std::vector<evaluation_result>& results, const sarif_options& options) {
    format::json_style style;
    style.indent = 2;
    style.replace_invalid_utf8 = true;
    return format::dump_json(sarif_document(results, options), style) + "\n";
}

} // namespace tdbg::rules
