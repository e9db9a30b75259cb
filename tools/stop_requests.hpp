#pragma once
// How `tdbg rules` is asked to stop (cmd_rules.cpp): the caller's stop_function
// (rules_options::stop) as the evaluation's threads ask it, a request kept once made, and the
// command line's stop_function, which SIGINT and SIGTERM answer (interruption.hpp).

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "interruption.hpp"
#include "tdbg/cli/commands.hpp"

namespace tdbg::cli {

/// The caller's requests to stop (rules_options::stop), as the evaluation asks for them from
/// its threads: a request, once made, stays made, with its reason.
class stop_requests {
public:
    explicit stop_requests(commands::stop_function stop) : stop_(std::move(stop)) {}

    /// True once a stop was requested.
    [[nodiscard]] bool requested() const { return wait(std::chrono::milliseconds(0)); }
    /// Waits up to `timeout` for a request (none can come: sleeps); true when one was made.
    [[nodiscard]] bool wait(std::chrono::milliseconds timeout) const {
        if (made_.load()) {
            return true;
        }
        if (!stop_) {
            if (timeout.count() > 0) {
                std::this_thread::sleep_for(timeout);
            }
            return false;
        }
        std::optional<commands::stop_reason> reason = stop_(timeout);
        if (!reason) {
            return false;
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!made_.load()) {
            reason_ = std::move(*reason);
            made_.store(true);
        }
        return true;
    }
    /// What the request is called ("SIGINT"); "" while none was made.
    [[nodiscard]] std::string name() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return reason_.name;
    }
    /// The exit status of an evaluation the request ended.
    [[nodiscard]] int exit_status() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return reason_.exit_status;
    }

private:
    commands::stop_function stop_;
    mutable std::mutex mutex_;
    mutable std::atomic<bool> made_{false};
    mutable commands::stop_reason reason_; // guarded by mutex_
};

/// The stop_function of the command line: a request once `signals` received SIGINT or SIGTERM,
/// named by the signal, with the exit status a shell reports for it (130, 143). `signals`
/// must outlive the function.
[[nodiscard]] inline commands::stop_function stop_at_signals(const interruption& signals) {
    return [&signals](std::chrono::milliseconds timeout) -> std::optional<commands::stop_reason> {
        if (timeout.count() == 0 ? !signals.requested() : !signals.wait(timeout)) {
            return std::nullopt;
        }
        return commands::stop_reason{std::string(signals.signal_name()), signals.exit_status()};
    };
}

} // namespace tdbg::cli
