#pragma once
// What every chart of the page of `tdbg report` shares: the step axis, one colour
// per series for the whole page, the bands where rules triggered, and where the
// runs diverge. make_context works it out once from the document.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "axes.hpp"
#include "model.hpp"
#include "palette.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::cli::report::detail {

// A run of triggered steps of one rule, drawn as one band from lo to hi (in steps).
struct band {
    std::int64_t first = 0, last = 0;
    double lo = 0, hi = 0;
};

struct rule_marks {
    std::string name;
    rgb colour;
    std::vector<band> bands; ///< every step where it triggered: the timeline's
    std::size_t result = 0;  ///< its index in the document's rules
    /// The bands on the charts of the tensor drawn now: the steps where it triggered that
    /// concern that tensor (all of them until a tensor is set: see mark_tensor).
    std::vector<band> here;
    bool elsewhere = false; ///< whether it triggered at steps that concern other tensors only
};

// True when `reason` names `tensor`: the name, not followed by more of a name ("fc1.weight"
// is not named by "fc1.weight_grad").
inline bool names_tensor(std::string_view reason, std::string_view tensor) {
    for (std::size_t at = reason.find(tensor); at != std::string_view::npos; at = reason.find(tensor, at + 1)) {
        const std::size_t end = at + tensor.size();
        const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(reason[at - 1])) != 0 ||
                                         reason[at - 1] == '_' || reason[at - 1] == '/' || reason[at - 1] == '.');
        const bool ends = end == reason.size() || !(std::isalnum(static_cast<unsigned char>(reason[end])) != 0 ||
                                                    reason[end] == '_' || reason[end] == '/');
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

// Whether the rule's trigger at `step` concerns `tensor`: its reason names it, or it gave no
// reason (then it may concern any tensor).
inline bool concerns(const tdbg::rules::evaluation_result& r, std::int64_t step, std::string_view tensor) {
    const auto reason = r.trigger_reasons.find(step);
    return reason == r.trigger_reasons.end() || names_tensor(reason->second, tensor);
}

// Triggered steps of a rule with no step in between where it was evaluated and
// not met make one band (steps it skipped, such as steps never saved, do not
// split a band). A band reaches most of the way to the run's neighbouring steps.
// With `tensor`, only the triggered steps that concern it make bands, the others
// counting as steps where it was not met.
inline std::vector<band> bands_of(const tdbg::rules::evaluation_result& r, const std::vector<std::int64_t>& run_steps,
                                  double half_gap, std::optional<std::string_view> tensor = std::nullopt) {
    std::vector<std::pair<std::int64_t, bool>> seen;
    for (auto s : r.triggered_steps) {
        seen.emplace_back(s, !tensor || concerns(r, s, *tensor));
    }
    for (auto s : r.not_triggered_steps) {
        seen.emplace_back(s, false);
    }
    std::sort(seen.begin(), seen.end());
    std::vector<band> out;
    bool open = false;
    for (const auto& [step, triggered] : seen) {
        if (triggered && open) {
            out.back().last = step;
        } else if (triggered) {
            out.push_back(band{step, step, 0, 0});
        }
        open = triggered;
    }
    for (band& b : out) {
        const auto before = std::lower_bound(run_steps.begin(), run_steps.end(), b.first);
        const auto after = std::upper_bound(run_steps.begin(), run_steps.end(), b.last);
        const double reach_back = before == run_steps.begin()
                                      ? half_gap
                                      : std::min(half_gap, static_cast<double>(b.first - *(before - 1)) / 2);
        const double reach_on =
            after == run_steps.end() ? half_gap : std::min(half_gap, static_cast<double>(*after - b.last) / 2);
        b.lo = static_cast<double>(b.first) - 0.8 * reach_back;
        b.hi = static_cast<double>(b.last) + 0.8 * reach_on;
    }
    return out;
}

using series_key = std::tuple<std::string, std::string, std::string>; // (run, mode, worker)

// The order modes are listed in: TRAIN, EVAL, PREDICT, GLOBAL, then any other.
inline std::size_t mode_rank(std::string_view mode) {
    static constexpr std::array<std::string_view, 4> order{"TRAIN", "EVAL", "PREDICT", "GLOBAL"};
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), mode) - order.begin());
}

struct context {
    step_axis steps;
    std::map<series_key, std::size_t> series_colour; // palette index
    bool several_workers = false;
    bool several_runs = false;
    std::vector<rule_marks> rules; // the rules that triggered, each with its colour
    std::optional<std::int64_t> first_divergence; // the global step where the runs first differ (--diff)
    std::optional<std::int64_t> tensor_divergence; // where the tensor drawn now first differs
};

inline rgb colour_of(const context& ctx, const series& s) {
    const auto it = ctx.series_colour.find({s.run, s.mode, s.worker});
    return series_palette[(it == ctx.series_colour.end() ? 0 : it->second) % series_palette.size()];
}

