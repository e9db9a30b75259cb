// `tdbg rules DIR --rule NAME [--param key=value ...]`: evaluates rules over a
// run (built-in SageMaker rules, or any rule registered in the program), for a
// person (text), a program (--json, the "smdebug-rules/1" schema) or a CI
// system (--junit FILE, exit status 0 no issues / 1 issues found / 2 error).
// SIGINT or SIGTERM ends the evaluation between two steps, or while --follow
// waits for one, and the results so far are reported, marked interrupted.
// This file declares the options and writes the output; the evaluation is
// rules_run.hpp's, the documents rules_documents.hpp's, the exit status
// rules_verdict.hpp's, the requests to stop stop_requests.hpp's.

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <utility>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "interruption.hpp"
#include "open_run.hpp"
#include "output_file.hpp"
#include "rule_selection.hpp"
#include "rules_documents.hpp"
#include "rules_run.hpp"
#include "rules_verdict.hpp"
#include "stop_requests.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/config_file.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/merge.hpp"
#include "tdbg/rules/registry.hpp"

namespace {

using tdbg::commands::rules_options;

// The most a part given to --merge may hold (its steps listed one by one).
constexpr std::uint64_t max_part_bytes = std::uint64_t{1} << 30U;

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
    args.option("--worker", "NAME",
                "read only this worker's index files (repeatable): the rules read its values, and a step is "
                "complete once the workers chosen have written it (default: every worker)",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::argument_error(fmt::format("{} needs a worker's name", opt));
                    }
                    o.workers.push_back(value);
                });
    args.flag("--follow",
              "evaluate a live run as it is written, until it ends (waits up to 60 s for a run that has not "
              "started; without it, the steps written so far are evaluated)",
              o.follow);
    args.option("--on-restart", "WHAT",
                "when another job starts writing the run (a job started again over it): 'stop' (the default) "
                "ends the evaluation, says so, and the exit status is 2; 'follow' evaluates the new job from "
                "its first step",
                [&o](const std::string& opt, const std::string& value) {
                    if (value != "stop" && value != "follow") {
                        throw tdbg::cli::argument_error(
                            fmt::format("{} takes 'stop' or 'follow', not '{}'", opt, value));
                    }
                    o.follow_restarts = value == "follow";
                });
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
                        throw tdbg::cli::argument_error(fmt::format("{} needs a file name (or - for stdout)", opt));
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
    args.flag("--verbose", "log each trigger and skipped step on stderr, and (with --follow) each step waited for",
              o.verbose);
}

// Declares `tdbg rules`' options on `args`, bound to `o` (and --merge to `merge_flag`).
void declare_rules_arguments(tdbg::cli::arguments& args, rules_options& o, bool& merge_flag) {
    tdbg::cli::declare_rule_selection(args, o.rules, o.config_files, o.others, "rules");
    args.flag("--list", "list the registered rules, each with its summary and its parameters' defaults, and exit",
              o.list);
    args.flag("--merge",
              "merge the --json results of parts of one evaluation, given instead of DIR (each part a range of "
              "steps, --start-step A --end-step B; a Slurm array task each) into one verdict, written as the "
              "evaluation's (text, or --json), with its exit status",
              merge_flag);
    args.option("--describe", "NAME", "describe the rule NAME: what it checks, its parameters and their defaults",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::argument_error(fmt::format("{} needs a rule name", opt));
                    }
                    o.describe = value;
                });
    declare_step_arguments(args, o);
    declare_output_arguments(args, o);
    args.epilog("A FILE that is a symbolic link is written through, but another user's link\n"
                "in a sticky directory such as /tmp is refused; a FIFO or a device is written\n"
                "in place; a regular file is replaced at once, never left half written.\n\n"
                "exit status: 0 no issues found, 1 issues found, 2 error (a rule could not be\n"
                "evaluated, a rule evaluated nothing (NothingEvaluated: see --allow-empty) or\n"
                "left steps a worker has not written (see --allow-partial), bad arguments, or\n"
                "output that cannot be written); 130 or 143 when\n"
                "SIGINT or SIGTERM interrupted it: the results so far are still written, each\n"
                "evaluation cut short marked so (JSON: \"end\": \"interrupted\", and status\n"
                "\"Stopped\" unless it found issues). A progress bar goes to stderr when it is a terminal.\n");
}

