#pragma once
// JSON text as Python's json.dumps(doc, indent=1, sort_keys=True) writes it:
// the layout of smdebug's golden files, so that a dump and a golden file can
// be compared with diff. Floats are printed as Python's repr (shortest
// round-trip digits, scientific below 1e-4 and from 1e16 on).

#include <charconv>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>

#include <nlohmann/json.hpp>

namespace tdbg::cli {

/// Python's repr of a finite double: "0.1", "1.0", "1e-05", "1e+16", "-2.5e-310".
inline std::string python_float_repr(double value) {
    if (value == 0) {
        return std::signbit(value) ? "-0.0" : "0.0";
    }
    char buffer[64];
    // Shortest round-trip digits in scientific form: "d[.ddd]e[+-]XX".
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    const std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
    const bool negative = text.front() == '-';
    const std::size_t e = text.find('e');
    std::string digits;
    for (char c : text.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
        if (c != '.') {
            digits.push_back(c);
        }
    }
    int exponent = 0;
    const std::string_view exponent_text = text.substr(e + 1);
    std::from_chars(exponent_text.data() + (exponent_text.front() == '+' ? 1 : 0),
                    exponent_text.data() + exponent_text.size(), exponent);
    std::string out = negative ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
        } else if (static_cast<std::size_t>(exponent) + 1 >= digits.size()) {
            out += digits + std::string(static_cast<std::size_t>(exponent) + 1 - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<std::size_t>(exponent) + 1) + "." +
                   digits.substr(static_cast<std::size_t>(exponent) + 1);
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
        out += "." + digits.substr(1);
    }
    const int magnitude = exponent < 0 ? -exponent : exponent;
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) {
        out += "0";
    }
    out += std::to_string(magnitude);
    return out;
}

/// Appends `text` (UTF-8) as json.dumps does with ensure_ascii: non-ASCII as
/// \uXXXX (surrogate pairs above U+FFFF); bytes that are not UTF-8 as U+FFFD.
inline void append_python_json_string(std::string& out, std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    auto unit = [&](std::uint32_t u) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) {
            out.push_back(hex[(u >> static_cast<unsigned>(shift)) & 0xFU]);
        }
    };
    out.push_back('"');
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20 || c == 0x7F) { // Python escapes all but ' '..'~'
                    unit(c);
                } else {
                    out.push_back(static_cast<char>(c));
                }
            }
            ++i;
            continue;
        }
        std::size_t length = (c & 0xE0U) == 0xC0U ? 2 : (c & 0xF0U) == 0xE0U ? 3 : (c & 0xF8U) == 0xF0U ? 4 : 0;
        std::uint32_t cp = length == 2 ? (c & 0x1FU) : length == 3 ? (c & 0x0FU) : (c & 0x07U);
        bool valid = length != 0 && i + length <= text.size();
        for (std::size_t k = 1; valid && k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            valid = (next & 0xC0U) == 0x80U;
            cp = (cp << 6U) | (next & 0x3FU);
        }
        if (!valid) {
            unit(0xFFFD);
            ++i;
            continue;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            unit(0xD800 + (cp >> 10U));
            unit(0xDC00 + (cp & 0x3FFU));
        } else {
            unit(cp);
        }
        i += length;
    }
    out.push_back('"');
}

namespace detail {

inline void append_python_json(std::string& out, const nlohmann::json& value, std::size_t depth) {
    auto newline = [&](std::size_t level) {
        out.push_back('\n');
        out.append(level, ' ');
    };
    switch (value.type()) {
    case nlohmann::json::value_t::object: {
        if (value.empty()) {
            out += "{}";
            return;
        }
        out.push_back('{');
        bool first = true;
        for (auto it = value.begin(); it != value.end(); ++it) { // std::map: keys sorted
            out += first ? "" : ",";
            first = false;
            newline(depth + 1);
            append_python_json_string(out, it.key());
            out += ": ";
            append_python_json(out, it.value(), depth + 1);
        }
        newline(depth);
        out.push_back('}');
        return;
    }
    case nlohmann::json::value_t::array: {
        if (value.empty()) {
            out += "[]";
            return;
        }
        out.push_back('[');
        bool first = true;
        for (const auto& item : value) {
            out += first ? "" : ",";
            first = false;
            newline(depth + 1);
            append_python_json(out, item, depth + 1);
        }
        newline(depth);
        out.push_back(']');
        return;
    }
    case nlohmann::json::value_t::string: append_python_json_string(out, value.get_ref<const std::string&>()); return;
    case nlohmann::json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case nlohmann::json::value_t::number_integer: out += std::to_string(value.get<std::int64_t>()); return;
    case nlohmann::json::value_t::number_unsigned: out += std::to_string(value.get<std::uint64_t>()); return;
    case nlohmann::json::value_t::number_float: {
        const double d = value.get<double>();
        // Python writes NaN and Infinity (not JSON); the golden schema uses strings instead.
        out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python_float_repr(d);
        return;
    }
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
    case nlohmann::json::value_t::binary: out += "null"; return;
    }
}

} // namespace detail

/// `value` as json.dumps(value, indent=1, sort_keys=True), with a final newline.
inline std::string python_json_dumps(const nlohmann::json& value) {
    std::string out;
    detail::append_python_json(out, value, 0);
    out.push_back('\n');
    return out;
}

} // namespace tdbg::cli
