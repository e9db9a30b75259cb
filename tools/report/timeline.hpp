#pragma once
// The overview chart of the page of `tdbg report`: a row per mode (of each run)
// with the steps it saved, and a row per rule with the steps where it triggered,
// did not, or could not be evaluated.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "axes.hpp"
#include "context.hpp"
#include "marks.hpp"
#include "model.hpp"
#include "page_text.hpp"
#include "svg.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::cli::report {

namespace detail {

// The rows of saved steps: one per mode of the run, or per run and mode when the
// report compares runs, each with its name.
inline std::vector<std::pair<std::string, const mode_steps*>> saved_step_rows(const document& doc) {
    std::vector<std::pair<std::string, const mode_steps*>> rows;
    if (doc.runs.empty()) {
        for (const auto& m : doc.modes) {
            rows.emplace_back(m.mode, &m);
        }
    }
    for (const auto& r : doc.runs) {
        for (const auto& m : r.modes) {
            rows.emplace_back(fmt::format("{} \xC2\xB7 {}", r.name, m.mode), &m);
        }
    }
    return rows;
}

// A row's name, right-aligned before x0 on the row centred at `cy`; a long name is
// cut short, the full name stays in the tooltip.
inline std::string row_label(double x0, double cy, const std::string& name, const std::string& cls) {
    std::string shown = name;
    if (shown.size() > 28) {
        std::size_t cut = 26;
        while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0U) == 0x80U) {
            --cut; // not inside a UTF-8 sequence
        }
        shown = shown.substr(0, cut) + "\xE2\x80\xA6";
    }
    return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"{}\">{}<title>{}</title></text>", px(x0 - 10),
                       px(cy + 4), cls, escape(shown), escape(name));
}

// A row of saved steps, centred at `cy`: a tick per step.
inline std::string timeline_step_row(const std::string& row_name, const mode_steps& m, const scale& x, double x0,
                                     double cy) {
    std::string svg = row_label(x0, cy, fmt::format("{} steps", row_name), "row-label");
    std::string path;
    for (auto s : m.global_steps) {
        fmt::format_to(std::back_inserter(path), "M{} {}v10", px(x(static_cast<double>(s))), px(cy - 5));
    }
    fmt::format_to(std::back_inserter(svg), "<path class=\"step-ticks\" d=\"{}\"><title>{}: {}</title></path>", path,
                   escape(row_name), escape(describe_steps(m.global_steps)));
    return svg;
}

// The steps rule `r` skipped for a reason worth showing (a step the run never saved
// is not), drawn as a tick per step or a bar for a long run of them, in `path`.
inline tdbg::rules::step_set skipped_ticks(const tdbg::rules::evaluation_result& r, const scale& x, double cy,
                                           std::string& path) {
    tdbg::rules::step_set skipped_steps;
    for (const auto& [reason, steps] : r.skipped_steps) {
        if (reason != tdbg::rules::skip_reason::step_unavailable) { // a step the run never saved: nothing to show
            skipped_steps.add(steps);
        }
    }
    // One tick per skipped step, or one bar for a run of them.
    for (const auto& run : skipped_steps.runs()) {
        const double from = x(static_cast<double>(run.first));
        if (run.size() <= 8) {
            for (std::int64_t s = run.first;; ++s) {
                fmt::format_to(std::back_inserter(path), "M{} {}v6", px(x(static_cast<double>(s))), px(cy - 3));
                if (s == run.last) {
                    break;
                }
            }
        } else {
            fmt::format_to(std::back_inserter(path), "M{} {}H{}", px(from), px(cy), px(x(static_cast<double>(run.last))));
        }
    }
    return skipped_steps;
}

