#pragma once
// The page `tdbg report` writes: one self-contained HTML file (inline CSS and
// SVG, a few lines of inline script for hover read-outs; nothing is fetched
// when it is opened) drawn from the numbers cmd_report.cpp collected from a
// run. It knows nothing about trials, so tests can feed it made-up data.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <cctype>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tdbg/core/detail/markup.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::cli::report {

// ---------------------------------------------------------------- the data

/// One value of a series: at a global step (mode_step is the step of the point's mode).
struct point {
    std::int64_t step = 0;
    std::int64_t mode_step = 0;
    double value = 0; ///< may be NaN or infinite: drawn as a marker, not on the line
};

/// The values of one mode written by one worker (of one run, when the report compares runs).
struct series {
    std::string mode; ///< "TRAIN", "EVAL", "PREDICT", "GLOBAL"
    std::string worker; ///< "worker_0"
    std::vector<point> points;
    std::string run; ///< the run's name in a report of several runs, else empty
};

/// One reduction ("mean", "l2", or "value" for a scalar tensor) over steps.
struct reduction_plot {
    std::string reduction;
    std::vector<series> lines;
};

/// The histogram of a tensor's values at one step.
struct histogram_column {
    std::int64_t step = 0;
    std::string mode;
    std::int64_t mode_step = 0;
    std::vector<std::size_t> counts; ///< one per bin, finite values only
    std::size_t finite = 0;
    std::size_t non_finite = 0; ///< NaN and infinities
    double min = 0, max = 0, mean = 0; ///< of the finite values (meaningless when finite == 0)
};

/// How the values of a tensor spread over bins, step by step, for one worker (of one run).
struct distribution {
    std::string worker;
    double low = 0, high = 1; ///< the bins split [low, high] evenly
    std::size_t bins = 0;
    std::vector<histogram_column> columns; ///< ascending steps
    std::size_t steps_with_values = 0; ///< columns may be a sample of these
    std::string run; ///< the run's name in a report of several runs, else empty
};

/// Everything shown for one tensor.
struct tensor_section {
    std::string name;
    std::string summary; ///< "float32 [16, 8] · 13 steps (TRAIN, EVAL) · saved: value"
    std::vector<std::string> notes; ///< what could not be drawn, and why
    std::vector<reduction_plot> plots;
    std::vector<distribution> distributions;
    bool has_non_finite = false;
};

/// One mode's steps, for the overview and the step axis (every step of the run is in one).
struct mode_steps {
    std::string mode;
    std::vector<std::int64_t> global_steps; ///< ascending
};

/// One run of a report that compares several.
struct run_summary {
    std::string name; ///< as the legends show it
    std::string path;
    std::string state;
    std::vector<std::string> workers;
    std::vector<mode_steps> modes;
    std::size_t tensors_in_run = 0;
};

/// A tensor whose values differ between two runs (`tdbg diff --json`), from its first diverging step.
struct diverging_tensor {
    std::string tensor; ///< its name in run A
    std::string tensor_b; ///< its name in run B
    std::int64_t step = 0; ///< global step
    std::string mode;
    std::int64_t mode_step = 0;
    /// The largest absolute and relative differences; none where `tdbg diff --json` wrote null,
    /// a difference that is not a finite number (see difference_text).
    std::optional<double> max_abs_diff, max_rel_diff;
};

/// Where two runs first differ.
struct first_divergence : diverging_tensor {
    std::string worker;
    std::vector<std::int64_t> index; ///< of the element that differs most
    /// Whether elements were compared (flat_index set): a difference that is null is then an
    /// infinite one; else (another dtype or shape, a value in one run only) it is undefined.
    bool elements_compared = false;
    std::string reason;
};

/// What `tdbg diff --json` found, as the report shows it.
struct diff_summary {
    std::string source; ///< the file it was read from
    std::string run_a, run_b;
    bool agree = true;
    double rtol = 0, atol = 0;
    std::optional<first_divergence> first;
    std::vector<diverging_tensor> tensors; ///< ordered by first diverging step
    std::vector<std::string> only_in_a, only_in_b;
};

/// The whole report.
struct document {
    std::string title; ///< the page's heading
    std::string run_name;
    std::string run_path;
    std::string state; ///< "finished" or what is known about a live run
    std::vector<std::string> workers;
    std::vector<mode_steps> modes;
    std::vector<std::string> collections;
    std::size_t tensors_in_run = 0;
    std::string selection; ///< how the shown tensors were chosen, for the header
    std::vector<std::string> notes;
    std::vector<tdbg::rules::evaluation_result> rules;
    std::vector<tensor_section> tensors;
    /// The runs, when the report compares several (else empty: the fields above describe the run).
    std::vector<run_summary> runs;
    /// The run of each rule result, parallel to `rules`, when the report compares several runs.
    std::vector<std::string> rule_runs;
    /// What `tdbg diff` found (--diff FILE).
    std::optional<diff_summary> diff;
    std::string generated; ///< "written by tdbg report 0.1.0 on 2024-05-01 12:00 UTC"
};

// ---------------------------------------------------------------- text

/// `text` made safe for HTML and SVG text and for quoted attribute values.
inline std::string escape(std::string_view text) { return tdbg::detail::markup_escape(text); }

namespace detail {

// "1.5e-05" -> "1.5e-5", "2e+06" -> "2e6": shorter, and as readable.
inline std::string compact_exponent(std::string s) {
    const auto e = s.find('e');
    if (e == std::string::npos) {
        return s;
    }
    std::string mantissa = s.substr(0, e);
    std::string exponent = s.substr(e + 1);
    const bool negative = !exponent.empty() && exponent[0] == '-';
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) {
        exponent.erase(0, 1);
    }
    while (exponent.size() > 1 && exponent[0] == '0') {
        exponent.erase(0, 1);
    }
    return fmt::format("{}e{}{}", mantissa, negative ? "-" : "", exponent);
}

} // namespace detail

/// A value for a person: 4 significant digits, "NaN", "inf".
inline std::string format_value(double v) {
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    return detail::compact_exponent(fmt::format("{:.4g}", v));
}

