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
#include "report/diff_file.hpp"
#include "report_html.hpp"
#include "rule_selection.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/rules/config.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/core/text.hpp"

namespace {

// A colour each, and a page of bounded size.
constexpr std::size_t max_runs = tdbg::commands::report_max_runs;

using tdbg::commands::report_options;

// Declares `tdbg report`'s options on `args`, bound to `o`.
void declare_report_arguments(tdbg::cli::arguments& args, report_options& o) {
    args.section("output");
    args.option("-o,--output", "FILE",
                "the page to write (default report.html; - for stdout); a symbolic link is written through, a "
                "FIFO or device in place, a regular file replaced whole at once",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::usage_error(fmt::format("{} needs a file name", opt));
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
                        throw tdbg::cli::usage_error(fmt::format("{} needs a non-empty name", opt));
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
    args.number("--max-tensors", "N", "at most N tensors on the page, in the order of its sections (default 20; 0: all)",
                o.max_tensors, std::size_t{0}, std::size_t{100000});
    args.number("--per-section", "N",
                "without --tensors and --collection, the page shows the tensors a rule flagged, then each "
                "collection's (losses, gradients, weights, biases, the others), then the rest, at most N of each, "
                "in name order (default 6; 0: all)",
                o.per_section, std::size_t{0}, std::size_t{100000});
    args.option("--reductions", "LIST",
                "the reductions to plot, e.g. mean,std,abs_max,l2_norm (default: the reductions the run saved "
                "for a tensor; else mean,std,l2 computed from its values; a scalar's value as it is)",
                [&o](const std::string& opt, const std::string& value) {
                    try {
                        o.reductions = tdbg::parse_reduction_list(value);
                    } catch (const tdbg::config_error& e) {
                        throw tdbg::cli::usage_error(fmt::format("{}: {}", opt, e.what()));
                    }
                    if (o.reductions->empty()) {
                        throw tdbg::cli::usage_error(fmt::format("{} needs at least one reduction", opt));
                    }
                });
    args.number("--max-points", "N", "points per line at most, evenly sampled (default 1000)", o.max_points,
                std::size_t{2}, std::size_t{1000000});
    args.section("distributions");
    args.number("--bins", "N", "value bins of the heatmaps (default 40)", o.bins, std::size_t{2}, std::size_t{400});
    args.number("--max-steps", "N", "steps per heatmap at most, evenly sampled (default 120)", o.max_steps,
                std::size_t{1}, std::size_t{5000});
    args.flag("--no-distributions", "no heatmaps (they read every sampled value)", o.distributions, false);
    tdbg::cli::declare_rule_selection(args, o.rules, o.config_files, o.others, "rules (as in tdbg rules, over the steps written so far)",
                                      true);
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
        throw tdbg::cli::usage_error(fmt::format("at most {} runs in one report, got {}", max_runs, o.runs.size()));
    }
    if (o.names.size() > o.runs.size()) {
        throw tdbg::cli::usage_error(
            fmt::format("{} --name options for {} run{}", o.names.size(), o.runs.size(), o.runs.size() == 1 ? "" : "s"));
    }
}

// ---------------------------------------------------------------- values as numbers

// An element as a number: a complex value by its magnitude, the rest as tdbg::as_double.
template <class T>
double number_of(const T& x) {
    if constexpr (tdbg::is_complex_element_v<T>) {
        return static_cast<double>(std::abs(x));
    } else {
        return tdbg::as_double(x);
    }
}

// Calls f(double) for every element of a numeric tensor.
template <class F>
void for_each_number(const tdbg::tensor_value& v, F&& f) {
    tdbg::visit_dtype(v.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, std::string>) {
            const T* p = v.data_as<T>();
            for (std::size_t i = 0, n = v.size(); i < n; ++i) {
                f(number_of(p[i]));
            }
        }
    });
}

// The first element of a reduction's 0-d result (NaN for an empty tensor).
double first_number(const tdbg::tensor_value& v) {
    double out = std::numeric_limits<double>::quiet_NaN();
    if (v.type() != tdbg::dtype::string && v.size() > 0) {
        tdbg::visit_dtype(v.type(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (!std::is_same_v<T, std::string>) {
                out = number_of(v.data_as<T>()[0]);
            }
        });
    }
    return out;
}

// Up to n of `items`, evenly spread, the first and the last always in.
template <class T>
std::vector<T> sample_evenly(const std::vector<T>& items, std::size_t n) {
    if (items.size() <= n || n < 2) {
        return items;
    }
    std::vector<T> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(items[i * (items.size() - 1) / (n - 1)]);
    }
    return out;
}

