#pragma once
/// \file
/// Definitions of tdbg/rules/watch.hpp.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/schedule.hpp"
#include "tdbg/rules/watch.hpp"

namespace tdbg::rules {

namespace detail {

// What the watcher's thread and its callers share. The rules and the slots are the
// thread's alone once it runs; callers see copies published under the mutex.
class watch_state {
public:
    watch_state(std::optional<any_storage> storage, std::vector<rule_factory> factories, std::vector<any_rule> rules,
                watch_options options)
        : options_(std::move(options)), storage_(std::move(storage)), factories_(std::move(factories)) {
        if (!storage_) {
            if (rules.empty()) {
                throw usage_error("tdbg::rules::watcher: no rule to watch with");
            }
            storage_ = rules.front().base_trial().storage();
            for (any_rule& r : rules) {
                add_slot(std::move(r));
            }
            opened_ = true;
        } else if (factories_.empty()) {
            throw usage_error(fmt::format("tdbg::rules::watcher: no rule to watch {} with", storage_->describe()));
        }
        publish(); // the rules' names, before the first step
        thread_ = std::thread([this] { run(); });
    }

    watch_state(const watch_state&) = delete;
    watch_state& operator=(const watch_state&) = delete;
    watch_state(watch_state&&) = delete;
    watch_state& operator=(watch_state&&) = delete;
    ~watch_state() { (void)interrupt(); }

    bool wait_for_step(std::int64_t step, const std::optional<std::chrono::milliseconds>& timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto reached = [&] {
            if (ended_) {
                return true;
            }
            if (!opened_shared_) {
                return false;
            }
            for (std::size_t i = 0; i < results_.size(); ++i) {
                if (!done_[i] && !(results_[i].next_step && *results_[i].next_step > step)) {
                    return false;
                }
            }
            return true;
        };
        wake_locked();
        const bool ok = timeout ? changed_.wait_for(lock, *timeout, reached) : (changed_.wait(lock, reached), true);
        if (error_) {
            std::rethrow_exception(error_);
        }
        return ok;
    }

    std::vector<evaluation_result> finish() {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_locked();
        changed_.wait(lock, [this] { return ended_; });
        if (error_) {
            std::rethrow_exception(error_);
        }
        return results_;
    }

    std::vector<evaluation_result> interrupt() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
            stop_flag_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) {
            thread_.join();
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        return results_;
    }

    std::vector<evaluation_result> results() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return results_;
    }
    std::vector<trigger> triggers() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return triggers_;
    }
    bool triggered() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return !triggers_.empty();
    }
    bool done() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return ended_;
    }

