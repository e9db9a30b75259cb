#pragma once
// The distribution charts of the page of `tdbg report`: how a tensor's values
// spread over bins, step by step, as a heatmap (steps across, bins up, the share
// of the step's values in each bin as a shade), with a row for NaN and infinities.

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

// The values of a distribution that are not finite, and the largest share of a
// step's finite values that one bin holds (the darkest shade).
struct heat_totals {
    std::size_t non_finite = 0;
    double max_share = 0;
};

inline heat_totals totals_of(const distribution& d) {
    heat_totals t;
    for (const auto& c : d.columns) {
        t.non_finite += c.non_finite;
        for (auto n : c.counts) {
            if (c.finite > 0) {
                t.max_share = std::max(t.max_share, static_cast<double>(n) / static_cast<double>(c.finite));
            }
        }
    }
    return t;
}

inline std::string distribution_caption(const distribution& d, const context& ctx) {
    std::string caption = "<figcaption><b>distribution of values</b>";
    if (ctx.several_runs) {
        fmt::format_to(std::back_inserter(caption), " \xC2\xB7 <b class=\"run-name\">{}</b>", escape(d.run));
    }
    if (ctx.several_workers) {
        fmt::format_to(std::back_inserter(caption), " \xC2\xB7 {}", escape(d.worker));
    }
    fmt::format_to(std::back_inserter(caption),
                   " <span class=\"hint\">{} bins over [{}, {}]; shade: share of the step's values in the bin "
                   "(square-root scale)",
                   d.bins, format_value(d.low), format_value(d.high));
    if (d.columns.size() < d.steps_with_values) {
        fmt::format_to(std::back_inserter(caption), "; {} of {} steps", d.columns.size(), d.steps_with_values);
    }
    caption += "</span></figcaption>";
    return caption;
}

// The pixels each column covers, from x0 to x1 at most. Each column reaches halfway
// to its neighbours, but no further than half the usual distance between columns:
// a lone step is not drawn as a long stretch.
inline std::vector<std::pair<double, double>> column_spans(const distribution& d, const context& ctx, const scale& x,
                                                           double x0, double x1) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < d.columns.size(); ++i) {
        gaps.push_back(static_cast<double>(d.columns[i].step - d.columns[i - 1].step));
    }
    double reach = ctx.steps.half_gap;
    if (!gaps.empty()) {
        std::vector<double> sorted = gaps;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
        reach = sorted[sorted.size() / 2] / 2;
    }
    std::vector<std::pair<double, double>> spans(d.columns.size());
    for (std::size_t i = 0; i < d.columns.size(); ++i) {
        const double s = static_cast<double>(d.columns[i].step);
        const double before = i == 0 ? reach : std::min(reach, gaps[i - 1] / 2);
        const double after = i + 1 == d.columns.size() ? reach : std::min(reach, gaps[i] / 2);
        spans[i] = {std::max(x0, x(s - before)), std::min(x1, x(s + after))};
    }
    return spans;
}

// The shaded cells of the bins, bin 0 `bin_height` high above row y0. One path per
// shade keeps the file small: thousands of cells, a few dozen elements.
inline std::string heat_cells(const distribution& d, const std::vector<std::pair<double, double>>& spans,
                              double max_share, double y0, double bin_height) {
    std::vector<std::string> by_level(heat_levels + 1);
    for (std::size_t i = 0; i < d.columns.size(); ++i) {
        const auto& c = d.columns[i];
        const double a = spans[i].first, w = std::max(0.6, spans[i].second - spans[i].first);
        // Cells reach a little into the next column: abutting edges snapped to
        // device pixels would otherwise leave hairline gaps.
        const double cell = w + (i + 1 < d.columns.size() ? 0.6 : 0.0);
        for (std::size_t b = 0; b < c.counts.size(); ++b) {
            if (c.counts[b] == 0 || c.finite == 0 || max_share <= 0) {
                continue;
            }
            const double share = static_cast<double>(c.counts[b]) / static_cast<double>(c.finite);
            const auto level =
                static_cast<std::size_t>(std::ceil(std::sqrt(share / max_share) * static_cast<double>(heat_levels)));
            const double top_of_bin = y0 - static_cast<double>(b + 1) * bin_height;
            fmt::format_to(std::back_inserter(by_level[std::clamp<std::size_t>(level, 1, heat_levels)]), "M{} {}h{}v{}h{}z",
                           px(a), px(top_of_bin), px(cell), px(bin_height), px(-cell));
        }
    }
    std::string svg;
    for (std::size_t level = 1; level <= heat_levels; ++level) {
        if (!by_level[level].empty()) {
            fmt::format_to(std::back_inserter(svg), "<path d=\"{}\" fill=\"{}\" shape-rendering=\"crispEdges\"/>",
                           by_level[level], heat_color(level).hex());
        }
    }
    return svg;
}

// The row of NaN and infinities, `nf_row` high above row y1: more opaque where more
// of the step's values are not finite.
inline std::string non_finite_cells(const distribution& d, const std::vector<std::pair<double, double>>& spans,
                                    double y1, double nf_row) {
    std::string svg;
    for (std::size_t i = 0; i < d.columns.size(); ++i) {
        const auto& c = d.columns[i];
        if (c.non_finite > 0) {
            const double a = spans[i].first, w = std::max(0.6, spans[i].second - spans[i].first);
            const double share = static_cast<double>(c.non_finite) / static_cast<double>(c.non_finite + c.finite);
            fmt::format_to(std::back_inserter(svg),
                           "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>", px(a),
                           px(y1 - nf_row + 2), px(w), px(nf_row - 4), rule_palette[0].hex(), px(0.35 + 0.65 * share));
        }
    }
    return svg;
}