// The order a person expects to read reductions in.
int reduction_rank(tdbg::reduction r) {
    static constexpr tdbg::reduction_kind order[] = {
        tdbg::reduction_kind::mean,     tdbg::reduction_kind::std, tdbg::reduction_kind::min,
        tdbg::reduction_kind::max,      tdbg::reduction_kind::l2,  tdbg::reduction_kind::l1,
        tdbg::reduction_kind::variance, tdbg::reduction_kind::sum, tdbg::reduction_kind::prod};
    const auto at = std::find(std::begin(order), std::end(order), r.kind) - std::begin(order);
    return static_cast<int>(at) + (r.abs ? 100 : 0);
}

// Values read for one tensor, kept (up to a budget) because the line plots and
// both passes over a heatmap's steps want the same values.
template <class Tensor>
class value_cache {
public:
    explicit value_cache(const Tensor& tensor) : tensor_(tensor) {}

    tdbg::tensor_value get(std::int64_t step, const std::string& worker) {
        const auto key = std::make_pair(step, worker);
        const auto it = kept_.find(key);
        if (it != kept_.end()) {
            return it->second;
        }
        tdbg::tensor_value v = tensor_.value(step, tdbg::mode::global, worker);
        if (bytes_ + v.nbytes() <= budget) {
            bytes_ += v.nbytes();
            kept_.emplace(key, v);
        }
        return v;
    }

private:
    static constexpr std::size_t budget = std::size_t{64} << 20U;
    const Tensor& tensor_;
    std::map<std::pair<std::int64_t, std::string>, tdbg::tensor_value> kept_;
    std::size_t bytes_ = 0;
};


// ---------------------------------------------------------------- one tensor

using tensor_values = value_cache<tdbg::tensor>;

// What the index says of one tensor over all its steps.
struct tensor_overview {
    std::set<std::int64_t> steps;
    std::set<tdbg::mode> modes;
    std::set<std::string> workers;
    std::vector<tdbg::reduction> stored; ///< the reductions saved at any step, in reading order
    bool any_value = false;              ///< whether any step saved the value itself
};

tensor_overview overview_of(const std::vector<tdbg::tensor_step_info>& infos) {
    tensor_overview view;
    for (const auto& info : infos) {
        view.steps.insert(info.step);
        view.modes.insert(info.step_mode);
        view.workers.insert(info.worker);
        view.any_value = view.any_value || info.has_value;
        for (const auto r : info.stored_reductions) {
            if (std::find(view.stored.begin(), view.stored.end(), r) == view.stored.end()) {
                view.stored.push_back(r);
            }
        }
    }
    std::sort(view.stored.begin(), view.stored.end(),
              [](tdbg::reduction a, tdbg::reduction b) { return reduction_rank(a) < reduction_rank(b); });
    return view;
}

