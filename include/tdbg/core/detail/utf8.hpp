#pragma once
/// \file
/// The one UTF-8 check of the library, strict as JSON and Python strings are:
/// no overlong forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF,
/// no truncated sequence. Tensor names, collection names and every JSON string
/// tdbg reads or writes go through it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tdbg::detail {

/// One decoded character: its code point and how many bytes it took (0: invalid).
struct utf8_char {
    std::uint32_t code_point = 0;
    std::size_t length = 0;
};

/// Decodes the character starting at `text[i]` (which must be in range).
[[nodiscard]] constexpr utf8_char decode_utf8(std::string_view text, std::size_t i) noexcept {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
        return {c, 1};
    }
    std::size_t length = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0U) == 0xC0U) {
        length = 2;
        cp = c & 0x1FU;
        min = 0x80;
    } else if ((c & 0xF0U) == 0xE0U) {
        length = 3;
        cp = c & 0x0FU;
        min = 0x800;
    } else if ((c & 0xF8U) == 0xF0U) {
        length = 4;
        cp = c & 0x07U;
        min = 0x10000;
    } else {
        return {};
    }
    if (text.size() - i < length) {
        return {};
    }
    for (std::size_t k = 1; k < length; ++k) {
        const auto next = static_cast<unsigned char>(text[i + k]);
        if ((next & 0xC0U) != 0x80U) {
            return {};
        }
        cp = (cp << 6U) | (next & 0x3FU);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return {};
    }
    return {cp, length};
}

/// The offset of the first byte of `text` that does not begin a valid UTF-8
/// character, or std::string_view::npos when all of it is valid.
[[nodiscard]] constexpr std::size_t invalid_utf8_at(std::string_view text) noexcept {
    for (std::size_t i = 0; i < text.size();) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        const utf8_char ch = decode_utf8(text, i);
        if (ch.length == 0) {
            return i;
        }
        i += ch.length;
    }
    return std::string_view::npos;
}

/// Appends code point `cp` (a valid scalar value) to `out` as UTF-8.
template <class String>
void append_utf8(String& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0U | (cp >> 6U)));
        out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0U | (cp >> 12U)));
        out.push_back(static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU)));
        out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    } else {
        out.push_back(static_cast<char>(0xF0U | (cp >> 18U)));
        out.push_back(static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU)));
        out.push_back(static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU)));
        out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
    }
}

/// True for the characters that reorder the text around them when shown (Unicode's bidirectional
/// formatting characters): ALM U+061C, LRM and RLM U+200E..U+200F, the embeddings and overrides
/// U+202A..U+202E, the isolates U+2066..U+2069. A name holding U+202E reads backwards after it.
[[nodiscard]] constexpr bool is_bidi_control(std::uint32_t cp) noexcept {
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/// `text` as it may be printed for a person (a terminal, a log): C0 control bytes, DEL, the C1
/// controls U+0080..U+009F, the bidirectional controls (is_bidi_control) and bytes that are not
/// UTF-8 become \\xNN escapes, a byte each, so that a name read from a run cannot move the
/// cursor, rewrite a line, ring the bell or show the text after it reversed. The one escaping
/// function of everything tdbg prints (docs/reliability.md, "Hostile names").
[[nodiscard]] inline std::string terminal_safe(std::string_view text) {
    constexpr std::string_view hex = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    const auto escape = [&](char byte) {
        const auto b = static_cast<unsigned char>(byte);
        out.append("\\x").append(1, hex[b >> 4U]).append(1, hex[b & 0xFU]);
    };
    for (std::size_t i = 0; i < text.size();) {
        const utf8_char ch = decode_utf8(text, i);
        if (ch.length == 0) {
            escape(text[i]);
            ++i;
            continue;
        }
        const bool control = ch.code_point < 0x20 || (ch.code_point >= 0x7F && ch.code_point < 0xA0) ||
                             is_bidi_control(ch.code_point);
        for (std::size_t k = 0; k < ch.length; ++k) {
            if (control) {
                escape(text[i + k]);
            } else {
                out.push_back(text[i + k]);
            }
        }
        i += ch.length;
    }
    return out;
}

} // namespace tdbg::detail
