// `tdbg ls DIR`: a run at a glance, for a person: its state, workers, modes,
// steps, collections, and one line per tensor.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "step_text.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/format/job_claim.hpp"
#include "tdbg/storage/storage.hpp"
#include "text_table.hpp"

namespace {

// "0-14", "0-35 every 5", "0-5, 7, 9-12, ... (40 steps)".
std::string describe_steps(const std::vector<std::int64_t>& steps) {
    if (steps.empty()) {
        return "none";
    }
    if (steps.size() == 1) {
        return std::to_string(steps.front());
    }
    if (auto progression = tdbg::cli::describe_progression(steps)) {
        return *std::move(progression);
    }
    const std::string count = fmt::format(" ({} steps)", steps.size());
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < steps.size();) {
        std::size_t j = i;
        while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) {
            ++j;
        }
        parts.push_back(j == i ? std::to_string(steps[i]) : fmt::format("{}-{}", steps[i], steps[j]));
        i = j + 1;
    }
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (out.size() > 50 && i + 1 < parts.size()) {
            fmt::format_to(std::back_inserter(out), ", ..., {}", parts.back());
            break;
        }
        fmt::format_to(std::back_inserter(out), "{}{}", i == 0 ? "" : ", ", parts[i]);
    }
    return out + count;
}

struct tensor_row {
    std::string name, dtype, shape, steps, modes, saved;
};

tensor_row describe_tensor(const tdbg::trial& t, const std::string& name, bool read_values) {
    const auto tensor = t.tensor(name);
    tensor_row row{tdbg::terminal_safe(name), "-", "-", "0", "-", "-"};
    const tdbg::tensor_summary summary = tensor.summary(); // every step seen, complete or not
    row.steps = std::to_string(summary.steps);
    std::vector<std::string> mode_names;
    for (const tdbg::mode m : summary.modes) { // train, eval, predict, global
        mode_names.emplace_back(tdbg::mode_name(m));
    }
    if (!mode_names.empty()) {
        row.modes = fmt::to_string(fmt::join(mode_names, ","));
    }
    std::vector<std::string> saved;
    if (summary.has_value) {
        saved.emplace_back("value");
    }
    if (summary.has_shape) {
        saved.emplace_back("shape");
    }
    std::set<std::string> reductions; // by name
    for (const auto r : summary.stored_reductions) {
        reductions.insert(tdbg::reduction_name(r));
    }
    if (reductions.size() > 4) {
        saved.push_back(fmt::format("{} reductions", reductions.size()));
    } else {
        saved.insert(saved.end(), reductions.begin(), reductions.end());
    }
    row.saved = saved.empty() ? "-" : fmt::to_string(fmt::join(saved, ", "));
    // dtype and shape at the last step that has them.
    if (const auto& last = summary.last) {
        if (last->has_value && read_values) {
            // The record's head only: a value of any size costs one small read.
            const auto layout = tensor.layout(last->step, tdbg::mode::global, last->worker);
            row.dtype = std::string(tdbg::dtype_name(layout.type));
            row.shape = tdbg::shape_text(layout.shape);
        } else if (last->has_value) {
            row.dtype = "?";
            row.shape = last->stored_shape ? tdbg::shape_text(*last->stored_shape) : "?";
        } else if (last->stored_shape) {
            row.shape = tdbg::shape_text(*last->stored_shape);
        }
    }
    return row;
}

// Who wrote the run: its workers' claims (tdbg/format/job_claim.hpp), at most `shown` of them
// read, one line each; where there are more, how many.
std::vector<std::string> describe_jobs(const tdbg::trial& t, std::size_t shown = 4) {
    const tdbg::any_storage& storage = t.storage();
    std::vector<std::string> lines;
    const std::vector<std::string> keys = storage.list(std::string(tdbg::format::claims_prefix), {});
    std::size_t claims = 0;
    for (const std::string& key : keys) {
        const auto worker = tdbg::format::parse_claim_key(key);
        if (!worker) {
            continue;
        }
        if (++claims > shown) {
            continue;
        }
        std::string text;
        try {
            text = storage.read(key);
        } catch (const tdbg::object_not_found&) {
            continue; // gone since the listing
        }
        const auto claim = tdbg::format::parse_job_claim(text);
        if (!claim) {
            lines.push_back(fmt::format("{}: a claim that is not JSON ({})", *worker, key));
            continue;
        }
        lines.push_back(fmt::format("{}: {}{}", *worker, tdbg::format::describe(*claim),
                                    claim->first_step ? fmt::format(", from step {}", *claim->first_step) : ""));
    }
    if (claims > shown) {
        lines.push_back(fmt::format("... and {} more ({})", claims - shown, tdbg::format::claims_prefix));
    }
    if (lines.empty()) {
        lines.emplace_back("unknown: no claim (a run written by smdebug, or by a writer without claims)");
    }
    return lines;
}