// What the value looks like: the value at the last step that has one (none when no step has
// one, or when that step cannot be read: a note says so).
std::optional<tdbg::tensor_value> last_value(const std::vector<tdbg::tensor_step_info>& infos, tensor_values& cache,
                                             std::vector<std::string>& notes) {
    for (auto it = infos.rbegin(); it != infos.rend(); ++it) {
        if (it->has_value) {
            try {
                return cache.get(it->step, it->worker);
            } catch (const tdbg::error& e) {
                notes.push_back(fmt::format("step {}: {}", it->step, e.what()));
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

// The section's one-line summary: "float32 [16, 8] · 13 steps (TRAIN, EVAL) · saved: value".
std::string summary_of(const tensor_overview& view, const std::optional<tdbg::tensor_value>& sample,
                       const std::vector<tdbg::tensor_step_info>& infos) {
    std::string summary;
    if (sample) {
        summary = fmt::format("{} {}", tdbg::dtype_name(sample->type()), tdbg::shape_text(sample->shape()));
    } else {
        for (auto it = infos.rbegin(); it != infos.rend(); ++it) {
            if (it->stored_shape) {
                summary = fmt::format("shape {}", tdbg::shape_text(*it->stored_shape));
                break;
            }
        }
    }
    std::string mode_list;
    for (const auto m : view.modes) {
        fmt::format_to(std::back_inserter(mode_list), "{}{}", mode_list.empty() ? "" : ", ", tdbg::mode_name(m));
    }
    fmt::format_to(std::back_inserter(summary), "{}{} steps", summary.empty() ? "" : " \xC2\xB7 ", view.steps.size());
    if (!mode_list.empty()) {
        fmt::format_to(std::back_inserter(summary), " ({})", mode_list);
    }
    if (view.workers.size() > 1) {
        fmt::format_to(std::back_inserter(summary), " \xC2\xB7 {} workers", view.workers.size());
    }
    std::string saved = view.any_value ? "value" : "";
    for (const auto r : view.stored) {
        fmt::format_to(std::back_inserter(saved), "{}{}", saved.empty() ? "" : ", ", tdbg::reduction_config_name(r));
    }
    fmt::format_to(std::back_inserter(summary), " \xC2\xB7 saved: {}", saved.empty() ? "only its shape" : saved);
    return summary;
}

// What the line plots show: the chosen reductions, or the value itself (one plot).
struct plotted_quantities {
    std::vector<tdbg::reduction> reductions;
    bool value_itself = false;
};

// The reductions to plot: as asked; else what the run saved; else computed ones.
plotted_quantities choose_plotted(const tensor_overview& view, bool scalar, const report_options& o) {
    plotted_quantities chosen;
    if (o.reductions) {
        chosen.reductions = *o.reductions;
    } else if (!view.stored.empty()) {
        chosen.reductions = view.stored;
    } else if (scalar) {
        chosen.value_itself = true; // a loss or a learning rate: its reductions are itself
    } else if (view.any_value) {
        chosen.reductions = {tdbg::reduction{tdbg::reduction_kind::mean, false},
                             tdbg::reduction{tdbg::reduction_kind::std, false},
                             tdbg::reduction{tdbg::reduction_kind::l2, false}};
    }
    return chosen;
}

// The `wanted` reductions at one step that can be had: stored ones are read, the others
// computed from the value in one pass (none when the step saved no value).
std::map<tdbg::reduction, tdbg::tensor_value> reductions_at(const tdbg::tensor& tensor,
                                                            const tdbg::tensor_step_info& info,
                                                            const std::vector<tdbg::reduction>& wanted,
                                                            tensor_values& cache) {
    std::map<tdbg::reduction, tdbg::tensor_value> found;
    if (!info.stored_reductions.empty()) {
        found = tensor.reduction_values(info.step, tdbg::mode::global, info.worker);
    }
    std::vector<tdbg::reduction> missing;
    for (const auto r : wanted) {
        if (found.count(r) == 0) {
            missing.push_back(r);
        }
    }
    if (!missing.empty() && info.has_value) {
        const auto computed = tdbg::compute_reductions(cache.get(info.step, info.worker), missing);
        for (std::size_t i = 0; i < missing.size(); ++i) {
            found.emplace(missing[i], computed[i]);
        }
    }
    return found;
}

// The points of each line plot, a series per (mode, worker) in each plot.
using plot_lines = std::vector<std::map<std::pair<std::string, std::string>, tdbg::cli::report::series>>;

// Reads the points of every line plot at the `plotted` steps; a step that cannot be read
// is left out (the first three so named in the notes, the rest counted).
plot_lines read_lines(const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& infos,
                      const std::set<std::int64_t>& plotted, const plotted_quantities& chosen, tensor_values& cache,
                      tdbg::cli::report::tensor_section& section) {
    plot_lines lines(chosen.value_itself ? 1 : chosen.reductions.size());
    auto add_point = [&](std::size_t plot, const tdbg::tensor_step_info& info, double v) {
        const std::string mode(tdbg::mode_name(info.step_mode));
        auto& s = lines[plot][{mode, info.worker}];
        s.mode = mode;
        s.worker = info.worker;
        s.points.push_back(tdbg::cli::report::point{info.step, info.mode_step, v});
        section.has_non_finite = section.has_non_finite || !std::isfinite(v);
    };
    std::size_t read_errors = 0;
    for (const auto& info : infos) {
        if (plotted.count(info.step) == 0) {
            continue;
        }
        try {
            if (chosen.value_itself) {
                if (info.has_value) {
                    add_point(0, info, first_number(cache.get(info.step, info.worker)));
                }
                continue;
            }
            const auto found = reductions_at(tensor, info, chosen.reductions, cache);
            for (std::size_t i = 0; i < chosen.reductions.size(); ++i) {
                const auto it = found.find(chosen.reductions[i]);
                if (it != found.end()) {
                    add_point(i, info, first_number(it->second));
                }
            }
        } catch (const tdbg::error& e) {
            if (read_errors++ < 3) {
                section.notes.push_back(fmt::format("step {} ({}): {}", info.step, info.worker, e.what()));
            }
        }
    }
    if (read_errors > 3) {
        section.notes.push_back(fmt::format("{} more steps could not be read", read_errors - 3));
    }
    return lines;
}

// Line plots: each (mode, worker) is one series; steps sampled evenly (--max-points).
void add_line_plots(const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& infos,
                    const tensor_overview& view, const plotted_quantities& chosen, tensor_values& cache,
                    const report_options& o, tdbg::cli::report::tensor_section& section) {
    const std::vector<std::int64_t> step_list(view.steps.begin(), view.steps.end());
    const auto plotted = sample_evenly(step_list, o.max_points);
    plot_lines lines =
        read_lines(tensor, infos, std::set<std::int64_t>(plotted.begin(), plotted.end()), chosen, cache, section);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string label = chosen.value_itself ? "value" : tdbg::reduction_name(chosen.reductions[i]);
        tdbg::cli::report::reduction_plot plot;
        plot.reduction = label;
        for (auto& item : lines[i]) {
            plot.lines.push_back(std::move(item.second));
        }
        if (plot.lines.empty()) {
            section.notes.push_back(fmt::format("{}: neither saved nor computable (no value saved)", label));
            continue;
        }
        section.plots.push_back(std::move(plot));
    }
    if (plotted.size() < step_list.size()) {
        section.notes.push_back(
            fmt::format("lines show {} of {} steps (--max-points)", plotted.size(), step_list.size()));
    }
}

// The range [low, high] the heatmap's bins split: that of the finite values of the
// `columns`' steps, widened when it is a single value ([0, 1] when there is none).
// Marks the steps that could be read (an error is reported with the line plots).
std::pair<double, double> value_range(const std::vector<const tdbg::tensor_step_info*>& columns,
                                      const std::string& worker, tensor_values& cache, std::vector<bool>& readable) {
    constexpr double infinity = std::numeric_limits<double>::infinity();
    double low = infinity, high = -infinity;
    readable.assign(columns.size(), false);
    for (std::size_t i = 0; i < columns.size(); ++i) {
        try {
            for_each_number(cache.get(columns[i]->step, worker), [&](double x) {
                if (std::isfinite(x)) {
                    low = std::min(low, x);
                    high = std::max(high, x);
                }
            });
            readable[i] = true;
        } catch (const tdbg::error&) {
            // reported with the line plots
        }
    }
    if (!(low <= high)) {
        low = 0;
        high = 1;
    } else if (low == high) {
        const double pad = low == 0 ? 0.5 : std::fabs(low) * 0.05;
        low -= pad;
        high += pad;
    }
    return {low, high};
}

// The histogram of `value` (saved at `info`'s step) over `bins` bins from `low`, `per_bin` wide each.
tdbg::cli::report::histogram_column histogram_of(const tdbg::tensor_value& value, const tdbg::tensor_step_info& info,
                                                 double low, double per_bin, std::size_t bins) {
    tdbg::cli::report::histogram_column c;
    c.step = info.step;
    c.mode = std::string(tdbg::mode_name(info.step_mode));
    c.mode_step = info.mode_step;
    c.counts.assign(bins, 0);
    double sum = 0;
    c.min = std::numeric_limits<double>::infinity();
    c.max = -std::numeric_limits<double>::infinity();
    for_each_number(value, [&](double x) {
        if (!std::isfinite(x)) {
            ++c.non_finite;
            return;
        }
        const auto bin = static_cast<std::size_t>(std::clamp((x - low) / per_bin, 0.0, static_cast<double>(bins - 1)));
        ++c.counts[bin];
        ++c.finite;
        sum += x;
        c.min = std::min(c.min, x);
        c.max = std::max(c.max, x);
    });
    c.mean = c.finite > 0 ? sum / static_cast<double>(c.finite) : 0;
    return c;
}

// The heatmap of one worker's values, step by step (--max-steps of them, evenly sampled);
// none when the worker saved no value. Pass one finds the range of the finite values, pass
// two counts them into bins; values beyond the cache's budget are read twice rather than all held.
std::optional<tdbg::cli::report::distribution> distribution_of(const std::vector<tdbg::tensor_step_info>& infos,
                                                               const std::string& worker, tensor_values& cache,
                                                               const report_options& o, bool& has_non_finite) {
    std::vector<const tdbg::tensor_step_info*> with_value;
    for (const auto& info : infos) {
        if (info.worker == worker && info.has_value) {
            with_value.push_back(&info);
        }
    }
    if (with_value.empty()) {
        return std::nullopt;
    }
    const auto columns = sample_evenly(with_value, o.max_steps);
    std::vector<bool> readable;
    const auto [low, high] = value_range(columns, worker, cache, readable);
    tdbg::cli::report::distribution d;
    d.worker = worker;
    d.low = low;
    d.high = high;
    d.bins = o.bins;
    d.steps_with_values = with_value.size();
    const double per_bin = (high - low) / static_cast<double>(o.bins);
    for (std::size_t i = 0; i < columns.size(); ++i) {
        if (!readable[i]) {
            continue;
        }
        auto c = histogram_of(cache.get(columns[i]->step, worker), *columns[i], low, per_bin, o.bins);
        has_non_finite = has_non_finite || c.non_finite > 0;
        d.columns.push_back(std::move(c));
    }
    return d;
}

// Heatmaps of the value distribution, one per worker (a few at most).
void add_distributions(const std::vector<tdbg::tensor_step_info>& infos, const tensor_overview& view,
                       tensor_values& cache, const report_options& o, tdbg::cli::report::tensor_section& section) {
    constexpr std::size_t max_workers = 4;
    std::size_t worker_count = 0;
    for (const auto& worker : view.workers) {
        if (worker_count++ == max_workers) {
            section.notes.push_back(
                fmt::format("distributions drawn for the first {} of {} workers", max_workers, view.workers.size()));
            break;
        }
        if (auto d = distribution_of(infos, worker, cache, o, section.has_non_finite)) {
            section.distributions.push_back(std::move(*d));
        }
    }
}

tdbg::cli::report::tensor_section collect_tensor(const tdbg::trial& t, const std::string& name, const report_options& o) {
    tdbg::cli::report::tensor_section section;
    section.name = name;
    const tdbg::tensor tensor = t.tensor(name);
    const auto infos = tensor.entries(tdbg::mode::global, true);
    tensor_values cache(tensor);
    const tensor_overview view = overview_of(infos);
    const std::optional<tdbg::tensor_value> sample = last_value(infos, cache, section.notes);
    section.summary = summary_of(view, sample, infos);

    if (sample && sample->type() == tdbg::dtype::string) {
        section.notes.emplace_back("a string tensor: nothing to plot");
        return section;
    }
    const bool scalar = sample && sample->size() == 1;
    const plotted_quantities chosen = choose_plotted(view, scalar, o);
    if (!view.any_value && view.stored.empty()) {
        section.notes.emplace_back("only shapes were saved: no values or reductions to plot");
    }
    add_line_plots(tensor, infos, view, chosen, cache, o, section);

    if (!o.distributions || !view.any_value || scalar) {
        if (!view.any_value && !view.stored.empty()) {
            section.notes.emplace_back("only reductions were saved: no distribution of values to draw");
        }
        return section;
    }
    add_distributions(infos, view, cache, o, section);
    return section;
}

// ---------------------------------------------------------------- the run

std::string run_state(const tdbg::trial& t, const std::vector<std::int64_t>& all_steps) {
    if (t.loaded_all_steps()) {
        return "finished (training_job_end.ts present)";
    }
    std::string state = "live or interrupted (no end marker yet)";
    if (!all_steps.empty()) {
        fmt::format_to(std::back_inserter(state), "; last complete step {}", t.last_complete_step());
    }
    return state;
}

// Every step by its mode, in mode order; steps saved without a mode are GLOBAL ones.
std::vector<tdbg::cli::report::mode_steps> steps_by_mode(const tdbg::trial& t,
                                                         const std::vector<std::int64_t>& all_steps) {
    std::map<tdbg::mode, std::vector<std::int64_t>> by_mode;
    for (const auto s : all_steps) {
        by_mode[t.mode_of(s).value_or(tdbg::mode::global)].push_back(s);
    }
    std::vector<tdbg::cli::report::mode_steps> out;
    for (const tdbg::mode m : {tdbg::mode::train, tdbg::mode::eval, tdbg::mode::predict, tdbg::mode::global}) {
        if (by_mode.count(m) != 0) {
            out.push_back(tdbg::cli::report::mode_steps{std::string(tdbg::mode_name(m)), by_mode[m]});
        }
    }
    return out;
}

// The tensors --collection and --tensors choose (all without them), in name order,
// and those words for the header.
std::pair<std::vector<std::string>, std::string> chosen_tensors(const tdbg::trial& t, const report_options& o) {
    std::vector<std::string> names = t.tensor_names();
    std::string selection;
    if (o.collection) {
        names = t.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, *o.collection);
        selection = fmt::format("collection {}", *o.collection);
    }
    if (o.tensor_regex) {
        const auto matching = t.tensor_names(std::nullopt, tdbg::mode::global, *o.tensor_regex);
        const std::set<std::string> keep(matching.begin(), matching.end());
        names.erase(
            std::remove_if(names.begin(), names.end(), [&](const std::string& n) { return keep.count(n) == 0; }),
            names.end());
        fmt::format_to(std::back_inserter(selection), "{}matching {}", selection.empty() ? "" : ", ", *o.tensor_regex);
    }
    return {names, selection};
}

// At most --max-tensors of `names` (tensor names, or pairs of a name and its section), saying so
// in the notes and the selection.
template <class Name>
void limit_tensors(std::vector<Name>& names, const report_options& o, tdbg::cli::report::document& doc,
                   std::string& selection) {
    if (o.max_tensors > 0 && names.size() > o.max_tensors) {
        doc.notes.push_back(fmt::format("Showing the first {} of {} tensors; choose with --tensors REGEX, "
                                        "--collection NAME or --max-tensors N.",
                                        o.max_tensors, names.size()));
        names.resize(o.max_tensors);
        fmt::format_to(std::back_inserter(selection), "{}first {}", selection.empty() ? "" : ", ", o.max_tensors);
    }
}

// A section of the default page: its tensors, and the option that shows them all.
struct tensor_group {
    std::string name;
    std::vector<std::string> tensors;
    std::string shows_all;
};

// The default page's sections: the tensors the rules' reasons name, then each collection's
// (losses, gradients, weights, biases, then the others by name; "all" and "default" hold
// everything), then the rest. A tensor is in the first that holds it.
std::vector<tensor_group> default_groups(const tdbg::trial& t, const std::vector<tdbg::rules::evaluation_result>& rules) {
    const std::vector<std::string> names = t.tensor_names();
    std::set<std::string> placed;
    std::vector<tensor_group> out;
    const auto add = [&](std::string group, const std::vector<std::string>& candidates, std::string shows_all) {
        tensor_group g{std::move(group), {}, std::move(shows_all)};
        for (const std::string& n : candidates) {
            if (placed.insert(n).second) {
                g.tensors.push_back(n);
            }
        }
        if (!g.tensors.empty()) {
            out.push_back(std::move(g));
        }
    };
    std::vector<std::string> flagged;
    for (const std::string& n : names) {
        const bool named = std::any_of(rules.begin(), rules.end(), [&](const tdbg::rules::evaluation_result& r) {
            return std::any_of(r.trigger_reasons.begin(), r.trigger_reasons.end(),
                               [&](const auto& item) { return tdbg::cli::report::detail::names_tensor(item.second, n); });
        });
        if (named) {
            flagged.push_back(n);
        }
    }
    add("flagged by a rule", flagged, "--tensors REGEX");
    std::vector<std::string> order{"losses", "gradients", "weights", "biases"};
    for (const auto& item : t.collections()) {
        if (item.first != "all" && item.first != "default" &&
            std::find(order.begin(), order.end(), item.first) == order.end()) {
            order.push_back(item.first);
        }
    }
    for (const std::string& c : order) {
        if (t.collections().count(c) != 0) {
            add(c, t.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, c), "--collection " + c);
        }
    }
    add("other tensors", names, "--tensors REGEX");
    return out;
}

tdbg::cli::report::document collect_run(const tdbg::trial& t, const report_options& o,
                                        const std::vector<tdbg::rules::evaluation_result>& rules = {}) {
    namespace report = tdbg::cli::report;
    report::document doc;
    doc.run_name = t.name();
    doc.run_path = t.path();
    doc.title = o.title ? *o.title : fmt::format("tdbg report: {}", t.name());
    const auto all_steps = t.steps(tdbg::mode::global, true);
    doc.state = run_state(t, all_steps);
    doc.workers = t.workers();
    doc.modes = steps_by_mode(t, all_steps);
    for (const auto& item : t.collections()) {
        doc.collections.push_back(item.first);
    }
    if (all_steps.empty()) {
        doc.notes.emplace_back("The run has no steps yet: nothing to plot.");
    }

    doc.tensors_in_run = t.tensor_names().size();
    if (!o.collection && !o.tensor_regex) {
        // What a person debugging the run needs first: what the rules flagged, then a section
        // per collection, each capped, saying what it left out and how to see it.
        std::vector<std::pair<std::string, std::string>> shown; // name, section
        std::string selection;
        for (tensor_group& g : default_groups(t, rules)) {
            if (o.per_section > 0 && g.tensors.size() > o.per_section) {
                selection = fmt::format("at most {} a section", o.per_section);
                doc.notes.push_back(fmt::format("{}: {} of {} tensors shown ({} ... left out); {} shows them all.",
                                                g.name, o.per_section, g.tensors.size(), g.tensors[o.per_section],
                                                g.shows_all));
                g.tensors.resize(o.per_section);
            }
            for (std::string& n : g.tensors) {
                shown.emplace_back(std::move(n), g.name);
            }
        }
        limit_tensors(shown, o, doc, selection);
        doc.selection = selection;
        for (const auto& [name, group] : shown) {
            doc.tensors.push_back(collect_tensor(t, name, o));
            doc.tensors.back().group = group;
        }
        return doc;
    }
    auto [names, selection] = chosen_tensors(t, o);
    if (names.empty() && doc.tensors_in_run > 0) {
        doc.notes.emplace_back("No tensor matches the selection.");
    }
    limit_tensors(names, o, doc, selection);
    doc.selection = selection;
    for (const auto& name : names) {
        doc.tensors.push_back(collect_tensor(t, name, o));
    }
    return doc;
}

// ---------------------------------------------------------------- several runs

// The runs' names in legends: as --name gave them, else the directory's base name,
// with its parents' names until every name differs.
std::vector<std::string> run_names(const std::vector<std::string>& locations, const std::vector<std::string>& given) {
    std::vector<std::vector<std::string>> parts; // path components, last first
    for (const auto& location : locations) {
        std::vector<std::string> p;
        std::string rest = location;
        while (!rest.empty()) {
            const auto slash = rest.find_last_of('/');
            std::string part = slash == std::string::npos ? rest : rest.substr(slash + 1);
            rest = slash == std::string::npos ? std::string() : rest.substr(0, slash);
            if (!part.empty() && part != ".") {
                p.push_back(std::move(part));
            }
        }
        if (p.empty()) {
            p.push_back(location);
        }
        parts.push_back(std::move(p));
    }
    std::vector<std::string> names(locations.size());
    std::vector<std::size_t> depth(locations.size(), 1);
    auto name_at = [&](std::size_t i) {
        std::string n;
        for (std::size_t k = std::min(depth[i], parts[i].size()); k-- > 0;) {
            n += (n.empty() ? "" : "/") + parts[i][k];
        }
        return n;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t i = 0; i < locations.size(); ++i) {
            names[i] = i < given.size() ? given[i] : name_at(i);
        }
        for (std::size_t i = 0; i < locations.size(); ++i) {
            for (std::size_t j = 0; j < locations.size(); ++j) {
                if (i != j && i >= given.size() && names[i] == names[j] && depth[i] < parts[i].size()) {
                    ++depth[i];
                    changed = true;
                }
            }
        }
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        for (std::size_t j = i + 1; j < names.size(); ++j) {
            if (names[i] == names[j]) {
                throw tdbg::cli::usage_error(fmt::format(
                    "runs {} and {} are both named '{}' in the report; name them with --name", i + 1, j + 1, names[i]));
            }
        }
    }
    return names;
}