// Checks what the options say together, once all are parsed.
void check_rules_options(rules_options& o, bool merge_flag, const std::vector<std::string>& positional) {
    if (o.list) {
        return;
    }
    if (merge_flag) {
        if (positional.empty()) {
            throw tdbg::cli::argument_error("--merge needs the parts' files (tdbg rules --merge PART.json...)");
        }
        if (!o.rules.empty() || o.start_step || o.end_step || o.follow) {
            throw tdbg::cli::argument_error("--merge takes the parts' files only: no --rule, --config, --start-step, "
                                         "--end-step or --follow");
        }
        o.merge = positional;
        return;
    }
    o.run = tdbg::cli::single_run_argument(positional);
    if (o.rules.empty()) {
        throw tdbg::cli::argument_error("no rule to run: give --rule NAME or --config FILE");
    }
    if (o.start_step && o.end_step && *o.end_step <= *o.start_step) {
        throw tdbg::cli::argument_error("--end-step must be greater than --start-step");
    }
}

// No output may replace the run or a configuration it reads (checked before either is read).
void check_rules_outputs(const rules_options& o) {
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
}

int report_rules(const rules_options& o, tdbg::cli::rules_run& run,
                 const std::vector<tdbg::rules::evaluation_result>& results, const tdbg::cli::stop_requests& stop,
                 std::ostream& out, std::ostream& err);

// Evaluates the rules (rules_run.hpp), writes the results (rules_documents.hpp) and returns
// the exit status (rules_verdict.hpp). A run that another job started writing over, or that
// was removed, ends the evaluation (said; exit status 2), or with --on-restart follow a restart
// starts it again over the new job from its first step.
int evaluate_rules(const rules_options& o, const tdbg::cli::stop_requests& stop, std::ostream& out, std::ostream& err) {
    check_rules_outputs(o);
    rules_options asked = o; // --on-restart follow: from the new job's first step
    for (;;) {
        tdbg::cli::rules_run run(asked, stop, err);
        const std::vector<tdbg::rules::evaluation_result> results = run.evaluate();
        const auto change = run.run_change();
        if (change && !stop.requested()) {
            const bool again = o.follow_restarts && change->what_changed() == tdbg::run_changed::kind::restarted;
            err << "tdbg rules: " << (again ? "note: " : "error: ") << tdbg::terminal_safe(change->what())
                << (again ? "" : " (--on-restart follow evaluates the new job instead)") << "\n";
            if (again) {
                asked.start_step = change->first_step().value_or(0);
                err << "tdbg rules: evaluating the new job from step " << *asked.start_step << "\n";
                continue;
            }
        }
        const int status = report_rules(asked, run, results, stop, out, err);
        return change && !stop.requested() ? tdbg::cli::exit_bad_input : status;
    }
}

// Writes the results of `run` (rules_documents.hpp) and returns the exit status (rules_verdict.hpp).
int report_rules(const rules_options& o, tdbg::cli::rules_run& run,
                 const std::vector<tdbg::rules::evaluation_result>& results, const tdbg::cli::stop_requests& stop,
                 std::ostream& out, std::ostream& err) {
    const std::string signal = stop.name();
    if (stop.requested()) {
        err << "tdbg rules: interrupted by " << signal << ": the results cover the steps evaluated until then\n";
    }
    tdbg::cli::write_output(o.output,
                            tdbg::cli::rules_results_text(o, results, run.trial_name(), run.invoked(), signal), out);
    if (o.junit) {
        tdbg::cli::write_output(
            *o.junit, tdbg::cli::rules_junit_text(results, run.trial_name(), run.seconds(), signal, o.allow_empty),
            out);
    }
    if (o.sarif) {
        tdbg::cli::write_output(*o.sarif, tdbg::cli::rules_sarif_text(o, results, TDBG_VERSION), out);
    }
    run.close_progress(); // the results are out; a --progress file that failed makes it exit 2
    if (!o.follow && !run.run_ended()) {
        // A snapshot of a run without its end marker: still being written, or its trainer exited
        // without closing the hook (std::exit, a crash). The verdict covers what is there.
        err << "tdbg rules: note: the run has not ended (it holds no " << tdbg::format::end_marker_key
            << "): its trainer is still writing it, or exited without closing the hook; the results cover the "
               "steps written so far (--follow waits for the end)\n";
    }
    return tdbg::cli::rules_exit_status(results, o, stop, err);
}

