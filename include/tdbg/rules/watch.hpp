#pragma once
/// \file
/// `watcher`: rules evaluated on a background thread while a run is written,
/// from inside the training process (or a unit test), with invoke_rule's
/// semantics: the steps are evaluated in order as they are published, skipped
/// steps are recorded under smdebug's exception names, and each rule ends when
/// the run does (no_more_data), at end_step, or at an error (status Error).
///
///     tdbg::memory_storage run("mlp");
///     tdbg::hook hook(run, options);
///     tdbg::rules::watch_options watch;
///     watch.stop_training = true;          // the first trigger writes the stop marker
///     tdbg::rules::watcher watcher(run, {tdbg::rules::watch_rule("VanishingGradient")}, watch);
///     for (...) { hook.begin_step(); if (hook.should_stop()) break; ... }
///     hook.close();
///     auto results = watcher.finish();     // every step evaluated, deterministically
///
/// The run may not exist yet when the watcher starts: its trial is opened once
/// the hook has published the collections file, and the rules are built then,
/// by the factories given. Stopping training goes through the stop marker
/// (format/stop_marker.hpp), as a rule process does: the hook's should_stop()
/// sees it at a begin_step() (with hook_options::stop_check_interval 0, a begin_step()
/// soon after: each asks for a look, off the training thread, and reads the latest one).
///
/// The watcher's thread waits on a condition, never for a fixed time: it looks
/// for new steps every poll_interval and is woken at once by finish() and stop().

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

/// Builds a rule over the trial the watcher opens.
using rule_factory = std::function<any_rule(const trial&)>;

/// The factory of the rule registered as `name` (registry::create), with `params`;
/// config_error (from finish()) for an unknown rule or parameter.
[[nodiscard]] TDBG_DECL rule_factory watch_rule(std::string name, rule_params params = rule_params());

/// How a watcher evaluates its rules.
struct watch_options {
    /// The first global step (none: the run's first step).
    std::optional<std::int64_t> start_step;
    /// One past the last global step (none: until the run ends).
    std::optional<std::int64_t> end_step;
    /// Called on the watcher's thread at each step where a rule's condition is met,
    /// after the rule's own actions; an exception from it ends that rule with an error.
    std::function<void(const trigger&)> on_trigger;
    /// At the first trigger of any rule, write the stop marker into the run, so that
    /// the hook's should_stop() returns true at a following begin_step().
    bool stop_training = false;
    /// How often the run is looked at for new steps (and, before it exists, for its collections file).
    std::chrono::milliseconds poll_interval{default_poll_interval};
    /// How the run is read, when the watcher opens it.
    trial_options trial;
    /// The trial's name (none: the storage's describe()).
    std::optional<std::string> trial_name;
    /// Where the rules built by factories send their messages (none: each rule's default).
    std::optional<rule_logger> logger;
    /// Threads a rule may use to evaluate steps side by side (1: only the watcher's).
    std::size_t threads = 1;
};

namespace detail {
class watch_state;
} // namespace detail

/// Evaluates rules over a run as it is written (see the file comment).
/// All members are safe to call from any thread.
class watcher {
public:
    /// Watches the run in `storage`: opens it once its collections file is there,
    /// then builds a rule with each factory and follows the run.
    TDBG_DECL watcher(any_storage storage, std::vector<rule_factory> rules, watch_options options = {});
    /// Follows rules already built over an open trial (their base trial is followed).
    TDBG_DECL explicit watcher(std::vector<any_rule> rules, watch_options options = {});

    watcher(const watcher&) = delete;
    watcher& operator=(const watcher&) = delete;
    watcher(watcher&&) = delete;
    watcher& operator=(watcher&&) = delete;
    /// Stops the evaluation (as stop()) and joins the thread.
    TDBG_DECL ~watcher();

    /// Blocks until every rule has evaluated global step `step` (or ended); false when
    /// `timeout` passes first. Rethrows an error that stopped the watcher.
    TDBG_DECL bool wait_for_step(std::int64_t step, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

    /// Blocks until every rule has ended (the run has ended, once the hook is closed, or
    /// end_step was reached) and returns the results, in the rules' order. Rethrows an
    /// error that stopped the watcher (one opening the run; a rule's error is in its result).
    /// A run that ended without a collections file has no rules to evaluate: no results.
    [[nodiscard]] TDBG_DECL std::vector<evaluation_result> finish();

    /// Ends the evaluation between two steps and returns the results so far; those
    /// cut short end `interrupted` (status Stopped unless they found an issue).
    TDBG_DECL std::vector<evaluation_result> stop();

    /// The results so far, in the rules' order (empty before the run is opened).
    [[nodiscard]] TDBG_DECL std::vector<evaluation_result> results() const;
    /// Every trigger so far, in the order they happened.
    [[nodiscard]] TDBG_DECL std::vector<trigger> triggers() const;
    /// True once some rule's condition was met.
    [[nodiscard]] TDBG_DECL bool triggered() const;
    /// True once every rule has ended.
    [[nodiscard]] TDBG_DECL bool done() const;

private:
    std::unique_ptr<detail::watch_state> state_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/watch.ipp"
#endif
