#pragma once
// The tables and boxes of the page of `tdbg report`: the rules and what they
// found, the runs compared, what `tdbg diff` found, and a tensor's legend.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "context.hpp"
#include "model.hpp"
#include "page_text.hpp"
#include "palette.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/diff/document.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::cli::report::detail {

inline std::string status_badge(tdbg::rules::evaluation_status s) {
    const char* cls = s == tdbg::rules::evaluation_status::issues_found      ? "bad"
                      : s == tdbg::rules::evaluation_status::no_issues_found ? "good"
                                                                             : "error";
    return "<span class=\"badge " + std::string(cls) + "\">" + std::string(tdbg::rules::status_name(s)) + "</span>";
}

// The rules' reasons that name `tensor`, on its card (at most `limit`, then a count): why it fired.
inline std::string tensor_reasons(const document& doc, std::string_view tensor, std::size_t limit = 5) {
    std::vector<std::string> lines;
    std::size_t more = 0;
    for (std::size_t i = 0; i < doc.rules.size(); ++i) {
        for (const auto& [step, reason] : doc.rules[i].trigger_reasons) {
            if (!names_tensor(reason, tensor)) {
                continue;
            }
            if (lines.size() < limit) {
                lines.push_back(fmt::format("{} at step {}: {}", rule_label(doc, i), step, reason));
            } else {
                ++more;
            }
        }
    }
    if (lines.empty()) {
        return {};
    }
    std::string out = "<ul class=\"fired\">";
    for (const std::string& line : lines) {
        out += "<li>" + escape(line) + "</li>";
    }
    if (more > 0) {
        out += fmt::format("<li class=\"hint\">... and {} more</li>", more);
    }
    return out + "</ul>";
}

inline std::string rules_table(const document& doc, const context& ctx) {
    const bool by_run = !doc.rule_runs.empty();
    std::string out = std::string("<table class=\"rules\"><thead><tr><th></th>") + (by_run ? "<th>run</th>" : "") +
                      "<th>rule</th><th>status</th><th>triggered at steps</th>"
                      "<th class=\"num\">evaluated</th><th>skipped</th><th>parameters</th></tr></thead><tbody>";
    for (std::size_t i = 0; i < doc.rules.size(); ++i) {
        const auto& r = doc.rules[i];
        const std::string name = rule_label(doc, i);
        const auto found =
            std::find_if(ctx.rules.begin(), ctx.rules.end(), [&](const rule_marks& m) { return m.name == name; });
        out += "<tr><td>";
        if (found != ctx.rules.end()) {
            out += "<span class=\"swatch\" style=\"background:" + found->colour.hex() + "\"></span>";
        }
        out += "</td>";
        if (by_run) {
            out += "<td class=\"run-name\">" + escape(i < doc.rule_runs.size() ? doc.rule_runs[i] : "") + "</td>";
        }
        out += "<td>" + escape(r.display_name());
        if (r.display_name() != r.rule) {
            out += " <span class=\"hint\">(" + escape(r.rule) + ")</span>";
        }
        out += "</td><td>" + status_badge(r.status()) + "</td><td class=\"steps\">";
        out += r.triggered_steps.empty() ? "&ndash;" : escape(tdbg::rules::format_steps(r.triggered_steps));
        for (const std::string& line : tdbg::rules::trigger_reason_lines(r, 5)) {
            out += "<div class=\"reason\">" + escape(line) + "</div>";
        }
        if (!r.error.empty()) {
            out += "<div class=\"error-text\">" + escape(r.error) + "</div>";
        }
        if (r.status() == tdbg::rules::evaluation_status::nothing_evaluated) {
            out += "<div class=\"error-text\">nothing evaluated: " + escape(r.nothing_evaluated_reason) + "</div>";
        }
        out += "</td><td class=\"num\" title=\"" + escape(tdbg::rules::describe_coverage(r)) + "\">" +
               std::to_string(r.triggered_steps.size() + r.not_triggered_steps.size()) + "</td><td>";
        // Counted as `tdbg rules` counts them: steps the run never saved are not skips.
        std::string skipped;
        for (const auto& [reason, count] : tdbg::rules::counted_skips(r)) {
            skipped += (skipped.empty() ? "" : "<br>") + std::to_string(count) + " <span class=\"hint\">" +
                       escape(reason) + "</span>";
        }
        out += skipped.empty() ? "0" : skipped;
        out += "</td><td class=\"params\">";
        std::string params;
        for (const auto& [k, v] : r.params) {
            params += (params.empty() ? "" : ", ") + std::string("<span class=\"param\">") + escape(k) + "=" +
                      escape(v) + "</span>";
        }
        out += params.empty() ? "<span class=\"hint\">defaults</span>" : params;
        out += "</td></tr>";
    }
    return out + "</tbody></table>";
}

