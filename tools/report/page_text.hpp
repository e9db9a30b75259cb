#pragma once
// The text of the page of `tdbg report`: escaping, values and differences for a
// person, tick labels, and lists of steps.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tdbg/core/text.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "../step_text.hpp"

namespace tdbg::cli::report {

/// `text` made safe for HTML and SVG text and for quoted attribute values.
inline std::string escape(std::string_view text) { return tdbg::markup_escape(text); }

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
    if (auto progression = tdbg::cli::describe_progression(steps)) {
        return *std::move(progression);
    }
    return fmt::format("{}{}", tdbg::rules::format_steps(steps, 8),
                       steps.size() <= 8 ? fmt::format(" ({} steps)", steps.size()) : std::string());
}

namespace detail {

inline const char* const minus_sign = "\xE2\x88\x92"; // U+2212, the typographic minus on tick labels

inline std::string typeset_minus(const std::string& label) {
    return !label.empty() && label[0] == '-' ? minus_sign + label.substr(1) : label;
}

} // namespace detail

} // namespace tdbg::cli::report
