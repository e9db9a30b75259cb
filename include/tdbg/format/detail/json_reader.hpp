#pragma once
/// \file
/// The one JSON reader of the library: a pull reader over JSON text (RFC 8259,
/// plus Python's NaN, Infinity and -Infinity, which json.dumps writes). The
/// DOM (format::parse_json) and the index files' single-pass parser are both
/// built on it. Strings are checked as UTF-8; nesting deeper than max_depth
/// is refused, so no input makes it recurse or allocate without bound. Every
/// error is a format_error naming the source and the byte offset.

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg::format::detail {

/// A JSON number as read: an integer when it has no fraction or exponent and fits 64 bits.
struct json_number {
    enum class kind { integer, unsigned_integer, real } type = kind::integer;
    std::int64_t integer = 0;
    std::uint64_t unsigned_integer = 0;
    double real = 0;
};

/// Reads JSON text value by value (see the file comment).
class json_reader {
public:
    /// Deeper nesting than this is an error.
    static constexpr std::size_t max_depth = 512;

    /// The kinds of value the next one can be.
    enum class value_kind { null, boolean, number, string, array, object };

    /// Reads `text`; errors say "`what` is not valid JSON" and name `source`.
    TDBG_DECL json_reader(std::string_view text, std::string_view source, std::string_view what);

    /// The byte offset reached.
    [[nodiscard]] std::size_t offset() const noexcept { return static_cast<std::size_t>(p_ - begin_); }

    /// Throws a format_error at `offset`: "`what`: `why`".
    [[noreturn]] TDBG_DECL void fail_at(std::size_t offset, std::string_view why) const;
    /// Throws a format_error at the current offset.
    [[noreturn]] void fail(std::string_view why) const { fail_at(offset(), why); }

    /// The kind of the next value (after whitespace); fails on anything that cannot start one.
    [[nodiscard]] TDBG_DECL value_kind peek();

    /// Enters an object ('{').
    void begin_object() { begin('{', "an object"); }
    /// The next member's key, or false at the end of the object (its '}' consumed).
    [[nodiscard]] TDBG_DECL bool next_key(std::string_view& key);

    /// Enters an array ('[').
    void begin_array() { begin('[', "a list"); }
    /// True when another item follows; false at the end of the array (its ']' consumed).
    [[nodiscard]] bool next_item() { return next(']'); }

    /// The next value, a string, decoded. The view is into the text when the string has
    /// no escapes (string_in_text() then says so), else into a buffer the next string reuses.
    [[nodiscard]] TDBG_DECL std::string_view read_string();
    /// True when the last string read is a view into the text (it had no escapes).
    [[nodiscard]] bool string_in_text() const noexcept { return in_text_; }

    /// The next value, a number.
    [[nodiscard]] TDBG_DECL json_number read_number();

    /// The next value, a boolean.
    [[nodiscard]] TDBG_DECL bool read_bool();

    /// The next value, null.
    TDBG_DECL void read_null();

    /// Reads past the next value, whatever it is.
    TDBG_DECL void skip_value();

    /// Checks that only whitespace follows.
    TDBG_DECL void finish();

private:
    // True for a byte a string holds as it is: printable ASCII but the quote and the backslash.
    static TDBG_DECL bool plain_ascii(char c) noexcept;

    // Skips eight bytes at a time while all of them are plain_ascii (a string's usual body).
    TDBG_DECL void skip_plain_words() noexcept;

    void skip_space() noexcept {
        // Most calls find a token at once: one comparison rules out every byte above the space.
        while (p_ != end_ && static_cast<unsigned char>(*p_) <= ' ' &&
               (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
            ++p_;
        }
    }

    [[nodiscard]] TDBG_DECL std::string describe_byte() const;

    TDBG_DECL void expect(char c, std::string_view what);

    TDBG_DECL bool literal(std::string_view word) noexcept;

    TDBG_DECL void begin(char open, std::string_view what);

    // After a member or item: true when another follows (its ',' consumed), false at `close`.
    TDBG_DECL bool next(char close);

    TDBG_DECL void check_utf8_at();

    TDBG_DECL std::uint32_t hex4();

    TDBG_DECL void read_escape();

    const char* begin_;
    const char* p_;
    const char* end_;
    std::string_view source_;
    std::string_view what_;
    std::vector<char> first_; // per open object or list: no member read yet (not vector<bool>: read per item)
    std::string buffer_;
    bool in_text_ = true;
};

} // namespace tdbg::format::detail

#if TDBG_HEADER_ONLY
#include "tdbg/format/detail/impl/json_reader.ipp"
#endif