/// A difference from `tdbg diff --json`: the number; for null, "inf" where elements were compared
/// (a NaN or an infinity against a number, a relative difference against 0), else "undefined"
/// (nothing compared element by element: another dtype or shape, a value in one run only).
inline std::string difference_text(const std::optional<double>& v, bool elements_compared) {
    if (v) {
        return format_value(*v);
    }
    return elements_compared ? "inf" : "undefined";
}

/// A tick label on an axis whose ticks are `step` apart: just the digits that tell ticks apart.
inline std::string format_tick(double v, double step) {
    if (std::fabs(v) < std::fabs(step) * 1e-9) {
        return "0";
    }
    const double magnitude = std::max(std::fabs(v), std::fabs(step));
    if (magnitude >= 1e6 || std::fabs(step) < 1e-4) {
        const int digits = std::clamp(static_cast<int>(std::floor(std::log10(std::fabs(v)))) -
                                          static_cast<int>(std::floor(std::log10(std::fabs(step)))),
                                      0, 6);
        return detail::compact_exponent(fmt::format("{:.{}e}", v, digits));
    }
    int decimals = 0;
    for (double scaled = std::fabs(step); decimals < 10; ++decimals, scaled *= 10) {
        if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) {
            break;
        }
    }
    return fmt::format("{:.{}f}", v, decimals);
}

/// "0-35 every 5 (8 steps)", "0, 3, 7-9 (5 steps)".
inline std::string describe_steps(const std::vector<std::int64_t>& steps) {
    if (steps.empty()) {
        return "none";
    }
    if (steps.size() == 1) {
        return fmt::format("step {}", steps.front());
    }
    const std::int64_t stride = steps[1] - steps[0];
    bool regular = true;
    for (std::size_t i = 2; i < steps.size() && regular; ++i) {
        regular = steps[i] - steps[i - 1] == stride;
    }
    const std::string count = fmt::format(" ({} steps)", steps.size());
    if (regular) {
        return stride == 1 ? fmt::format("{}-{}{}", steps.front(), steps.back(), count)
                           : fmt::format("{}-{} every {}{}", steps.front(), steps.back(), stride, count);
    }
    return fmt::format("{}{}", tdbg::rules::format_steps(steps, 8), steps.size() <= 8 ? count : std::string());
}

// ---------------------------------------------------------------- colours

/// An opaque colour.
struct rgb {
    unsigned char r = 0, g = 0, b = 0;
    [[nodiscard]] std::string hex() const { return fmt::format("#{:02x}{:02x}{:02x}", r, g, b); }
};

/// The colours of the series (one per mode and worker, the same on every plot).
/// No reds: red is for rules.
inline constexpr std::array<rgb, 8> series_palette{{
    {31, 99, 214}, // blue
    {15, 157, 118}, // green
    {224, 138, 0}, // amber
    {139, 63, 217}, // violet
    {14, 165, 198}, // cyan
    {214, 51, 132}, // pink
    {122, 143, 11}, // olive
    {140, 90, 43}, // brown
}};

/// The colours of the rules' marks.
inline constexpr std::array<rgb, 4> rule_palette{{
    {214, 40, 40}, // red
    {181, 23, 158}, // magenta
    {247, 127, 0}, // orange
    {71, 85, 105}, // slate
}};

/// The colour of the marks where two runs diverge (`--diff`): no plot uses black.
inline constexpr rgb divergence_colour{0, 0, 0};

/// The number of shades of the distribution heatmaps (level 0 is an empty bin, drawn as the background).
inline constexpr std::size_t heat_levels = 16;

/// The shade of `level` (1..heat_levels): light cream for a few values to deep plum for the most.
inline rgb heat_color(std::size_t level) {
    static constexpr std::array<rgb, 5> anchors{{
        {252, 240, 200},
        {246, 194, 107},
        {232, 121, 58},
        {182, 60, 88},
        {75, 29, 95},
    }};
    const double t =
        static_cast<double>(std::clamp<std::size_t>(level, 1, heat_levels) - 1) / static_cast<double>(heat_levels - 1);
    const double where = t * static_cast<double>(anchors.size() - 1);
    const std::size_t i = std::min(static_cast<std::size_t>(where), anchors.size() - 2);
    const double f = where - static_cast<double>(i);
    auto mix = [f](unsigned char a, unsigned char b) {
        return static_cast<unsigned char>(std::lround(a + (b - a) * f));
    };
    return {mix(anchors[i].r, anchors[i + 1].r), mix(anchors[i].g, anchors[i + 1].g),
            mix(anchors[i].b, anchors[i + 1].b)};
}

/// The dash pattern of a mode's lines ("" for solid), so modes stay apart without colour too.
inline std::string_view mode_dash(std::string_view mode) {
    if (mode == "EVAL") {
        return "6 3";
    }
    if (mode == "PREDICT") {
        return "2 3";
    }
    return "";
}

// ---------------------------------------------------------------- axes

/// Round tick positions covering [lo, hi]: multiples of 1, 2 or 5 times a power of ten.
struct ticks {
    std::vector<double> at;
    double step = 1;
};

inline ticks nice_ticks(double lo, double hi, int target = 5, bool integers = false) {
    ticks out;
    if (!(hi > lo)) {
        out.at = {lo};
        return out;
    }
    const double raw = (hi - lo) / std::max(1, target);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double normal = raw / magnitude;
    out.step = (normal < 1.5 ? 1 : normal < 3 ? 2 : normal < 7 ? 5 : 10) * magnitude;
    if (integers) {
        out.step = std::max(1.0, std::round(out.step));
    }
    if (!std::isfinite(out.step) || !(out.step > 0)) { // a range too wide for a double: one tick
        out.step = 1;
        out.at = {lo};
        return out;
    }
    const double first = std::ceil(lo / out.step - 1e-9) * out.step;
    for (double v = first; v <= hi + out.step * 1e-9 && out.at.size() < 50; v += out.step) {
        out.at.push_back(std::fabs(v) < out.step * 1e-9 ? 0.0 : v);
    }
    return out;
}