int print_run(const tdbg::trial& t, bool read_values, std::ostream& out) {
    const auto all_steps = t.steps(tdbg::mode::global, true);
    const auto complete = t.steps();
    const auto field = [&](const std::string& label, const std::string& text) {
        out << label << std::string(label.size() < 13 ? 13 - label.size() : 1, ' ') << tdbg::terminal_safe(text)
            << "\n";
    };
    field("run", t.name());
    field("path", t.path());
    if (t.loaded_all_steps()) {
        field("state", "finished (training_job_end.ts present)");
    } else {
        field("state", fmt::format("live or interrupted (no end marker yet); "
                                   "last complete step {}, {} steps waiting for a worker",
                                   t.last_complete_step(), all_steps.size() - complete.size()));
    }
    const auto workers = t.workers();
    field("workers", fmt::format("{} of {}: {}", workers.size(), t.num_workers(), fmt::join(workers, ", ")));
    const std::vector<std::string> jobs = describe_jobs(t);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        field(i == 0 ? "written by" : "", jobs[i]);
    }
    field("steps", describe_steps(all_steps));
    for (const tdbg::mode m : t.modes()) {
        field(fmt::format("  {}", tdbg::mode_name(m)), describe_steps(t.steps(m, true)));
    }
    std::vector<std::string> collections;
    for (const auto& item : t.collections()) {
        collections.push_back(item.first);
    }
    field("collections", fmt::format("{}: {}", collections.size(), fmt::join(collections, ", ")));
    const auto names = t.tensor_names();
    field("tensors", std::to_string(names.size()));
    if (names.empty()) {
        return tdbg::cli::exit_ok;
    }

    std::vector<std::vector<std::string>> rows{{"TENSOR", "DTYPE", "SHAPE", "STEPS", "MODES", "SAVED"}};
    for (const auto& name : names) {
        tensor_row r = describe_tensor(t, name, read_values);
        rows.push_back({std::move(r.name), std::move(r.dtype), std::move(r.shape), std::move(r.steps),
                        std::move(r.modes), std::move(r.saved)});
    }
    out << "\n";
    tdbg::cli::print_table(out, rows, {true, true, true, false, true, true});
    return tdbg::cli::exit_ok;
}

int run_ls(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    tdbg::commands::ls_options o;
    tdbg::cli::arguments parser("tdbg ls DIR [--no-values]",
                                "Summarises the run in DIR (a directory, or s3://bucket/prefix when built\n"
                                "with S3): whether it has ended, its workers, modes and\n"
                                "steps, its collections, and for each tensor its dtype and shape (at the\n"
                                "last step), the number of steps, the modes, and what was saved (the value,\n"
                                "a shape, stored reductions).\n");
    parser.flag("--no-values", "do not read the head of one value per tensor (dtype shown as '?')", o.read_values,
                false);
    return parser.run_or_help(args, out, [&](const std::vector<std::string>& positional) {
        o.run = tdbg::cli::single_run_argument(positional);
        return tdbg::commands::ls(o, out, err);
    });
}

} // namespace

int tdbg::commands::ls(const ls_options& options, std::ostream& out, std::ostream& err) {
    // What ls prints is the summaries: the trial keeps no tensor's every entry.
    tdbg::trial_options summarised;
    summarised.summary_only = true;
    return tdbg::cli::guarded("ls", err, [&] {
        return print_run(tdbg::cli::open_run(options.run, summarised), options.read_values, out);
    });
}

namespace {
const tdbg::cli::command_registrar register_ls{
    tdbg::cli::command{"ls", "summarise a run: steps, modes, workers, collections, tensors", &run_ls}};
} // namespace
