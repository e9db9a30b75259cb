// `tdbg report DIR [DIR...] -o report.html`: one self-contained HTML page with
// the plots a person would rather look at than read: chosen reductions of each
// tensor over steps, the distribution of its values step by step, and where
// rules triggered, marked on the step axis. Given several runs, each plot holds
// a line per run and the distributions stand side by side; given `tdbg diff`
// output, where the runs first diverge is marked too. The page is drawn by
// report_html.hpp; this file reads the runs and evaluates the rules.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "output_file.hpp"
#include "report/collect.hpp"
#include "report/diff_file.hpp"
#include "report_html.hpp"
#include "rule_selection.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_configurations.hpp"
#include "tdbg/trial/tensor.hpp"

namespace {

// A colour each, and a page of bounded size.
constexpr std::size_t max_runs = tdbg::commands::report_max_runs;

using tdbg::commands::report_options;

// Declares `tdbg report`'s options on `args`, bound to `o`.
void declare_report_arguments(tdbg::cli::arguments& args, report_options& o) {
    args.section("output");
    args.option("-o,--output", "FILE",
                "the page to write (default report.html; - for stdout); a symbolic link is written through "
                "(not another user's in a sticky directory such as /tmp), a FIFO or device in place, a regular "
                "file replaced whole at once",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::argument_error(fmt::format("{} needs a file name", opt));
                    }
                    o.output = value;
                });
    args.option("--title", "TEXT", "the page's heading (default: tdbg report: <run name>)",
                [&o](const std::string&, const std::string& value) { o.title = value; });
    args.section("runs");
    args.option("--name", "NAME",
                "the name of the next run in legends, in the runs' order; repeatable (default: the directory's "
                "name, with its parent's when two are the same)",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::argument_error(fmt::format("{} needs a non-empty name", opt));
                    }
                    o.names.push_back(value);
                });
    args.option("--diff", "FILE",
                "tdbg diff --json output: the step where the runs first diverge is marked on every step axis, "
                "each differing tensor at its own first step, with a summary",
                [&o](const std::string&, const std::string& value) { o.diff = value; });
    args.section("tensors");
    args.option("--tensors", "REGEX",
                "only tensors whose name matches (searched, as smdebug's tensor_names(regex=...))",
                [&o](const std::string&, const std::string& value) { o.tensor_regex = value; });
    args.option("--collection", "NAME", "only tensors of this collection",
                [&o](const std::string&, const std::string& value) { o.collection = value; });
    args.number("--max-tensors", "N",
                "at most N tensors on the page, in the order of its sections, shared among the run's models "
                "(default 20; 0: all)",
                o.max_tensors,
                std::size_t{0}, std::size_t{100000});
    args.number("--per-section", "N",
                "without --tensors and --collection, the page shows the tensors a rule flagged, then each "
                "collection's (losses, gradients, weights, biases, the others), then the rest, at most N of each "
                "(default 6; 0: all), shared among the run's models (Generator_*, Discriminator_*), each model's "
                "first in name order",
                o.per_section, std::size_t{0}, std::size_t{100000});
    args.option("--reductions", "LIST",
                "the reductions to plot, e.g. mean,std,abs_max,l2_norm (default: the reductions the run saved "
                "for a tensor; else mean,std,l2 computed from its values; a scalar's value as it is)",
                [&o](const std::string& opt, const std::string& value) {
                    try {
                        o.reductions = tdbg::parse_reduction_list(value);
                    } catch (const tdbg::config_error& e) {
                        throw tdbg::cli::argument_error(fmt::format("{}: {}", opt, e.what()));
                    }
                    if (o.reductions->empty()) {
                        throw tdbg::cli::argument_error(fmt::format("{} needs at least one reduction", opt));
                    }
                });
    args.number("--max-points", "N", "points per line at most, evenly sampled (default 1000)", o.max_points,
                std::size_t{2}, std::size_t{1000000});
    args.section("distributions");
    args.number("--bins", "N", "value bins of the heatmaps (default 40)", o.bins, std::size_t{2}, std::size_t{400});
    args.number("--max-steps", "N", "steps per heatmap at most, evenly sampled (default 120)", o.max_steps,
                std::size_t{1}, std::size_t{5000});
    args.flag("--no-distributions", "no heatmaps (they read every sampled value)", o.distributions, false);
    tdbg::cli::declare_rule_selection(args, o.rules, o.config_files, o.others,
                                      "rules (as in tdbg rules, over the steps written so far)", true);
    args.epilog("A tensor saved only as reductions gets their plots and no heatmap; a run\n"
                "without steps gets a page that says so. The exit status is 0 when the page\n"
                "was written, whatever the rules found (use tdbg rules as a CI gate), and 2\n"
                "on an error (bad arguments, not a run, an unknown rule).\n");
}