// The bars of the steps where the rule named `rule_name` triggered (nothing when it
// did not), between x0 and x1 on the row centred at `cy`.
inline std::string triggered_bars(const context& ctx, const std::string& rule_name, const scale& x, double x0,
                                  double x1, double cy) {
    std::string svg;
    const auto found =
        std::find_if(ctx.rules.begin(), ctx.rules.end(), [&](const rule_marks& m) { return m.name == rule_name; });
    if (found == ctx.rules.end()) {
        return svg;
    }
    for (const auto& b : found->bands) {
        double a = x(b.lo);
        double z = x(b.hi);
        if (z - a < 4) {
            const double mid = (a + z) / 2;
            a = mid - 2;
            z = mid + 2;
        }
        fmt::format_to(std::back_inserter(svg),
                       "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\"><title>{} triggered "
                       "at {}</title></rect>",
                       px(std::max(x0, a)), px(cy - 7), px(std::min(x1, z) - std::max(x0, a)), px(14),
                       found->colour.hex(), escape(rule_name),
                       b.first == b.last ? fmt::format("step {}", b.first)
                                         : fmt::format("steps {}-{}", b.first, b.last));
    }
    return svg;
}

// The row of rule `i` of the document, centred at `cy`: grey ticks where it did not
// trigger, light ones where it was skipped, bars where it triggered.
inline std::string timeline_rule_row(const document& doc, std::size_t i, const context& ctx, const scale& x, double x0,
                                     double x1, double cy) {
    const auto& r = doc.rules[i];
    const std::string rule_name = rule_label(doc, i);
    std::string svg = row_label(x0, cy, rule_name, "row-label");
    std::string evaluated, skipped;
    for (auto s : r.not_triggered_steps) {
        fmt::format_to(std::back_inserter(evaluated), "M{} {}v8", px(x(static_cast<double>(s))), px(cy - 4));
    }
    const tdbg::rules::step_set skipped_steps = skipped_ticks(r, x, cy, skipped);
    if (!evaluated.empty()) {
        fmt::format_to(std::back_inserter(svg),
                       "<path class=\"eval-ticks\" d=\"{}\"><title>{}: not triggered at {} steps</title></path>",
                       evaluated, escape(rule_name), r.not_triggered_steps.size());
    }
    if (!skipped.empty()) {
        fmt::format_to(std::back_inserter(svg), "<path class=\"skip-ticks\" d=\"{}\"><title>{}: skipped at {}</title></path>",
                       skipped, escape(rule_name), escape(tdbg::rules::format_steps(skipped_steps)));
    }
    svg += triggered_bars(ctx, rule_name, x, x0, x1, cy);
    if (r.triggered_steps.empty() && r.not_triggered_steps.empty()) {
        svg += text(x0 + 6, cy + 4, "start", "empty-row", r.error.empty() ? "no step evaluated" : "could not be evaluated");
    }
    return svg;
}

} // namespace detail

/// The overview: where each mode saved steps, and for each rule the steps where it
/// triggered (coloured), did not (grey) or could not be evaluated (light).
inline std::string render_timeline(const document& doc, const detail::context& ctx) {
    using detail::px;
    constexpr double width = 1080, row = 22;
    const double left = 190, right = 20, bottom = 30, top = 6;
    const auto step_rows = detail::saved_step_rows(doc);
    const std::size_t rows = step_rows.size() + doc.rules.size();
    const double height = top + row * static_cast<double>(rows) + bottom;
    const double x0 = left, x1 = width - right, y0 = height - bottom;
    const scale x{ctx.steps.lo, ctx.steps.hi, x0, x1, false};
    std::string svg = fmt::format("<svg class=\"plot timeline\" viewBox=\"0 0 {} {}\" role=\"img\" "
                                  "aria-label=\"saved steps and rule results over steps\">",
                                  px(width), px(height));
    svg += detail::step_ticks(x, x0, x1, y0, true, top);
    double cy = top + row / 2;
    for (const auto& [row_name, m] : step_rows) {
        svg += detail::timeline_step_row(row_name, *m, x, x0, cy);
        cy += row;
    }
    for (std::size_t i = 0; i < doc.rules.size(); ++i) {
        svg += detail::timeline_rule_row(doc, i, ctx, x, x0, x1, cy);
        cy += row;
    }
    svg += detail::divergence_marks(ctx, x, x0, x1, top, y0);
    svg += "</svg>";
    return fmt::format("<figure class=\"chart wide\">{}</figure>", svg);
}

} // namespace tdbg::cli::report