private:
    struct slot {
        slot(any_rule r, const invoke_options& options) : rule(std::move(r)), evaluation(rule.get(), options) {}
        any_rule rule;              // on the heap: the evaluation's reference to it survives moves
        rule_evaluation evaluation; // records a rule's error in its result
    };

    void add_slot(any_rule r) {
        r.actions().add([this](const trigger& t, const rule_logger&) { on_trigger(t); });
        invoke_options invoke;
        invoke.start_step = options_.start_step;
        invoke.end_step = options_.end_step;
        invoke.threads = options_.threads;
        invoke.poll_interval = options_.poll_interval;
        // Heard between two steps (the actions of a step where the condition was met run first).
        invoke.stop_requested = [this] { return stop_flag_.load(); };
        invoke.record_errors = true;
        slots_.emplace_back(std::move(r), invoke);
    }

    // Runs on the watcher's thread, from inside a rule's evaluation.
    void on_trigger(const trigger& t) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            triggers_.push_back(t);
        }
        if (options_.stop_training && !marker_written_) {
            marker_written_ = true;
            write_stop_marker(*storage_, t);
        }
        if (options_.on_trigger) {
            options_.on_trigger(t);
        }
    }

    // Opens the run once its collections file is there and builds the rules over it.
    void open() {
        const bool ended = storage_->exists(std::string(format::end_marker_key)); // before: collections come first
        trial_options topts = options_.trial;
        topts.collection_wait = std::chrono::milliseconds(0); // waited for here, where stop() is heard
        std::optional<trial> t;
        try {
            t.emplace(*storage_, options_.trial_name.value_or(storage_->describe()), step_range{}, topts);
        } catch (const missing_collection_files&) {
            opened_ = ended; // a run that ended without one has nothing for the rules
            return;
        }
        for (const rule_factory& make : factories_) {
            any_rule r = make(*t);
            if (options_.logger) {
                r.set_logger(*options_.logger);
            }
            add_slot(std::move(r));
        }
        opened_ = true;
    }

    void publish() {
        std::vector<evaluation_result> results;
        std::vector<bool> done;
        for (const slot& s : slots_) {
            results.push_back(s.evaluation.result());
            done.push_back(s.evaluation.done());
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        results_ = std::move(results);
        done_ = std::move(done);
        opened_shared_ = opened_;
    }

    void wake_locked() {
        poked_ = true;
        wake_.notify_all();
    }

    // Waits at most `d` for a stop or a look asked for (wait_for_step, finish); true at a stop.
    bool wait(std::chrono::milliseconds d) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.notify_all();
        wake_.wait_for(lock, d, [this] { return stopping_ || poked_; });
        poked_ = false;
        return stopping_;
    }

    void run() {
        try {
            // The run opened (its collections file there), or a stop first.
            while (!opened_ && !stop_flag_) {
                open();
                if (!opened_) {
                    (void)wait(options_.poll_interval);
                }
            }
            if (opened_ != opened_shared_) {
                publish();
            }
            std::vector<rule_evaluation*> evaluations;
            for (slot& s : slots_) {
                evaluations.push_back(&s.evaluation);
            }
            schedule_options schedule; // one thread: the watcher's
            schedule.poll_interval = options_.poll_interval;
            schedule.wait = [this](std::chrono::milliseconds d) { return wait(d); };
            schedule.on_turn = [this](std::size_t, const turn& t) {
                if (t.advanced.progressed || t.fired_while_waiting) {
                    publish();
                    const std::lock_guard<std::mutex> lock(mutex_);
                    changed_.notify_all();
                }
            };
            take_turns(evaluations, schedule);
            publish();
            const std::lock_guard<std::mutex> lock(mutex_);
            ended_ = true;
            changed_.notify_all();
        } catch (...) {
            const std::lock_guard<std::mutex> lock(mutex_);
            error_ = std::current_exception();
            ended_ = true;
            changed_.notify_all();
        }
    }

    const watch_options options_;

    // The watcher's thread's own (set before it starts).
    std::optional<any_storage> storage_;
    std::vector<rule_factory> factories_;
    std::vector<slot> slots_;
    bool opened_ = false;
    bool marker_written_ = false;

    // Shared, under mutex_.
    mutable std::mutex mutex_;
    std::condition_variable changed_; // the thread published progress, or ended
    std::condition_variable wake_;    // look at the run now
    bool stopping_ = false;
    bool poked_ = false;
    bool ended_ = false;
    bool opened_shared_ = false;
    std::exception_ptr error_;
    std::vector<evaluation_result> results_;
    std::vector<bool> done_;
    std::vector<trigger> triggers_;
    std::atomic<bool> stop_flag_{false}; // read between steps without the lock

    std::thread thread_; // last: started once the members above exist
};

} // namespace detail

TDBG_DECL rule_factory watch_rule(std::string name, rule_params params) {
    return [name = std::move(name), params = std::move(params)](const trial& base) {
        return registry::create(name, base, params);
    };
}

TDBG_DECL watcher::watcher(any_storage storage, std::vector<rule_factory> rules, watch_options options)
    : state_(std::make_unique<detail::watch_state>(std::move(storage), std::move(rules), std::vector<any_rule>{},
                                                   std::move(options))) {}

TDBG_DECL watcher::watcher(std::vector<any_rule> rules, watch_options options)
    : state_(std::make_unique<detail::watch_state>(std::nullopt, std::vector<rule_factory>{}, std::move(rules),
                                                   std::move(options))) {}

TDBG_DECL watcher::~watcher() = default;

TDBG_DECL bool watcher::wait_for_step(std::int64_t step, std::optional<std::chrono::milliseconds> timeout) {
    return state_->wait_for_step(step, timeout);
}

TDBG_DECL std::vector<evaluation_result> watcher::finish() { return state_->finish(); }

TDBG_DECL std::vector<evaluation_result> watcher::stop() { return state_->interrupt(); }

TDBG_DECL std::vector<evaluation_result> watcher::results() const { return state_->results(); }

TDBG_DECL std::vector<trigger> watcher::triggers() const { return state_->triggers(); }

TDBG_DECL bool watcher::triggered() const { return state_->triggered(); }

TDBG_DECL bool watcher::done() const { return state_->done(); }

} // namespace tdbg::rules