// Checks what the options say together, once all are parsed.
void check_report_options(report_options& o, const std::vector<std::string>& positional) {
    if (positional.size() <= 1) {
        o.runs.push_back(tdbg::cli::single_run_argument(positional));
    } else {
        o.runs = positional;
    }
    if (o.runs.size() > max_runs) {
        throw tdbg::cli::argument_error(fmt::format("at most {} runs in one report, got {}", max_runs, o.runs.size()));
    }
    if (o.names.size() > o.runs.size()) {
        throw tdbg::cli::argument_error(fmt::format("{} --name options for {} run{}", o.names.size(), o.runs.size(),
                                                 o.runs.size() == 1 ? "" : "s"));
    }
}

// The rules over the run's one trial, built as `tdbg rules DIR` builds them, before
// any tensor is read: an unknown rule or parameter fails at once.
std::vector<tdbg::rules::any_rule> build_rules(const tdbg::trial& trial, const report_options& o) {
    std::vector<tdbg::rules::any_rule> rules;
    const auto logger = tdbg::rules::rule_logger::to_stderr(tdbg::rules::log_level::error);
    for (const tdbg::commands::rule_request& request : o.rules) {
        rules.push_back(tdbg::cli::build_rule(request, o.others, trial, logger));
    }
    return rules;
}

// The rules evaluated over the steps written so far (tdbg::rules::evaluate_snapshot, as `tdbg rules DIR`
// without --follow): a rule that could not be evaluated is said on `err`.
std::vector<tdbg::rules::evaluation_result> evaluate_rules(std::vector<tdbg::rules::any_rule>& rules,
                                                           std::ostream& err) {
    std::vector<tdbg::rules::evaluation_result> results = tdbg::rules::evaluate_snapshot(rules);
    for (const auto& r : results) {
        if (!r.error.empty()) {
            // The error quotes the run's names (tensors, workers, files): escaped as every text printed.
            err << "tdbg report: warning: rule " << tdbg::terminal_safe(r.display_name())
                << " could not be evaluated: " << tdbg::terminal_safe(r.error) << "\n";
        }
    }
    return results;
}

std::string generated_line() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    char when[32] = "";
    if (::gmtime_r(&now, &utc) != nullptr) {
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
    }
    std::string line = fmt::format("written by tdbg report {}", TDBG_VERSION);
    if (when[0] != '\0') {
        fmt::format_to(std::back_inserter(line), " on {}", when);
    }
    return line;
}

int run_report(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    tdbg::commands::report_options o;
    tdbg::cli::arguments parser("tdbg report DIR [-o FILE] [options]\n"
                                "tdbg report DIR DIR... [--name NAME]... [--diff FILE] [-o FILE] [options]",
                                "Writes one self-contained HTML page about the run in DIR (a directory, or\n"
                                "s3://bucket/prefix when built with S3): for each tensor, line plots of\n"
                                "reductions over steps (a line per mode and worker) and a heatmap of the\n"
                                "distribution of its values step by step; with rules, the steps where each\n"
                                "rule triggered are marked on every step axis and listed in a table. The\n"
                                "page needs no network: open it in any browser, attach it to a CI job.\n\n"
                                "Given several runs (8 at most), the page compares them: a line per run (and\n"
                                "mode and worker) on each plot, the runs' distributions side by side, the\n"
                                "rules evaluated over each run.\n");
    declare_report_arguments(parser, o);
    return parser.run_or_help(args, out, [&](const std::vector<std::string>& positional) {
        check_report_options(o, positional);
        return tdbg::commands::report(o, out, err);
    });
}

} // namespace