// "TRAIN", "TRAIN · worker_1", "bad · TRAIN", "bad · TRAIN · worker_1".
inline std::string series_label(const context& ctx, const series& s) {
    std::string label = ctx.several_runs ? fmt::format("{} \xC2\xB7 {}", s.run, s.mode) : s.mode;
    return ctx.several_workers ? fmt::format("{} \xC2\xB7 {}", label, s.worker) : label;
}

// "bad · ExplodingTensor" in a report of several runs, else the rule's name.
inline std::string rule_label(const document& doc, std::size_t i) {
    const std::string name = doc.rules[i].display_name();
    return i < doc.rule_runs.size() ? fmt::format("{} \xC2\xB7 {}", doc.rule_runs[i], name) : name;
}

// Every step the run saved, in any mode: ascending, each once.
inline std::vector<std::int64_t> run_steps(const document& doc) {
    std::vector<std::int64_t> all_steps;
    for (const auto& m : doc.modes) {
        all_steps.insert(all_steps.end(), m.global_steps.begin(), m.global_steps.end());
    }
    std::sort(all_steps.begin(), all_steps.end());
    all_steps.erase(std::unique(all_steps.begin(), all_steps.end()), all_steps.end());
    return all_steps;
}

// One colour per (mode, worker) for the whole page, in mode then worker order; when
// runs are compared, one per (run, worker), in the runs' order, the modes told by dashes.
inline std::map<series_key, std::size_t> series_colours(const document& doc, bool several_runs) {
    auto run_rank = [&](const std::string& name) {
        return static_cast<std::size_t>(
            std::find_if(doc.runs.begin(), doc.runs.end(), [&](const run_summary& r) { return r.name == name; }) -
            doc.runs.begin());
    };
    std::vector<series_key> keys;
    for (const auto& t : doc.tensors) {
        for (const auto& p : t.plots) {
            for (const auto& s : p.lines) {
                keys.emplace_back(s.run, s.mode, s.worker);
            }
        }
    }
    std::sort(keys.begin(), keys.end(), [&](const series_key& a, const series_key& b) {
        const auto& [run_a, mode_a, worker_a] = a;
        const auto& [run_b, mode_b, worker_b] = b;
        return several_runs ? std::make_tuple(run_rank(run_a), worker_a, mode_rank(mode_a)) <
                                  std::make_tuple(run_rank(run_b), worker_b, mode_rank(mode_b))
                            : std::make_pair(mode_rank(mode_a), worker_a) < std::make_pair(mode_rank(mode_b), worker_b);
    });
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::map<series_key, std::size_t> colours;
    std::size_t colour = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const bool same_colour = several_runs && i > 0 && std::get<0>(keys[i]) == std::get<0>(keys[i - 1]) &&
                                 std::get<2>(keys[i]) == std::get<2>(keys[i - 1]);
        colour += i > 0 && !same_colour ? 1 : 0;
        colours[keys[i]] = colour;
    }
    return colours;
}

// The context of the whole page; `all_steps` is run_steps(doc). The tensor drawn
// (tensor_divergence) is for the caller to set, card by card.
inline context make_context(const document& doc, const std::vector<std::int64_t>& all_steps) {
    context ctx;
    ctx.steps = make_step_axis(all_steps);
    ctx.several_workers = doc.workers.size() > 1;
    ctx.several_runs = !doc.runs.empty();
    if (doc.diff && doc.diff->first_divergence) {
        ctx.first_divergence = doc.diff->first_divergence->step;
    }
    ctx.series_colour = series_colours(doc, ctx.several_runs);
    for (std::size_t i = 0; i < doc.rules.size(); ++i) {
        if (!doc.rules[i].triggered_steps.empty()) {
            auto bands = bands_of(doc.rules[i], all_steps, ctx.steps.half_gap);
            ctx.rules.push_back(rule_marks{rule_label(doc, i), rule_palette[ctx.rules.size() % rule_palette.size()],
                                           bands, i, bands, false});
        }
    }
    return ctx;
}

// Sets the rules' bands for the charts of tensor `name`: a rule's bands only where it
// triggered on that tensor (as its reasons say), the rest of its triggers marked faintly.
inline void mark_tensor(context& ctx, const document& doc, std::string_view name,
                        const std::vector<std::int64_t>& all_steps) {
    for (rule_marks& r : ctx.rules) {
        const auto& result = doc.rules[r.result];
        r.here = bands_of(result, all_steps, ctx.steps.half_gap, name);
        r.elsewhere = !std::all_of(result.triggered_steps.begin(), result.triggered_steps.end(),
                                   [&](std::int64_t s) { return concerns(result, s, name); });
    }
}

} // namespace tdbg::cli::report::detail
