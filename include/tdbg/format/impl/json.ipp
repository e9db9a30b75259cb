#pragma once
/// \file
/// Definitions of tdbg/format/json.hpp.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/detail/json_reader.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format {

namespace detail {

[[noreturn]] inline void wrong_kind(const json_value& v, const char* wanted) {
    throw format_error(fmt::format("expected {}, found {}", wanted, v.type_name()), "", 0);
}

inline json_value read_value(json_reader& in) {
    switch (in.peek()) {
    case json_reader::value_kind::null: in.read_null(); return json_value();
    case json_reader::value_kind::boolean: return json_value(in.read_bool());
    case json_reader::value_kind::number: {
        const json_number n = in.read_number();
        switch (n.type) {
        case json_number::kind::integer: return json_value(n.integer);
        case json_number::kind::unsigned_integer: return json_value(n.unsigned_integer);
        case json_number::kind::real: return json_value(n.real);
        }
        return json_value();
    }
    case json_reader::value_kind::string: return json_value(in.read_string());
    case json_reader::value_kind::array: {
        json_value out = json_value::array();
        in.begin_array();
        while (in.next_item()) {
            out.push_back(read_value(in));
        }
        return out;
    }
    case json_reader::value_kind::object: {
        json_value out = json_value::object();
        in.begin_object();
        std::string_view key;
        while (in.next_key(key)) {
            const std::string name(key); // the key's view does not outlive the value's strings
            out[name] = read_value(in);
        }
        return out;
    }
    }
    return json_value();
}

inline void append_hex4(std::string& out, std::uint32_t unit) {
    constexpr char digits[] = "0123456789abcdef";
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) {
        out.push_back(digits[(unit >> static_cast<unsigned>(shift)) & 0xFU]);
    }
}

inline void dump_value(std::string& out, const json_value& v, const json_style& style, int depth) {
    const auto newline = [&](int level) {
        out.push_back('\n');
        out.append(static_cast<std::size_t>(style.indent) * static_cast<std::size_t>(level), ' ');
    };
    switch (v.type()) {
    case json_value::kind::null: out += "null"; return;
    case json_value::kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case json_value::kind::integer: out += std::to_string(v.as_int64()); return;
    case json_value::kind::unsigned_integer: out += std::to_string(v.as_uint64()); return;
    case json_value::kind::real: out += python_float_repr(v.as_double()); return;
    case json_value::kind::string: append_json_string(out, v.as_string(), style.replace_invalid_utf8); return;
    case json_value::kind::array: {
        if (v.items().empty()) {
            out += "[]";
            return;
        }
        out.push_back('[');
        bool first = true;
        for (const json_value& item : v.items()) {
            if (!first) {
                out.push_back(',');
            }
            if (style.indent >= 0) {
                newline(depth + 1);
            } else if (!first) {
                out.push_back(' ');
            }
            first = false;
            dump_value(out, item, style, depth + 1);
        }
        if (style.indent >= 0) {
            newline(depth);
        }
        out.push_back(']');
        return;
    }
    case json_value::kind::object: {
        if (v.members().empty()) {
            out += "{}";
            return;
        }
        std::vector<const json_member*> order;
        order.reserve(v.members().size());
        for (const json_member& m : v.members()) {
            order.push_back(&m);
        }
        if (style.sort_keys) {
            std::sort(order.begin(), order.end(), [](const json_member* a, const json_member* b) { return a->key < b->key; });
        }
        out.push_back('{');
        bool first = true;
        for (const json_member* m : order) {
            if (!first) {
                out.push_back(',');
            }
            if (style.indent >= 0) {
                newline(depth + 1);
            } else if (!first) {
                out.push_back(' ');
            }
            first = false;
            append_json_string(out, m->key, style.replace_invalid_utf8);
            out += ": ";
            dump_value(out, m->value, style, depth + 1);
        }
        if (style.indent >= 0) {
            newline(depth);
        }
        out.push_back('}');
        return;
    }
    }
}