// `--merge`: the parts read (tdbg/rules/merge.hpp), merged, written as one evaluation's results.
int merge_rules(const rules_options& o, const tdbg::cli::stop_requests& stop, std::ostream& out, std::ostream& err) {
    tdbg::cli::check_outputs({{"-o", o.output}}, {}, o.merge); // no output replaces a part
    std::vector<tdbg::rules::rules_part> parts;
    for (const std::string& file : o.merge) {
        const std::string text = tdbg::read_config_file(file, "part of a rules evaluation", max_part_bytes);
        parts.push_back(tdbg::rules::read_rules_part(tdbg::format::parse_json(text, file), file));
    }
    const tdbg::rules::rules_part whole =
        tdbg::rules::merge_parts(std::move(parts), tdbg::rules::registry::dependence);
    rules_options merged = o;
    merged.run =
        fmt::format("{} (merged from {} part{})", whole.trial_name, o.merge.size(), o.merge.size() == 1 ? "" : "s");
    tdbg::cli::write_output(o.output,
                            tdbg::cli::rules_results_text(merged, whole.results, whole.trial_name, whole.invoked, {}),
                            out);
    return tdbg::cli::rules_exit_status(whole.results, o, stop, err);
}

int run_rules(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    rules_options o;
    bool merge_flag = false;
    tdbg::cli::arguments parser("tdbg rules DIR --rule NAME [--param KEY=VALUE ...] [--rule NAME ...] [options]\n"
                                "tdbg rules DIR --config RULES.json [options]\n"
                                "tdbg rules --merge PART.json... [--json] [-o FILE]\n"
                                "tdbg rules --list\n"
                                "tdbg rules --describe NAME",
                                "Evaluates rules over the run in DIR, step by step, as smdebug's invoke_rule\n"
                                "does: a step that was not saved, or where a tensor the rule needs has no\n"
                                "value, is skipped; the rule's condition is checked at every other step.\n");
    declare_rules_arguments(parser, o, merge_flag);
    return parser.run_or_help(args, out, [&](const std::vector<std::string>& positional) {
        if (!o.describe) {
            check_rules_options(o, merge_flag, positional);
        }
        if (o.describe || o.list || !o.merge.empty()) {
            return tdbg::commands::rules(o, out, err);
        }
        o.progress_bar = ::isatty(STDERR_FILENO) == 1;
        // From here on a signal stops the evaluation, and what was found is reported.
        const tdbg::cli::interruption signals;
        o.stop = tdbg::cli::stop_at_signals(signals);
        return tdbg::commands::rules(o, out, err);
    });
}

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
        const tdbg::cli::stop_requests stop(o.stop);
        if (!o.merge.empty()) {
            return merge_rules(o, stop, out, err);
        }
        try {
            return evaluate_rules(o, stop, out, err);
        } catch (const tdbg::cli::wait_interrupted& e) {
            err << "tdbg rules: " << tdbg::terminal_safe(e.what()) << " (" << stop.name()
                << "): no step was evaluated\n";
            return stop.exit_status();
        }
    });
}

namespace {
const tdbg::cli::command_registrar register_rules{
    tdbg::cli::command{"rules", "evaluate rules (VanishingGradient, ...) over a run; a CI gate", &run_rules}};
} // namespace
