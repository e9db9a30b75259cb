#pragma once
// The marks every chart of the page of `tdbg report` draws over the shared step
// axis: the axis with its ticks, where rules triggered, and where the runs diverge.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "axes.hpp"
#include "context.hpp"
#include "page_text.hpp"
#include "palette.hpp"
#include "svg.hpp"

namespace tdbg::cli::report::detail {

// The x axis at pixel row `y` from `x0` to `x1`, with step ticks.
inline std::string step_ticks(const scale& x, double x0, double x1, double y, bool grid_from = false,
                              double grid_top = 0) {
    std::string out = line("axis", x0, y, x1, y);
    const int target = std::max(2, static_cast<int>((x1 - x0) / 70));
    const ticks t = nice_ticks(x.d0, x.d1, target, true);
    for (double v : t.at) {
        const double px_x = x(v);
        if (px_x < x0 - 0.5 || px_x > x1 + 0.5) {
            continue;
        }
        if (grid_from) {
            out += line("grid", px_x, grid_top, px_x, y);
        }
        out += line("axis", px_x, y, px_x, y + 4);
        out += text(px_x, y + 15, "middle", "tick", typeset_minus(format_tick(v, t.step)));
    }
    return out;
}

// The x span of a band on a chart: at least 3 pixels wide, so that a single step on a long
// axis still shows.
inline std::pair<double, double> band_span(const band& b, const scale& x, double plot_left, double plot_right) {
    double a = std::max(plot_left, x(b.lo));
    double z = std::min(plot_right, x(b.hi));
    if (z - a < 3) {
        const double mid = (a + z) / 2;
        a = mid - 1.5;
        z = mid + 1.5;
    }
    return {a, z};
}

// "ExplodingTensor triggered at steps 12-13", escaped.
inline std::string band_title(const rule_marks& r, const band& b) {
    return b.first == b.last ? fmt::format("{} triggered at step {}", escape(r.name), b.first)
                             : fmt::format("{} triggered at steps {}-{}", escape(r.name), b.first, b.last);
}

// Where rules triggered, on the chart of the tensor drawn now: translucent bands over the plot
// where a rule triggered on this tensor, and a strip of solid marks above the plot (one row
// per rule) that stays visible over any plot. Where a rule triggered on other tensors only,
// its row shows faint marks and the plot no band.
inline std::string rule_overlay(const context& ctx, const scale& x, double plot_left, double plot_right,
                                double strip_top, double plot_top, double plot_bottom, bool bands_in_plot) {
    std::string out;
    for (std::size_t i = 0; i < ctx.rules.size(); ++i) {
        const auto& r = ctx.rules[i];
        const double row = strip_top + 6.0 * static_cast<double>(i);
        if (r.elsewhere) {
            for (const band& b : r.bands) {
                const auto [a, z] = band_span(b, x, plot_left, plot_right);
                fmt::format_to(std::back_inserter(out),
                               "<rect class=\"rule-elsewhere\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                               "fill=\"{}\"><title>{} (on other tensors)</title></rect>",
                               px(a), px(row), px(z - a), px(4), r.colour.hex(), band_title(r, b));
            }
        }
        for (const band& b : r.here) {
            const auto [a, z] = band_span(b, x, plot_left, plot_right);
            const std::string what = band_title(r, b);
            if (bands_in_plot) {
                fmt::format_to(std::back_inserter(out),
                               "<rect class=\"rule-band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
                               "<title>{}</title></rect>",
                               px(a), px(plot_top), px(z - a), px(plot_bottom - plot_top), r.colour.hex(), what);
            }
            fmt::format_to(std::back_inserter(out),
                           "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>", px(a),
                           px(row), px(z - a), px(4), r.colour.hex(), what);
        }
    }
    return out;
}

inline double rule_strip_height(const context& ctx) {
    return ctx.rules.empty() ? 0 : 6.0 * static_cast<double>(ctx.rules.size()) + 4;
}

// Vertical lines where the runs first diverge (solid, labelled) and where the
// tensor drawn first diverges (dashed), from `top` to `bottom`.
inline std::string divergence_marks(const context& ctx, const scale& x, double left, double right, double top,
                                    double bottom) {
    std::string out;
    auto mark = [&](std::int64_t step, std::string_view cls, std::string_view dash, const std::string& what,
                    std::string_view label) {
        const double at = x(static_cast<double>(step));
        if (at < left - 0.5 || at > right + 0.5) {
            return;
        }
        fmt::format_to(std::back_inserter(out),
                       "<g class=\"{}\" data-step=\"{}\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
                       "stroke=\"{}\" stroke-width=\"1.5\"{}/>",
                       cls, step, px(at), px(top), px(at), px(bottom), divergence_colour.hex(),
                       dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash));
        // The label sits beside the line, on the side with room for it.
        const bool room_right = at + 70 < right;
        out += text(room_right ? at + 3 : at - 3, top + 9, room_right ? "start" : "end", "divergence-label",
                    std::string(label));
        fmt::format_to(std::back_inserter(out), "<title>{}</title></g>", escape(what));
    };
    if (ctx.first_divergence) {
        mark(*ctx.first_divergence, "divergence", "", fmt::format("first divergence: step {}", *ctx.first_divergence),
             fmt::format("diverges {}", *ctx.first_divergence));
    }
    if (ctx.tensor_divergence && ctx.tensor_divergence != ctx.first_divergence) {
        mark(*ctx.tensor_divergence, "tensor-divergence", "4 3",
             fmt::format("this tensor diverges from step {}", *ctx.tensor_divergence),
             fmt::format("differs {}", *ctx.tensor_divergence));
    }
    return out;
}

} // namespace tdbg::cli::report::detail
