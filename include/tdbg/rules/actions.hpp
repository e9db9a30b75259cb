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

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/storage/storage.hpp"

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
    TDBG_DECL void invoke(const trigger& t, const rule_logger& logger) const;

private:
    bool log_message_ = true;
    std::vector<action> actions_;
};

/// Writes the stop marker for `t` into `storage` (atomically, with put).
TDBG_DECL void write_stop_marker(const any_storage& storage, const trigger& t);

/// The stop-training action for the run in `storage`: writes the stop marker
/// at the first trigger only (the step that asked first is the one recorded).
[[nodiscard]] TDBG_DECL rule_actions::action stop_training_action(any_storage storage);

/// Adds the actions smdebug's `action_str` names (see the file comment) for the
/// run in `storage`. Throws config_error when the text is not JSON of that shape.
TDBG_DECL void add_actions_from_string(rule_actions& actions, std::string_view action_str, const any_storage& storage,
                                       const rule_logger& logger);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/actions.ipp"
#endif
