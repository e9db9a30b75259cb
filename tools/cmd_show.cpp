// `tdbg show RUN TENSOR_REGEX`: a quick look at values. The values of the tensors whose
// names match, a step at a time, laid out as numpy prints arrays; or, with --reductions
// (and for a tensor saved as reductions only), a table of its reductions over the steps.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/array_text.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/trial.hpp"
#include "text_table.hpp"

namespace {

using tdbg::terminal_safe;

// ---- The command ----

using tdbg::commands::show_options;

// The entries of `tensor` to show, one per step: those of the options' mode and steps (mode
// steps with a mode, else global steps), of the worker asked for, else of the first (by name)
// that saved the step; by default the last step only.
std::vector<tdbg::tensor_step_info> entries_to_show(const tdbg::tensor& tensor, const show_options& o) {
    tdbg::step_range window;
    if (o.step) {
        window.begin = *o.step;
        window.end = *o.step + 1;
    } else if (o.steps) {
        window = *o.steps;
    }
    std::vector<tdbg::tensor_step_info> picked;
    for (tdbg::tensor_step_info& e : tensor.entries(o.mode)) {
        const std::int64_t at = o.mode == tdbg::mode::global ? e.step : e.mode_step;
        if ((o.worker && e.worker != *o.worker) || !window.contains(at) ||
            (!picked.empty() && picked.back().step == e.step)) {
            continue;
        }
        picked.push_back(std::move(e));
    }
    if (!o.step && !o.steps && picked.size() > 1) {
        picked.erase(picked.begin(), picked.end() - 1);
    }
    return picked;
}

// "step 12 (TRAIN step 5)".
std::string step_text(const tdbg::tensor_step_info& e) {
    return fmt::format("step {} ({} step {})", e.step, tdbg::mode_name(e.step_mode), e.mode_step);
}

// The reductions of `tensor` at `entries`, a row per step: those stored for it (computed from
// the value at a step that has one but not them), else min, max, mean, std and l2 computed
// from the values; "-" where neither is there.
void print_reductions(std::ostream& out, const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& entries,
                      bool several_workers) {
    using tdbg::reduction;
    using tdbg::reduction_kind;
    const tdbg::tensor_summary summary = tensor.summary();
    std::vector<reduction> columns = summary.stored_reductions;
    const bool stored = !columns.empty();
    if (!stored) {
        columns = {reduction{reduction_kind::min, false}, reduction{reduction_kind::max, false},
                   reduction{reduction_kind::mean, false}, reduction{reduction_kind::std, false},
                   reduction{reduction_kind::l2, false}};
    }
    out << terminal_safe(tensor.name()) << "  "
        << (stored ? "stored reductions" : "reductions computed from the values")
        << (summary.has_value ? "" : " (saved as reductions only, no values)") << "\n";

    std::vector<std::vector<std::string>> rows{{"step", "mode", "mode_step"}};
    std::vector<bool> left{false, true, false};
    if (several_workers) {
        rows[0].emplace_back("worker");
        left.push_back(true);
    }
    for (const reduction r : columns) {
        rows[0].push_back(tdbg::reduction_name(r));
        left.push_back(false);
    }
    for (const tdbg::tensor_step_info& e : entries) {
        std::vector<std::string> row{std::to_string(e.step), std::string(tdbg::mode_name(e.step_mode)),
                                     std::to_string(e.mode_step)};
        if (several_workers) {
            row.push_back(terminal_safe(e.worker));
        }
        for (const tdbg::step_reduction& r : tensor.reductions(e.step, columns, tdbg::mode::global, e.worker)) {
            // "-" where neither is there: not stored, and no value, a string tensor or the min of an empty one.
            row.push_back(r.value ? tdbg::scalar_text(*r.value) : "-");
        }
        rows.push_back(std::move(row));
    }
    tdbg::cli::print_table(out, rows, left);
}

// The values of `tensor` at `entries`, each under a header line.
void print_values(std::ostream& out, const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& entries,
                  bool several_workers) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const tdbg::tensor_step_info& e = entries[i];
        const std::string worker = several_workers ? "  worker " + terminal_safe(e.worker) : "";
        out << (i == 0 ? "" : "\n") << terminal_safe(tensor.name()) << "  " << step_text(e) << worker;
        if (!e.has_value) {
            out << (e.stored_reductions.empty()
                        ? "  no value saved at this step\n"
                        : "  no value saved at this step, only reductions (see --reductions)\n");
            continue;
        }
        const tdbg::tensor_value value = tensor.value(e.step, tdbg::mode::global, e.worker);
        out << "  " << tdbg::dtype_name(value.type()) << " " << tdbg::shape_text(value.shape()) << "\n"
            << tdbg::array_text(value) << "\n";
    }
}

// "'a', 'b' or 'c'".
std::string quoted_names(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
    }
    return out;
}

// Why `regex` selects nothing, with the names it may have been meant for.
std::string no_match_message(const tdbg::trial& t, const std::string& regex, tdbg::mode m) {
    std::string message = fmt::format("no tensor matches '{}'", regex);
    if (m != tdbg::mode::global) {
        message += fmt::format(" in mode {}", tdbg::mode_name(m));
        std::vector<std::string> elsewhere = t.tensor_names(std::nullopt, tdbg::mode::global, regex);
        if (!elsewhere.empty()) {
            const std::size_t count = elsewhere.size();
            elsewhere.resize(std::min<std::size_t>(count, 3));
            return message + fmt::format(" (it matches {} saved in other modes: {}{})", count, quoted_names(elsewhere),
                                         count > 3 ? ", ..." : "");
        }
    }
    const std::vector<std::string> names = t.tensor_names(std::nullopt, m);
    const std::vector<std::string> near = tdbg::nearest_names(tdbg::regex_literal(regex), names, true);
    if (!near.empty()) {
        return message + "; did you mean " + quoted_names(near) + "?";
    }
    return names.empty() ? message + "; the run holds no tensor" : message;
}

