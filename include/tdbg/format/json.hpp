#pragma once
/// \file
/// JSON documents: `json_value`, a small ordered DOM; `parse_json`, the
/// library's one JSON reader behind it (format/detail/json_reader.hpp); and
/// `dump_json`, JSON text exactly as Python's json.dumps writes it (its
/// separators, ASCII-only strings with lowercase \u escapes, float repr), so
/// that index and collection files come out byte for byte as smdebug's and a
/// dump can be compared with Python's output line by line.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tdbg/config.hpp"

namespace tdbg::format {

struct json_member;

/// A JSON value: null, a boolean, a number (a 64-bit integer when it was
/// written without fraction or exponent, else a double), a string, an array
/// or an object (members in order; a repeated key keeps the last value, as
/// Python's json.loads does).
class json_value {
public:
    enum class kind { null, boolean, integer, unsigned_integer, real, string, array, object };

    json_value() noexcept = default;
    json_value(std::nullptr_t) noexcept {} // NOLINT(google-explicit-constructor): JSON values convert implicitly
    json_value(bool b) noexcept : kind_(kind::boolean), bool_(b) {} // NOLINT(google-explicit-constructor)
    template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
    json_value(T v) noexcept // NOLINT(google-explicit-constructor)
        : kind_(std::is_signed_v<T> || static_cast<std::uint64_t>(v) <= std::uint64_t{INT64_MAX} ? kind::integer
                                                                                                  : kind::unsigned_integer),
          int_(static_cast<std::int64_t>(v)), uint_(static_cast<std::uint64_t>(v)) {}
    json_value(double v) noexcept : kind_(kind::real), real_(v) {} // NOLINT(google-explicit-constructor)
    json_value(std::string s) noexcept : kind_(kind::string), string_(std::move(s)) {} // NOLINT(google-explicit-constructor)
    json_value(std::string_view s) : kind_(kind::string), string_(s) {} // NOLINT(google-explicit-constructor)
    json_value(const char* s) : kind_(kind::string), string_(s) {}      // NOLINT(google-explicit-constructor)

    /// An array of `items`.
    [[nodiscard]] static json_value array(std::vector<json_value> items = {}) {
        json_value v;
        v.kind_ = kind::array;
        v.items_ = std::move(items);
        return v;
    }
    /// An array of `items`, each converted to a json_value.
    template <class T>
    [[nodiscard]] static json_value array_of(const std::vector<T>& items) {
        json_value v = array();
        v.items_.reserve(items.size());
        for (const T& item : items) {
            v.items_.emplace_back(item);
        }
        return v;
    }
    /// An empty object.
    [[nodiscard]] static json_value object() {
        json_value v;
        v.kind_ = kind::object;
        return v;
    }
    /// An object of `members`, in order.
    [[nodiscard]] static json_value object(std::initializer_list<json_member> members);

    [[nodiscard]] kind type() const noexcept { return kind_; }
    [[nodiscard]] bool is_null() const noexcept { return kind_ == kind::null; }
    [[nodiscard]] bool is_bool() const noexcept { return kind_ == kind::boolean; }
    /// An integer or unsigned_integer.
    [[nodiscard]] bool is_integer() const noexcept { return kind_ == kind::integer || kind_ == kind::unsigned_integer; }
    /// Any number.
    [[nodiscard]] bool is_number() const noexcept { return is_integer() || kind_ == kind::real; }
    [[nodiscard]] bool is_string() const noexcept { return kind_ == kind::string; }
    [[nodiscard]] bool is_array() const noexcept { return kind_ == kind::array; }
    [[nodiscard]] bool is_object() const noexcept { return kind_ == kind::object; }
    /// "null", "boolean", "number", "string", "array" or "object", for messages.
    [[nodiscard]] TDBG_DECL const char* type_name() const noexcept;

    /// The boolean; throws format_error for another kind.
    [[nodiscard]] TDBG_DECL bool as_bool() const;
    /// The integer; throws format_error unless it is one that fits.
    [[nodiscard]] TDBG_DECL std::int64_t as_int64() const;
    /// The integer; throws format_error unless it is a non-negative one.
    [[nodiscard]] TDBG_DECL std::uint64_t as_uint64() const;
    /// Any number as a double; throws format_error for another kind.
    [[nodiscard]] TDBG_DECL double as_double() const;
    /// The string; throws format_error for another kind.
    [[nodiscard]] TDBG_DECL const std::string& as_string() const;

