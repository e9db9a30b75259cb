#pragma once
// The SVG primitives of the page of `tdbg report`: pixel coordinates as text, a
// text element, a line and a rectangle.

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tdbg::cli::report::detail {

// Pixel coordinates with one decimal: enough for a screen, and half the bytes.
inline std::string px(double v) {
    std::string s = fmt::format("{:.1f}", v);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) {
        s.resize(s.size() - 2);
    }
    return s == "-0" ? "0" : s;
}

// A text element at (x, y); `body` is markup (escaped by the caller).
inline std::string text(double x, double y, std::string_view anchor, std::string_view cls, const std::string& body) {
    return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" class=\"{}\">{}</text>", px(x), px(y), anchor, cls,
                       body);
}

// A line of class `cls` from (x1, y1) to (x2, y2).
inline std::string line(std::string_view cls, double x1, double y1, double x2, double y2) {
    return fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", cls, px(x1), px(y1), px(x2),
                       px(y2));
}

// A rectangle of class `cls` with its top left corner at (x, y).
inline std::string rect(std::string_view cls, double x, double y, double width, double height) {
    return fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", cls, px(x), px(y),
                       px(width), px(height));
}

} // namespace tdbg::cli::report::detail