inline bool numbers_equal(const json_value& a, const json_value& b) {
    if (a.type() == json_value::kind::real || b.type() == json_value::kind::real) {
        return a.as_double() == b.as_double();
    }
    if (a.type() != b.type()) {
        return false; // a negative or small integer against one past INT64_MAX
    }
    return a.type() == json_value::kind::integer ? a.as_int64() == b.as_int64() : a.as_uint64() == b.as_uint64();
}

} // namespace detail

TDBG_DECL const char* json_value::type_name() const noexcept {
    switch (kind_) {
    case kind::null: return "null";
    case kind::boolean: return "boolean";
    case kind::integer:
    case kind::unsigned_integer:
    case kind::real: return "number";
    case kind::string: return "string";
    case kind::array: return "array";
    case kind::object: return "object";
    }
    return "null";
}

TDBG_DECL bool json_value::as_bool() const {
    if (kind_ != kind::boolean) {
        detail::wrong_kind(*this, "true or false");
    }
    return bool_;
}

TDBG_DECL std::int64_t json_value::as_int64() const {
    if (kind_ != kind::integer) {
        detail::wrong_kind(*this, "an integer");
    }
    return int_;
}

TDBG_DECL std::uint64_t json_value::as_uint64() const {
    if (kind_ == kind::unsigned_integer || (kind_ == kind::integer && int_ >= 0)) {
        return uint_;
    }
    detail::wrong_kind(*this, "a non-negative integer");
}

TDBG_DECL double json_value::as_double() const {
    switch (kind_) {
    case kind::integer: return static_cast<double>(int_);
    case kind::unsigned_integer: return static_cast<double>(uint_);
    case kind::real: return real_;
    default: detail::wrong_kind(*this, "a number");
    }
}

TDBG_DECL const std::string& json_value::as_string() const {
    if (kind_ != kind::string) {
        detail::wrong_kind(*this, "a string");
    }
    return string_;
}

TDBG_DECL std::size_t json_value::size() const noexcept {
    return kind_ == kind::array ? items_.size() : kind_ == kind::object ? members_.size() : 0;
}

TDBG_DECL const json_value* json_value::find(std::string_view key) const noexcept {
    for (const json_member& m : members_) {
        if (m.key == key) {
            return &m.value;
        }
    }
    return nullptr;
}

TDBG_DECL const json_value& json_value::at(std::string_view key) const {
    const json_value* found = find(key);
    if (found == nullptr) {
        throw format_error(fmt::format("no member '{}' in {}", key, is_object() ? "the object" : type_name()), "", 0);
    }
    return *found;
}

TDBG_DECL const json_value& json_value::at(std::size_t i) const {
    if (i >= items_.size()) {
        throw format_error(fmt::format("no item {} in {} of {} items", i, type_name(), items_.size()), "", 0);
    }
    return items_[i];
}

TDBG_DECL json_value& json_value::operator[](std::string_view key) {
    if (kind_ == kind::null) {
        kind_ = kind::object;
    }
    if (kind_ != kind::object) {
        detail::wrong_kind(*this, "an object");
    }
    for (json_member& m : members_) {
        if (m.key == key) {
            return m.value;
        }
    }
    members_.push_back(json_member{std::string(key), json_value()});
    return members_.back().value;
}

TDBG_DECL void json_value::push_back(json_value item) {
    if (kind_ == kind::null) {
        kind_ = kind::array;
    }
    if (kind_ != kind::array) {
        detail::wrong_kind(*this, "an array");
    }
    items_.push_back(std::move(item));
}

