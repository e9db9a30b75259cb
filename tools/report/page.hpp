#pragma once
// The page `tdbg report` writes: one self-contained HTML file (inline CSS and
// SVG, a few lines of inline script for hover read-outs; nothing is fetched
// when it is opened): a card for the run (or runs), the overview of steps and
// rules, an index of the tensors, and a card per tensor with its charts.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "assets.hpp"
#include "context.hpp"
#include "heatmap.hpp"
#include "line_chart.hpp"
#include "model.hpp"
#include "page_text.hpp"
#include "tables.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "timeline.hpp"

namespace tdbg::cli::report {

namespace detail {

// A list of notes ("" when there are none).
inline std::string notes_list(const std::vector<std::string>& notes) {
    if (notes.empty()) {
        return {};
    }
    std::string out = "<ul class=\"notes\">";
    for (const auto& n : notes) {
        out += "<li>" + escape(n) + "</li>";
    }
    return out + "</ul>";
}

// The facts of the run card, as <dt>/<dd> pairs: the run (or the runs' table), its
// collections, the tensors shown, the rules.
inline std::string run_facts(const document& doc, const context& ctx) {
    std::string out;
    auto fact = [&](const std::string& name, const std::string& value_html) {
        out += "<dt>" + name + "</dt><dd>" + value_html + "</dd>";
    };
    auto joined = [](const std::vector<std::string>& items) {
        std::string list;
        for (const auto& item : items) {
            list += (list.empty() ? "" : ", ") + escape(item);
        }
        return list;
    };
    if (doc.runs.empty()) {
        fact("run", escape(doc.run_name));
        fact("path", escape(doc.run_path));
        fact("state", escape(doc.state));
        const std::string workers = joined(doc.workers);
        fact("workers", workers.empty() ? "none yet" : workers);
        if (doc.modes.empty()) {
            fact("steps", "none yet");
        }
        for (const auto& m : doc.modes) {
            fact(escape(m.mode) + " steps",
                 escape(describe_steps(m.global_steps)) + " <span class=\"hint\">(global step numbers)</span>");
        }
    } else {
        fact("runs", runs_table(doc, ctx));
    }
    const std::string collections = joined(doc.collections);
    if (!collections.empty()) {
        fact("collections", collections);
    }
    fact("tensors",
         std::to_string(doc.tensors.size()) + " shown of " + std::to_string(doc.tensors_in_run) +
             (doc.selection.empty() ? std::string() : " <span class=\"hint\">(" + escape(doc.selection) + ")</span>"));
    if (!doc.rules.empty()) {
        std::size_t issues = 0;
        for (const auto& r : doc.rules) {
            issues += r.status() == tdbg::rules::evaluation_status::issues_found ? 1 : 0;
        }
        fact("rules", std::to_string(doc.rules.size()) + " evaluated, " + std::to_string(issues) + " found issues");
    }
    return out;
}

// The first card: the run's facts, what `tdbg diff` found, the report's notes.
inline std::string run_card(const document& doc, const context& ctx) {
    std::string out = "<section class=\"card\" id=\"run\"><h1>" + escape(doc.title) + "</h1><dl class=\"facts\">";
    out += run_facts(doc, ctx);
    out += "</dl>";
    if (doc.diff) {
        out += diff_box(*doc.diff);
    }
    out += notes_list(doc.notes);
    return out + "</section>\n";
}

// The overview card: the rules' table and the timeline of steps and rules (the
// table alone when the run has no steps; nothing when it has neither).
inline std::string overview_card(const document& doc, const context& ctx, bool has_steps) {
    if (has_steps) {
        std::string out = "<section class=\"card\" id=\"overview\"><h3>Steps" +
                          std::string(doc.rules.empty() ? "" : " and rules") + "</h3>";
        if (!doc.rules.empty()) {
            out += rules_table(doc, ctx);
        }
        return out + render_timeline(doc, ctx) + "</section>\n";
    }
    if (!doc.rules.empty()) {
        return "<section class=\"card\" id=\"overview\"><h3>Rules</h3>" + rules_table(doc, ctx) + "</section>\n";
    }
    return {};
}

// The index of the tensors, each flagged where it holds NaN or infinities and where
// it differs between the runs (nothing for a single tensor).
inline std::string tensor_index(const document& doc) {
    if (doc.tensors.size() <= 1) {
        return {};
    }
    std::string out = "<section class=\"card\"><h3>Tensors</h3><nav class=\"index\">";
    for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
        if (!doc.tensors[i].group.empty() && (i == 0 || doc.tensors[i].group != doc.tensors[i - 1].group)) {
            out += "<span class=\"group\">" + escape(doc.tensors[i].group) + "</span>";
        }
        out += "<a href=\"#tensor-" + std::to_string(i) + "\">" + escape(doc.tensors[i].name) +
               (doc.tensors[i].has_non_finite ? "<span class=\"flag\">NaN/inf</span>" : "") +
               (divergence_of(doc, doc.tensors[i].name) ? "<span class=\"flag diverges\">differs</span>" : "") + "</a>";
    }
    return out + "</nav></section>\n";
}

// A tensor's charts: its line charts in a grid, then its distributions.
inline std::string tensor_charts(const tensor_section& t, const context& ctx) {
    std::string out;
    if (!t.plots.empty()) {
        // A lone plot (a loss, a learning rate) gets twice the width.
        const bool single = t.plots.size() == 1 && t.distributions.empty();
        out += single ? "<div class=\"grid single\">" : "<div class=\"grid\">";
        for (const auto& p : t.plots) {
            out += render_line_chart(p, ctx, single);
        }
        out += "</div>";
    }
    if (ctx.several_runs && t.distributions.size() > 1) {
        // The runs' distributions side by side, each on the page's step axis.
        out += "<div class=\"grid runs\">";
        for (const auto& d : t.distributions) {
            out += render_distribution(d, ctx, 620);
        }
        out += "</div>";
    } else {
        for (const auto& d : t.distributions) {
            out += render_distribution(d, ctx);
        }
    }
    return out;
}

// The card of tensor `i` of the document; ctx.tensor_divergence is where it first differs.
inline std::string tensor_card(const document& doc, std::size_t i, const context& ctx) {
    const auto& t = doc.tensors[i];
    std::string out = "<section class=\"card tensor\" id=\"tensor-" + std::to_string(i) + "\" data-tensor=\"" +
                      escape(t.name) + "\"><h2>" + escape(t.name) +
                      (t.has_non_finite ? "<span class=\"flag\">NaN/inf</span>" : "") +
                      (ctx.tensor_divergence ? fmt::format("<span class=\"flag diverges\">differs from step {}</span>",
                                                           *ctx.tensor_divergence)
                                             : std::string()) +
                      "</h2>";
    out += "<p class=\"sub\">" + escape(t.summary) + "</p>";
    out += tensor_reasons(doc, t.name);
    out += legend(t, ctx);
    out += tensor_charts(t, ctx);
    out += notes_list(t.notes);
    return out + "</section>\n";
}

} // namespace detail

/// The complete page.
inline std::string render_html(const document& doc) {
    const std::vector<std::int64_t> all_steps = detail::run_steps(doc);
    detail::context ctx = detail::make_context(doc, all_steps);
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                      "<title>" +
                      escape(doc.title) + "</title><style>" + detail::stylesheet + "</style></head><body><main>\n";
    out += detail::run_card(doc, ctx);
    out += detail::overview_card(doc, ctx, !all_steps.empty());
    out += detail::tensor_index(doc);
    for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
        const std::string& group = doc.tensors[i].group;
        if (!group.empty() && (i == 0 || group != doc.tensors[i - 1].group)) {
            out += "<h2 class=\"group\">" + escape(group) + "</h2>\n";
        }
        ctx.tensor_divergence = detail::divergence_of(doc, doc.tensors[i].name);
        detail::mark_tensor(ctx, doc, doc.tensors[i].name, all_steps);
        out += detail::tensor_card(doc, i, ctx);
    }
    out +=
        "<footer>" + escape(doc.generated) + "</footer></main><script>" + detail::script + "</script></body></html>\n";
    return out;
}

} // namespace tdbg::cli::report