void declare_show_arguments(tdbg::cli::arguments& args, show_options& o) {
    args.option("--step", "N", "only step N (a mode step with --mode, else a global step)",
                [&o](const std::string& opt, const std::string& value) {
                    o.step = tdbg::cli::parse_number<std::int64_t>(opt, value, 0,
                                                                   std::numeric_limits<std::int64_t>::max() - 1);
                });
    args.option(
        "--steps", "A:B",
        "the steps from A up to, not including, B (as Python's A:B; either may be left out, "
        "':' is every step)",
        [&o](const std::string& opt, const std::string& value) { o.steps = tdbg::cli::parse_step_range(opt, value); });
    args.option(
        "--mode", "MODE", "only the steps of TRAIN, EVAL or PREDICT (GLOBAL: every mode, the default)",
        [&o](const std::string& opt, const std::string& value) { o.mode = tdbg::cli::parse_mode_option(opt, value); });
    args.option("--worker", "W", "the values worker W saved (default: the first worker, by name, that saved the step)",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::argument_error(fmt::format("{} needs a non-empty value", opt));
                    }
                    o.worker = value;
                });
    args.flag("--reductions", "a table of the reductions over the steps instead of the values", o.reductions);
    args.epilog("exit status: 0 the values were shown, 2 an error: no tensor matches, none was saved\n"
                "at the steps asked for, a bad run or argument.\n");
}

int run_show(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    show_options o;
    tdbg::cli::arguments parser("tdbg show RUN TENSOR_REGEX [--step N | --steps A:B] [--mode MODE] [--worker W]\n"
                                "                [--reductions]",
                                "Prints the values of the tensors of the run in RUN (a directory, or\n"
                                "s3://bucket/prefix when built with S3) whose names TENSOR_REGEX matches\n"
                                "(searched, as smdebug's tensor regexes), a step at a time, as numpy prints\n"
                                "arrays: nested brackets by shape, and only the first and last 3 items of\n"
                                "each dimension around '...' when there are more than 1000 elements. A line\n"
                                "before each gives the tensor, its global step, mode and mode step, dtype\n"
                                "and shape. By default only the last step each tensor was saved at is\n"
                                "shown; --steps : shows them all.\n"
                                "\n"
                                "With --reductions, a table instead, a row per step: the reductions stored\n"
                                "for the tensor, else min, max, mean, std and l2 computed from its values.\n"
                                "A tensor saved as reductions only is shown that way in any case.\n");
    declare_show_arguments(parser, o);
    return parser.run_or_help(args, out, [&](const std::vector<std::string>& positional) {
        if (positional.size() != 2) {
            throw tdbg::cli::argument_error(fmt::format(
                "expected the run and a tensor regex, RUN TENSOR_REGEX, got {} arguments", positional.size()));
        }
        if (o.step && o.steps) {
            throw tdbg::cli::argument_error("--step and --steps cannot be given together");
        }
        o.run = (positional)[0];
        o.tensor_regex = (positional)[1];
        return tdbg::commands::show(o, out, err);
    });
}

} // namespace

int tdbg::commands::show(const show_options& o, std::ostream& out, std::ostream& err) {
    return tdbg::cli::guarded("show", err, [&] {
        const std::string& regex = o.tensor_regex;
        const tdbg::trial t = tdbg::cli::open_run(o.run);
        const std::vector<std::string> workers = t.workers();
        if (o.worker && std::find(workers.begin(), workers.end(), *o.worker) == workers.end()) {
            throw tdbg::error(
                fmt::format("no worker '{}' in the run (its workers: {})", *o.worker, quoted_names(workers)));
        }
        tdbg::tensor_name_query query;
        query.regex = {regex};
        query.mode = o.mode;
        const std::vector<std::string> names = t.tensor_names(query);
        if (names.empty()) {
            throw tdbg::error(no_match_message(t, regex, o.mode));
        }
        const bool several_workers = workers.size() > 1;
        bool shown = false;
        for (std::size_t n = 0; n < names.size(); ++n) {
            const tdbg::tensor tensor = t.tensor(names[n]);
            const std::vector<tdbg::tensor_step_info> entries = entries_to_show(tensor, o);
            out << (n == 0 ? "" : "\n");
            if (entries.empty()) {
                out << terminal_safe(names[n]) << "  nothing saved at the steps asked for\n";
                continue;
            }
            shown = true;
            const tdbg::tensor_summary summary = tensor.summary();
            if (o.reductions || (!summary.has_value && !summary.stored_reductions.empty())) {
                print_reductions(out, tensor, entries, several_workers);
            } else {
                print_values(out, tensor, entries, several_workers);
            }
        }
        out.flush();
        if (!shown) {
            throw tdbg::error(fmt::format("no tensor matching '{}' was saved at the steps asked for", regex));
        }
        return tdbg::cli::exit_ok;
    });
}

namespace {
const tdbg::cli::command_registrar register_show{
    tdbg::cli::command{"show", "print tensors' values (numpy's layout) or reductions, step by step", &run_show}};
} // namespace
