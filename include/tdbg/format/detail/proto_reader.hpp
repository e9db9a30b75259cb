#pragma once
/// \file
/// A small protobuf wire-format decoder, enough for the handful of messages in
/// event files (no libprotobuf): one cursor (wire_cursor) that checks every
/// length against the bytes that remain before it uses (or allocates for) it;
/// proto_reader adds nesting limits and errors (format_error with the file and
/// byte offset). The encoder and the wire types are proto.hpp.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/detail/proto.hpp"

namespace tdbg::format::detail {

/// The wire format's primitives over a bounded view, without exceptions: the one
/// decoding loop of the library. Each read checks its bounds and returns false on
/// truncated or malformed bytes (the position is then unspecified). proto_reader
/// builds on it and names the problem in its errors; the trial's fast path for the
/// common tensor event (fast_event.hpp) uses it directly and falls back to
/// proto_reader when a read fails.
class wire_cursor {
public:
    explicit wire_cursor(std::string_view data) noexcept : data_(data) {}
    /// A cursor views its bytes: a temporary string would be gone before the cursor is used.
    explicit wire_cursor(const std::string&& data) = delete;

    [[nodiscard]] bool at_end() const noexcept { return pos_ == data_.size(); }
    /// The offset of the next byte in the data.
    [[nodiscard]] std::size_t position() const noexcept { return pos_; }
    [[nodiscard]] std::string_view data() const noexcept { return data_; }

    /// A varint of at most 10 bytes that fits in 64 bits.
    bool varint(std::uint64_t& out) noexcept {
        if (pos_ < data_.size() && static_cast<unsigned char>(data_[pos_]) < 0x80U) { // nearly every key and length
            out = static_cast<unsigned char>(data_[pos_++]);
            return true;
        }
        out = 0;
        for (unsigned shift = 0; shift < 70; shift += 7) {
            if (pos_ == data_.size()) {
                return false;
            }
            const auto byte = static_cast<unsigned char>(data_[pos_++]);
            if (shift == 63 && byte > 1) {
                return false;
            }
            out |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
            if ((byte & 0x80U) == 0) {
                return true;
            }
        }
        return false;
    }

    /// A field key: a number in 1..2^29-1 and a wire type in 0..5.
    bool key(std::uint32_t& field, wire_type& type) noexcept {
        std::uint64_t k = 0;
        if (!varint(k) || (k >> 3U) == 0 || (k >> 3U) > 0x1FFFFFFFU || (k & 7U) > 5) {
            return false;
        }
        field = static_cast<std::uint32_t>(k >> 3U);
        type = static_cast<wire_type>(k & 7U);
        return true;
    }

    /// `n` little-endian bytes (4 or 8).
    bool fixed(std::size_t n, std::uint64_t& out) noexcept {
        if (data_.size() - pos_ < n) {
            return false;
        }
        out = 0;
        for (std::size_t i = n; i-- > 0;) {
            out = (out << 8U) | static_cast<unsigned char>(data_[pos_ + i]);
        }
        pos_ += n;
        return true;
    }

    /// The next `n` bytes (a view into the data).
    bool take(std::uint64_t n, std::string_view& out) noexcept {
        if (n > data_.size() - pos_) {
            return false;
        }
        out = data_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return true;
    }

    /// A length-delimited field's bytes (a view into the data).
    bool length_delimited(std::string_view& out) noexcept {
        std::uint64_t n = 0;
        return varint(n) && take(n, out);
    }

    /// Skips a field of wire type `type` (groups are proto_reader's).
    bool skip(wire_type type) noexcept {
        std::uint64_t ignored = 0;
        std::string_view view;
        switch (type) {
        case wire_type::varint: return varint(ignored);
        case wire_type::fixed64: return fixed(8, ignored);
        case wire_type::length_delimited: return length_delimited(view);
        case wire_type::fixed32: return fixed(4, ignored);
        case wire_type::start_group:
        case wire_type::end_group: return false;
        }
        return false;
    }

private:
    std::string_view data_;
    std::size_t pos_ = 0;
};

/// Reads the fields of one message in order. Offsets in errors are absolute:
/// `base_offset` is where `data` starts in `file`.
class proto_reader {
public:
    proto_reader(std::string_view data, std::string_view file, std::uint64_t base_offset, const char* message,
                 int depth = 0)
        : in_(data), file_(file), base_(base_offset), message_(message), depth_(depth) {
        if (depth_ > max_proto_depth) {
            fail(fmt::format("nesting deeper than {} levels", max_proto_depth), 0);
        }
    }

