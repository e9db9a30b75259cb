// `tdbg diff RUN_A RUN_B`: the first step where two runs part (tdbg/diff/diff.hpp),
// then every diverging tensor by the step where it first does; --json for machines
// ("tdbg-diff/1", tdbg/diff/document.hpp). Exit status 0 when the runs agree, 1 when they differ, 2 on an error.

#include <cstddef>
#include <exception>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/diff/document.hpp"

namespace {

std::pair<std::string, std::string> parse_mapping(const std::string& flag, const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        throw tdbg::cli::argument_error(fmt::format("{} expects NAME_IN_A=NAME_IN_B, got '{}'", flag, text));
    }
    return {text.substr(0, eq), text.substr(eq + 1)};
}

// Declares `tdbg diff`'s options on `args`, bound to `o`.
void declare_diff_arguments(tdbg::cli::arguments& args, tdbg::commands::diff_options& o) {
    const auto tolerance = [](double& target) {
        return [&target](const std::string& opt, const std::string& value) {
            target = tdbg::cli::parse_number(opt, value, 0.0, std::numeric_limits<double>::max());
        };
    };
    args.option("--rtol", "X", fmt::format("relative tolerance (default {:g})", o.comparison.rtol),
                tolerance(o.comparison.rtol));
    args.option("--atol", "X", fmt::format("absolute tolerance (default {:g})", o.comparison.atol),
                tolerance(o.comparison.atol));
    args.option("--tensors", "REGEX",
                "only tensors whose name in run A matches (searched, as smdebug's tensor regexes)",
                [&o](const std::string&, const std::string& value) { o.comparison.tensor_regex = value; });
    args.option("--map", "A=B", "tensor A of run A is called B in run B; repeatable",
                [&o](const std::string& opt, const std::string& value) {
                    o.comparison.name_map.push_back(parse_mapping(opt, value));
                });
    args.option("--map-prefix", "PA=PB",
                "names starting with PA in run A start with PB in run B (e.g. --map-prefix Net_=MLP_); "
                "repeatable, longest wins",
                [&o](const std::string& opt, const std::string& value) {
                    o.comparison.prefix_map.push_back(parse_mapping(opt, value));
                });
    args.flag("--reductions",
              "where one run holds a raw value and the other only stored reductions, compare the reductions "
              "(where neither holds raw values, the stored reductions are compared without it, and the output says "
              "so)",
              o.comparison.compare_reductions);
    args.option("--mode", "MODE", "only the steps of TRAIN, EVAL, PREDICT or GLOBAL",
                [&o](const std::string& opt, const std::string& value) {
                    const auto m = tdbg::try_parse_mode(value);
                    if (!m) {
                        throw tdbg::cli::argument_error(
                            fmt::format("{} expects TRAIN, EVAL, PREDICT or GLOBAL, got '{}'", opt, value));
                    }
                    o.comparison.only_mode = *m;
                });
    args.flag("--ignore-missing", "tensors, steps and workers of one run only are listed, not counted as differences",
              o.comparison.ignore_missing);
    args.flag("--json",
              "print a JSON document (\"tdbg-diff/1\"); a difference that is not a finite number is null: "
              "infinite where elements were compared (NaN against a number, a relative difference against 0), "
              "undefined where none was (another dtype or shape); first_divergence is null when the runs part "
              "only by tensors saved in one of them",
              o.json);
    args.epilog("exit status: 0 the runs agree within the tolerances, 1 they differ, 2 an error,\n"
                "including a diff that compared nothing (no tensor matched, or none had values\n"
                "in both runs): the message says why.\n");
}

// Checks what the options say together, once all are parsed.
void check_diff_options(tdbg::commands::diff_options& o, const std::vector<std::string>& positional) {
    if (positional.size() != 2) {
        throw tdbg::cli::argument_error(
            fmt::format("expected two runs, RUN_A and RUN_B, got {} arguments", positional.size()));
    }
    o.run_a = positional[0];
    o.run_b = positional[1];
}

std::string index_text(const std::vector<std::size_t>& index) {
    std::string out = "[";
    for (std::size_t i = 0; i < index.size(); ++i) {
        out += fmt::format("{}{}", i == 0 ? "" : ", ", index[i]);
    }
    return out + "]";
}

std::string tensor_label(const tdbg::diff_divergence& d) {
    std::string out = d.tensor == d.tensor_b ? d.tensor : fmt::format("{} (B: {})", d.tensor, d.tensor_b);
    if (d.compared_reduction) {
        out += fmt::format(" [{}]", tdbg::reduction_name(*d.compared_reduction));
    }
    return tdbg::terminal_safe(out);
}