// The runs of a report that compares several: name (in its colour), path, state, workers, steps.
inline std::string runs_table(const document& doc, const context& ctx) {
    std::string out = "<table class=\"runs\"><thead><tr><th>run</th><th>path</th><th>state</th><th>workers</th>"
                      "<th>steps <span class=\"hint\">(global step numbers)</span></th></tr></thead><tbody>";
    for (const auto& r : doc.runs) {
        const auto coloured = std::find_if(ctx.series_colour.begin(), ctx.series_colour.end(),
                                           [&](const auto& item) { return std::get<0>(item.first) == r.name; });
        out += "<tr><td class=\"run-name\">";
        if (coloured != ctx.series_colour.end()) {
            out += "<span class=\"swatch\" style=\"background:" +
                   series_palette[coloured->second % series_palette.size()].hex() + "\"></span> ";
        }
        std::string workers, steps;
        for (const auto& w : r.workers) {
            workers += (workers.empty() ? "" : ", ") + escape(w);
        }
        for (const auto& m : r.modes) {
            steps += (steps.empty() ? "" : "<br>") + escape(m.mode) + ": " + escape(describe_steps(m.global_steps));
        }
        out += "<b>" + escape(r.name) + "</b></td><td class=\"path\">" + escape(r.path) + "</td><td>" + escape(r.state) + "</td><td>" +
               (workers.empty() ? "none yet" : workers) + "</td><td>" + (steps.empty() ? "none yet" : steps) +
               "</td></tr>";
    }
    return out + "</tbody></table>";
}

// The first step where tensor `name` differs between the runs of the diff, if it does.
inline std::optional<std::int64_t> divergence_of(const document& doc, const std::string& name) {
    if (!doc.diff) {
        return std::nullopt;
    }
    std::optional<std::int64_t> step;
    auto consider = [&](const tdbg::diff_document_entry& t) {
        if ((t.tensor == name || t.tensor_b == name) && (!step || t.step < *step)) {
            step = t.step;
        }
    };
    for (const auto& t : doc.diff->tensors) {
        consider(t);
    }
    if (doc.diff->first_divergence) {
        consider(*doc.diff->first_divergence);
    }
    return step;
}