    /// Moves to the next field; false at the end of the message.
    bool next() {
        if (in_.at_end()) {
            return false;
        }
        field_start_ = in_.position();
        const std::uint64_t key = read_raw_varint();
        const auto type = static_cast<std::uint32_t>(key & 7U);
        const std::uint64_t number = key >> 3U;
        if (number == 0 || number > 0x1FFFFFFFU) {
            fail(fmt::format("invalid field number {}", number), field_start_);
        }
        if (type > 5) {
            fail(fmt::format("field {} has invalid wire type {}", number, type), field_start_);
        }
        field_ = static_cast<std::uint32_t>(number);
        type_ = static_cast<wire_type>(type);
        if (type_ == wire_type::end_group) {
            fail(fmt::format("unexpected end-group marker for field {}", number), field_start_);
        }
        return true;
    }

    /// The current field's number and wire type.
    [[nodiscard]] std::uint32_t field() const noexcept { return field_; }
    [[nodiscard]] wire_type type() const noexcept { return type_; }
    /// The absolute offset of the current field's tag.
    [[nodiscard]] std::uint64_t field_offset() const noexcept { return base_ + field_start_; }
    /// The bytes of the field just read, its key included (a view into the data).
    [[nodiscard]] std::string_view field_bytes() const noexcept {
        return in_.data().substr(field_start_, in_.position() - field_start_);
    }
    [[nodiscard]] std::string_view file() const noexcept { return file_; }
    [[nodiscard]] int depth() const noexcept { return depth_; }

    /// Throws unless the current field has wire type `want`.
    void expect(wire_type want, const char* field_name) const {
        if (type_ != want) {
            fail(fmt::format("field {} ({}) has wire type {} ({}), expected {} ({})", field_, field_name,
                             static_cast<std::uint32_t>(type_), wire_type_name(type_), static_cast<std::uint32_t>(want),
                             wire_type_name(want)),
                 field_start_);
        }
    }

    std::uint64_t varint(const char* field_name) {
        expect(wire_type::varint, field_name);
        return read_raw_varint();
    }
    std::int64_t int64(const char* field_name) { return static_cast<std::int64_t>(varint(field_name)); }
    double float64(const char* field_name) {
        expect(wire_type::fixed64, field_name);
        const std::uint64_t bits = read_raw_fixed(8);
        double v = 0;
        std::memcpy(&v, &bits, 8);
        return v;
    }
    float float32(const char* field_name) {
        expect(wire_type::fixed32, field_name);
        const auto bits = static_cast<std::uint32_t>(read_raw_fixed(4));
        float v = 0;
        std::memcpy(&v, &bits, 4);
        return v;
    }
    /// A string, bytes or message field's bytes (a view into the data).
    std::string_view bytes(const char* field_name) {
        expect(wire_type::length_delimited, field_name);
        return read_length_delimited(field_name);
    }
    /// Where the bytes of the last length-delimited field started (absolute).
    [[nodiscard]] std::uint64_t last_bytes_offset() const noexcept { return base_ + bytes_start_; }

    /// A reader for the nested message in the current field.
    proto_reader message(const char* field_name, const char* message_name) {
        const std::string_view body = bytes(field_name);
        return proto_reader(body, file_, base_ + bytes_start_, message_name, depth_ + 1);
    }

    /// Appends a repeated scalar field's values, packed or not, to `out` (a std::vector, or
    /// anything with its push_back, size and reserve). `Element` is the wire element:
    /// std::uint64_t (varint), std::uint32_t (fixed32) or double/float (fixed64/fixed32);
    /// `convert` maps each to the stored type.
    template <class Element, class Out, class Convert>
    void repeated(Out& out, const char* field_name, Convert convert) {
        constexpr wire_type element_type = std::is_same_v<Element, std::uint64_t> ? wire_type::varint
                                           : sizeof(Element) == 8                 ? wire_type::fixed64
                                                                                  : wire_type::fixed32;
        if (type_ == element_type) {
            out.push_back(convert(read_element<Element>()));
            return;
        }
        if (type_ != wire_type::length_delimited) {
            expect(element_type, field_name); // throws with the expected type
        }
        const std::string_view packed = read_length_delimited(field_name);
        proto_reader inner(packed, file_, base_ + bytes_start_, message_, depth_);
        if constexpr (element_type != wire_type::varint) {
            if (packed.size() % sizeof(Element) != 0) {
                fail(fmt::format("packed field {} ({}) has {} bytes, not a multiple of {}", field_, field_name,
                                 packed.size(), sizeof(Element)),
                     field_start_);
            }
            out.reserve(out.size() + packed.size() / sizeof(Element)); // bounded by the bytes present
        }
        while (!inner.at_end()) {
            out.push_back(convert(inner.read_element<Element>()));
        }
    }

