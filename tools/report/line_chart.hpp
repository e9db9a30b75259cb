#pragma once
// The small charts of the page of `tdbg report`: one reduction of a tensor over
// steps, a line per mode and worker (and run), with a hover read-out.

#include <algorithm>
#include <cmath>
#include <cstddef>
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
#include "palette.hpp"
#include "svg.hpp"

namespace tdbg::cli::report {

namespace detail {

// The span of a plot's finite values, and how many values are finite and how many not.
struct value_range {
    double lo = INFINITY, hi = -INFINITY;
    std::size_t finite = 0, non_finite = 0;
};

inline value_range finite_range(const reduction_plot& plot) {
    value_range r;
    for (const auto& s : plot.lines) {
        for (const auto& p : s.points) {
            if (std::isfinite(p.value)) {
                r.lo = std::min(r.lo, p.value);
                r.hi = std::max(r.hi, p.value);
                ++r.finite;
            } else {
                ++r.non_finite;
            }
        }
    }
    return r;
}

// Everything of a line chart but its data: the plot area from (x0, y1) to (x1, y0),
// the value grid with its labels, the rules' marks, the axes, and a word when
// there is nothing to draw.
inline std::string line_chart_frame(const context& ctx, const scale& x, const scale& y,
                                    const std::vector<std::pair<double, std::string>>& labels, const value_range& range,
                                    double x0, double x1, double y0, double y1) {
    std::string svg = rect("plot-area", x0, y1, x1 - x0, y0 - y1);
    for (const auto& [v, label] : labels) {
        const double py = y(v);
        svg += line("grid", x0, py, x1, py);
        svg += text(x0 - 5, py + 3.5, "end", "tick", typeset_minus(label));
    }
    svg += rule_overlay(ctx, x, x0, x1, 6, y1, y0, true);
    svg += step_ticks(x, x0, x1, y0);
    svg += line("axis", x0, y1, x0, y0);
    if (range.finite == 0) {
        svg += text((x0 + x1) / 2, (y0 + y1) / 2, "middle", "empty",
                    range.non_finite ? "no finite values" : "no values");
    }
    return svg;
}

// The path of a series' line: a pen stroke through its finite values, lifted at the others.
inline std::string series_path(const series& s, const scale& x, const scale& y) {
    std::string path;
    bool pen_down = false;
    for (const auto& p : s.points) {
        if (!std::isfinite(p.value)) {
            pen_down = false;
            continue;
        }
        fmt::format_to(std::back_inserter(path), "{}{} {}", pen_down ? "L" : "M", px(x(static_cast<double>(p.step))),
                       px(y(p.value)));
        pen_down = true;
    }
    return path;
}

// One series of a line chart: its line, a dot where a line alone would hide a value,
// a cross on the top edge (`y1`) for a value that is not finite. Its values are
// appended to `hover` as "step|label|value|colour;".
inline std::string line_chart_series(const series& s, const std::string& reduction, const context& ctx,
                                     const scale& x, const scale& y, double y1, std::string& hover) {
    std::string svg;
    const rgb colour = colour_of(ctx, s);
    const std::string label = series_label(ctx, s);
    std::string hover_label = label; // '|' and ';' separate the read-out's fields
    std::replace(hover_label.begin(), hover_label.end(), '|', '/');
    std::replace(hover_label.begin(), hover_label.end(), ';', ',');
    const std::string path = series_path(s, x, y);
    const std::string dash(mode_dash(s.mode));
    if (!path.empty()) {
        fmt::format_to(std::back_inserter(svg), "<path class=\"line\" d=\"{}\" stroke=\"{}\"{}><title>{}</title></path>",
                       path, colour.hex(), dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash),
                       escape(label));
    }
    // Dots where a line alone would hide the data: few points, or a point with no neighbour.
    const bool dots = s.points.size() <= 60;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
        const auto& p = s.points[i];
        const double px_x = x(static_cast<double>(p.step));
        const std::string what = fmt::format("{}, step {} ({} {}): {} = {}", escape(label), p.step, escape(s.mode),
                                             p.mode_step, escape(reduction), format_value(p.value));
        if (!std::isfinite(p.value)) {
            // A non-finite value sits on the top edge as a cross in the series' colour.
            fmt::format_to(std::back_inserter(svg),
                           "<path class=\"nonfinite\" d=\"M{} {}l7 7m0 -7l-7 7\" stroke=\"{}\"><title>{}</title></path>",
                           px(px_x - 3.5), px(y1 + 1), colour.hex(), what);
            continue;
        }
        const bool alone = (i == 0 || !std::isfinite(s.points[i - 1].value)) &&
                           (i + 1 == s.points.size() || !std::isfinite(s.points[i + 1].value));
        if (dots || alone) {
            fmt::format_to(std::back_inserter(svg),
                           "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"><title>{}</title></circle>", px(px_x),
                           px(y(p.value)), px(2.6), colour.hex(), what);
        }
        fmt::format_to(std::back_inserter(hover), "{}|{}|{}|{};", p.step, escape(hover_label), format_value(p.value),
                       colour.hex());
    }
    return svg;
}

} // namespace detail

