#pragma once
// The axes of the page of `tdbg report`: round ticks, the map from values to
// pixels, the value axis of a chart, and the step axis every chart shares.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "page_text.hpp"

namespace tdbg::cli::report {

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

namespace detail {

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

} // namespace detail

} // namespace tdbg::cli::report