/// A map from values to pixels, linear or logarithmic.
struct scale {
    double d0 = 0, d1 = 1; ///< the domain (log10 of it for a log scale)
    double r0 = 0, r1 = 1; ///< the pixels
    bool log = false;

    [[nodiscard]] double operator()(double v) const {
        const double x = log ? std::log10(v) : v;
        return d1 == d0 ? (r0 + r1) / 2 : r0 + (x - d0) / (d1 - d0) * (r1 - r0);
    }
};

/// The y scale and ticks for values in [lo, hi] (finite, lo <= hi): the domain
/// widened to whole ticks; logarithmic when `log` (then lo > 0).
inline std::pair<scale, std::vector<std::pair<double, std::string>>> value_axis(double lo, double hi, bool log,
                                                                                double pixel_bottom, double pixel_top) {
    scale s;
    s.r0 = pixel_bottom;
    s.r1 = pixel_top;
    s.log = log;
    std::vector<std::pair<double, std::string>> labels;
    if (log) {
        const double e0 = std::floor(std::log10(lo));
        const double e1 = std::ceil(std::log10(hi));
        s.d0 = e0;
        s.d1 = std::max(e1, e0 + 1);
        const double decades = s.d1 - s.d0;
        const int every = static_cast<int>(std::ceil(decades / 6));
        for (double e = s.d0; e <= s.d1 + 1e-9; e += every) {
            const double v = std::pow(10.0, e);
            const int ie = static_cast<int>(std::lround(e));
            labels.emplace_back(v, ie >= -2 && ie <= 3 ? format_tick(v, std::min(1.0, v)) : fmt::format("1e{}", ie));
            if (decades <= 2) {
                for (double m : {2.0, 5.0}) {
                    if (e + std::log10(m) < s.d1) {
                        labels.emplace_back(m * v, format_tick(m * v, std::min(1.0, v)));
                    }
                }
            }
        }
        return {s, labels};
    }
    const double magnitude = std::max(std::fabs(lo), std::fabs(hi));
    if (hi == lo) {
        const double pad = lo == 0 ? 1 : magnitude * 0.1;
        lo -= pad;
        hi += pad;
    } else if (hi - lo < magnitude * 1e-3) {
        // Rounding noise of a constant (a float32 mean wobbling in its last bits)
        // is not a trend: show at least a span of a thousandth of the value.
        const double middle = (lo + hi) / 2;
        lo = middle - magnitude * 5e-4;
        hi = middle + magnitude * 5e-4;
    }
    const ticks t = nice_ticks(lo, hi, 5);
    s.d0 = std::floor(lo / t.step + 1e-9) * t.step;
    s.d1 = std::ceil(hi / t.step - 1e-9) * t.step;
    for (double v = s.d0; v <= s.d1 + t.step * 1e-6 && labels.size() < 50; v += t.step) {
        labels.emplace_back(std::fabs(v) < t.step * 1e-9 ? 0.0 : v, format_tick(v, t.step));
    }
    return {s, labels};
}

// ---------------------------------------------------------------- rendering

namespace detail {

// Pixel coordinates with one decimal: enough for a screen, and half the bytes.
inline std::string px(double v) {
    std::string s = fmt::format("{:.1f}", v);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) {
        s.resize(s.size() - 2);
    }
    return s == "-0" ? "0" : s;
}

inline const char* const minus_sign = "\xE2\x88\x92"; // U+2212, the typographic minus on tick labels

inline std::string typeset_minus(const std::string& label) {
    return !label.empty() && label[0] == '-' ? minus_sign + label.substr(1) : label;
}

// A run of triggered steps of one rule, drawn as one band from lo to hi (in steps).
struct band {
    std::int64_t first = 0, last = 0;
    double lo = 0, hi = 0;
};

struct rule_marks {
    std::string name;
    rgb colour;
    std::vector<band> bands;
};

// The steps of the run on one shared x axis, so that every plot lines up.
struct step_axis {
    double lo = 0, hi = 1; // the domain, padded by half a typical gap
    double half_gap = 0.5; // half the usual distance between saved steps
};

inline step_axis make_step_axis(const std::vector<std::int64_t>& all_steps) {
    step_axis a;
    if (all_steps.empty()) {
        return a;
    }
    std::vector<std::int64_t> gaps;
    for (std::size_t i = 1; i < all_steps.size(); ++i) {
        gaps.push_back(all_steps[i] - all_steps[i - 1]);
    }
    double gap = 1;
    if (!gaps.empty()) {
        std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
        gap = static_cast<double>(std::max<std::int64_t>(1, gaps[gaps.size() / 2]));
    }
    a.half_gap = gap / 2;
    a.lo = static_cast<double>(all_steps.front()) - a.half_gap;
    a.hi = static_cast<double>(all_steps.back()) + a.half_gap;
    return a;
}

