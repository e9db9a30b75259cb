#pragma once
// The evaluation `tdbg rules` makes of a run (cmd_rules.cpp): the run opened once, its rules
// built over that one trial, an evaluation per rule reporting its steps to the progress bar and
// the --progress file (rules_progress.hpp), and the library scheduler (tdbg/rules/schedule.hpp)
// taking turns at them until each has ended or a stop came. The command writes the results.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "open_run.hpp"
#include "rule_selection.hpp"
#include "rules_progress.hpp"
#include "stop_requests.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/schedule.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::cli {

/// The trial options of an evaluation: --poll's interval, a minute's wait with --follow for
/// a run about to start, and a small cache of event files.
[[nodiscard]] inline tdbg::trial_options evaluation_trial_options(const commands::rules_options& o) {
    tdbg::trial_options trial_options;
    trial_options.poll_interval = o.poll_interval;
    if (o.follow) {
        trial_options.collection_wait = std::chrono::seconds(60); // a run that is about to start
    }
    // Rules read step after step: a few steps' event files kept are enough, and the cache's
    // buffers are then reused instead of the memory growing with the run.
    trial_options.file_cache_bytes = std::uint64_t{8} << 20U;
    return trial_options;
}

/// What the rules of `o` need of the steps before --start-step: the most any of them needs
/// (a rule the registry does not describe carries state, which is always exact).
[[nodiscard]] inline tdbg::rules::step_dependence rules_dependence(const commands::rules_options& o) {
    auto most = tdbg::rules::step_dependence::independent;
    for (const commands::rule_request& request : o.rules) {
        most = std::max(most, tdbg::rules::registry::dependence(request.name));
    }
    return most;
}

/// True when every rule of `o` reads only the values of a step's first worker (a rule the
/// registry does not describe may read any worker's).
[[nodiscard]] inline bool rules_read_first_worker(const commands::rules_options& o) {
    return std::all_of(o.rules.begin(), o.rules.end(), [](const commands::rule_request& request) {
        return tdbg::rules::registry::workers_read(request.name) == tdbg::rules::worker_reads::first_worker;
    });
}

/// The steps of the run its trial reads: up to --end-step, from --start-step where every rule's
/// steps are independent (a range evaluated apart reads its own steps), else from the first.
[[nodiscard]] inline tdbg::step_range evaluation_trial_range(const commands::rules_options& o) {
    tdbg::step_range range;
    range.end = o.end_step;
    if (rules_dependence(o) == tdbg::rules::step_dependence::independent) {
        range.begin = o.start_step;
    }
    return range;
}

/// The options every rule's evaluation starts from: the steps asked for; without --follow, a
/// snapshot of the steps written so far.
[[nodiscard]] inline tdbg::rules::invoke_options base_invoke_options(const commands::rules_options& o,
                                                                     std::chrono::milliseconds poll_interval) {
    tdbg::rules::invoke_options base_options;
    base_options.start_step = o.start_step;
    base_options.end_step = o.end_step;
    base_options.threads = o.threads;
    base_options.poll_interval = poll_interval;
    base_options.snapshot = !o.follow; // the steps written so far; a live run's unfinished steps are skipped
    return base_options;
}

/// The rules of `rules_options` evaluated over its run, once: built and ready when constructed
/// (the run opened, every rule built: an unknown rule or parameter fails before the --progress
/// file is emptied), evaluated by evaluate(). A stop ends the wait for a run about to start
/// (open_run's wait_interrupted) and each evaluation between two steps.
class rules_run {
public:
    /// Opens the run, builds its rules and an evaluation per rule, the progress bar on `err`.
    /// `o`, `stop` and `err` must outlive it.
    rules_run(const commands::rules_options& o, const stop_requests& stop, std::ostream& err)
        : o_(o), stop_(stop), err_(err), wait_([&stop](std::chrono::milliseconds t) { return stop.wait(t); }),
          trial_options_(evaluation_trial_options(o)),
          logger_(tdbg::rules::rule_logger::to_stderr(o.verbose ? tdbg::rules::log_level::debug
                                                                : tdbg::rules::log_level::error)),
          // The run is opened and its index read once; every rule evaluates over that one trial
          // (invoke_rule only pauses its refreshing, and pauses of rules side by side overlap).
          trial_(open_run(o.run, run_trial_options(trial_options_, o), wait_, evaluation_trial_range(o))),
          rules_(build_rules(o, trial_, logger_, trial_options_, wait_)),
          base_options_(base_invoke_options(o, trial_options_.poll_interval)), bar_(o.progress_bar, rules_.size(), err),
          lines_(o.progress), progress_(progress_of(rules_, base_options_, trial_, bar_, lines_)),
          evaluations_(start_evaluations(rules_, base_options_, o.follow, stop, progress_)) {}
    ~rules_run() = default;
    // The evaluations report to bar_ and lines_ through progress_: it stays where it was built.
    rules_run(const rules_run&) = delete;
    rules_run& operator=(const rules_run&) = delete;

