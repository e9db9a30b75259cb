#pragma once
/// \file
/// JSON text exactly as Python's `json.dumps` writes it with its defaults
/// (", " and ": " separators, ASCII only with lowercase \u escapes), so that
/// index and collection files come out byte for byte as smdebug's; and the
/// small checked accessors the readers of those files share.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdbg/core/error.hpp"

namespace tdbg::format::detail {

inline void append_hex4(std::string& out, std::uint32_t unit) {
    constexpr char digits[] = "0123456789abcdef";
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) {
        out.push_back(digits[(unit >> static_cast<unsigned>(shift)) & 0xFU]);
    }
}

/// Appends `text` (UTF-8) as a JSON string the way json.dumps does; throws
/// tdbg::error for bytes that are not UTF-8, which Python strings cannot hold.
inline void append_json_string(std::string& out, std::string_view text) {
    out.push_back('"');
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7F) {
            if (c == '"' || c == '\\') {
                out.push_back('\\');
            }
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        if (c < 0x80) {
            switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default: append_hex4(out, c); break; // other control characters and DEL
            }
            ++i;
            continue;
        }
        // Decode one UTF-8 sequence, rejecting overlong forms, surrogates and values past U+10FFFF.
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
            throw error("JSON text: byte " + std::to_string(i) + " of a string is not valid UTF-8");
        }
        if (i + length > text.size()) {
            throw error("JSON text: truncated UTF-8 sequence at byte " + std::to_string(i) + " of a string");
        }
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0U) != 0x80U) {
                throw error("JSON text: byte " + std::to_string(i + k) + " of a string is not valid UTF-8");
            }
            cp = (cp << 6U) | (next & 0x3FU);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            throw error("JSON text: invalid UTF-8 sequence at byte " + std::to_string(i) + " of a string");
        }
        if (cp >= 0x10000) {
            const std::uint32_t v = cp - 0x10000;
            append_hex4(out, 0xD800 + (v >> 10U));
            append_hex4(out, 0xDC00 + (v & 0x3FFU));
        } else {
            append_hex4(out, cp);
        }
        i += length;
    }
    out.push_back('"');
}

/// `["a", "b"]` as json.dumps writes a list of strings.
inline void append_json_string_list(std::string& out, const std::vector<std::string>& items) {
    out.push_back('[');
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i != 0) {
            out += ", ";
        }
        append_json_string(out, items[i]);
    }
    out.push_back(']');
}

/// `[1, 2]` as json.dumps writes a list of integers.
template <class Int>
void append_json_int_list(std::string& out, const std::vector<Int>& items) {
    out.push_back('[');
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i != 0) {
            out += ", ";
        }
        out += std::to_string(items[i]);
    }
    out.push_back(']');
}

/// A JSON document with its keys in file order (the order is part of the bytes).
using ordered_json = nlohmann::ordered_json;

/// Parses `text`; a syntax error becomes a format_error naming `file` and the byte offset.
inline ordered_json parse_json_text(std::string_view text, std::string_view file, const char* what) {
    // nlohmann's parser stops at a NUL byte as at the end of the text; JSON holds none, so refuse it here.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        throw format_error(std::string(what) + " is not valid JSON: a NUL byte", std::string(file), nul);
    }
    try {
        return ordered_json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        throw format_error(std::string(what) + " is not valid JSON: " + e.what(), std::string(file),
                           e.byte == 0 ? 0 : e.byte - 1);
    } catch (const nlohmann::json::exception& e) {
        // Such as a number too large for a double (out_of_range.406), which carries no offset.
        throw format_error(std::string(what) + " is not valid JSON: " + e.what(), std::string(file), 0);
    }
}

/// Checked access to the members of a parsed JSON file: every error names the file and the key path.
class json_fields {
public:
    json_fields(std::string_view file, const char* what) : file_(file), what_(what) {}

    [[noreturn]] void fail(const std::string& key, const std::string& why) const {
        throw format_error(std::string(what_) + ": key '" + key + "' " + why, file_, 0);
    }

    static const char* type_name(const ordered_json& j) noexcept { return j.type_name(); }

    [[nodiscard]] const ordered_json& object(const ordered_json& parent, const std::string& key,
                                             const std::string& path) const {
        const ordered_json& j = member(parent, key, path);
        if (!j.is_object()) {
            fail(path, std::string("must be an object, found ") + type_name(j));
        }
        return j;
    }
    [[nodiscard]] const ordered_json& array(const ordered_json& parent, const std::string& key,
                                            const std::string& path) const {
        const ordered_json& j = member(parent, key, path);
        if (!j.is_array()) {
            fail(path, std::string("must be a list, found ") + type_name(j));
        }
        return j;
    }
    [[nodiscard]] const ordered_json& member(const ordered_json& parent, const std::string& key,
                                             const std::string& path) const {
        const auto it = parent.find(key);
        if (it == parent.end()) {
            fail(path, "is missing");
        }
        return *it;
    }
    [[nodiscard]] std::string string(const ordered_json& j, const std::string& path) const {
        if (!j.is_string()) {
            fail(path, std::string("must be a string, found ") + type_name(j));
        }
        return j.get<std::string>();
    }
    [[nodiscard]] std::int64_t integer(const ordered_json& j, const std::string& path) const {
        if (!j.is_number_integer() ||
            (j.is_number_unsigned() &&
             j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
            fail(path, std::string("must be an integer, found ") + (j.is_number() ? j.dump() : type_name(j)));
        }
        return j.get<std::int64_t>();
    }
    [[nodiscard]] std::uint64_t unsigned_integer(const ordered_json& j, const std::string& path) const {
        if (!j.is_number_integer() || (!j.is_number_unsigned() && j.get<std::int64_t>() < 0)) {
            fail(path,
                 std::string("must be a non-negative integer, found ") + (j.is_number() ? j.dump() : type_name(j)));
        }
        return j.get<std::uint64_t>();
    }
    [[nodiscard]] bool boolean(const ordered_json& j, const std::string& path) const {
        if (!j.is_boolean()) {
            fail(path, std::string("must be true or false, found ") + type_name(j));
        }
        return j.get<bool>();
    }
    [[nodiscard]] std::vector<std::string> string_list(const ordered_json& j, const std::string& path) const {
        if (!j.is_array()) {
            fail(path, std::string("must be a list of strings, found ") + type_name(j));
        }
        std::vector<std::string> out;
        out.reserve(j.size());
        for (std::size_t i = 0; i < j.size(); ++i) {
            out.push_back(string(j[i], path + "[" + std::to_string(i) + "]"));
        }
        return out;
    }

private:
    std::string file_;
    const char* what_;
};

} // namespace tdbg::format::detail
