#pragma once
/// \file
/// Definitions of tdbg/rules/actions.hpp.

#include <atomic>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/rules/actions.hpp"

namespace tdbg::rules {

TDBG_DECL void rule_actions::invoke(const trigger& t, const rule_logger& logger) const {
    if (log_message_) {
        logger.warning(fmt::format("rule {}: condition met at step {}{}", t.rule, t.step,
                                   t.reason.empty() ? std::string() : fmt::format(" ({})", t.reason)));
    }
    for (const action& a : actions_) {
        a(t, logger);
    }
}

TDBG_DECL void write_stop_marker(const any_storage& storage, const trigger& t) {
    stop_request request;
    request.rule = t.rule;
    request.step = t.step;
    request.reason = t.reason.empty() ? fmt::format("rule {} met its evaluation condition at step {}", t.rule, t.step)
                                      : t.reason;
    storage.put(std::string(format::stop_marker_key), make_stop_marker(request));
}

TDBG_DECL rule_actions::action stop_training_action(any_storage storage) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    return [storage = std::move(storage), done](const trigger& t, const rule_logger& logger) {
        if (done->exchange(true)) {
            return;
        }
        write_stop_marker(storage, t);
        logger.warning(fmt::format("rule {}: asked training to stop (wrote {} in {})", t.rule, format::stop_marker_key,
                                   storage.describe()));
    };
}

TDBG_DECL void add_actions_from_string(rule_actions& actions, std::string_view action_str, const any_storage& storage,
                                       const rule_logger& logger) {
    const std::string text(action_str);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        return;
    }
    format::json_value j;
    try {
        j = format::parse_json(text, "action_str", "action_str");
    } catch (const format_error&) {
        j = format::json_value();
    }
    if (!(j.is_object() || j.is_array())) {
        throw config_error(fmt::format("action_str is not a JSON object or list of objects: '{}'", text.substr(0, 200)));
    }
    const std::vector<format::json_value> list = j.is_array() ? j.items() : std::vector<format::json_value>{j};
    for (const auto& item : list) {
        const format::json_value* name_value = item.is_object() ? item.find("name") : nullptr;
        if (name_value == nullptr || !name_value->is_string()) {
            throw config_error(fmt::format("action_str: each action is an object with a \"name\" (got {})",
                                           format::dump_json(item, format::json_style{-1, false, true}).substr(0, 200)));
        }
        std::string name = name_value->as_string();
        for (char& c : name) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (name == "stoptraining") {
            actions.add(stop_training_action(storage));
        } else if (name == "email" || name == "sms") {
            logger.warning(fmt::format("action '{}' needs AWS SNS and is not supported by tdbg; ignored", name));
        } else {
            throw config_error(fmt::format("action_str: unknown action '{}' (expected StopTraining, Email or SMS)", name));
        }
    }
}

} // namespace tdbg::rules
