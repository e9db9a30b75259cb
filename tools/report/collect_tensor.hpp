#pragma once
// One tensor of the report's model (collect.hpp): what the page shows of it, read from a trial:
// its values as numbers, the reductions plotted over steps (a line per mode and worker, stored
// reductions first, else computed from values), the distribution of its values step by step,
// and a line that sums it up.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../rule_selection.hpp"
#include "model.hpp"
#include "tables.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::cli::report {

using tdbg::commands::report_options;

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
inline double first_number(const tdbg::tensor_value& v) {
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
inline int reduction_rank(tdbg::reduction r) {
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

inline tensor_overview overview_of(const std::vector<tdbg::tensor_step_info>& infos) {
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
inline std::optional<tdbg::tensor_value> last_value(const std::vector<tdbg::tensor_step_info>& infos, tensor_values& cache,
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
inline std::string summary_of(const tensor_overview& view, const std::optional<tdbg::tensor_value>& sample,
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
inline plotted_quantities choose_plotted(const tensor_overview& view, bool scalar, const report_options& o) {
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
// computed from the value (read through `cache`) in one pass; none when the step saved no
// value. A reduction that cannot be computed from the value throws its error.
inline std::map<tdbg::reduction, tdbg::tensor_value> reductions_at(const tdbg::tensor& tensor,
                                                                   const tdbg::tensor_step_info& info,
                                                                   const std::vector<tdbg::reduction>& wanted,
                                                                   tensor_values& cache) {
    std::map<tdbg::reduction, tdbg::tensor_value> found;
    for (auto& r : tensor.reductions(info.step, wanted, tdbg::mode::global, info.worker,
                                     [&] { return cache.get(info.step, info.worker); })) {
        if (r.value) {
            found.emplace(r.which, *std::move(r.value));
        } else if (info.has_value) {
            std::rethrow_exception(r.error);
        }
    }
    return found;
}

// The points of each line plot, a series per (mode, worker) in each plot.
using plot_lines = std::vector<std::map<std::pair<std::string, std::string>, tdbg::cli::report::series>>;

// Reads the points of every line plot at the `plotted` steps; a step that cannot be read
// is left out (the first three so named in the notes, the rest counted).
inline plot_lines read_lines(const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& infos,
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
inline void add_line_plots(const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& infos,
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
inline std::pair<double, double> value_range(const std::vector<const tdbg::tensor_step_info*>& columns,
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
inline tdbg::cli::report::histogram_column histogram_of(const tdbg::tensor_value& value, const tdbg::tensor_step_info& info,
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
inline std::optional<tdbg::cli::report::distribution> distribution_of(const std::vector<tdbg::tensor_step_info>& infos,
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
inline void add_distributions(const std::vector<tdbg::tensor_step_info>& infos, const tensor_overview& view,
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

inline tdbg::cli::report::tensor_section collect_tensor(const tdbg::trial& t, const std::string& name, const report_options& o) {
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

} // namespace tdbg::cli::report