// Adds `part`, one run's section for a tensor, to the section of all runs.
void merge_section(tdbg::cli::report::tensor_section& all, tdbg::cli::report::tensor_section part,
                   const std::string& run) {
    fmt::format_to(std::back_inserter(all.summary), "{}{}: {}", all.summary.empty() ? "" : "\n", run, part.summary);
    for (auto& note : part.notes) {
        all.notes.push_back(fmt::format("{}: {}", run, note));
    }
    for (auto& plot : part.plots) {
        for (auto& s : plot.lines) {
            s.run = run;
        }
        const auto same = std::find_if(all.plots.begin(), all.plots.end(),
                                       [&](const auto& p) { return p.reduction == plot.reduction; });
        if (same == all.plots.end()) {
            all.plots.push_back(std::move(plot));
        } else {
            std::move(plot.lines.begin(), plot.lines.end(), std::back_inserter(same->lines));
        }
    }
    for (auto& d : part.distributions) {
        d.run = run;
        all.distributions.push_back(std::move(d));
    }
    all.has_non_finite = all.has_non_finite || part.has_non_finite;
}

tdbg::cli::report::document collect_runs(const std::vector<tdbg::trial>& trials, const std::vector<std::string>& names,
                                         const report_options& o) {
    namespace report = tdbg::cli::report;
    report::document doc;
    doc.run_name = fmt::format("{}", fmt::join(names, " vs "));
    doc.title = o.title ? *o.title : fmt::format("tdbg report: {}", doc.run_name);
    std::map<std::string, std::set<std::int64_t>> steps_of_mode;
    std::set<std::string> workers, all_tensors, shown;
    std::vector<std::set<std::string>> tensors_of_run;
    std::string selection;
    for (std::size_t i = 0; i < trials.size(); ++i) {
        const auto& t = trials[i];
        report::run_summary run;
        run.name = names[i];
        run.path = t.path();
        const auto all_steps = t.steps(tdbg::mode::global, true);
        run.state = run_state(t, all_steps);
        run.workers = t.workers();
        run.modes = steps_by_mode(t, all_steps);
        const auto tensor_names = t.tensor_names();
        run.tensors_in_run = tensor_names.size();
        if (all_steps.empty()) {
            doc.notes.push_back(fmt::format("Run {} has no steps yet: nothing to plot.", names[i]));
        }
        for (const auto& m : run.modes) {
            steps_of_mode[m.mode].insert(m.global_steps.begin(), m.global_steps.end());
        }
        workers.insert(run.workers.begin(), run.workers.end());
        all_tensors.insert(tensor_names.begin(), tensor_names.end());
        auto [chosen, words] = chosen_tensors(t, o);
        tensors_of_run.emplace_back(chosen.begin(), chosen.end());
        shown.insert(chosen.begin(), chosen.end());
        selection = words;
        doc.runs.push_back(std::move(run));
    }
    // The page's step axis and overview cover every run's steps.
    for (const char* m : {"TRAIN", "EVAL", "PREDICT", "GLOBAL"}) {
        const auto it = steps_of_mode.find(m);
        if (it != steps_of_mode.end()) {
            doc.modes.push_back(report::mode_steps{m, {it->second.begin(), it->second.end()}});
        }
    }
    doc.workers.assign(workers.begin(), workers.end());
    doc.tensors_in_run = all_tensors.size();
    std::vector<std::string> names_shown(shown.begin(), shown.end());
    if ((o.collection || o.tensor_regex) && names_shown.empty() && !all_tensors.empty()) {
        doc.notes.emplace_back("No tensor matches the selection.");
    }
    limit_tensors(names_shown, o, doc, selection);
    doc.selection = selection;
    for (const auto& name : names_shown) {
        report::tensor_section section;
        section.name = name;
        for (std::size_t i = 0; i < trials.size(); ++i) {
            if (tensors_of_run[i].count(name) == 0) {
                section.notes.push_back(fmt::format("not in run {}", names[i]));
                continue;
            }
            merge_section(section, collect_tensor(trials[i], name, o), names[i]);
        }
        doc.tensors.push_back(std::move(section));
    }
    return doc;
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

// Evaluates the rules as `tdbg rules DIR` does without --follow: over the steps
// written so far (a live run's unfinished steps are skipped, not waited for).
std::vector<tdbg::rules::evaluation_result> evaluate_rules(std::vector<tdbg::rules::any_rule>& rules,
                                                           std::ostream& err) {
    std::vector<tdbg::rules::evaluation_result> results;
    for (auto& r : rules) {
        tdbg::rules::invoke_options options;
        options.step_timeout = std::chrono::milliseconds(0);
        options.skip_late_steps = true;
        const auto& trial = r.base_trial();
        if (!trial.loaded_all_steps()) {
            const auto steps = trial.steps(tdbg::mode::global, true);
            options.end_step = steps.empty() ? 0 : steps.back() + 1;
        }
        results.push_back(r.evaluate(options));
        if (!results.back().error.empty()) {
            err << "tdbg report: warning: rule " << results.back().display_name()
                << " could not be evaluated: " << results.back().error << "\n";
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
    tdbg::cli::arguments parser(
        "tdbg report DIR [-o FILE] [options]\n"
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
    const auto positional = parser.parse_or_help(args, out);
    if (!positional) {
        return tdbg::cli::exit_ok;
    }
    check_report_options(o, *positional);
    return tdbg::commands::report(o, out, err);
}

const tdbg::cli::command_registrar register_report{
    tdbg::cli::command{"report", "write one HTML page of plots: reductions, value distributions, rule triggers",
                       &run_report}};

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
            doc = collect_run(trial, o, results);
            if (!o.names.empty()) {
                doc.run_name = o.names.front();
                doc.title = o.title ? *o.title : fmt::format("tdbg report: {}", doc.run_name);
            }
            doc.rules = std::move(results);
        } else {
            const auto names = run_names(o.runs, o.names);
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
            doc = collect_runs(trials, names, o);
            for (std::size_t i = 0; i < rules.size(); ++i) {
                for (auto& result : evaluate_rules(rules[i], err)) {
                    doc.rules.push_back(std::move(result));
                    doc.rule_runs.push_back(names[i]);
                }
            }
        }
        doc.diff = std::move(diff);
        doc.generated = generated_line();
        // Written through a link, in place into a FIFO or device, else replaced whole: a browser never shows half a page.
        tdbg::cli::write_output(o.output, tdbg::cli::report::render_html(doc), out);
        if (o.output != "-") {
            std::size_t issues = 0;
            for (const auto& r : doc.rules) {
                issues += r.status() == tdbg::rules::evaluation_status::issues_found ? 1 : 0;
            }
            out << "wrote " << o.output << ": " << doc.tensors.size() << " of " << doc.tensors_in_run << " tensors";
            if (!doc.rules.empty()) {
                out << ", " << doc.rules.size() << (doc.rules.size() == 1 ? " rule (" : " rules (") << issues
                    << " found issues)";
            }
            out << "\n";
        }
        return tdbg::cli::exit_ok;
    });
}
