#pragma once
/// \file
/// Definitions of tdbg/rules/schedule.hpp.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/schedule.hpp"

namespace tdbg::rules {

namespace detail {

// The turns of evaluations side by side: any thread that calls work() takes the evaluation
// whose turn is due first; one that waits for a step comes back a poll interval later.
class turn_queue {
public:
    turn_queue(const std::vector<rule_evaluation*>& evaluations, const schedule_options& options)
        : evaluations_(evaluations), options_(options), begun_(evaluations.size(), 0),
          announced_(evaluations.size()), remaining_(evaluations.size()) {
        for (std::size_t i = 0; i < evaluations.size(); ++i) {
            queue_.push_back({i, clock::time_point{}});
        }
    }

    // Takes turns until every evaluation has ended. Never throws: an exception a turn threw is
    // kept for rethrow().
    void work() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            changed_.wait(lock, [this] { return remaining_ == 0 || !queue_.empty(); });
            if (remaining_ == 0) {
                return;
            }
            const due next = queue_.front();
            queue_.pop_front();
            lock.unlock();
            bool ended = true;
            try {
                ended = take(next);
            } catch (...) {
                const std::lock_guard<std::mutex> guard(mutex_);
                if (!error_) {
                    error_ = std::current_exception();
                }
                evaluations_[next.index]->interrupt();
            }
            lock.lock();
            if (ended) {
                --remaining_;
            } else {
                queue_.push_back({next.index, clock::now() + options_.poll_interval}); // ordered by time
            }
            changed_.notify_all();
        }
    }

    void rethrow() const {
        if (error_) {
            std::rethrow_exception(error_);
        }
    }

private:
    using clock = std::chrono::steady_clock;
    struct due {
        std::size_t index;
        clock::time_point at;
    };

    [[nodiscard]] bool stop_during(std::chrono::milliseconds d) const {
        if (options_.wait) {
            return options_.wait(d);
        }
        if (d.count() > 0) {
            std::this_thread::sleep_for(d);
        }
        return false;
    }

    // One turn of evaluation `next.index`, once it is due; true when it has ended.
    bool take(const due& next) {
        rule_evaluation& e = *evaluations_[next.index];
        turn t;
        t.first = begun_[next.index] == 0;
        begun_[next.index] = 1;
        const auto now = clock::now();
        if (next.at > now && stop_during(std::chrono::ceil<std::chrono::milliseconds>(next.at - now))) {
            e.interrupt(); // a stop while it waited for a step
            t.advanced.state = evaluation_state::done;
            t.advanced.progressed = true;
        } else {
            t.advanced = e.advance();
            if (t.advanced.state == evaluation_state::waiting) {
                rule_base& r = e.rule();
                const std::optional<std::int64_t>& w = t.advanced.waiting_for;
                if (announced_[next.index] != w) { // said once per step waited for
                    announced_[next.index] = w;
                    r.logger().debug(w ? fmt::format("rule {}: waiting for step {}", r.name(), *w)
                                       : fmt::format("rule {}: waiting for the run's first step", r.name()));
                }
                t.fired_while_waiting = e.check_while_waiting();
                if (t.fired_while_waiting) {
                    r.logger().debug(fmt::format("rule {}: fired while waiting for step {}", r.name(),
                                                 w ? fmt::to_string(*w) : std::string("the first")));
                }
            }
        }
        if (options_.on_turn) {
            options_.on_turn(next.index, t);
        }
        return t.advanced.state == evaluation_state::done;
    }

    const std::vector<rule_evaluation*>& evaluations_;
    const schedule_options& options_;
    // Each entry touched only by the thread taking that evaluation's turn.
    std::vector<char> begun_;
    std::vector<std::optional<std::optional<std::int64_t>>> announced_; // the step whose wait was logged
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<due> queue_;
    std::size_t remaining_;
    std::exception_ptr error_;
};

} // namespace detail

TDBG_DECL schedule_report take_turns(const std::vector<rule_evaluation*>& evaluations,
                                     const schedule_options& options) {
    detail::turn_queue turns(evaluations, options);
    const std::size_t jobs = options.jobs == 0 ? std::max(1U, std::thread::hardware_concurrency()) : options.jobs;
    const std::size_t threads = std::max<std::size_t>(1, std::min(evaluations.size(), jobs));
    schedule_report report;
    report.threads = threads;
    {
        std::vector<std::thread> helpers;
        // Joined however this block is left: a joinable std::thread must never be destroyed.
        struct joiner {
            explicit joiner(std::vector<std::thread>& to_join) : threads(to_join) {}
            std::vector<std::thread>& threads;
            joiner(const joiner&) = delete;
            joiner& operator=(const joiner&) = delete;
            joiner(joiner&&) = delete;
            joiner& operator=(joiner&&) = delete;
            ~joiner() {
                for (std::thread& t : threads) {
                    t.join();
                }
            }
        } const join_all{helpers};
        helpers.reserve(threads);
        for (std::size_t i = 1; i < threads; ++i) {
            try {
                helpers.emplace_back([&turns] { turns.work(); });
            } catch (const std::system_error& e) {
                report.threads_missing = threads - i;
                report.why = e.what();
                break;
            }
        }
        turns.work();
    }
    turns.rethrow();
    return report;
}

} // namespace tdbg::rules