// Triggered steps of a rule with no step in between where it was evaluated and
// not met make one band (steps it skipped, such as steps never saved, do not
// split a band). A band reaches most of the way to the run's neighbouring steps.
inline std::vector<band> bands_of(const tdbg::rules::evaluation_result& r, const std::vector<std::int64_t>& run_steps,
                                  double half_gap) {
    std::vector<std::pair<std::int64_t, bool>> seen;
    for (auto s : r.triggered_steps) {
        seen.emplace_back(s, true);
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

inline std::string text(double x, double y, std::string_view anchor, std::string_view cls, const std::string& body) {
    return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" class=\"{}\">{}</text>", px(x), px(y), anchor, cls,
                       body);
}

// The x axis at pixel row `y` from `x0` to `x1`, with step ticks.
inline std::string step_ticks(const scale& x, double x0, double x1, double y, bool grid_from = false,
                              double grid_top = 0) {
    std::string out =
        fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", px(x0), px(y), px(x1), px(y));
    const int target = std::max(2, static_cast<int>((x1 - x0) / 70));
    const ticks t = nice_ticks(x.d0, x.d1, target, true);
    for (double v : t.at) {
        const double px_x = x(v);
        if (px_x < x0 - 0.5 || px_x > x1 + 0.5) {
            continue;
        }
        if (grid_from) {
            fmt::format_to(std::back_inserter(out), "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                           px(px_x), px(grid_top), px(px_x), px(y));
        }
        fmt::format_to(std::back_inserter(out), "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", px(px_x),
                       px(y), px(px_x), px(y + 4));
        out += text(px_x, y + 15, "middle", "tick", typeset_minus(format_tick(v, t.step)));
    }
    return out;
}

// Translucent bands over the plot where rules triggered, and a strip of solid
// marks above it (one row per rule) that stays visible over any plot.
inline std::string rule_overlay(const context& ctx, const scale& x, double plot_left, double plot_right,
                                double strip_top, double plot_top, double plot_bottom, bool bands_in_plot) {
    std::string out;
    for (std::size_t i = 0; i < ctx.rules.size(); ++i) {
        const auto& r = ctx.rules[i];
        const double row = strip_top + 6.0 * static_cast<double>(i);
        for (const band& b : r.bands) {
            double a = std::max(plot_left, x(b.lo));
            double z = std::min(plot_right, x(b.hi));
            if (z - a < 3) { // a single step on a long axis must still show
                const double mid = (a + z) / 2;
                a = mid - 1.5;
                z = mid + 1.5;
            }
            const std::string what =
                b.first == b.last ? fmt::format("{} triggered at step {}", escape(r.name), b.first)
                                  : fmt::format("{} triggered at steps {}-{}", escape(r.name), b.first, b.last);
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

} // namespace detail

/// One small chart: a reduction of a tensor over steps, a line per mode and worker.
inline std::string render_line_chart(const reduction_plot& plot, const detail::context& ctx, bool wide = false) {
    using detail::px;
    const double width = wide ? 720 : 360, height = 200;
    const double left = 54, right = 12, bottom = 28;
    const double strip = detail::rule_strip_height(ctx);
    const double top = 10 + strip;

    double lo = INFINITY, hi = -INFINITY;
    std::size_t finite = 0, non_finite = 0;
    for (const auto& s : plot.lines) {
        for (const auto& p : s.points) {
            if (std::isfinite(p.value)) {
                lo = std::min(lo, p.value);
                hi = std::max(hi, p.value);
                ++finite;
            } else {
                ++non_finite;
            }
        }
    }
    // Magnitudes spanning three decades or more (norms, variances, a loss
    // falling from 1e3) read better on a log scale; only positive data allow it.
    const bool log = finite > 1 && lo > 0 && hi / lo >= 1000;
    std::string caption = fmt::format("<figcaption><b>{}</b>", escape(plot.reduction));
    if (log) {
        caption += " <span class=\"hint\">log scale</span>";
    }
    caption += "</figcaption>";

    std::string svg = fmt::format(
        "<svg class=\"plot line-plot\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} over steps\">", px(width),
        px(height), escape(plot.reduction));
    const double x0 = left, x1 = width - right, y0 = height - bottom, y1 = top;
    fmt::format_to(std::back_inserter(svg), "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                   px(x0), px(y1), px(x1 - x0), px(y0 - y1));
    scale x{ctx.steps.lo, ctx.steps.hi, x0, x1, false};
    if (finite == 0) {
        lo = 0;
        hi = 1;
    }
    const auto [y, labels] = value_axis(lo, hi, log, y0, y1);
    for (const auto& [v, label] : labels) {
        const double py = y(v);
        fmt::format_to(std::back_inserter(svg), "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", px(x0),
                       px(py), px(x1), px(py));
        svg += detail::text(x0 - 5, py + 3.5, "end", "tick", detail::typeset_minus(label));
    }
    svg += detail::rule_overlay(ctx, x, x0, x1, 6, y1, y0, true);
    svg += detail::step_ticks(x, x0, x1, y0);
    fmt::format_to(std::back_inserter(svg), "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", px(x0),
                   px(y1), px(x0), px(y0));
    if (finite == 0) {
        svg += detail::text((x0 + x1) / 2, (y0 + y1) / 2, "middle", "empty",
                            non_finite ? "no finite values" : "no values");
    }

    // The data, clipped to the plot area (and a dot's radius around it): nothing
    // drawn can stray over the axes whatever the values.
    fmt::format_to(std::back_inserter(svg),
                   "<svg x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" viewBox=\"{0} {1} {2} {3}\" overflow=\"hidden\">",
                   px(x0 - 4), px(y1 - 4), px(x1 - x0 + 8), px(y0 - y1 + 8));
    // The data for the hover read-out: "step|label|value;..." per series, in the order drawn.
    std::string hover;
    for (const auto& s : plot.lines) {
        const rgb colour = detail::colour_of(ctx, s);
        const std::string label = detail::series_label(ctx, s);
        std::string hover_label = label; // '|' and ';' separate the read-out's fields
        std::replace(hover_label.begin(), hover_label.end(), '|', '/');
        std::replace(hover_label.begin(), hover_label.end(), ';', ',');
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
        const std::string dash(mode_dash(s.mode));
        if (!path.empty()) {
            fmt::format_to(std::back_inserter(svg), "<path class=\"line\" d=\"{}\" stroke=\"{}\"{}><title>{}</title></path>",
                           path, colour.hex(),
                           dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash), escape(label));
        }
        // Dots where a line alone would hide the data: few points, or a point with no neighbour.
        const bool dots = s.points.size() <= 60;
        for (std::size_t i = 0; i < s.points.size(); ++i) {
            const auto& p = s.points[i];
            const double px_x = x(static_cast<double>(p.step));
            const std::string what = fmt::format("{}, step {} ({} {}): {} = {}", escape(label), p.step, escape(s.mode),
                                                 p.mode_step, escape(plot.reduction), format_value(p.value));
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

/// The distribution of a tensor's values over steps: steps across, value bins
/// up, the share of the step's values in each bin as a shade.
inline std::string render_distribution(const distribution& d, const detail::context& ctx, double width = 1080) {
    using detail::px;
    const double plot_height = std::clamp(static_cast<double>(d.bins) * 5.0, 120.0, 260.0);
    std::size_t non_finite = 0;
    double max_share = 0;
    for (const auto& c : d.columns) {
        non_finite += c.non_finite;
        for (auto n : c.counts) {
            if (c.finite > 0) {
                max_share = std::max(max_share, static_cast<double>(n) / static_cast<double>(c.finite));
            }
        }
    }
    const double left = 64, right = 86, bottom = 28;
    const double strip = detail::rule_strip_height(ctx);
    const double nf_row = non_finite > 0 ? 14 : 0;
    const double top = 8 + strip + nf_row;
    const double height = top + plot_height + bottom;
    const double x0 = left, x1 = width - right, y0 = top + plot_height, y1 = top;

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

    std::string svg = fmt::format(
        "<svg class=\"plot heatmap\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"distribution of values over steps\">",
        px(width), px(height));
    fmt::format_to(std::back_inserter(svg), "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                   px(x0), px(y1), px(x1 - x0), px(y0 - y1));
    const scale x{ctx.steps.lo, ctx.steps.hi, x0, x1, false};
    const auto labels = value_axis(d.low, d.high, false, y0, y1).second;
    // The bins cover [low, high] exactly: the axis is that interval, not widened to round ticks.
    scale bin_y{d.low, d.high, y0, y1, false};
    if (d.high <= d.low) {
        bin_y.d1 = d.low + 1;
    }
    const double bin_height = (y0 - y1) / static_cast<double>(std::max<std::size_t>(1, d.bins));

    // Each column reaches halfway to its neighbours, but no further than half the
    // usual distance between columns: a lone step is not drawn as a long stretch.
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
    // One path per shade keeps the file small: thousands of cells, a few dozen elements.
    std::vector<std::string> by_level(heat_levels + 1);
    std::string nf_cells;
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
        if (c.non_finite > 0) {
            const double share = static_cast<double>(c.non_finite) / static_cast<double>(c.non_finite + c.finite);
            fmt::format_to(std::back_inserter(nf_cells),
                           "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>", px(a),
                           px(y1 - nf_row + 2), px(w), px(nf_row - 4), rule_palette[0].hex(), px(0.35 + 0.65 * share));
        }
    }
    for (std::size_t level = 1; level <= heat_levels; ++level) {
        if (!by_level[level].empty()) {
            fmt::format_to(std::back_inserter(svg), "<path d=\"{}\" fill=\"{}\" shape-rendering=\"crispEdges\"/>",
                           by_level[level], heat_color(level).hex());
        }
    }
    if (non_finite > 0) {
        svg += nf_cells;
        svg += detail::text(x0 - 5, y1 - nf_row / 2 + 3.5, "end", "tick nf-label", "NaN/inf");
    }
    for (const auto& [v, label] : labels) {
        const double py = bin_y(v);
        if (py < y1 - 0.5 || py > y0 + 0.5) {
            continue;
        }
        fmt::format_to(std::back_inserter(svg), "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                       px(x0 - 4), px(py), px(x0), px(py));
        svg += detail::text(x0 - 6, py + 3.5, "end", "tick", detail::typeset_minus(label));
    }
    svg += detail::rule_overlay(ctx, x, x0, x1, 4, y1, y0, false);
    svg += detail::divergence_marks(ctx, x, x0, x1, y1 - nf_row, y0);
    svg += detail::step_ticks(x, x0, x1, y0);
    fmt::format_to(std::back_inserter(svg), "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", px(x0),
                   px(y1), px(x0), px(y0));
    if (d.columns.empty()) {
        svg += detail::text((x0 + x1) / 2, (y0 + y1) / 2, "middle", "empty", "no values");
    }
    // A read-out per column (the browser shows an SVG <title> on hover).
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
    // The key: the shades from few to most, labelled with the shares they stand for.
    const double kx = x1 + 22, kw = 12;
    const double kh = (y0 - y1) / static_cast<double>(heat_levels);
    for (std::size_t level = 1; level <= heat_levels; ++level) {
        fmt::format_to(std::back_inserter(svg), "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", px(kx),
                       px(y0 - static_cast<double>(level) * kh), px(kw), px(kh + 0.3), heat_color(level).hex());
    }
    fmt::format_to(std::back_inserter(svg), "<rect class=\"key-frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                   px(kx), px(y1), px(kw), px(y0 - y1));
    svg += detail::text(kx + kw + 4, y1 + 8, "start", "tick", fmt::format("{}%", format_value(max_share * 100)));
    svg += detail::text(kx + kw + 4, y0, "start", "tick", "0%");
    svg += "</svg>";
    return fmt::format("<figure class=\"chart wide\">{}{}</figure>", caption, svg);
}

/// The overview: where each mode saved steps, and for each rule the steps where it
/// triggered (coloured), did not (grey) or could not be evaluated (light).
inline std::string render_timeline(const document& doc, const detail::context& ctx) {
    using detail::px;
    constexpr double width = 1080, row = 22;
    const double left = 190, right = 20, bottom = 30, top = 6;
    // A row per mode of the run, or per run and mode when the report compares runs.
    std::vector<std::pair<std::string, const mode_steps*>> step_rows;
    if (doc.runs.empty()) {
        for (const auto& m : doc.modes) {
            step_rows.emplace_back(m.mode, &m);
        }
    }
    for (const auto& r : doc.runs) {
        for (const auto& m : r.modes) {
            step_rows.emplace_back(fmt::format("{} \xC2\xB7 {}", r.name, m.mode), &m);
        }
    }
    const std::size_t rows = step_rows.size() + doc.rules.size();
    const double height = top + row * static_cast<double>(rows) + bottom;
    const double x0 = left, x1 = width - right, y0 = height - bottom;
    const scale x{ctx.steps.lo, ctx.steps.hi, x0, x1, false};
    std::string svg = fmt::format("<svg class=\"plot timeline\" viewBox=\"0 0 {} {}\" role=\"img\" "
                                  "aria-label=\"saved steps and rule results over steps\">",
                                  px(width), px(height));
    svg += detail::step_ticks(x, x0, x1, y0, true, top);
    auto label = [&](double cy, const std::string& name, const std::string& cls) {
        std::string shown = name;
        if (shown.size() > 28) { // the full name stays in the tooltip
            std::size_t cut = 26;
            while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0U) == 0x80U) {
                --cut; // not inside a UTF-8 sequence
            }
            shown = shown.substr(0, cut) + "\xE2\x80\xA6";
        }
        return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"{}\">{}<title>{}</title></text>",
                           px(x0 - 10), px(cy + 4), cls, escape(shown), escape(name));
    };
    double cy = top + row / 2;
    for (const auto& [row_name, m] : step_rows) {
        svg += label(cy, fmt::format("{} steps", row_name), "row-label");
        std::string path;
        for (auto s : m->global_steps) {
            fmt::format_to(std::back_inserter(path), "M{} {}v10", px(x(static_cast<double>(s))), px(cy - 5));
        }
        fmt::format_to(std::back_inserter(svg), "<path class=\"step-ticks\" d=\"{}\"><title>{}: {}</title></path>", path,
                       escape(row_name), escape(describe_steps(m->global_steps)));
        cy += row;
    }
    for (std::size_t i = 0; i < doc.rules.size(); ++i) {
        const auto& r = doc.rules[i];
        const std::string rule_name = detail::rule_label(doc, i);
        svg += label(cy, rule_name, "row-label");
        std::string evaluated, skipped;
        for (auto s : r.not_triggered_steps) {
            fmt::format_to(std::back_inserter(evaluated), "M{} {}v8", px(x(static_cast<double>(s))), px(cy - 4));
        }
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
                    fmt::format_to(std::back_inserter(skipped), "M{} {}v6", px(x(static_cast<double>(s))), px(cy - 3));
                    if (s == run.last) {
                        break;
                    }
                }
            } else {
                fmt::format_to(std::back_inserter(skipped), "M{} {}H{}", px(from), px(cy),
                               px(x(static_cast<double>(run.last))));
            }
        }
        if (!evaluated.empty()) {
            fmt::format_to(std::back_inserter(svg),
                           "<path class=\"eval-ticks\" d=\"{}\"><title>{}: not triggered at {} steps</title></path>",
                           evaluated, escape(rule_name), r.not_triggered_steps.size());
        }
        if (!skipped.empty()) {
            fmt::format_to(std::back_inserter(svg),
                           "<path class=\"skip-ticks\" d=\"{}\"><title>{}: skipped at {}</title></path>", skipped,
                           escape(rule_name), escape(tdbg::rules::format_steps(skipped_steps)));
        }
        const auto found = std::find_if(ctx.rules.begin(), ctx.rules.end(),
                                        [&](const detail::rule_marks& m) { return m.name == rule_name; });
        if (found != ctx.rules.end()) {
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
        }
        if (r.triggered_steps.empty() && r.not_triggered_steps.empty()) {
            svg += detail::text(x0 + 6, cy + 4, "start", "empty-row",
                                r.error.empty() ? "no step evaluated" : "could not be evaluated");
        }
        cy += row;
    }
    svg += detail::divergence_marks(ctx, x, x0, x1, top, y0);
    svg += "</svg>";
    return fmt::format("<figure class=\"chart wide\">{}</figure>", svg);
}

namespace detail {

inline std::string status_badge(tdbg::rules::evaluation_status s) {
    const char* cls = s == tdbg::rules::evaluation_status::issues_found      ? "bad"
                      : s == tdbg::rules::evaluation_status::no_issues_found ? "good"
                                                                             : "error";
    return "<span class=\"badge " + std::string(cls) + "\">" + std::string(tdbg::rules::status_name(s)) + "</span>";
}

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
        std::string skipped;
        for (const auto& [reason, steps] : r.skipped_steps) {
            skipped += (skipped.empty() ? "" : "<br>") + std::to_string(steps.size()) + " <span class=\"hint\">" +
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
    auto consider = [&](const diverging_tensor& t) {
        if ((t.tensor == name || t.tensor_b == name) && (!step || t.step < *step)) {
            step = t.step;
        }
    };
    for (const auto& t : doc.diff->tensors) {
        consider(t);
    }
    if (doc.diff->first) {
        consider(*doc.diff->first);
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
    auto tensor_names = [](const diverging_tensor& t) {
        return escape(t.tensor) + (t.tensor_b == t.tensor || t.tensor_b.empty()
                                       ? std::string()
                                       : " <span class=\"hint\">(" + escape(t.tensor_b) + " in B)</span>");
    };
    if (d.first) {
        const auto& f = *d.first;
        std::string index;
        for (const auto i : f.index) {
            index += (index.empty() ? "" : ", ") + std::to_string(i);
        }
        fact("first divergence",
             fmt::format("<b>step {}</b> ({} {}), {}{}", f.step, escape(f.mode), f.mode_step, tensor_names(f),
                         f.worker.empty() ? std::string() : ", " + escape(f.worker)));
        fact("difference",
             fmt::format("max abs {}, max rel {}{}", escape(difference_text(f.max_abs_diff, f.elements_compared)),
                         escape(difference_text(f.max_rel_diff, f.elements_compared)),
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
                                escape(t.mode), t.mode_step);
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
        out += "<span class=\"key\"><span class=\"swatch\" style=\"background:" + r.colour.hex() + "\"></span>" +
               escape(r.name) + " triggered</span>";
    }
    return out.empty() ? out : "<div class=\"legend\">" + out + "</div>";
}

inline const char* const stylesheet = R"css(
:root{--ink:#1d2330;--muted:#5b6475;--line:#e3e6ec;--card:#fff;--page:#f4f5f8}
*{box-sizing:border-box}
body{margin:0;background:var(--page);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans","Liberation Sans",Arial,sans-serif}
main{max-width:1160px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:0 0 2px;word-break:break-all}
h3{font-size:15px;margin:0 0 10px}
.sub{color:var(--muted);margin:0 0 14px}
section.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:0 0 16px;box-shadow:0 1px 2px rgba(20,30,50,.05)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 16px;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;word-break:break-all}
.hint{color:var(--muted);font-weight:normal;font-size:12px}
.notes{margin:8px 0 0;padding-left:18px;color:var(--muted);font-size:13px}
nav.index{columns:3 260px;column-gap:20px;font-size:13px}
nav.index a{display:block;color:#1f4fa8;text-decoration:none;word-break:break-all;padding:1px 0}
nav.index a:hover{text-decoration:underline}
.flag{display:inline-block;font-size:10px;font-weight:600;color:#fff;background:#d62828;border-radius:3px;padding:0 4px;margin-left:4px;vertical-align:1px}
.flag.diverges{background:#000}
.sub{white-space:pre-line}
.grid.runs{grid-template-columns:repeat(auto-fit,minmax(420px,1fr))}
svg.plot .divergence-label{font-size:10px;font-weight:600;fill:#000;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
section.diff{border-left:4px solid #000;padding:8px 12px;margin:12px 0 0;background:#fafafa}
section.diff h3{margin:0 0 6px}
table.runs{border-collapse:collapse;font-size:13px}
table.runs th{text-align:left;color:var(--muted);font-weight:600;padding:2px 10px 2px 0}
table.runs td{padding:2px 10px 2px 0;vertical-align:top;white-space:nowrap}
table.runs td.path{white-space:normal;word-break:break-all}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:10px 14px;margin-top:8px}
.grid.single{grid-template-columns:minmax(0,720px)}
figure.chart{margin:0;position:relative}
figure.chart.wide{margin-top:10px}
figure.chart figcaption{font-size:13px;margin:0 0 2px}
svg.plot{display:block;width:100%;height:auto}
svg.plot .plot-area{fill:#fbfbfd;stroke:none}
svg.plot .grid{stroke:#e8eaef;stroke-width:1}
svg.plot .axis{stroke:#8a92a3;stroke-width:1}
svg.plot .tick{font-size:10.5px;fill:#5b6475}
svg.plot .row-label{font-size:12px;fill:var(--ink)}
svg.plot .empty,svg.plot .empty-row{font-size:12px;fill:#8a92a3}
svg.plot .line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
svg.plot .nonfinite{stroke-width:2;fill:none}
svg.plot .rule-band{fill-opacity:.13}
svg.plot .hit{fill:#000;fill-opacity:0}
svg.plot .hit:hover{fill-opacity:.08}
svg.plot .key-frame{fill:none;stroke:#c9ced8}
svg.plot .step-ticks{stroke:#6b7385;stroke-width:1.5}
svg.plot .eval-ticks{stroke:#b9bfcb;stroke-width:1.5}
svg.plot .skip-ticks{stroke:#dde0e6;stroke-width:1.5}
svg.plot .cursor{stroke:#9aa1b0;stroke-width:1;stroke-dasharray:3 2}
svg.plot .nf-label{fill:#b3261e}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--muted);margin:6px 0 2px}
.key{display:inline-flex;align-items:center;gap:5px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px}
.readout{position:absolute;pointer-events:none;background:rgba(255,255,255,.96);border:1px solid var(--line);border-radius:4px;padding:3px 6px;font-size:11.5px;line-height:1.35;box-shadow:0 2px 6px rgba(20,30,50,.12);display:none;white-space:nowrap;z-index:2}
table.rules{border-collapse:collapse;width:100%;font-size:13px;margin-top:8px}
table.rules th{text-align:left;color:var(--muted);font-weight:600;border-bottom:1px solid var(--line);padding:5px 8px}
table.rules td{border-bottom:1px solid var(--line);padding:6px 8px;vertical-align:top}
table.rules .num{text-align:right}
table.rules td.steps,table.rules td.params{overflow-wrap:anywhere}
table.rules .param{white-space:nowrap}
.badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;font-weight:600;white-space:nowrap}
.badge.good{background:#e3f4ea;color:#1c6b3c}
.badge.bad{background:#fde2e1;color:#a61b1b}
.badge.error{background:#fff1d6;color:#8a5300}
.error-text{color:#8a5300;font-size:12px;margin-top:3px;word-break:break-word}
.reason{color:var(--muted);font-size:12px;margin-top:2px;word-break:break-word}
ul.fired{margin:0 0 10px;padding-left:18px;color:#9b1c1c;font-size:13px;word-break:break-word}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:20px}
)css";

// Hovering a line chart shows every series' value at the nearest saved step.
inline const char* const script = R"js(
document.querySelectorAll('figure.chart[data-hover]').forEach(function (fig) {
  var rows = fig.getAttribute('data-hover').split(';').filter(Boolean).map(function (r) {
    var f = r.split('|'); return {step: +f[0], label: f[1], value: f[2], colour: f[3]};
  });
  if (!rows.length) return;
  var svg = fig.querySelector('svg'), cursor = fig.querySelector('.cursor'), box = fig.querySelector('.readout');
  var x0 = +fig.dataset.x0, x1 = +fig.dataset.x1, lo = +fig.dataset.lo, hi = +fig.dataset.hi, w = +fig.dataset.w;
  svg.addEventListener('mousemove', function (e) {
    var rect = svg.getBoundingClientRect(), k = rect.width / w;
    var step = lo + ((e.clientX - rect.left) / k - x0) / (x1 - x0) * (hi - lo);
    var best = rows[0].step;
    rows.forEach(function (r) { if (Math.abs(r.step - step) < Math.abs(best - step)) best = r.step; });
    var at = rows.filter(function (r) { return r.step === best; });
    var px = x0 + (best - lo) / (hi - lo) * (x1 - x0);
    cursor.setAttribute('x1', px); cursor.setAttribute('x2', px); cursor.setAttribute('visibility', 'visible');
    box.textContent = '';
    var head = document.createElement('div'); head.textContent = 'step ' + best; head.style.fontWeight = '600'; box.appendChild(head);
    at.forEach(function (r) {
      var line = document.createElement('div'), dot = document.createElement('span');
      dot.className = 'swatch'; dot.style.background = r.colour; dot.style.width = dot.style.height = '8px'; dot.style.marginRight = '4px';
      line.appendChild(dot); line.appendChild(document.createTextNode(r.label + ': ' + r.value)); box.appendChild(line);
    });
    box.style.display = 'block';
    var left = px * k + 12; if (left + box.offsetWidth > rect.width) left = px * k - box.offsetWidth - 12;
    box.style.left = left + 'px'; box.style.top = (rect.top - fig.getBoundingClientRect().top + 14) + 'px';
  });
  svg.addEventListener('mouseleave', function () { cursor.setAttribute('visibility', 'hidden'); box.style.display = 'none'; });
});
)js";

} // namespace detail

/// The complete page.
inline std::string render_html(const document& doc) {
    detail::context ctx;
    std::vector<std::int64_t> all_steps;
    for (const auto& m : doc.modes) {
        all_steps.insert(all_steps.end(), m.global_steps.begin(), m.global_steps.end());
    }
    std::sort(all_steps.begin(), all_steps.end());
    all_steps.erase(std::unique(all_steps.begin(), all_steps.end()), all_steps.end());
    ctx.steps = detail::make_step_axis(all_steps);
    ctx.several_workers = doc.workers.size() > 1;
    ctx.several_runs = !doc.runs.empty();
    if (doc.diff && doc.diff->first) {
        ctx.first_divergence = doc.diff->first->step;
    }
    // One colour per (mode, worker) for the whole page, in mode then worker order; when
    // runs are compared, one per (run, worker), in the runs' order, the modes told by dashes.
    const auto rank = detail::mode_rank;
    auto run_rank = [&](const std::string& name) {
        return static_cast<std::size_t>(
            std::find_if(doc.runs.begin(), doc.runs.end(), [&](const run_summary& r) { return r.name == name; }) -
            doc.runs.begin());
    };
    std::vector<detail::series_key> keys;
    for (const auto& t : doc.tensors) {
        for (const auto& p : t.plots) {
            for (const auto& s : p.lines) {
                keys.emplace_back(s.run, s.mode, s.worker);
            }
        }
    }
    std::sort(keys.begin(), keys.end(), [&](const detail::series_key& a, const detail::series_key& b) {
        const auto& [run_a, mode_a, worker_a] = a;
        const auto& [run_b, mode_b, worker_b] = b;
        return ctx.several_runs ? std::make_tuple(run_rank(run_a), worker_a, rank(mode_a)) <
                                      std::make_tuple(run_rank(run_b), worker_b, rank(mode_b))
                                : std::make_pair(rank(mode_a), worker_a) < std::make_pair(rank(mode_b), worker_b);
    });
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::size_t colour = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const bool same_colour = ctx.several_runs && i > 0 && std::get<0>(keys[i]) == std::get<0>(keys[i - 1]) &&
                                 std::get<2>(keys[i]) == std::get<2>(keys[i - 1]);
        colour += i > 0 && !same_colour ? 1 : 0;
        ctx.series_colour[keys[i]] = colour;
    }
    for (std::size_t i = 0; i < doc.rules.size(); ++i) {
        if (!doc.rules[i].triggered_steps.empty()) {
            ctx.rules.push_back(detail::rule_marks{detail::rule_label(doc, i),
                                                   rule_palette[ctx.rules.size() % rule_palette.size()],
                                                   detail::bands_of(doc.rules[i], all_steps, ctx.steps.half_gap)});
        }
    }

    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                      "<title>" +
                      escape(doc.title) + "</title><style>" + detail::stylesheet + "</style></head><body><main>\n";
    out += "<section class=\"card\" id=\"run\"><h1>" + escape(doc.title) + "</h1><dl class=\"facts\">";
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
        fact("runs", detail::runs_table(doc, ctx));
    }
    std::string collections;
    for (const auto& c : doc.collections) {
        collections += (collections.empty() ? "" : ", ") + escape(c);
    }
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
    out += "</dl>";
    if (doc.diff) {
        out += detail::diff_box(*doc.diff);
    }
    if (!doc.notes.empty()) {
        out += "<ul class=\"notes\">";
        for (const auto& n : doc.notes) {
            out += "<li>" + escape(n) + "</li>";
        }
        out += "</ul>";
    }
    out += "</section>\n";

    if (!all_steps.empty()) {
        out += "<section class=\"card\" id=\"overview\"><h3>Steps" +
               std::string(doc.rules.empty() ? "" : " and rules") + "</h3>";
        if (!doc.rules.empty()) {
            out += detail::rules_table(doc, ctx);
        }
        out += render_timeline(doc, ctx) + "</section>\n";
    } else if (!doc.rules.empty()) {
        out +=
            "<section class=\"card\" id=\"overview\"><h3>Rules</h3>" + detail::rules_table(doc, ctx) + "</section>\n";
    }

    if (doc.tensors.size() > 1) {
        out += "<section class=\"card\"><h3>Tensors</h3><nav class=\"index\">";
        for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
            out += "<a href=\"#tensor-" + std::to_string(i) + "\">" + escape(doc.tensors[i].name) +
                   (doc.tensors[i].has_non_finite ? "<span class=\"flag\">NaN/inf</span>" : "") +
                   (detail::divergence_of(doc, doc.tensors[i].name) ? "<span class=\"flag diverges\">differs</span>"
                                                                     : "") +
                   "</a>";
        }
        out += "</nav></section>\n";
    }

    for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
        const auto& t = doc.tensors[i];
        ctx.tensor_divergence = detail::divergence_of(doc, t.name);
        out += "<section class=\"card tensor\" id=\"tensor-" + std::to_string(i) + "\" data-tensor=\"" +
               escape(t.name) + "\"><h2>" + escape(t.name) +
               (t.has_non_finite ? "<span class=\"flag\">NaN/inf</span>" : "") +
               (ctx.tensor_divergence
                    ? fmt::format("<span class=\"flag diverges\">differs from step {}</span>", *ctx.tensor_divergence)
                    : std::string()) +
               "</h2>";
        out += "<p class=\"sub\">" + escape(t.summary) + "</p>";
        out += detail::tensor_reasons(doc, t.name);
        out += detail::legend(t, ctx);
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
        if (!t.notes.empty()) {
            out += "<ul class=\"notes\">";
            for (const auto& n : t.notes) {
                out += "<li>" + escape(n) + "</li>";
            }
            out += "</ul>";
        }
        out += "</section>\n";
    }
    out +=
        "<footer>" + escape(doc.generated) + "</footer></main><script>" + detail::script + "</script></body></html>\n";
    return out;
}

} // namespace tdbg::cli::report
