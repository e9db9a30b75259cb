#pragma once
/// \file
/// Definitions of tdbg/format/detail/json_reader.hpp.

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/core.h>

#include "tdbg/format/detail/json_reader.hpp"

namespace tdbg::format::detail {

TDBG_DECL json_reader::json_reader(std::string_view text, std::string_view source, std::string_view what)
    : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), source_(source), what_(what) {
    first_.reserve(16); // one allocation for the usual depths
}

TDBG_DECL void json_reader::fail_at(std::size_t offset, std::string_view why) const {
    throw format_error(fmt::format("{} is not valid JSON: {}", what_, why), std::string(source_), offset);
}

TDBG_DECL json_reader::value_kind json_reader::peek() {
    skip_space();
    if (p_ == end_) {
        fail("the text ends where a value was expected");
    }
    switch (*p_) {
    case 'n': return value_kind::null;
    case 't':
    case 'f': return value_kind::boolean;
    case '"': return value_kind::string;
    case '[': return value_kind::array;
    case '{': return value_kind::object;
    default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9') || *p_ == 'N' || *p_ == 'I') {
            return value_kind::number;
        }
        fail(fmt::format("unexpected {} where a value was expected", describe_byte()));
    }
}

TDBG_DECL bool json_reader::next_key(std::string_view& key) {
    if (!next('}')) {
        return false;
    }
    skip_space();
    if (p_ == end_ || *p_ != '"') {
        fail(fmt::format("expected a member name (a string), found {}", describe_byte()));
    }
    key = read_string();
    expect(':', "':' after a member name");
    return true;
}

TDBG_DECL std::string_view json_reader::read_string() {
    skip_space();
    if (p_ == end_ || *p_ != '"') {
        fail(fmt::format("expected a string, found {}", describe_byte()));
    }
    const char* start = ++p_;
    // The common case: plain characters up to the closing quote, viewed in place.
    for (;;) {
        skip_plain_words();
        while (p_ != end_ && plain_ascii(*p_)) {
            ++p_;
        }
        if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x80) {
            break;
        }
        check_utf8_at();
    }
    if (p_ != end_ && *p_ == '"') {
        ++p_;
        in_text_ = true;
        return {start, static_cast<std::size_t>(p_ - 1 - start)};
    }
    buffer_.assign(start, p_);
    in_text_ = false;
    for (;;) {
        if (p_ == end_) {
            fail_at(static_cast<std::size_t>(start - 1 - begin_), "a string is not closed");
        }
        const auto c = static_cast<unsigned char>(*p_);
        if (c == '"') {
            ++p_;
            return buffer_;
        }
        if (c < 0x20) {
            fail(fmt::format("control character 0x{:02x} in a string (write it as an escape)", c));
        }
        if (c == '\\') {
            read_escape();
        } else if (c >= 0x80) {
            const char* at = p_;
            check_utf8_at();
            buffer_.append(at, p_);
        } else {
            buffer_.push_back(static_cast<char>(c));
            ++p_;
        }
    }
}

