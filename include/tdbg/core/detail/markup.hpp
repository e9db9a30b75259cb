#pragma once
/// \file
/// The one escape of text for markup (the JUnit report, the HTML report, S3's
/// XML requests): safe in XML and HTML character data and in quoted attribute
/// values.

#include <cstddef>
#include <string>
#include <string_view>

#include "tdbg/core/detail/utf8.hpp"

namespace tdbg::detail {

/// `text` with & < > " ' as character references, and every character XML 1.0 cannot hold
/// as U+FFFD, so that a strict XML parser reads the document (and browsers an SVG): the C0
/// control characters but tab, newline and carriage return, the noncharacters U+FFFE and
/// U+FFFF, and each byte that does not begin a valid UTF-8 character (surrogates included).
/// Everything else is kept as it is.
[[nodiscard]] inline std::string markup_escape(std::string_view text) {
    constexpr std::string_view replacement = "&#xFFFD;";
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (static_cast<unsigned char>(c) >= 0x80) {
            const utf8_char ch = decode_utf8(text, i);
            if (ch.length == 0 || ch.code_point == 0xFFFE || ch.code_point == 0xFFFF) {
                out += replacement;
                i += ch.length == 0 ? 1 : ch.length;
            } else {
                out += text.substr(i, ch.length);
                i += ch.length;
            }
            continue;
        }
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                out += replacement;
            } else {
                out += c;
            }
        }
        ++i;
    }
    return out;
}

} // namespace tdbg::detail