    /// Evaluates every rule to its end: a snapshot one rule after the other (each with --threads
    /// for its steps); --follow takes turns at its rules on up to --jobs threads, as their steps
    /// come. The progress bar is then cleared; a note on `err` says when fewer threads could be
    /// started. The results, in the rules' order.
    [[nodiscard]] std::vector<tdbg::rules::evaluation_result> evaluate() {
        const auto started = std::chrono::steady_clock::now();
        const std::vector<std::uint64_t> carried = carry_state_to_start();
        std::vector<tdbg::rules::evaluation_result> results = take_turns();
        for (std::size_t i = 0; i < results.size(); ++i) {
            if (results[i].comparisons) { // what the steps before --start-step compared is not the range's
                results[i].comparisons->compared -= std::min(carried[i], results[i].comparisons->compared);
            }
        }
        bar_.finish();
        seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return results;
    }

    /// How long evaluate() took, in seconds.
    [[nodiscard]] double seconds() const noexcept { return seconds_; }
    /// The trial's name (the documents name it).
    [[nodiscard]] const std::string& trial_name() const { return trial_.name(); }
    /// The steps the rules were invoked with (the JSON document's "invoke").
    [[nodiscard]] tdbg::rules::invoke_record invoked() const {
        tdbg::rules::invoke_record invoked;
        invoked.start_step = o_.start_step;
        invoked.end_step = base_options_.end_step;
        return invoked;
    }
    /// The change of job (or the removal) found while evaluating (tdbg::trial::run_change).
    [[nodiscard]] std::optional<tdbg::run_changed> run_change() const { return trial_.run_change(); }
    /// True when the run has its end marker: every step it will have was written.
    [[nodiscard]] bool run_ended() const noexcept { return trial_.loaded_all_steps(); }
    /// Closes the --progress file; throws tdbg::error naming it when a line could not be written.
    void close_progress() { lines_.close(); }

private:
    // Where the evaluations show how far they are: the bar (on a terminal) and the --progress
    // file, each rule by its name shown, the bar's steps from `first` to `end`.
    struct evaluation_progress {
        progress_line* bar;
        progress_file* lines;
        std::vector<std::string> names;
        std::optional<std::int64_t> first;
        std::optional<std::int64_t> end;
    };
    using evaluation_list = std::vector<std::unique_ptr<tdbg::rules::rule_evaluation>>;

    // The rules asked for, each over `trial`, with the stop marker as an action under --stop-training.
    static std::vector<tdbg::rules::any_rule> build_rules(const commands::rules_options& o, const tdbg::trial& trial,
                                                          const tdbg::rules::rule_logger& logger,
                                                          const tdbg::trial_options& trial_options,
                                                          const wait_function& wait) {
        std::vector<tdbg::rules::any_rule> rules;
        for (const commands::rule_request& request : o.rules) {
            auto r = build_rule(request, o.others, trial, logger, trial_options, wait);
            if (o.stop_training) {
                r.actions().add(tdbg::rules::stop_training_action(r.base_trial().storage()));
            }
            rules.push_back(std::move(r));
        }
        return rules;
    }

    // The progress of `rules` evaluated with `base_options` over `trial`.
    static evaluation_progress progress_of(const std::vector<tdbg::rules::any_rule>& rules,
                                           const tdbg::rules::invoke_options& base_options, const tdbg::trial& trial,
                                           progress_line& bar, progress_file& lines) {
        evaluation_progress progress{&bar, &lines, {}, base_options.start_step, base_options.end_step};
        // The bar's end: end_step, else the last step of a run that has ended (a live run shows step numbers).
        if (!progress.end && trial.loaded_all_steps()) {
            const auto steps = trial.steps(tdbg::mode::global, true);
            if (!steps.empty()) {
                progress.end = steps.back() + 1;
            }
        }
        for (const tdbg::rules::any_rule& r : rules) {
            progress.names.push_back(r.configuration_name().empty() ? r.name() : r.configuration_name());
        }
        return progress;
    }