/// One small chart: a reduction of a tensor over steps, a line per mode and worker.
inline std::string render_line_chart(const reduction_plot& plot, const detail::context& ctx, bool wide = false) {
    using detail::px;
    const double width = wide ? 720 : 360, height = 200;
    const double left = 54, right = 12, bottom = 28;
    const double strip = detail::rule_strip_height(ctx);
    const double top = 10 + strip;

    detail::value_range range = detail::finite_range(plot);
    // Magnitudes spanning three decades or more (norms, variances, a loss
    // falling from 1e3) read better on a log scale; only positive data allow it.
    const bool log = range.finite > 1 && range.lo > 0 && range.hi / range.lo >= 1000;
    std::string caption = fmt::format("<figcaption><b>{}</b>", escape(plot.reduction));
    if (log) {
        caption += " <span class=\"hint\">log scale</span>";
    }
    caption += "</figcaption>";

    std::string svg = fmt::format(
        "<svg class=\"plot line-plot\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} over steps\">", px(width),
        px(height), escape(plot.reduction));
    const double x0 = left, x1 = width - right, y0 = height - bottom, y1 = top;
    const scale x{ctx.steps.lo, ctx.steps.hi, x0, x1, false};
    if (range.finite == 0) {
        range.lo = 0;
        range.hi = 1;
    }
    const auto [y, labels] = value_axis(range.lo, range.hi, log, y0, y1);
    svg += detail::line_chart_frame(ctx, x, y, labels, range, x0, x1, y0, y1);

    // The data, clipped to the plot area (and a dot's radius around it): nothing
    // drawn can stray over the axes whatever the values.
    fmt::format_to(std::back_inserter(svg),
                   "<svg x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" viewBox=\"{0} {1} {2} {3}\" overflow=\"hidden\">",
                   px(x0 - 4), px(y1 - 4), px(x1 - x0 + 8), px(y0 - y1 + 8));
    // The data for the hover read-out: "step|label|value|colour;..." per series, in the order drawn.
    std::string hover;
    for (const auto& s : plot.lines) {
        svg += detail::line_chart_series(s, plot.reduction, ctx, x, y, y1, hover);
    }
    svg += "</svg>";
    svg += detail::divergence_marks(ctx, x, x0, x1, y1, y0);
    fmt::format_to(std::back_inserter(svg),
                   "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"{}\" y2=\"{}\" visibility=\"hidden\"/>", px(y1),
                   px(y0));
    svg += "</svg>";
    return fmt::format("<figure class=\"chart\" data-x0=\"{}\" data-x1=\"{}\" data-lo=\"{}\" data-hi=\"{}\" data-w=\"{}\" "
                       "data-hover=\"{}\">{}{}<div class=\"readout\"></div></figure>",
                       px(x0), px(x1), px(ctx.steps.lo), px(ctx.steps.hi), px(width), hover, caption, svg);
}

} // namespace tdbg::cli::report
