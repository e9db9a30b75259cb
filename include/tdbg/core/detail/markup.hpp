#pragma once
/// \file
/// The one escape of text for markup (the JUnit report, the HTML report, S3's
/// XML requests): safe in XML and HTML character data and in quoted attribute
/// values.

#include <string>
#include <string_view>

namespace tdbg::detail {

/// `text` with & < > " ' as character references, and the C0 control
/// characters XML 1.0 cannot hold (all but tab, newline and carriage return)
/// as U+FFFD (some browsers refuse an SVG that holds them).
[[nodiscard]] inline std::string markup_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    for (const char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                out += "&#xFFFD;";
            } else {
                out += c;
            }
        }
    }
    return out;
}

} // namespace tdbg::detail