    // An evaluation per rule, each reporting its steps to `progress` (which must outlive them):
    // an error ends a rule's evaluation, not the command; a stop ends it between two steps.
    static evaluation_list start_evaluations(std::vector<tdbg::rules::any_rule>& rules,
                                             const tdbg::rules::invoke_options& base_options, bool follow,
                                             const stop_requests& stop, const evaluation_progress& progress) {
        evaluation_list evaluations;
        for (std::size_t i = 0; i < rules.size(); ++i) {
            tdbg::rules::invoke_options options = base_options;
            options.on_step = [&progress, i](std::int64_t step, tdbg::rules::step_outcome what) {
                progress.bar->step(i, step);
                progress.lines->step(progress.names[i], step, what);
            };
            options.stop_requested = [&stop] { return stop.requested(); };
            options.record_errors = true;
            if (follow) {
                options.step_timeout.reset(); // waited for by the scheduler, as long as it takes
            }
            evaluations.push_back(std::make_unique<tdbg::rules::rule_evaluation>(rules[i].get(), std::move(options)));
        }
        return evaluations;
    }

    // `options` for the run evaluated (not the runs it is compared with): reading only --worker's
    // workers (none: all), and of each step only its first worker's index file where every rule
    // reads that worker's values only.
    static tdbg::trial_options run_trial_options(tdbg::trial_options options, const commands::rules_options& o) {
        options.workers = o.workers;
        options.first_worker_only = rules_read_first_worker(o);
        return options;
    }

    // With --start-step, each rule that carries state from step to step is first evaluated from the
    // run's first step up to --start-step, unreported: its evaluation of the range then goes on
    // from the state one process would have there. What each compared then (0 for the others).
    std::vector<std::uint64_t> carry_state_to_start() {
        std::vector<std::uint64_t> compared(rules_.size(), 0);
        if (!o_.start_step) {
            return compared;
        }
        for (std::size_t i = 0; i < rules_.size(); ++i) {
            if (tdbg::rules::registry::dependence(rules_[i].name()) != tdbg::rules::step_dependence::carried_state) {
                continue;
            }
            tdbg::rules::invoke_options before = base_options_;
            before.start_step.reset();
            before.end_step = o_.start_step;
            before.stop_requested = [this] { return stop_.requested(); };
            before.record_errors = true; // an error shows again in the range's evaluation
            tdbg::rules::rule_evaluation warm_up(rules_[i].get(), std::move(before));
            warm_up.run();
            const auto& found = warm_up.result().comparisons;
            compared[i] = found ? found->compared : 0;
        }
        return compared;
    }

    // Takes turns at the evaluations until each has ended (tdbg::rules::take_turns); their results.
    std::vector<tdbg::rules::evaluation_result> take_turns() {
        std::vector<tdbg::rules::rule_evaluation*> each;
        for (auto& e : evaluations_) {
            each.push_back(e.get());
        }
        tdbg::rules::schedule_options schedule;
        schedule.jobs = o_.follow ? o_.jobs : 1;
        schedule.poll_interval = trial_options_.poll_interval;
        schedule.wait = [this](std::chrono::milliseconds d) { return stop_.wait(d); };
        schedule.on_turn = [this](std::size_t i, const tdbg::rules::turn& t) {
            if (t.first) {
                progress_.bar->start(i, progress_.names[i], progress_.first, progress_.end);
            }
            if (t.advanced.state == tdbg::rules::evaluation_state::done) {
                progress_.bar->done(i);
            }
        };
        const tdbg::rules::schedule_report report = tdbg::rules::take_turns(each, schedule);
        if (report.threads_missing > 0) {
            const std::size_t running = report.threads - report.threads_missing;
            err_ << fmt::format("tdbg rules: note: only {} of {} threads could be started ({}): the rules take turns "
                                "on {}\n",
                                running, report.threads, tdbg::terminal_safe(report.why),
                                running == 1 ? "one" : "them");
        }
        std::vector<tdbg::rules::evaluation_result> results;
        results.reserve(evaluations_.size());
        for (auto& e : evaluations_) {
            results.push_back(e->take_result());
        }
        return results;
    }

    const commands::rules_options& o_;
    const stop_requests& stop_;
    std::ostream& err_;
    const wait_function wait_;
    const tdbg::trial_options trial_options_;
    const tdbg::rules::rule_logger logger_;
    const tdbg::trial trial_;
    std::vector<tdbg::rules::any_rule> rules_;
    const tdbg::rules::invoke_options base_options_;
    progress_line bar_;
    progress_file lines_;
    const evaluation_progress progress_;
    evaluation_list evaluations_;
    double seconds_ = 0.0;
};

} // namespace tdbg::cli
