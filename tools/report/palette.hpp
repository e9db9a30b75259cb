#pragma once
// The colours of the page of `tdbg report`: the series, the rules' marks, the
// divergence marks, the shades of the distribution heatmaps, and the dashes that
// tell modes apart without colour.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tdbg::cli::report {

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

} // namespace tdbg::cli::report
