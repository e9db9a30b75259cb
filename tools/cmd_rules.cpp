// `tdbg rules DIR --rule NAME [--param key=value ...]`: evaluates rules over a
// run (built-in SageMaker rules, or any rule registered in the program), for a
// person (text), a program (--json, the "smdebug-rules/1" schema) or a CI
// system (--junit FILE, exit status 0 no issues / 1 issues found / 2 error).
// SIGINT or SIGTERM ends the evaluation between two steps, or while --follow
// waits for one, and the results so far are reported, marked interrupted.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "interruption.hpp"
#include "open_run.hpp"
#include "output_file.hpp"
#include "rules_progress.hpp"
#include "rule_selection.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/rules/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/junit.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/schedule.hpp"
#include "tdbg/rules/sarif.hpp"

namespace {

using tdbg::commands::rules_options;

// The caller's requests to stop (rules_options::stop), as the evaluation asks for them from
// its threads: a request, once made, stays made, with its reason.
class stop_requests {
public:
    explicit stop_requests(tdbg::commands::stop_function stop) : stop_(std::move(stop)) {}

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
        std::optional<tdbg::commands::stop_reason> reason = stop_(timeout);
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
    tdbg::commands::stop_function stop_;
    mutable std::mutex mutex_;
    mutable std::atomic<bool> made_{false};
    mutable tdbg::commands::stop_reason reason_; // guarded by mutex_
};

// Declares `tdbg rules`' options of the steps evaluated and how (section "steps") on `args`, bound to `o`.
void declare_step_arguments(tdbg::cli::arguments& args, rules_options& o) {
    args.section("steps");
    const auto step = [](std::optional<std::int64_t>& target) {
        return [&target](const std::string& opt, const std::string& value) {
            target = tdbg::cli::parse_number<std::int64_t>(opt, value, 0, std::numeric_limits<std::int64_t>::max());
        };
    };
    args.option("--start-step", "N", "the first global step (default: the run's first step)", step(o.start_step));
    args.option("--end-step", "N", "stop before this global step (default: the run's end)", step(o.end_step));
    args.flag("--follow",
              "evaluate a live run as it is written, until it ends (waits up to 60 s for a run that has not "
              "started; without it, the steps written so far are evaluated)",
              o.follow);
    args.option("--poll", "SECONDS",
                fmt::format("how often --follow looks for new steps (default {:g})",
                            std::chrono::duration<double>(o.poll_interval).count()),
                [&o](const std::string& opt, const std::string& value) {
                    const double seconds = tdbg::cli::parse_number(opt, value, 0.001, 3600.0);
                    o.poll_interval = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
                });
    args.number("--jobs", "N",
                "threads --follow evaluates its rules on, 1 to 1024 (default: the number of cores); a thread "
                "takes turns at several rules, each as its steps come",
                o.jobs, std::size_t{1}, std::size_t{1024});
    args.text("--progress", "FILE",
              "write a JSON line to FILE (emptied first) at each step evaluated, for a program that follows "
              "the evaluation: {\"rule\": NAME, \"step\": N, \"outcome\": \"triggered\", \"not_triggered\" or "
              "\"skipped\", \"time\": seconds since the epoch}; steps skipped together: one line, the last",
              o.progress);
}

// Declares `tdbg rules`' options of what is done with the results (section "actions and output") on
// `args`, bound to `o`.
void declare_output_arguments(tdbg::cli::arguments& args, rules_options& o) {
    args.section("actions and output");
    args.flag("--stop-training",
              "when a rule's condition is met, write the stop marker tdbg_stop_training.json into the run (a tdbg "
              "hook's should_stop() then returns true)",
              o.stop_training);
    args.flag("--json", "print the results as JSON (\"smdebug-rules/1\")", o.json);
    args.option("-o,--output", "FILE",
                "write the results (text, or --json) to FILE instead of standard output (- for stdout)",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::usage_error(fmt::format("{} needs a file name (or - for stdout)", opt));
                    }
                    o.output = value;
                });
    args.text("--junit", "FILE", "also write the results as JUnit XML (one testcase per rule)", o.junit);
    args.text("--sarif", "FILE",
              "also write the results as SARIF 2.1.0, for code-scanning pipelines: a result per rule and step "
              "where it triggered, with its reason; a rule that could not say (Error, NothingEvaluated, "
              "Stopped) as an error notification",
              o.sarif);
    args.flag("--allow-empty",
              "a rule that evaluated nothing (its selection matched no tensor of the run, or no step could be "
              "evaluated) is expected: without it, such a rule has status NothingEvaluated and the exit status is 2",
              o.allow_empty);
    args.flag("--allow-partial",
              "steps a worker has not written (StepNotYetAvailable: the run has not ended, or a worker stopped) "
              "may be left unevaluated: without it, a rule that left such steps makes the exit status 2",
              o.allow_partial);
    args.number("--threads", "N",
                "threads per rule, 0 to 1024 (default 0: all cores, or 16 on S3, where reads of different "
                "steps overlap)",
                o.threads, std::size_t{0}, std::size_t{1024});
    args.flag("--verbose",
              "log each trigger and skipped step on stderr, and (with --follow) each step waited for", o.verbose);
}

