#pragma once
/// \file
/// Rule evaluations side by side: one scheduler for every caller that evaluates several rules
/// over a run as its steps come (`tdbg rules --follow`, the watcher of rules/watch.hpp). Any of
/// `jobs` threads takes the turn of the evaluation due first: it advances it over the steps
/// the run has (rule_evaluation::advance), asks a rule waiting for a step whether it fires
/// without it (StalledTrainingRule), and gives it its next turn a poll interval later. A stop
/// ends every evaluation not ended yet `interrupted`. The caller decides how to wait (a sleep,
/// a signal, a condition variable) and hears each turn.
///
///     std::vector<tdbg::rules::rule_evaluation*> evaluations = ...;   // record_errors set
///     tdbg::rules::schedule_options options;
///     options.jobs = 4;
///     options.wait = [&](std::chrono::milliseconds d) { return signals.wait(d); };
///     tdbg::rules::take_turns(evaluations, options);
///     // each evaluation's result() is final

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/invoke.hpp"

namespace tdbg::rules {

/// One turn an evaluation was given, as schedule_options::on_turn hears it.
struct turn {
    /// Its first turn (nothing of it was evaluated before).
    bool first = false;
    /// What advance() did; state `done` on its last turn (a stop included).
    advance_result advanced;
    /// It fired while waiting for the next step (rule_evaluation::check_while_waiting).
    bool fired_while_waiting = false;
};

/// How take_turns takes turns.
struct schedule_options {
    /// Threads taking turns, the calling one among them (0: the hardware's); no more than
    /// there are evaluations.
    std::size_t jobs = 1;
    /// How long an evaluation that waits for a step waits before its next turn.
    std::chrono::milliseconds poll_interval{default_poll_interval};
    /// Waits at most the time given; true when a stop came (every evaluation not ended then
    /// ends `interrupted`). It may return early: the turn due is then taken early. Default:
    /// sleeps, and no stop comes.
    std::function<bool(std::chrono::milliseconds)> wait;
    /// Hears each turn, from the thread that took it: evaluation `index` and what it did.
    std::function<void(std::size_t index, const turn& t)> on_turn;
};

/// What take_turns could not do: threads it could not start (a limit on processes), and why.
/// The evaluations then took turns on the threads there were.
struct schedule_report {
    /// Threads it meant to take turns on (jobs, at most one per evaluation).
    std::size_t threads = 0;
    std::size_t threads_missing = 0;
    std::string why;
};

/// Takes turns at `evaluations` until every one has ended; each one's result() is then final.
/// An exception a turn throws (an evaluation without record_errors) is rethrown once every
/// thread has stopped, the other evaluations ended first.
TDBG_DECL schedule_report take_turns(const std::vector<rule_evaluation*>& evaluations,
                                     const schedule_options& options);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/schedule.ipp"
#endif
