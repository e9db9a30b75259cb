#pragma once
// The report's model of runs: what `tdbg report` shows of each tensor (the reductions plotted,
// the distribution of its values step by step, notes), which tensors the page shows and in
// which sections, and how several runs share a plot, read from trials into the plain data the
// page is drawn from (model.hpp). The command (cmd_report.cpp) handles arguments and output
// only; a program can build a page's model with collect_run / collect_runs.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
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
#include "collect_tensor.hpp"
#include "model.hpp"
#include "models.hpp"
#include "tables.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::cli::report {

using tdbg::commands::report_options;

// ---------------------------------------------------------------- the run

inline std::string run_state(const tdbg::trial& t, const std::vector<std::int64_t>& all_steps) {
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
inline std::vector<tdbg::cli::report::mode_steps> steps_by_mode(const tdbg::trial& t,
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
inline std::pair<std::vector<std::string>, std::string> chosen_tensors(const tdbg::trial& t, const report_options& o) {
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

// What each model showed of a capped list of tensors (`shares`, from share_cap): " A 3 of 12
// (A_layer03.weight ... left out), B all 3", the tensors of no model as "others".
inline std::string shares_text(const std::vector<model_share>& shares) {
    std::string text;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const model_share& s = shares[i];
        const std::string model = s.model.empty() ? "others" : s.model;
        if (s.shown == s.total) {
            fmt::format_to(std::back_inserter(text), "{} {} all {}", i == 0 ? "" : ",", model, s.total);
        } else {
            fmt::format_to(std::back_inserter(text), "{} {} {} of {} ({} ... left out)", i == 0 ? "" : ",", model,
                           s.shown, s.total, s.first_left_out);
        }
    }
    return text;
}

// Says that the page shows `shown` of the `wanted` tensors (--max-tensors), in the notes and the
// selection; what each model showed, when the cap was shared among several (`shares`).
inline void page_cap_note(std::size_t shown, std::size_t wanted, const std::vector<model_share>& shares,
                          std::vector<std::string>& notes, std::string& selection) {
    const std::string what = shares.size() > 1 ? fmt::format("Showing {} of {} tensors, the cap shared by model:{}",
                                                              shown, wanted, shares_text(shares))
                                                : fmt::format("Showing the first {} of {} tensors", shown, wanted);
    notes.push_back(what + "; choose with --tensors REGEX, --collection NAME or --max-tensors N.");
    fmt::format_to(std::back_inserter(selection), "{}first {}", selection.empty() ? "" : ", ", shown);
}

// At most --max-tensors of `names` (in name order), the cap shared among their models
// (models.hpp), saying so in the notes and the selection.
inline void limit_tensors(std::vector<std::string>& names, const report_options& o, tdbg::cli::report::document& doc,
                          std::string& selection) {
    if (o.max_tensors > 0 && names.size() > o.max_tensors) {
        const std::size_t wanted = names.size();
        const auto shares = share_cap(names, models_of(names), o.max_tensors);
        page_cap_note(names.size(), wanted, shares, doc.notes, selection);
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
inline std::vector<tensor_group> default_groups(const tdbg::trial& t, const std::vector<tdbg::rules::evaluation_result>& rules) {
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

// The note of a section that shows `shown` of its tensors, fewer than all: what it left out,
// model by model when they are several (`shares`, from share_cap).
inline std::string left_out_note(const tensor_group& g, std::size_t shown, const std::vector<model_share>& shares) {
    const std::string left_out = shares.size() == 1
                                     ? fmt::format(" ({} ... left out)", shares.front().first_left_out)
                                     : ", the cap shared by model:" + shares_text(shares);
    return fmt::format("{}: {} of {} tensors shown{}; {} shows them all.", g.name, shown, g.tensors.size(), left_out,
                       g.shows_all);
}

// The tensors of the default page, each with its section: what a person debugging the run
// needs first (what the rules flagged, then a section per collection), each section capped at
// --per-section and the page at --max-tensors, every cap shared among the run's models
// (models.hpp) so that each model is in each of its sections. What a cap left out is said in
// `notes` and `selection`.
inline std::vector<std::pair<std::string, std::string>> default_page(
    const tdbg::trial& t, const report_options& o, const std::vector<tdbg::rules::evaluation_result>& rules,
    std::vector<std::string>& notes, std::string& selection) {
    const std::vector<std::string> models = models_of(t.tensor_names());
    std::vector<std::pair<std::string, std::string>> shown; // name, section
    std::size_t page_left = o.max_tensors > 0 ? o.max_tensors : std::numeric_limits<std::size_t>::max();
    std::size_t wanted = 0; // what the sections' caps allow, before the page's
    for (tensor_group& g : default_groups(t, rules)) {
        const std::size_t section_cap = o.per_section > 0 ? std::min(o.per_section, g.tensors.size()) : g.tensors.size();
        if (section_cap < g.tensors.size()) {
            selection = fmt::format("at most {} a section", o.per_section);
        }
        wanted += section_cap;
        const std::size_t cap = std::min(section_cap, page_left);
        if (cap == 0) {
            continue; // the page is full: its note says so
        }
        std::vector<std::string> kept = g.tensors;
        const std::vector<model_share> shares = share_cap(kept, models, cap);
        if (kept.size() < g.tensors.size()) {
            notes.push_back(left_out_note(g, kept.size(), shares));
        }
        page_left -= kept.size();
        for (std::string& n : kept) {
            shown.emplace_back(std::move(n), g.name);
        }
    }
    if (shown.size() < wanted) {
        page_cap_note(shown.size(), wanted, {}, notes, selection);
    }
    return shown;
}

inline tdbg::cli::report::document collect_run(const tdbg::trial& t, const report_options& o,
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
        std::string selection;
        for (auto& [name, group] : default_page(t, o, rules, doc.notes, selection)) {
            doc.tensors.push_back(collect_tensor(t, name, o));
            doc.tensors.back().group = std::move(group);
        }
        doc.selection = selection;
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
inline std::vector<std::string> run_names(const std::vector<std::string>& locations, const std::vector<std::string>& given) {
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
                throw tdbg::cli::argument_error(fmt::format(
                    "runs {} and {} are both named '{}' in the report; name them with --name", i + 1, j + 1, names[i]));
            }
        }
    }
    return names;
}

// Adds `part`, one run's section for a tensor, to the section of all runs.
inline void merge_section(tdbg::cli::report::tensor_section& all, tdbg::cli::report::tensor_section part,
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

inline tdbg::cli::report::document collect_runs(const std::vector<tdbg::trial>& trials, const std::vector<std::string>& names,
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

} // namespace tdbg::cli::report