// The value axis's ticks left of x0, those of `labels` that fall between y0 and y1.
inline std::string bin_ticks(const std::vector<std::pair<double, std::string>>& labels, const scale& bin_y, double x0,
                             double y0, double y1) {
    std::string svg;
    for (const auto& [v, label] : labels) {
        const double py = bin_y(v);
        if (py < y1 - 0.5 || py > y0 + 0.5) {
            continue;
        }
        svg += line("axis", x0 - 4, py, x0, py);
        svg += text(x0 - 6, py + 3.5, "end", "tick", typeset_minus(label));
    }
    return svg;
}

// A read-out per column over its whole height (the browser shows an SVG <title> on hover).
inline std::string column_readouts(const distribution& d, const std::vector<std::pair<double, double>>& spans,
                                   double y0, double y1, double nf_row) {
    std::string svg;
    for (std::size_t i = 0; i < d.columns.size(); ++i) {
        const auto& c = d.columns[i];
        std::string what = fmt::format("step {} ({} {}): {} values", c.step, escape(c.mode), c.mode_step, c.finite);
        if (c.finite > 0) {
            fmt::format_to(std::back_inserter(what), ", min {}, mean {}, max {}", format_value(c.min),
                           format_value(c.mean), format_value(c.max));
        }
        if (c.non_finite > 0) {
            fmt::format_to(std::back_inserter(what), "; {} NaN/inf", c.non_finite);
        }
        fmt::format_to(std::back_inserter(svg),
                       "<rect class=\"hit\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                       px(spans[i].first), px(y1 - nf_row), px(std::max(0.6, spans[i].second - spans[i].first)),
                       px(y0 - y1 + nf_row), what);
    }
    return svg;
}

// The key right of the plot (which ends at x1): the shades from few to most,
// labelled with the shares they stand for.
inline std::string heat_key(double max_share, double x1, double y0, double y1) {
    std::string svg;
    const double kx = x1 + 22, kw = 12;
    const double kh = (y0 - y1) / static_cast<double>(heat_levels);
    for (std::size_t level = 1; level <= heat_levels; ++level) {
        fmt::format_to(std::back_inserter(svg), "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", px(kx),
                       px(y0 - static_cast<double>(level) * kh), px(kw), px(kh + 0.3), heat_color(level).hex());
    }
    svg += rect("key-frame", kx, y1, kw, y0 - y1);
    svg += text(kx + kw + 4, y1 + 8, "start", "tick", fmt::format("{}%", format_value(max_share * 100)));
    svg += text(kx + kw + 4, y0, "start", "tick", "0%");
    return svg;
}

} // namespace detail

/// The distribution of a tensor's values over steps: steps across, value bins
/// up, the share of the step's values in each bin as a shade.
inline std::string render_distribution(const distribution& d, const detail::context& ctx, double width = 1080) {
    using detail::px;
    const double plot_height = std::clamp(static_cast<double>(d.bins) * 5.0, 120.0, 260.0);
    const detail::heat_totals totals = detail::totals_of(d);
    const double left = 64, right = 86, bottom = 28;
    const double strip = detail::rule_strip_height(ctx);
    const double nf_row = totals.non_finite > 0 ? 14 : 0;
    const double top = 8 + strip + nf_row;
    const double height = top + plot_height + bottom;
    const double x0 = left, x1 = width - right, y0 = top + plot_height, y1 = top;

    std::string svg = fmt::format(
        "<svg class=\"plot heatmap\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"distribution of values over steps\">",
        px(width), px(height));
    svg += detail::rect("plot-area", x0, y1, x1 - x0, y0 - y1);
    const scale x{ctx.steps.lo, ctx.steps.hi, x0, x1, false};
    const auto labels = value_axis(d.low, d.high, false, y0, y1).second;
    // The bins cover [low, high] exactly: the axis is that interval, not widened to round ticks.
    scale bin_y{d.low, d.high, y0, y1, false};
    if (d.high <= d.low) {
        bin_y.d1 = d.low + 1;
    }
    const double bin_height = (y0 - y1) / static_cast<double>(std::max<std::size_t>(1, d.bins));
    const auto spans = detail::column_spans(d, ctx, x, x0, x1);

    svg += detail::heat_cells(d, spans, totals.max_share, y0, bin_height);
    if (totals.non_finite > 0) {
        svg += detail::non_finite_cells(d, spans, y1, nf_row);
        svg += detail::text(x0 - 5, y1 - nf_row / 2 + 3.5, "end", "tick nf-label", "NaN/inf");
    }
    svg += detail::bin_ticks(labels, bin_y, x0, y0, y1);
    svg += detail::rule_overlay(ctx, x, x0, x1, 4, y1, y0, false);
    svg += detail::divergence_marks(ctx, x, x0, x1, y1 - nf_row, y0);
    svg += detail::step_ticks(x, x0, x1, y0);
    svg += detail::line("axis", x0, y1, x0, y0);
    if (d.columns.empty()) {
        svg += detail::text((x0 + x1) / 2, (y0 + y1) / 2, "middle", "empty", "no values");
    }
    svg += detail::column_readouts(d, spans, y0, y1, nf_row);
    svg += detail::heat_key(totals.max_share, x1, y0, y1);
    svg += "</svg>";
    return fmt::format("<figure class=\"chart wide\">{}{}</figure>", detail::distribution_caption(d, ctx), svg);
}

} // namespace tdbg::cli::report