TDBG_DECL bool operator==(const json_value& a, const json_value& b) {
    if (a.is_number() && b.is_number()) {
        return detail::numbers_equal(a, b);
    }
    if (a.kind_ != b.kind_) {
        return false;
    }
    switch (a.kind_) {
    case json_value::kind::null: return true;
    case json_value::kind::boolean: return a.bool_ == b.bool_;
    case json_value::kind::string: return a.string_ == b.string_;
    case json_value::kind::array: return a.items_ == b.items_;
    case json_value::kind::object:
        if (a.members_.size() != b.members_.size()) {
            return false;
        }
        for (const json_member& m : a.members_) {
            const json_value* other = b.find(m.key);
            if (other == nullptr || !(m.value == *other)) {
                return false;
            }
        }
        return true;
    default: return false;
    }
}

TDBG_DECL json_value parse_json(std::string_view text, std::string_view source, std::string_view what) {
    detail::json_reader in(text, source, what);
    json_value out = detail::read_value(in);
    in.finish();
    return out;
}

TDBG_DECL std::string dump_json(const json_value& value, const json_style& style) {
    std::string out;
    detail::dump_value(out, value, style, 0);
    return out;
}

namespace detail {

// True when one of the eight bytes at `p` is not printable ASCII or is '"' or '\\' (each test
// exact as a whole: a borrow or carry can only flag a byte past one that is flagged already).
inline bool needs_look(const char* p) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101U;
    constexpr std::uint64_t highs = 0x8080808080808080U;
    std::uint64_t x = 0;
    std::memcpy(&x, p, sizeof x);
    const auto has_zero = [&](std::uint64_t v) { return ((v - ones) & ~v & highs) != 0; };
    const bool control = ((x - ones * 0x20U) & ~x & highs) != 0; // a byte below 0x20
    const bool beyond = (((x + ones) | x) & highs) != 0;          // a byte of 0x7F or more
    return control || beyond || has_zero(x ^ (ones * 0x22U)) || has_zero(x ^ (ones * 0x5CU));
}

} // namespace detail

TDBG_DECL void append_json_string(std::string& out, std::string_view text, bool replace_invalid_utf8) {
    out.push_back('"');
    for (std::size_t i = 0; i < text.size();) {
        // A run of printable ASCII that needs no escape goes in at once, found eight bytes at a
        // time while none of them needs a look of its own.
        std::size_t run = i;
        while (run + 8 <= text.size() && !detail::needs_look(text.data() + run)) {
            run += 8;
        }
        while (run < text.size() && static_cast<unsigned char>(text[run]) >= 0x20 &&
               static_cast<unsigned char>(text[run]) < 0x7F && text[run] != '"' && text[run] != '\\') {
            ++run;
        }
        if (run > i) {
            out.append(text.data() + i, run - i);
            i = run;
            continue;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
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
            default: detail::append_hex4(out, c); break; // other control characters and DEL
            }
            ++i;
            continue;
        }
        const tdbg::detail::utf8_char ch = tdbg::detail::decode_utf8(text, i);
        if (ch.length == 0) {
            if (!replace_invalid_utf8) {
                throw error(fmt::format("JSON text: byte {} of a string is not valid UTF-8", i));
            }
            detail::append_hex4(out, 0xFFFD);
            ++i;
            continue;
        }
        if (ch.code_point >= 0x10000) {
            const std::uint32_t v = ch.code_point - 0x10000;
            detail::append_hex4(out, 0xD800 + (v >> 10U));
            detail::append_hex4(out, 0xDC00 + (v & 0x3FFU));
        } else {
            detail::append_hex4(out, ch.code_point);
        }
        i += ch.length;
    }
    out.push_back('"');
}

TDBG_DECL void append_json_list(std::string& out, const std::vector<std::string>& items) {
    out.push_back('[');
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i != 0) {
            out += ", ";
        }
        append_json_string(out, items[i]);
    }
    out.push_back(']');
}

TDBG_DECL std::string python_float_repr(double value) {
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value > 0 ? "Infinity" : "-Infinity";
    }
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
    for (const char c : text.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
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
    out += fmt::format("e{}{:02}", exponent < 0 ? '-' : '+', magnitude);
    return out;
}

} // namespace tdbg::format