void print_text(std::ostream& out, const tdbg::commands::diff_options& o, const tdbg::diff_result& r) {
    const std::string counts = fmt::format("compared {} tensors, {} steps, {} values", r.tensors_compared,
                                           r.steps_compared, r.values_compared);
    if (r.agree()) {
        out << fmt::format("runs agree within rtol {}, atol {}: {}\n", o.comparison.rtol, o.comparison.atol, counts);
    } else if (const auto* d = r.first_divergence()) {
        out << fmt::format("runs part at step {} ({} step {}, {}): tensor {}\n", d->step, tdbg::mode_name(d->step_mode),
                           d->mode_step, tdbg::terminal_safe(d->worker), tensor_label(*d));
        if (d->flat_index) {
            out << fmt::format("  largest absolute difference {:g}, largest relative difference {:g}\n",
                               d->max_abs_diff, d->max_rel_diff);
            const std::string where = d->index.empty()
                                          ? std::string("the value (0-d) is out of tolerance")
                                          : fmt::format("element {} (flat {}) is furthest out of tolerance",
                                                        index_text(d->index), *d->flat_index);
            out << fmt::format("  {}; {} (rtol {}, atol {})\n", where, tdbg::terminal_safe(d->reason), o.comparison.rtol,
                               o.comparison.atol);
        } else {
            out << "  " << tdbg::terminal_safe(d->reason) << "\n";
        }
        out << "\ntensors that diverge, by the step where each first does:\n";
        out << fmt::format("  {:>8}  {:<7}  {:>9}  {:>13}  {:>13}  {:>6}  {}\n", "step", "mode", "mode_step",
                           "max_abs_diff", "max_rel_diff", "steps", "tensor");
        for (const auto& t : r.divergences) {
            out << fmt::format("  {:>8}  {:<7}  {:>9}  {:>13.6g}  {:>13.6g}  {:>6}  {}{}\n", t.step,
                               tdbg::mode_name(t.step_mode), t.mode_step, t.max_abs_diff, t.max_rel_diff,
                               t.diverging_steps, tensor_label(t),
                               t.flat_index ? "" : " (" + tdbg::terminal_safe(t.reason) + ")");
        }
    } else {
        out << "runs hold different tensors\n";
    }
    const auto names = [&](const char* label, const std::vector<std::string>& list) {
        if (list.empty()) {
            return;
        }
        out << label;
        for (const auto& n : list) {
            out << " " << tdbg::terminal_safe(n);
        }
        out << "\n";
    };
    names("only in run A:", r.only_in_a);
    names("only in run B:", r.only_in_b);
    if (!r.agree()) {
        out << counts << "\n";
    }
}

int run_diff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    tdbg::commands::diff_options o;
    tdbg::cli::arguments parser("tdbg diff RUN_A RUN_B [options]",
                                "Compares run B with the reference run A tensor by tensor and step by step\n"
                                "(steps matched by mode and mode step, workers by name) and prints the first\n"
                                "divergence: its step, mode, tensor, the largest absolute and relative\n"
                                "difference and the element index; then a table of the tensors that diverge,\n"
                                "ordered by the step where each first does. Runs are directories, or\n"
                                "s3://bucket/prefix when built with S3; they are read one value at a time.\n\n"
                                "An element of B is close to A's when |b - a| <= atol + rtol * |a| (numpy's\n"
                                "isclose with A as the reference); NaN equals NaN only where both runs hold\n"
                                "NaN, an infinity only the same infinity. A different dtype or shape, and a\n"
                                "tensor, step or worker saved in one run only, is a difference.\n");
    declare_diff_arguments(parser, o);
    return parser.run_or_help(args, out, [&](const std::vector<std::string>& positional) {
        check_diff_options(o, positional);
        return tdbg::commands::diff(o, out, err);
    });
}

} // namespace

int tdbg::commands::diff(const diff_options& options, std::ostream& out, std::ostream& err) {
    return tdbg::cli::guarded("diff", err, [&] {
        const tdbg::trial a = tdbg::cli::open_run(options.run_a);
        const tdbg::trial b = tdbg::cli::open_run(options.run_b);
        const tdbg::diff_result result = tdbg::diff_runs(a, b, options.comparison);
        // A diff over nothing is no agreement: an error (exit 2) that says why.
        if (!result.nothing_compared.empty()) {
            throw tdbg::error(fmt::format("nothing was compared: {}", result.nothing_compared));
        }
        // Where no raw value was saved in either run, stored reductions were compared: both outputs say so.
        if (options.json) {
            out << tdbg::cli::json_document_text(
                tdbg::diff_document_json(result, options.run_a, options.run_b, options.comparison));
        } else {
            print_text(out, options, result);
            if (result.reductions_compared > 0) {
                out << "note: " << tdbg::diff_reductions_note(result) << "\n";
            }
        }
        out.flush();
        return result.agree() ? tdbg::cli::exit_ok : tdbg::cli::exit_differ;
    });
}

namespace {
const tdbg::cli::command_registrar register_diff{
    tdbg::cli::command{"diff", "compare two runs step by step and print where they first part", &run_diff}};
} // namespace
