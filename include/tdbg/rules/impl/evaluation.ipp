#pragma once
/// \file
/// Definitions of tdbg/rules/evaluation.hpp.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::rules {

TDBG_DECL std::vector<std::int64_t> evaluation_result::all_skipped_steps() const {
    std::vector<std::int64_t> out;
    for (const auto& item : skipped_steps) {
        out.insert(out.end(), item.second.begin(), item.second.end());
    }
    std::sort(out.begin(), out.end());
    return out;
}

TDBG_DECL std::string format_steps(const std::vector<std::int64_t>& steps, std::size_t limit) {
    std::string out;
    std::size_t items = 0;
    for (std::size_t i = 0; i < steps.size();) {
        std::size_t j = i;
        while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) {
            ++j;
        }
        if (items == limit) {
            out += fmt::format(", ... ({} steps)", steps.size());
            break;
        }
        out += fmt::format("{}{}", out.empty() ? "" : ", ", steps[i]);
        if (j > i + 1) {
            out += fmt::format("-{}", steps[j]);
        } else if (j == i + 1) {
            out += fmt::format(", {}", steps[j]);
            ++items;
        }
        ++items;
        i = j + 1;
    }
    return out;
}

TDBG_DECL format::json_value to_json(const evaluation_result& r) {
    format::json_value j = format::json_value::object();
    j["rule"] = r.rule;
    j["configuration_name"] = r.display_name();
    // The parameters given, with the value the rule read from each (typed, as in
    // smdebug's documents: "threshold": 0.001, not "0.001"); the string as given
    // when the rule did not read it (an error before it got there).
    j["params"] = format::json_value::object();
    for (const auto& [key, text] : r.params) {
        const format::json_value* resolved = r.resolved_params.find(key);
        j["params"][key] = resolved != nullptr ? *resolved : format::json_value(text);
    }
    j["resolved_params"] = r.resolved_params;
    j["triggered_steps"] = format::json_value::array_of(r.triggered_steps);
    j["not_triggered_steps"] = format::json_value::array_of(r.not_triggered_steps);
    j["skipped_steps"] = format::json_value::object();
    for (const auto& [reason, steps] : r.skipped_steps) {
        j["skipped_steps"][reason] = format::json_value::array_of(steps);
    }
    j["status"] = std::string(status_name(r.status()));
    j["end"] = std::string(evaluation_end_name(r.end));
    if (!r.error.empty()) {
        j["error"] = r.error;
    }
    return j;
}

TDBG_DECL format::json_value rules_document(const std::vector<evaluation_result>& results, const std::string& trial_name,
                                           const invoke_record& invoked) {
    format::json_value j = format::json_value::object();
    j["format"] = "smdebug-rules/1";
    j["producer"] = "tdbg rules";
    j["trial_name"] = trial_name;
    format::json_value& invoke = j["invoke"];
    invoke["start_step"] = invoked.start_step ? format::json_value(*invoked.start_step) : format::json_value();
    invoke["end_step"] = invoked.end_step ? format::json_value(*invoked.end_step) : format::json_value();
    invoke["raise_eval_cond"] = invoked.raise_eval_cond;
    j["results"] = format::json_value::array();
    for (const auto& r : results) {
        j["results"].push_back(to_json(r));
    }
    return j;
}

TDBG_DECL std::string to_text(const evaluation_result& r) {
    // For a person: names and messages from the run or the configuration are printed escaped.
    const auto safe = [](std::string_view text) { return tdbg::detail::terminal_safe(text); };
    std::string out = safe(r.display_name());
    if (r.display_name() != r.rule) {
        out += fmt::format(" ({})", safe(r.rule));
    }
    out += fmt::format(": {}", status_name(r.status()));
    if (!r.params.empty()) {
        out += "  [";
        bool first = true;
        for (const auto& [k, v] : r.params) {
            out.append(first ? "" : ", ").append(safe(k)).append("=").append(safe(v));
            first = false;
        }
        out += "]";
    }
    out += "\n";
    if (!r.error.empty()) {
        out += fmt::format("  error: {}\n", safe(r.error));
    }
    if (!r.triggered_steps.empty()) {
        out += fmt::format("  triggered at steps {}\n", format_steps(r.triggered_steps));
    }
    const std::size_t evaluated = r.triggered_steps.size() + r.not_triggered_steps.size();
    out += fmt::format("  steps evaluated: {}", evaluated);
    for (const auto& [reason, steps] : r.skipped_steps) {
        out += fmt::format(", skipped ({}): {}", safe(reason), steps.size());
    }
    out += "\n";
    return out;
}

} // namespace tdbg::rules