// Declares `tdbg rules`' options on `args`, bound to `o`.
void declare_rules_arguments(tdbg::cli::arguments& args, rules_options& o) {
    tdbg::cli::declare_rule_selection(args, o.rules, o.config_files, o.others, "rules");
    args.flag("--list", "list the registered rules, each with its summary and its parameters' defaults, and exit",
              o.list);
    args.option("--describe", "NAME", "describe the rule NAME: what it checks, its parameters and their defaults",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::usage_error(fmt::format("{} needs a rule name", opt));
                    }
                    o.describe = value;
                });
    declare_step_arguments(args, o);
    declare_output_arguments(args, o);
    args.epilog(
        "A FILE that is a symbolic link is written through; a FIFO or a device is\n"
        "written in place; a regular file is replaced at once, never left half written.\n\n"
        "exit status: 0 no issues found, 1 issues found, 2 error (a rule could not be\n"
        "evaluated, a rule evaluated nothing (NothingEvaluated: see --allow-empty) or\n"
        "left steps a worker has not written (see --allow-partial), bad arguments, or\n"
        "output that cannot be written); 130 or 143 when\n"
        "SIGINT or SIGTERM interrupted it: the results so far are still written, each\n"
        "evaluation cut short marked so (JSON: \"end\": \"interrupted\", and status\n"
        "\"Stopped\" unless it found issues). A progress bar goes to stderr when it is a terminal.\n");
}

// Checks what the options say together, once all are parsed.
void check_rules_options(rules_options& o, const std::vector<std::string>& positional) {
    if (o.list) {
        return;
    }
    o.run = tdbg::cli::single_run_argument(positional);
    if (o.rules.empty()) {
        throw tdbg::cli::usage_error("no rule to run: give --rule NAME or --config FILE");
    }
    if (o.start_step && o.end_step && *o.end_step <= *o.start_step) {
        throw tdbg::cli::usage_error("--end-step must be greater than --start-step");
    }
}


// One rule's evaluation, and whether a signal cut it short.
struct rule_outcome {
    tdbg::rules::evaluation_result result;
    bool interrupted = false;
};

// The "smdebug-rules/1" document; when a signal cut evaluations short, it names the signal.
tdbg::format::json_value results_document(const std::vector<rule_outcome>& outcomes, const std::string& trial_name,
                                          const tdbg::rules::invoke_record& invoked, std::string_view signal) {
    std::vector<tdbg::rules::evaluation_result> results;
    bool interrupted = false;
    for (const rule_outcome& o : outcomes) {
        results.push_back(o.result);
        interrupted = interrupted || o.interrupted;
    }
    tdbg::format::json_value doc = tdbg::rules::rules_document(results, trial_name, invoked);
    if (interrupted) {
        doc["interrupted"] = signal;
    }
    return doc;
}