// What `tdbg diff` found: whether the runs agree, where they first diverge, which tensors differ.
inline std::string diff_box(const diff_summary& d) {
    std::string out = "<section class=\"diff\" id=\"diff\"><h3>" +
                      std::string(d.agree ? "The runs agree" : "The runs diverge") + " <span class=\"hint\">(" +
                      escape(d.run_a) + " vs " + escape(d.run_b) + "; rtol " + escape(format_value(d.rtol)) +
                      ", atol " + escape(format_value(d.atol)) + "; from " + escape(d.source) +
                      ")</span></h3><dl class=\"facts\">";
    auto fact = [&](const std::string& name, const std::string& value_html) {
        out += "<dt>" + name + "</dt><dd>" + value_html + "</dd>";
    };
    auto tensor_names = [](const tdbg::diff_document_entry& t) {
        return escape(t.tensor) + (t.tensor_b == t.tensor || t.tensor_b.empty()
                                       ? std::string()
                                       : " <span class=\"hint\">(" + escape(t.tensor_b) + " in B)</span>");
    };
    if (d.first_divergence) {
        const auto& f = *d.first_divergence;
        std::string index;
        for (const auto i : f.index) {
            index += (index.empty() ? "" : ", ") + std::to_string(i);
        }
        fact("first divergence",
             fmt::format("<b>step {}</b> ({} {}), {}{}", f.step, escape(tdbg::mode_name(f.step_mode)), f.mode_step,
                         tensor_names(f), f.worker.empty() ? std::string() : ", " + escape(f.worker)));
        fact("difference",
             fmt::format("max abs {}, max rel {}{}", escape(difference_text(f.max_abs_diff, f.elements_compared())),
                         escape(difference_text(f.max_rel_diff, f.elements_compared())),
                         f.index.empty() ? std::string() : " at [" + index + "]"));
        if (!f.reason.empty()) {
            fact("reason", escape(f.reason));
        }
    } else if (!d.agree) {
        fact("first divergence", "none at a step both runs hold: the runs hold different tensors");
    }
    if (!d.tensors.empty()) {
        constexpr std::size_t shown = 12;
        std::string list;
        for (std::size_t i = 0; i < d.tensors.size() && i < shown; ++i) {
            const auto& t = d.tensors[i];
            list += fmt::format("{}{} from step {} ({} {})", list.empty() ? "" : "<br>", tensor_names(t), t.step,
                                escape(tdbg::mode_name(t.step_mode)), t.mode_step);
        }
        if (d.tensors.size() > shown) {
            list += fmt::format("<br><span class=\"hint\">and {} more</span>", d.tensors.size() - shown);
        }
        fact(fmt::format("differing tensors ({})", d.tensors.size()), list);
    }
    if (!d.only_in_a.empty() || !d.only_in_b.empty()) {
        fact("not compared", fmt::format("{} tensors only in {}, {} only in {}", d.only_in_a.size(), escape(d.run_a),
                                         d.only_in_b.size(), escape(d.run_b)));
    }
    return out + "</dl></section>";
}

inline std::string legend(const tensor_section& t, const context& ctx) {
    std::set<series_key> keys;
    for (const auto& p : t.plots) {
        for (const auto& s : p.lines) {
            keys.emplace(s.run, s.mode, s.worker);
        }
    }
    // In colour order; the modes of a run's worker share a colour, and come in mode order.
    std::vector<series_key> ordered(keys.begin(), keys.end());
    std::sort(ordered.begin(), ordered.end(), [&](const series_key& a, const series_key& b) {
        return std::make_pair(ctx.series_colour.at(a), mode_rank(std::get<1>(a))) <
               std::make_pair(ctx.series_colour.at(b), mode_rank(std::get<1>(b)));
    });
    std::string out;
    for (const auto& [run, mode, worker] : ordered) {
        const series s{mode, worker, {}, run};
        const std::string dash(mode_dash(mode));
        out += "<span class=\"key\"><svg width=\"28\" height=\"10\" aria-hidden=\"true\"><line x1=\"1\" y1=\"5\" "
               "x2=\"27\" y2=\"5\" "
               "stroke-width=\"2.5\" stroke=\"" +
               colour_of(ctx, s).hex() + "\"" +
               (dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"") + "/></svg>" +
               escape(series_label(ctx, s)) + "</span>";
    }
    for (const auto& r : ctx.rules) {
        if (!r.here.empty()) {
            out += "<span class=\"key\"><span class=\"swatch\" style=\"background:" + r.colour.hex() + "\"></span>" +
                   escape(r.name) + " triggered</span>";
        }
        if (r.elsewhere) {
            out += "<span class=\"key\"><span class=\"swatch faint\" style=\"background:" + r.colour.hex() +
                   "\"></span>" + escape(r.name) + " triggered on other tensors</span>";
        }
    }
    return out.empty() ? out : "<div class=\"legend\">" + out + "</div>";
}

} // namespace tdbg::cli::report::detail