int tdbg::commands::report(const report_options& o, std::ostream& out, std::ostream& err) {
    return tdbg::cli::guarded("report", err, [&] {
        if (o.runs.empty() || o.runs.size() > max_runs) {
            throw tdbg::error(fmt::format("a report is on 1 to {} runs, got {}", max_runs, o.runs.size()));
        }
        // Everything that can be wrong with the arguments fails before a tensor is read; the page
        // may not replace a run or a file it reads.
        std::vector<std::string> runs = o.runs;
        runs.insert(runs.end(), o.others.begin(), o.others.end());
        std::vector<std::string> inputs = o.config_files;
        if (o.diff) {
            inputs.push_back(*o.diff);
        }
        tdbg::cli::check_outputs({{"-o", o.output}}, runs, inputs);
        std::optional<tdbg::cli::report::diff_summary> diff;
        if (o.diff) {
            diff = tdbg::cli::report::read_diff(*o.diff);
        }
        tdbg::cli::report::document doc;
        if (o.runs.size() == 1) {
            const tdbg::trial trial = tdbg::cli::open_run(o.runs.front());
            auto rules = build_rules(trial, o);
            // The rules first: the tensors they flag open the page.
            auto results = evaluate_rules(rules, err);
            doc = tdbg::cli::report::collect_run(trial, o, results);
            if (!o.names.empty()) {
                doc.run_name = o.names.front();
                doc.title = o.title ? *o.title : fmt::format("tdbg report: {}", doc.run_name);
            }
            doc.rules = std::move(results);
        } else {
            const auto names = tdbg::cli::report::run_names(o.runs, o.names);
            std::vector<tdbg::trial> trials;
            std::vector<std::vector<tdbg::rules::any_rule>> rules;
            trials.reserve(o.runs.size());
            rules.reserve(o.runs.size());
            for (const auto& location : o.runs) {
                trials.push_back(tdbg::cli::open_run(location));
            }
            for (const auto& trial : trials) {
                rules.push_back(build_rules(trial, o));
            }
            doc = tdbg::cli::report::collect_runs(trials, names, o);
            for (std::size_t i = 0; i < rules.size(); ++i) {
                for (auto& result : evaluate_rules(rules[i], err)) {
                    doc.rules.push_back(std::move(result));
                    doc.rule_runs.push_back(names[i]);
                }
            }
        }
        doc.diff = std::move(diff);
        doc.generated = generated_line();
        // Written through a link, in place into a FIFO or device, else replaced whole: a browser never shows half a
        // page.
        tdbg::cli::write_output(o.output, tdbg::cli::report::render_html(doc), out);
        if (o.output != "-") {
            std::size_t issues = 0;
            for (const auto& r : doc.rules) {
                issues += r.status() == tdbg::rules::evaluation_status::issues_found ? 1 : 0;
            }
            out << "wrote " << tdbg::terminal_safe(o.output) << ": " << doc.tensors.size() << " of " << doc.tensors_in_run << " tensors";
            if (!doc.rules.empty()) {
                out << ", " << doc.rules.size() << (doc.rules.size() == 1 ? " rule (" : " rules (") << issues
                    << " found issues)";
            }
            out << "\n";
        }
        return tdbg::cli::exit_ok;
    });
}

namespace {
const tdbg::cli::command_registrar register_report{tdbg::cli::command{
    "report", "write one HTML page of plots: reductions, value distributions, rule triggers", &run_report}};
} // namespace