    /// An array's items (empty for another kind).
    [[nodiscard]] const std::vector<json_value>& items() const noexcept { return items_; }
    /// An object's members, in order (empty for another kind).
    [[nodiscard]] const std::vector<json_member>& members() const noexcept { return members_; }
    /// The items of an array or the members of an object.
    [[nodiscard]] TDBG_DECL std::size_t size() const noexcept;

    /// The member `key` of an object; throws format_error when there is none.
    [[nodiscard]] TDBG_DECL const json_value& at(std::string_view key) const;
    /// Item `i` of an array; throws format_error past its end.
    [[nodiscard]] TDBG_DECL const json_value& at(std::size_t i) const;
    /// The member `key` of an object, or nullptr.
    [[nodiscard]] TDBG_DECL const json_value* find(std::string_view key) const noexcept;
    /// True when an object has member `key`.
    [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
    /// The member `key` of an object, added (null) when missing; a null value becomes an object.
    TDBG_DECL json_value& operator[](std::string_view key);
    /// Appends to an array; a null value becomes an array.
    TDBG_DECL void push_back(json_value item);

    /// Equal as Python compares what json.loads returns: numbers by value (1 == 1.0), objects whatever the member order.
    friend TDBG_DECL bool operator==(const json_value& a, const json_value& b);
    friend bool operator!=(const json_value& a, const json_value& b) { return !(a == b); }

private:
    kind kind_ = kind::null;
    bool bool_ = false;
    std::int64_t int_ = 0;
    std::uint64_t uint_ = 0;
    double real_ = 0;
    std::string string_;
    std::vector<json_value> items_;
    std::vector<json_member> members_;
};

/// A member of a JSON object.
struct json_member {
    std::string key;
    json_value value;
};

inline json_value json_value::object(std::initializer_list<json_member> members) {
    json_value v = object();
    v.members_.assign(members.begin(), members.end());
    return v;
}

/// Parses JSON text (with Python's NaN, Infinity and -Infinity); a syntax error
/// is a format_error saying "`what` is not valid JSON", naming `source` and the
/// byte offset. Nesting deeper than 512 levels is refused.
[[nodiscard]] TDBG_DECL json_value parse_json(std::string_view text, std::string_view source = {},
                                              std::string_view what = "JSON text");

/// How dump_json lays text out: Python's json.dumps(value, indent=..., sort_keys=...).
struct json_style {
    /// Spaces per level, each item on its own line; -1: one line with ", " and ": ".
    int indent = -1;
    /// Object members sorted by key (else in order).
    bool sort_keys = false;
    /// Bytes that are not UTF-8 become U+FFFD (else they are an error).
    bool replace_invalid_utf8 = false;
};

/// JSON text as Python's json.dumps writes `value` (see json_style). Throws
/// tdbg::error for a string that is not UTF-8 unless replace_invalid_utf8.
[[nodiscard]] TDBG_DECL std::string dump_json(const json_value& value, const json_style& style = {});

/// Appends `text` (UTF-8) as json.dumps writes a string: ASCII only, "\\u" escapes
/// in lowercase hex, surrogate pairs past U+FFFF. Throws tdbg::error for bytes
/// that are not UTF-8 unless `replace_invalid_utf8` (then each becomes U+FFFD).
TDBG_DECL void append_json_string(std::string& out, std::string_view text, bool replace_invalid_utf8 = false);

/// `["a", "b"]` as json.dumps writes a list of strings (see append_json_string).
TDBG_DECL void append_json_list(std::string& out, const std::vector<std::string>& items);

/// `[1, 2]` as json.dumps writes a list of integers.
template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
void append_json_list(std::string& out, const std::vector<Int>& items) {
    out.push_back('[');
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i != 0) {
            out += ", ";
        }
        out += std::to_string(items[i]);
    }
    out.push_back(']');
}

/// Python's repr of a double, as json.dumps writes it: "0.1", "1.0", "1e-05",
/// "1e+16", "NaN", "Infinity", "-Infinity".
[[nodiscard]] TDBG_DECL std::string python_float_repr(double value);

} // namespace tdbg::format

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/json.ipp"
#endif
