#pragma once
/// \file
/// The subcommands of the `tdbg` command line as library functions (target tdbg::cli, the
/// package's component cli): a program that embeds tdbg's command line fills an options struct
/// and calls the function, which writes what `tdbg <name>` writes, to the streams given, and
/// returns its exit status. `tdbg` itself only parses argv into these structs.
///
///     tdbg::commands::rules_options o;
///     o.run = "runs/job-1";
///     o.rules.push_back({"VanishingGradient", {{"threshold", "1e-5"}}, ""});
///     const int status = tdbg::commands::rules(o, std::cout, std::cerr); // 0, 1 or 2
///
/// No function throws for what can go wrong with a run, a file or an option's value: the error
/// is written to `err` as the command line writes it ("tdbg rules: error: ...") and the status
/// is exit_error. Every output the command writes to a file (rules --junit, report -o) is
/// written as the command line writes it; "-" writes it to `out`.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/trial/golden.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/step_state.hpp"

namespace tdbg::commands {

/// The command did what it was asked and found nothing wrong.
inline constexpr int exit_ok = 0;
/// It ran and found something: `rules` found issues, `diff`'s runs differ.
inline constexpr int exit_issues = 1;
/// An error: bad options, a missing or corrupt run, an output that cannot be written, a rule
/// that could not be evaluated or evaluated nothing; the message is on `err`.
inline constexpr int exit_error = 2;
/// The exit status a shell gives a program ended by SIGINT: what `rules` returns for a stop
/// request whose stop_reason does not say otherwise.
inline constexpr int exit_interrupted = 130;

/// `tdbg ls RUN`: the run at a glance.
struct ls_options {
    /// The run: a directory, or a URL of a storage scheme the program knows (s3://bucket/prefix
    /// with the S3 backend).
    std::string run;
    /// Read the head of one value per tensor for its dtype and shape (false: `--no-values`, dtype shown as '?').
    bool read_values = true;
};
/// Writes the summary of the run (state, workers, modes, steps, collections, a line per tensor)
/// to `out`; exit_ok, or exit_error with the message on `err`.
int ls(const ls_options& options, std::ostream& out, std::ostream& err);

/// `tdbg dump RUN --json`: the whole reading of a run in the golden schema ("smdebug-golden/1").
struct dump_options {
    /// The run, as ls_options::run.
    std::string run;
    /// The part of the run to write (`--tensors`, `--steps`, `--mode`); default: all of it.
    golden_filter filter;
};
/// Writes the document to `out` as it is read; exit_ok, or exit_error with the message on `err`.
int dump(const dump_options& options, std::ostream& out, std::ostream& err);

/// `tdbg show RUN TENSOR_REGEX`: tensors' values (numpy's layout) or reductions, step by step.
struct show_options {
    /// The run, as ls_options::run.
    std::string run;
    /// The tensors shown: those whose names it matches (searched, as smdebug's tensor regexes).
    std::string tensor_regex;
    /// Only this step (a mode step when `mode` is not GLOBAL, else a global step); none: see `steps`.
    std::optional<std::int64_t> step;
    /// Only the steps of this range (as `step`, mode or global steps) when `step` is not given;
    /// neither given: the last step each tensor was saved at.
    std::optional<step_range> steps;
    /// Only the steps of this mode (GLOBAL: every mode).
    tdbg::mode mode = tdbg::mode::global;
    /// The values this worker saved; none: the first worker, by name, that saved the step.
    std::optional<std::string> worker;
    /// A table of reductions over the steps instead of the values.
    bool reductions = false;
};
/// Writes the tensors to `out`; exit_ok, or exit_error (no tensor matches, none was saved at
/// the steps asked for, an unknown worker, a bad run) with the message on `err`.
int show(const show_options& options, std::ostream& out, std::ostream& err);

/// `tdbg diff RUN_A RUN_B`: where two runs first part.
struct diff_options {
    /// The reference run, as ls_options::run.
    std::string run_a;
    /// The run compared with it.
    std::string run_b;
    /// What is compared and how closely (tolerances, tensors, name maps, mode, reductions,
    /// missing tensors): tdbg::diff_runs' options, with their defaults.
    tdbg::diff_options comparison;
    /// Write the "tdbg-diff/1" JSON document instead of the text.
    bool json = false;
};
/// Compares the runs and writes the result to `out`: exit_ok when they agree within the
/// tolerances, exit_issues when they differ, exit_error (with the message on `err`) on an
/// error, a comparison over nothing included.
int diff(const diff_options& options, std::ostream& out, std::ostream& err);

/// One rule to evaluate (`rules`, `report`).
struct rule_request {
    /// Its registered name: a built-in rule by its SageMaker name ("VanishingGradient") or a
    /// rule the program registered (tdbg::rules::registrar).
    std::string name;
    /// Its parameters, as strings as SageMaker passes them ({"threshold", "1e-5"}).
    std::map<std::string, std::string> params;
    /// The RuleConfigurationName it is reported under (a --config entry's); empty: its name.
    std::string configuration_name;
};

/// Why `rules` was asked to stop, as its results say.
struct stop_reason {
    /// Named in the message ("interrupted by NAME") and in the JSON document ("interrupted"):
    /// the command line gives the signal, "SIGINT" or "SIGTERM".
    std::string name;
    /// The exit status of the evaluation so stopped (the command line's: 128 + the signal's number).
    int exit_status = exit_interrupted;
};

/// How a caller asks `rules` to stop: waits up to `timeout` for a request to stop and returns
/// its reason once one was made (before or during the wait), nothing otherwise; called with 0 ms
/// to ask whether one was made, and from the threads that evaluate the rules.
using stop_function = std::function<std::optional<stop_reason>(std::chrono::milliseconds timeout)>;

/// `tdbg rules RUN --rule NAME ...`: rules evaluated over a run; a CI gate.
struct rules_options {
    /// The run, as ls_options::run (not needed for `list` and `describe`).
    std::string run;
    /// The rules to evaluate, in order (`--rule`/`--param`, `--config`).
    std::vector<rule_request> rules;
    /// The rule configuration files `rules` came from (`--config`): inputs, which no output
    /// may replace.
    std::vector<std::string> config_files;
    /// Other runs, for the rules that compare runs (SimilarAcrossRuns) (`--other`).
    std::vector<std::string> others;
    /// List the registered rules, with their summaries and parameters' defaults, instead.
    bool list = false;
    /// Describe this registered rule instead (what it checks, its parameters and defaults).
    std::optional<std::string> describe;
    /// The first global step; none: the run's first.
    std::optional<std::int64_t> start_step;
    /// Stop before this global step; none: the run's end (without `follow`, the last step written).
    /// With start_step or end_step, the run's index is read for the steps the rules need only:
    /// those of the range where every rule's steps are independent, else from the run's first
    /// step (see rules::step_dependence: a rule that carries state is evaluated from the first
    /// step and reports the range's steps only), so that parts of a run evaluated apart merge
    /// into one process's verdict (`merge`).
    std::optional<std::int64_t> end_step;
    /// Only these workers' index files are read (`--worker`): the rules read their values (the
    /// first of them by name, where a rule reads one worker's), and a step is complete once they
    /// have written it; none: every worker.
    std::vector<std::string> workers;
    /// Merge these "smdebug-rules/1" documents, each the `json` output of a range of steps of
    /// one evaluation (`--merge PART.json...`), into one verdict instead of evaluating a run
    /// (tdbg/rules/merge.hpp).
    std::vector<std::string> merge;
    /// Evaluate a live run as it is written, until it ends (waiting up to 60 s for a run that
    /// has not started); false: the steps written so far.
    bool follow = false;
    /// When another job starts writing the run over the one evaluated (a job started again with
    /// existing_run_policy::overwrite, or resumed): false (the default), the evaluation stops,
    /// says so and the exit status is 2; true, the new job is evaluated from its first step.
    bool follow_restarts = false;
    /// How often `follow` looks for new steps.
    std::chrono::milliseconds poll_interval = default_poll_interval;
    /// The threads `follow` evaluates its rules on; 0: the number of cores.
    std::size_t jobs = 0;
    /// Threads per rule; 0: all cores (16 on S3).
    std::size_t threads = 0;
    /// A JSON line per step evaluated is written to this file (emptied first) (`--progress`).
    std::optional<std::string> progress;
    /// A status line, redrawn on `err` (the command line: when stderr is a terminal).
    bool progress_bar = false;
    /// Write the stop marker into the run when a rule's condition is met (`--stop-training`).
    bool stop_training = false;
    /// The results as the "smdebug-rules/1" JSON document instead of text.
    bool json = false;
    /// Where the results (text or JSON) go: "-" for `out`, else a file.
    std::string output = "-";
    /// Also the results as JUnit XML, to this file ("-": `out`).
    std::optional<std::string> junit;
    /// Also the results as SARIF 2.1.0, to this file ("-": `out`).
    std::optional<std::string> sarif;
    /// A rule that evaluated nothing is expected (else: status NothingEvaluated, exit_error).
    bool allow_empty = false;
    /// Steps a worker has not written may be left unevaluated (else: exit_error).
    bool allow_partial = false;
    /// Log each trigger and skipped step (and, with `follow`, each step waited for) on stderr.
    bool verbose = false;
    /// How the caller asks the evaluation to stop; empty: it never does (the waits sleep).
    /// The command line stops at SIGINT and SIGTERM.
    stop_function stop;
};
/// Evaluates the rules (or lists or describes them) and writes the results: exit_ok when no
/// rule found issues, exit_issues when one did, exit_error (the reasons on `err`) when a rule
/// could not be evaluated, evaluated nothing (unless allow_empty), left steps unevaluated
/// (unless allow_partial), or on any other error; a stop request's exit status when one ended
/// the evaluation (the results so far are written, marked interrupted).
int rules(const rules_options& options, std::ostream& out, std::ostream& err);

/// The most runs one report compares.
inline constexpr std::size_t report_max_runs = 8;

/// `tdbg report RUN...`: one self-contained HTML page of plots.
struct report_options {
    /// The runs, as ls_options::run: one, or up to report_max_runs compared on one page.
    std::vector<std::string> runs;
    /// The runs' names in legends, in their order (at most one per run); the rest: the
    /// directory's name, with its parent's when two are the same.
    std::vector<std::string> names;
    /// A `tdbg diff --json` document whose divergences are marked on the page.
    std::optional<std::string> diff;
    /// The page's file ("-": `out`).
    std::string output = "report.html";
    /// The page's heading; none: "tdbg report: <run name>".
    std::optional<std::string> title;
    /// Only tensors whose name it matches (searched).
    std::optional<std::string> tensor_regex;
    /// Only tensors of this collection.
    std::optional<std::string> collection;
    /// At most this many tensors on the page, in the order of its sections; 0: all.
    std::size_t max_tensors = 20;
    /// Without tensor_regex and collection, the page's sections (the tensors a rule flagged,
    /// then each collection's: losses, gradients, weights, biases, the others, then the rest)
    /// hold at most this many tensors each, in name order; 0: all.
    std::size_t per_section = 6;
    /// The reductions to plot; none: those the run saved for a tensor, else mean, std and l2.
    std::optional<std::vector<reduction>> reductions;
    /// Points per line at most, evenly sampled.
    std::size_t max_points = 1000;
    /// Value bins of the heatmaps.
    std::size_t bins = 40;
    /// Steps per heatmap at most, evenly sampled.
    std::size_t max_steps = 120;
    /// Heatmaps of the values' distributions (they read every sampled value).
    bool distributions = true;
    /// Rules evaluated over the steps written so far, their triggers marked.
    std::vector<rule_request> rules;
    /// The rule configuration files `rules` came from (`--config`): inputs, which the page may
    /// not replace.
    std::vector<std::string> config_files;
    /// Other runs, for the rules that compare runs.
    std::vector<std::string> others;
};
/// Writes the page (and, unless it went to `out`, a line saying what it holds, to `out`):
/// exit_ok whatever the rules found, exit_error (with the message on `err`) on an error.
int report(const report_options& options, std::ostream& out, std::ostream& err);

} // namespace tdbg::commands