TDBG_DECL json_number json_reader::read_number() {
    skip_space();
    const char* start = p_;
    json_number out;
    if (p_ != end_ && (*p_ == 'N' || *p_ == 'I' || *p_ == '-')) { // Python's json writes NaN and Infinity
        if (literal("NaN")) {
            out.type = json_number::kind::real;
            out.real = std::numeric_limits<double>::quiet_NaN();
            return out;
        }
        if (literal("Infinity") || literal("-Infinity")) {
            out.type = json_number::kind::real;
            out.real = *start == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
            return out;
        }
    }
    const bool negative = p_ != end_ && *p_ == '-';
    if (negative) {
        ++p_;
    }
    if (p_ == end_ || *p_ < '0' || *p_ > '9') {
        fail(fmt::format("expected a number, found {}", describe_byte()));
    }
    if (*p_ == '0' && end_ - p_ > 1 && p_[1] >= '0' && p_[1] <= '9') {
        fail("a number with a leading zero");
    }
    const char* digits = p_;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
        ++p_;
    }
    bool integral = true;
    if (p_ != end_ && *p_ == '.') {
        integral = false;
        ++p_;
        if (p_ == end_ || *p_ < '0' || *p_ > '9') {
            fail("a digit must follow a number's decimal point");
        }
        while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
            ++p_;
        }
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
        integral = false;
        ++p_;
        if (p_ != end_ && (*p_ == '+' || *p_ == '-')) {
            ++p_;
        }
        if (p_ == end_ || *p_ < '0' || *p_ > '9') {
            fail("a digit must follow a number's exponent");
        }
        while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
            ++p_;
        }
    }
    if (integral) {
        std::uint64_t magnitude = 0;
        const auto [end, ec] = std::from_chars(digits, p_, magnitude);
        if (ec == std::errc() && end == p_) {
            if (!negative && magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                out.type = json_number::kind::unsigned_integer;
                out.unsigned_integer = magnitude;
                return out;
            }
            if (!negative || magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
                out.integer = !negative ? static_cast<std::int64_t>(magnitude)
                                        : magnitude == 0 ? 0 : -static_cast<std::int64_t>(magnitude - 1) - 1;
                return out;
            }
        }
        // Too large for 64 bits: a float, as Python's float() would read it.
    }
    out.type = json_number::kind::real;
    const auto [end, ec] = std::from_chars(start, p_, out.real);
    if (ec == std::errc::result_out_of_range) {
        fail_at(static_cast<std::size_t>(start - begin_), "a number out of the range of a double");
    }
    if (ec != std::errc() || end != p_) {
        fail_at(static_cast<std::size_t>(start - begin_), "a malformed number");
    }
    return out;
}

TDBG_DECL bool json_reader::read_bool() {
    skip_space();
    if (literal("true")) {
        return true;
    }
    if (literal("false")) {
        return false;
    }
    fail(fmt::format("expected true or false, found {}", describe_byte()));
}

TDBG_DECL void json_reader::read_null() {
    skip_space();
    if (!literal("null")) {
        fail(fmt::format("expected null, found {}", describe_byte()));
    }
}

TDBG_DECL void json_reader::skip_value() {
    switch (peek()) {
    case value_kind::null: read_null(); break;
    case value_kind::boolean: (void)read_bool(); break;
    case value_kind::number: (void)read_number(); break;
    case value_kind::string: (void)read_string(); break;
    case value_kind::array:
        begin_array();
        while (next_item()) {
            skip_value();
        }
        break;
    case value_kind::object: {
        begin_object();
        std::string_view key;
        while (next_key(key)) {
            skip_value();
        }
        break;
    }
    }
}

TDBG_DECL void json_reader::finish() {
    skip_space();
    if (p_ != end_) {
        fail(fmt::format("unexpected {} after the end of the document", describe_byte()));
    }
}

TDBG_DECL bool json_reader::plain_ascii(char c) noexcept {
    static constexpr std::array<bool, 256> table = [] {
        std::array<bool, 256> t{};
        for (std::size_t b = 0x20; b < 0x80; ++b) {
            t[b] = b != '"' && b != '\\';
        }
        return t;
    }();
    return table[static_cast<unsigned char>(c)];
}

TDBG_DECL void json_reader::skip_plain_words() noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101U;
    constexpr std::uint64_t highs = 0x8080808080808080U;
    while (end_ - p_ >= 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p_, sizeof w);
        // Whether any byte is below 0x20, is '"' or '\\', or is 0x80 or above: the classic
        // "has a zero byte" test, on w and on w xor each special byte (exact for "any").
        const auto has_zero = [&](std::uint64_t v) { return (v - ones) & ~v & highs; };
        const std::uint64_t special = ((w - ones * 0x20) & ~w & highs) | has_zero(w ^ (ones * '"')) |
                                      has_zero(w ^ (ones * '\\')) | (w & highs);
        if (special != 0) {
            return; // a byte here needs a closer look
        }
        p_ += 8;
    }
}

TDBG_DECL std::string json_reader::describe_byte() const {
    if (p_ == end_) {
        return "the end of the text";
    }
    const auto c = static_cast<unsigned char>(*p_);
    return c >= 0x20 && c < 0x7F ? fmt::format("'{}'", static_cast<char>(c)) : fmt::format("byte 0x{:02x}", c);
}