// The JUnit document: an evaluation cut short that found no issue is an error (status Stopped).
std::string junit_document(const std::vector<rule_outcome>& outcomes, const std::string& trial_name, double seconds,
                           std::string_view signal, bool allow_empty) {
    std::vector<tdbg::rules::evaluation_result> results;
    bool interrupted = false;
    for (const rule_outcome& o : outcomes) {
        results.push_back(o.result);
        interrupted = interrupted || o.interrupted;
    }
    const std::string suite = interrupted ? fmt::format("tdbg rules: {} (interrupted by {})", trial_name, signal)
                                          : fmt::format("tdbg rules: {}", trial_name);
    return tdbg::rules::to_junit_xml(results, suite, seconds, allow_empty);
}

// The trial options of an evaluation: --poll's interval, a minute's wait with --follow for
// a run about to start, and a small cache of event files.
tdbg::trial_options evaluation_trial_options(const rules_options& o) {
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

// The rules asked for, each over `trial`, with the stop marker as an action under --stop-training.
std::vector<tdbg::rules::any_rule> build_rules(const rules_options& o, const tdbg::trial& trial,
                                               const tdbg::rules::rule_logger& logger,
                                               const tdbg::trial_options& trial_options,
                                               const tdbg::cli::wait_function& wait) {
    std::vector<tdbg::rules::any_rule> rules;
    for (const tdbg::commands::rule_request& request : o.rules) {
        auto r = tdbg::cli::build_rule(request, o.others, trial, logger, trial_options, wait);
        if (o.stop_training) {
            r.actions().add(tdbg::rules::stop_training_action(r.base_trial().storage()));
        }
        rules.push_back(std::move(r));
    }
    return rules;
}

// The options every rule's evaluation starts from: the steps asked for; without --follow, a
// snapshot of the steps written so far.
tdbg::rules::invoke_options base_invoke_options(const rules_options& o, std::chrono::milliseconds poll_interval) {
    tdbg::rules::invoke_options base_options;
    base_options.start_step = o.start_step;
    base_options.end_step = o.end_step;
    base_options.threads = o.threads;
    base_options.poll_interval = poll_interval;
    base_options.snapshot = !o.follow; // the steps written so far; a live run's unfinished steps are skipped
    return base_options;
}

// Where the evaluations show how far they are: the bar (on a terminal) and the --progress
// file, each rule by its name shown, the bar's steps from `first` to `end`.
struct evaluation_progress {
    tdbg::cli::progress_line* bar;
    tdbg::cli::progress_file* lines;
    std::vector<std::string> names;
    std::optional<std::int64_t> first;
    std::optional<std::int64_t> end;
};

// The progress of `rules` evaluated with `base_options` over `trial`.
evaluation_progress progress_of(const std::vector<tdbg::rules::any_rule>& rules,
                                const tdbg::rules::invoke_options& base_options, const tdbg::trial& trial,
                                tdbg::cli::progress_line& bar, tdbg::cli::progress_file& lines) {
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
// an error ends a rule's evaluation, not the command; a signal ends it between two steps.
std::vector<std::unique_ptr<tdbg::rules::rule_evaluation>>
start_evaluations(std::vector<tdbg::rules::any_rule>& rules, const tdbg::rules::invoke_options& base_options,
                  bool follow, const stop_requests& signals, const evaluation_progress& progress) {
    std::vector<std::unique_ptr<tdbg::rules::rule_evaluation>> evaluations;
    for (std::size_t i = 0; i < rules.size(); ++i) {
        tdbg::rules::invoke_options options = base_options;
        options.on_step = [&progress, i](std::int64_t step, tdbg::rules::step_outcome what) {
            progress.bar->step(i, step);
            progress.lines->step(progress.names[i], step, what);
        };
        options.stop_requested = [&signals] { return signals.requested(); };
        options.record_errors = true;
        if (follow) {
            options.step_timeout.reset(); // waited for by the scheduler, as long as it takes
        }
        evaluations.push_back(std::make_unique<tdbg::rules::rule_evaluation>(rules[i].get(), std::move(options)));
    }
    return evaluations;
}

// Evaluates every rule to its end: a snapshot one rule after the other (each with --threads
// for its steps); --follow takes turns at its rules on up to --jobs threads, as their steps come.
std::vector<rule_outcome> take_turns(std::vector<std::unique_ptr<tdbg::rules::rule_evaluation>>& evaluations,
                                     const evaluation_progress& progress, const rules_options& o,
                                     const stop_requests& signals, std::chrono::milliseconds poll_interval,
                                     std::ostream& err) {
    std::vector<tdbg::rules::rule_evaluation*> each;
    for (auto& e : evaluations) {
        each.push_back(e.get());
    }
    tdbg::rules::schedule_options schedule;
    schedule.jobs = o.follow ? o.jobs : 1;
    schedule.poll_interval = poll_interval;
    schedule.wait = [&signals](std::chrono::milliseconds d) { return signals.wait(d); };
    schedule.on_turn = [&progress](std::size_t i, const tdbg::rules::turn& t) {
        if (t.first) {
            progress.bar->start(i, progress.names[i], progress.first, progress.end);
        }
        if (t.advanced.state == tdbg::rules::evaluation_state::done) {
            progress.bar->done(i);
        }
    };
    const tdbg::rules::schedule_report report = tdbg::rules::take_turns(each, schedule);
    if (report.threads_missing > 0) {
        const std::size_t running = report.threads - report.threads_missing;
        err << fmt::format("tdbg rules: note: only {} of {} threads could be started ({}): the rules take turns "
                           "on {}\n",
                           running, report.threads, tdbg::terminal_safe(report.why), running == 1 ? "one" : "them");
    }
    std::vector<rule_outcome> outcomes;
    outcomes.reserve(evaluations.size());
    for (auto& e : evaluations) {
        rule_outcome out;
        out.result = e->take_result();
        out.interrupted = out.result.end == tdbg::rules::evaluation_end::interrupted;
        outcomes.push_back(std::move(out));
    }
    return outcomes;
}

// The results as standard output (or -o) gets them: text, or the --json document.
std::string results_text(const rules_options& o, const std::vector<rule_outcome>& outcomes,
                         const std::string& trial_name, const tdbg::rules::invoke_record& invoked,
                         std::string_view signal) {
    if (o.json) {
        return tdbg::cli::json_document_text(results_document(outcomes, trial_name, invoked, signal));
    }
    std::string printed = "run " + tdbg::terminal_safe(o.run) + " (trial " + tdbg::terminal_safe(trial_name) + ")\n";
    for (const rule_outcome& r : outcomes) {
        printed += tdbg::rules::to_text(r.result);
    }
    return printed;
}

// The --sarif document: located at the run, each rule described by its registered summary.
std::string sarif_text(const rules_options& o, const std::vector<rule_outcome>& outcomes) {
    tdbg::rules::sarif_options sarif;
    sarif.run_location = o.run;
    sarif.tool_version = TDBG_VERSION;
    sarif.rule_description = [](const tdbg::rules::evaluation_result& r) {
        const auto d = tdbg::rules::registry::lookup(r.rule) ? tdbg::rules::registry::describe(r.rule) : std::nullopt;
        return d ? d->summary : std::string();
    };
    std::vector<tdbg::rules::evaluation_result> results;
    results.reserve(outcomes.size());
    for (const rule_outcome& r : outcomes) {
        results.push_back(r.result);
    }
    return tdbg::rules::to_sarif(results, sarif);
}

// The exit status of an evaluation no signal cut short: 2 when a rule could not say (an
// error; nothing evaluated without --allow-empty; steps left without --allow-partial, each
// said on `err`), else 1 when a rule found issues, else 0.
int exit_status_of(const std::vector<rule_outcome>& outcomes, const rules_options& o, std::ostream& err) {
    bool issues = false;
    bool errors = false;
    for (const rule_outcome& r : outcomes) {
        const tdbg::rules::evaluation_status status = r.result.status();
        issues = issues || status == tdbg::rules::evaluation_status::issues_found;
        errors = errors || status == tdbg::rules::evaluation_status::error;
        if (status == tdbg::rules::evaluation_status::nothing_evaluated && !o.allow_empty) {
            // Nothing checked is not a pass: a gate over nothing fails, saying why.
            err << "tdbg rules: error: " << tdbg::terminal_safe(r.result.display_name())
                << " evaluated nothing: " << tdbg::terminal_safe(r.result.nothing_evaluated_reason)
                << " (--allow-empty if that is expected)\n";
            errors = true;
        }
        const auto late =
            r.result.skipped_steps.find(std::string(tdbg::rules::skip_reason::step_not_yet_available));
        if (late != r.result.skipped_steps.end() && late->second.size() > 0 && !o.allow_partial) {
            // A gate that passed with steps unevaluated would say nothing of them.
            err << "tdbg rules: error: " << tdbg::terminal_safe(r.result.display_name()) << " left "
                << late->second.size() << " step" << (late->second.size() == 1 ? "" : "s") << " unevaluated ("
                << tdbg::rules::format_steps(late->second, 5)
                << "): a worker has not written them (StepNotYetAvailable) (--allow-partial if that is expected)\n";
            errors = true;
        }
    }
    if (errors) {
        return tdbg::cli::exit_bad_input;
    }
    return issues ? tdbg::commands::exit_issues : tdbg::cli::exit_ok;
}

int evaluate_rules(const rules_options& o, const stop_requests& signals, std::ostream& out,
                   std::ostream& err) {
    // No output may replace the run or a configuration it reads (checked before either is read).
    std::vector<tdbg::cli::output_option> outputs{{"-o", o.output}};
    if (o.junit) {
        outputs.push_back({"--junit", *o.junit});
    }
    if (o.sarif) {
        outputs.push_back({"--sarif", *o.sarif});
    }
    if (o.progress) {
        outputs.push_back({"--progress", *o.progress});
    }
    std::vector<std::string> runs = o.others;
    runs.insert(runs.begin(), o.run);
    tdbg::cli::check_outputs(outputs, runs, o.config_files);
    const tdbg::cli::wait_function wait = [&signals](std::chrono::milliseconds t) { return signals.wait(t); };
    const tdbg::trial_options trial_options = evaluation_trial_options(o);
    const tdbg::rules::rule_logger logger =
        tdbg::rules::rule_logger::to_stderr(o.verbose ? tdbg::rules::log_level::debug : tdbg::rules::log_level::error);

    // The run is opened and its index read once; every rule evaluates over that one trial
    // (invoke_rule only pauses its refreshing, and pauses of rules side by side overlap).
    const tdbg::trial first_trial = tdbg::cli::open_run(o.run, trial_options, wait);
    const std::string& trial_name = first_trial.name();
    std::vector<tdbg::rules::any_rule> rules = build_rules(o, first_trial, logger, trial_options, wait);
    const tdbg::rules::invoke_options base_options =
        base_invoke_options(o, trial_options.poll_interval);

    tdbg::cli::progress_line bar(o.progress_bar, rules.size(), err);
    tdbg::cli::progress_file progress_lines(o.progress);
    const evaluation_progress progress = progress_of(rules, base_options, first_trial, bar, progress_lines);
    auto evaluations = start_evaluations(rules, base_options, o.follow, signals, progress);
    const auto started = std::chrono::steady_clock::now();
    const std::vector<rule_outcome> outcomes =
        take_turns(evaluations, progress, o, signals, trial_options.poll_interval, err);
    bar.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    const std::string signal = signals.name();
    if (signals.requested()) {
        err << "tdbg rules: interrupted by " << signal << ": the results cover the steps evaluated until then\n";
    }
    tdbg::rules::invoke_record invoked;
    invoked.start_step = o.start_step;
    invoked.end_step = base_options.end_step;
    tdbg::cli::write_output(o.output, results_text(o, outcomes, trial_name, invoked, signal), out);
    if (o.junit) {
        tdbg::cli::write_output(*o.junit, junit_document(outcomes, trial_name, seconds, signal, o.allow_empty), out);
    }
    if (o.sarif) {
        tdbg::cli::write_output(*o.sarif, sarif_text(o, outcomes), out);
    }
    progress_lines.close(); // the results are out; a --progress file that failed makes it exit 2
    if (!o.follow && !first_trial.loaded_all_steps()) {
        // A snapshot of a run without its end marker: still being written, or its trainer exited
        // without closing the hook (std::exit, a crash). The verdict covers what is there.
        err << "tdbg rules: note: the run has not ended (it holds no " << tdbg::format::end_marker_key
            << "): its trainer is still writing it, or exited without closing the hook; the results cover the "
               "steps written so far (--follow waits for the end)\n";
    }
    if (signals.requested()) {
        return signals.exit_status(); // never 0: the evaluation may have stopped short
    }
    return exit_status_of(outcomes, o, err);
}

int run_rules(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    rules_options o;
    tdbg::cli::arguments parser("tdbg rules DIR --rule NAME [--param KEY=VALUE ...] [--rule NAME ...] [options]\n"
                                "tdbg rules DIR --config RULES.json [options]\n"
                                "tdbg rules --list\n"
                                "tdbg rules --describe NAME",
                                "Evaluates rules over the run in DIR, step by step, as smdebug's invoke_rule\n"
                                "does: a step that was not saved, or where a tensor the rule needs has no\n"
                                "value, is skipped; the rule's condition is checked at every other step.\n");
    declare_rules_arguments(parser, o);
    const auto positional = parser.parse_or_help(args, out);
    if (!positional) {
        return tdbg::cli::exit_ok;
    }
    if (!o.describe) {
        check_rules_options(o, *positional);
    }
    if (o.describe || o.list) {
        return tdbg::commands::rules(o, out, err);
    }
    o.progress_bar = ::isatty(STDERR_FILENO) == 1;
    // From here on a signal stops the evaluation, and what was found is reported.
    const tdbg::cli::interruption signals;
    o.stop = [&signals](std::chrono::milliseconds timeout) -> std::optional<tdbg::commands::stop_reason> {
        if (timeout.count() == 0 ? !signals.requested() : !signals.wait(timeout)) {
            return std::nullopt;
        }
        return tdbg::commands::stop_reason{std::string(signals.signal_name()), signals.exit_status()};
    };
    return tdbg::commands::rules(o, out, err);
}

const tdbg::cli::command_registrar register_rules{tdbg::cli::command{
    "rules", "evaluate rules (VanishingGradient, ...) over a run; a CI gate", &run_rules}};

} // namespace

int tdbg::commands::rules(const rules_options& o, std::ostream& out, std::ostream& err) {
    return tdbg::cli::guarded("rules", err, [&] {
        if (o.describe) {
            // An unknown name is a config_error (exit status 2) naming the nearest rule.
            const auto name = tdbg::rules::registry::lookup(*o.describe).value_or(*o.describe);
            out << tdbg::rules::format_rule_description(name, tdbg::rules::registry::describe(name));
            return tdbg::cli::exit_ok;
        }
        if (o.list) {
            // One block per rule, its name at column 0 of its first line, a blank line between.
            bool first = true;
            for (const auto& name : tdbg::rules::registry::names()) {
                out << (first ? "" : "\n")
                    << tdbg::rules::format_rule_summary(name, tdbg::rules::registry::describe(name));
                first = false;
            }
            return tdbg::cli::exit_ok;
        }
        const stop_requests stop(o.stop);
        try {
            return evaluate_rules(o, stop, out, err);
        } catch (const tdbg::cli::wait_interrupted& e) {
            err << "tdbg rules: " << tdbg::terminal_safe(e.what()) << " (" << stop.name()
                << "): no step was evaluated\n";
            return stop.exit_status();
        }
    });
}