    /// Skips the current field (unknown fields are skipped, as protobuf does).
    void skip() {
        switch (type_) {
        case wire_type::varint: read_raw_varint(); break;
        case wire_type::fixed64: read_raw_fixed(8); break;
        case wire_type::fixed32: read_raw_fixed(4); break;
        case wire_type::length_delimited: read_length_delimited("unknown"); break;
        case wire_type::start_group: skip_group(field_, depth_ + 1); break;
        case wire_type::end_group: fail("unexpected end-group marker", field_start_);
        }
    }

    [[nodiscard]] bool at_end() const noexcept { return in_.at_end(); }

    [[noreturn]] void fail(const std::string& what, std::size_t at) const {
        throw format_error(fmt::format("{}: {}", message_, what), std::string(file_), base_ + at);
    }

private:
    template <class Element>
    Element read_element() {
        if constexpr (std::is_same_v<Element, std::uint64_t>) {
            return read_raw_varint();
        } else if constexpr (sizeof(Element) == 8) {
            const std::uint64_t bits = read_raw_fixed(8);
            Element v{};
            std::memcpy(&v, &bits, 8);
            return v;
        } else {
            const auto bits = static_cast<std::uint32_t>(read_raw_fixed(4));
            Element v{};
            std::memcpy(&v, &bits, 4);
            return v;
        }
    }

    std::uint64_t read_raw_varint() {
        const std::size_t start = in_.position();
        std::uint64_t value = 0;
        if (!in_.varint(value)) {
            fail(varint_problem(in_.data().substr(start)), start);
        }
        return value;
    }

    // Why the varint at the start of `bytes` does not decode (wire_cursor said it does not).
    static const char* varint_problem(std::string_view bytes) noexcept {
        for (std::size_t i = 0; i < 10; ++i) {
            if (i == bytes.size()) {
                return "truncated varint";
            }
            const auto byte = static_cast<unsigned char>(bytes[i]);
            if (i == 9 && byte > 1) {
                return "varint does not fit in 64 bits";
            }
            if ((byte & 0x80U) == 0) {
                break;
            }
        }
        return "varint longer than 10 bytes";
    }

    std::uint64_t read_raw_fixed(std::size_t n) {
        const std::size_t start = in_.position();
        std::uint64_t v = 0;
        if (!in_.fixed(n, v)) {
            fail(fmt::format("truncated {}-bit field {}: {} bytes left", n * 8, field_, in_.data().size() - start),
                 start);
        }
        return v;
    }

    std::string_view read_length_delimited(const char* field_name) {
        const std::size_t length_at = in_.position();
        const std::uint64_t length = read_raw_varint();
        const std::size_t left = in_.data().size() - in_.position();
        if (length > left) {
            fail(fmt::format("field {} ({}) claims {} bytes, but only {} remain", field_, field_name, length, left),
                 length_at);
        }
        bytes_start_ = in_.position();
        std::string_view out;
        (void)in_.take(length, out); // checked above
        return out;
    }

    // Groups are obsolete, but protobuf skips them inside unknown fields; so do we, to a limited depth.
    void skip_group(std::uint32_t group_field, int depth) {
        if (depth > max_proto_depth) {
            fail(fmt::format("nesting deeper than {} levels", max_proto_depth), field_start_);
        }
        const std::size_t group_start = field_start_;
        while (true) {
            if (in_.at_end()) {
                fail(fmt::format("group of field {} is not closed", group_field), group_start);
            }
            const std::size_t start = in_.position();
            const std::uint64_t key = read_raw_varint();
            const auto type = static_cast<std::uint32_t>(key & 7U);
            const std::uint64_t number = key >> 3U;
            if (number == 0 || number > 0x1FFFFFFFU || type > 5) {
                fail("invalid field key inside a group", start);
            }
            field_start_ = start;
            field_ = static_cast<std::uint32_t>(number);
            switch (static_cast<wire_type>(type)) {
            case wire_type::varint: read_raw_varint(); break;
            case wire_type::fixed64: read_raw_fixed(8); break;
            case wire_type::fixed32: read_raw_fixed(4); break;
            case wire_type::length_delimited: read_length_delimited("unknown"); break;
            case wire_type::start_group: skip_group(field_, depth + 1); break;
            case wire_type::end_group:
                if (number != group_field) {
                    fail(fmt::format("end-group marker for field {} closes the group of field {}", number,
                                     group_field),
                         start);
                }
                return;
            }
        }
    }

    wire_cursor in_;
    std::string_view file_;
    std::uint64_t base_;
    const char* message_;
    int depth_;
    std::size_t field_start_ = 0;
    std::size_t bytes_start_ = 0;
    std::uint32_t field_ = 0;
    wire_type type_ = wire_type::varint;
};

} // namespace tdbg::format::detail