TDBG_DECL void json_reader::expect(char c, std::string_view what) {
    skip_space();
    if (p_ == end_ || *p_ != c) {
        fail(fmt::format("expected {}, found {}", what, describe_byte()));
    }
    ++p_;
}

TDBG_DECL bool json_reader::literal(std::string_view word) noexcept {
    if (static_cast<std::size_t>(end_ - p_) >= word.size() && std::string_view(p_, word.size()) == word) {
        p_ += word.size();
        return true;
    }
    return false;
}

TDBG_DECL void json_reader::begin(char open, std::string_view what) {
    skip_space();
    if (p_ == end_ || *p_ != open) {
        fail(fmt::format("expected {}, found {}", what, describe_byte()));
    }
    if (first_.size() >= max_depth) {
        fail(fmt::format("nested deeper than {} levels", max_depth));
    }
    ++p_;
    first_.push_back(1);
}

TDBG_DECL bool json_reader::next(char close) {
    skip_space();
    if (p_ != end_ && *p_ == close) {
        ++p_;
        first_.pop_back();
        return false;
    }
    if (first_.back() != 0) {
        first_.back() = 0;
        if (p_ == end_) {
            fail(fmt::format("the text ends inside a {}", close == '}' ? "an object" : "a list"));
        }
        return true;
    }
    if (p_ == end_ || *p_ != ',') {
        fail(fmt::format("expected ',' or '{}', found {}", close, describe_byte()));
    }
    const std::size_t comma = offset();
    ++p_;
    skip_space();
    if (p_ != end_ && *p_ == close) {
        fail_at(comma, fmt::format("a trailing ',' before '{}'", close));
    }
    return true;
}

TDBG_DECL void json_reader::check_utf8_at() {
    const tdbg::detail::utf8_char ch = tdbg::detail::decode_utf8(std::string_view(p_, static_cast<std::size_t>(end_ - p_)), 0);
    if (ch.length == 0) {
        fail("a string is not valid UTF-8");
    }
    p_ += ch.length;
}

TDBG_DECL std::uint32_t json_reader::hex4() {
    if (end_ - p_ < 4) {
        fail("a \\u escape needs four hex digits");
    }
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
        const char c = *p_;
        const std::uint32_t digit = c >= '0' && c <= '9'   ? static_cast<std::uint32_t>(c - '0')
                                    : c >= 'a' && c <= 'f' ? static_cast<std::uint32_t>(c - 'a' + 10)
                                    : c >= 'A' && c <= 'F' ? static_cast<std::uint32_t>(c - 'A' + 10)
                                                           : 16;
        if (digit == 16) {
            fail("a \\u escape needs four hex digits");
        }
        v = v * 16 + digit;
    }
    return v;
}

TDBG_DECL void json_reader::read_escape() {
    ++p_; // the backslash
    if (p_ == end_) {
        fail("a string ends in a backslash");
    }
    const char c = *p_++;
    switch (c) {
    case '"': buffer_.push_back('"'); return;
    case '\\': buffer_.push_back('\\'); return;
    case '/': buffer_.push_back('/'); return;
    case 'b': buffer_.push_back('\b'); return;
    case 'f': buffer_.push_back('\f'); return;
    case 'n': buffer_.push_back('\n'); return;
    case 'r': buffer_.push_back('\r'); return;
    case 't': buffer_.push_back('\t'); return;
    case 'u': {
        std::uint32_t cp = hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("a lone low surrogate \\u escape (not valid UTF-8)");
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
                fail("a high surrogate \\u escape without its low half (not valid UTF-8)");
            }
            p_ += 2;
            const std::uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) {
                fail("a high surrogate \\u escape without its low half (not valid UTF-8)");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10U) + (low - 0xDC00);
        }
        tdbg::detail::append_utf8(buffer_, cp);
        return;
    }
    default: --p_; fail(fmt::format("an unknown escape '\\{}'", c));
    }
}

} // namespace tdbg::format::detail
