#pragma once
/// \file
/// Actions: what happens when a rule's condition is met at a step. Built in:
/// a log message (on by default), and "stop training", which writes the stop
/// marker `tdbg_stop_training.json` at the root of the run, through its
/// storage, so that the training's hook::should_stop() sees it:
///
///     {"rule": "VanishingGradient", "step": 7, "reason": "..."}
///
/// smdebug's `action_str` (a rule parameter holding JSON: one object or a list,
/// e.g. `{"name": "StopTraining", "training_job_prefix": "job-1"}`) is
/// understood: "stoptraining" becomes the stop-marker action (the prefix, which
/// names a SageMaker job to stop, is not needed: the marker is in the run);
/// "email" and "sms" need AWS and are logged as not supported.

#include <atomic>
#include <cctype>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdbg/core/error.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/stop_marker.hpp"
#include "tdbg/rules/logger.hpp"

namespace tdbg::rules {

/// A step where a rule's condition was met, as actions see it.
struct trigger {
    std::string rule;
    std::int64_t step = 0;
    std::string reason;
};

/// The actions run, in order, at each step where a rule's condition is met.
class rule_actions {
public:
    /// One action.
    using action = std::function<void(const trigger&, const rule_logger&)>;

    /// Only the log message.
    rule_actions() = default;

    /// Turns the log message ("rule X: condition met at step N") on or off.
    rule_actions& log_message(bool on) {
        log_message_ = on;
        return *this;
    }
    /// Adds `a`, run after those added before.
    rule_actions& add(action a) {
        actions_.push_back(std::move(a));
        return *this;
    }
    /// True when nothing at all happens on a trigger.
    [[nodiscard]] bool empty() const noexcept { return !log_message_ && actions_.empty(); }
    /// The number of actions besides the log message.
    [[nodiscard]] std::size_t size() const noexcept { return actions_.size(); }

    /// Runs every action for `t`.
    void invoke(const trigger& t, const rule_logger& logger) const {
        if (log_message_) {
            logger.warning("rule " + t.rule + ": condition met at step " + std::to_string(t.step) +
                           (t.reason.empty() ? std::string() : " (" + t.reason + ")"));
        }
        for (const action& a : actions_) {
            a(t, logger);
        }
    }

private:
    bool log_message_ = true;
    std::vector<action> actions_;
};

/// Writes the stop marker for `t` into `storage` (atomically, with put).
template <class Storage>
void write_stop_marker(Storage& storage, const trigger& t) {
    stop_request request;
    request.rule = t.rule;
    request.step = t.step;
    request.reason = t.reason.empty() ? "rule " + t.rule + " met its evaluation condition at step " + std::to_string(t.step)
                                      : t.reason;
    storage.put(std::string(format::stop_marker_key), make_stop_marker(request));
}

/// The stop-training action for the run in `storage`: writes the stop marker
/// at the first trigger only (the step that asked first is the one recorded).
template <class Storage>
[[nodiscard]] rule_actions::action stop_training_action(Storage storage) {
    auto shared = std::make_shared<Storage>(std::move(storage));
    auto done = std::make_shared<std::atomic<bool>>(false);
    return [shared, done](const trigger& t, const rule_logger& logger) {
        if (done->exchange(true)) {
            return;
        }
        write_stop_marker(*shared, t);
        logger.warning("rule " + t.rule + ": asked training to stop (wrote " + std::string(format::stop_marker_key) +
                       " in " + shared->describe() + ")");
    };
}

/// Adds the actions smdebug's `action_str` names (see the file comment) for the
/// run in `storage`. Throws config_error when the text is not JSON of that shape.
template <class Storage>
void add_actions_from_string(rule_actions& actions, std::string_view action_str, const Storage& storage,
                             const rule_logger& logger) {
    const auto text = std::string(action_str);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        return;
    }
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !(j.is_object() || j.is_array())) {
        throw config_error("action_str is not a JSON object or list of objects: '" + text.substr(0, 200) + "'");
    }
    const nlohmann::json list = j.is_array() ? j : nlohmann::json::array({j});
    for (const auto& item : list) {
        if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
            throw config_error("action_str: each action is an object with a \"name\" (got " + item.dump().substr(0, 200) + ")");
        }
        std::string name = item["name"].get<std::string>();
        for (char& c : name) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (name == "stoptraining") {
            actions.add(stop_training_action(storage));
        } else if (name == "email" || name == "sms") {
            logger.warning("action '" + name + "' needs AWS SNS and is not supported by tdbg; ignored");
        } else {
            throw config_error("action_str: unknown action '" + name + "' (expected StopTraining, Email or SMS)");
        }
    }
}

} // namespace tdbg::rules
