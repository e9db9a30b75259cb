#pragma once
/// \file
/// A small protobuf wire-format encoder, enough for the handful of messages in
/// event files (no libprotobuf): the wire types and proto_writer, which writes
/// nested messages in one pass after measuring them (into a string: once, the
/// length placed after the body). The decoder is proto_reader.hpp.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>


namespace tdbg::format::detail {

/// Protobuf wire types.
enum class wire_type : std::uint32_t {
    varint = 0,
    fixed64 = 1,
    length_delimited = 2,
    start_group = 3,
    end_group = 4,
    fixed32 = 5,
};

inline const char* wire_type_name(wire_type t) noexcept {
    switch (t) {
    case wire_type::varint: return "varint";
    case wire_type::fixed64: return "fixed64";
    case wire_type::length_delimited: return "length-delimited";
    case wire_type::start_group: return "start-group";
    case wire_type::end_group: return "end-group";
    case wire_type::fixed32: return "fixed32";
    }
    return "invalid";
}

/// Nesting deeper than this (messages or groups) is rejected.
inline constexpr int max_proto_depth = 64;

template <class T>
std::uint64_t bits_of(T value) noexcept {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "bits_of: float or double");
    if constexpr (sizeof(T) == 4) {
        std::uint32_t b = 0;
        std::memcpy(&b, &value, 4);
        return b;
    } else {
        std::uint64_t b = 0;
        std::memcpy(&b, &value, 8);
        return b;
    }
}

/// The number of bytes of `value` as a varint.
constexpr std::size_t varint_size(std::uint64_t value) noexcept {
    std::size_t n = 1;
    while (value >= 0x80U) {
        value >>= 7U;
        ++n;
    }
    return n;
}

/// A sink that only counts bytes: measures a message before it is written.
struct size_sink {
    std::size_t size = 0;
    void append(const char*, std::size_t n) noexcept { size += n; }
    void push(char) noexcept { ++size; }
};

/// A sink that appends to a string through a cursor: the string is grown ahead and written in
/// place (no call into the library per field), and cut to what was written when the sink goes.
/// A nested message is written once, after a place for its length that is widened when needed
/// (see proto_writer::message_field).
class string_cursor {
public:
    /// Writes after what `out` holds.
    explicit string_cursor(std::string& out) : out_(&out), size_(out.size()) { out.resize(size_ + slack); }
    string_cursor(const string_cursor&) = delete;
    string_cursor& operator=(const string_cursor&) = delete;
    string_cursor(string_cursor&&) = delete;
    string_cursor& operator=(string_cursor&&) = delete;
    ~string_cursor() { out_->resize(size_); } // shrinking: no allocation, no throw

    void append(const char* p, std::size_t n) {
        const std::size_t at = size_;
        reserve(n);
        std::memcpy(out_->data() + at, p, n);
        size_ = at + n;
    }
    void push(char c) {
        const std::size_t at = size_;
        reserve(1);
        out_->data()[at] = c;
        size_ = at + 1;
    }
    /// Appends `value` as a varint. The position is kept in a local: the stores go through a
    /// char pointer, which may alias any member, and would make the compiler reload it.
    void varint(std::uint64_t value) {
        const std::size_t at = size_;
        reserve(10);
        char* const p = out_->data() + at;
        std::size_t n = 0;
        while (value >= 0x80U) {
            p[n++] = static_cast<char>((value & 0x7FU) | 0x80U);
            value >>= 7U;
        }
        p[n++] = static_cast<char>(value);
        size_ = at + n;
    }
    /// The bytes written so far (the string's own included).
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /// Byte `pos` of what was written.
    [[nodiscard]] char* at(std::size_t pos) noexcept { return out_->data() + pos; }
    /// Inserts `n` bytes (their values unspecified) at `pos`, moving what follows.
    void open_gap(std::size_t pos, std::size_t n) {
        reserve(n);
        std::memmove(out_->data() + pos + n, out_->data() + pos, size_ - pos);
        size_ += n;
    }

private:
    // Room for `n` more bytes; the string's capacity grows geometrically, as it does.
    void reserve(std::size_t n) {
        if (out_->size() - size_ < n) {
            out_->resize(size_ + n + slack);
        }
    }

    static constexpr std::size_t slack = 256; // made room for at a time

    std::string* out_;
    std::size_t size_;
};

/// Writes fields of one message to a sink. Nested messages are given as a
/// callable `body(auto& writer)`; the writer measures the body, writes its
/// length, then writes it (into a string_cursor: writes it once, then its length).
template <class Sink>
class proto_writer {
public:
    explicit proto_writer(Sink& sink) : sink_(&sink) {}

    void raw_varint(std::uint64_t value) {
        if constexpr (std::is_same_v<Sink, size_sink>) {
            sink_->size += varint_size(value);
        } else if constexpr (std::is_same_v<Sink, string_cursor>) {
            sink_->varint(value);
        } else {
            char buffer[10];
            std::size_t n = 0;
            while (value >= 0x80U) {
                buffer[n++] = static_cast<char>((value & 0x7FU) | 0x80U);
                value >>= 7U;
            }
            buffer[n++] = static_cast<char>(value);
            sink_->append(buffer, n);
        }
    }
    void tag(std::uint32_t field, wire_type type) {
        raw_varint((static_cast<std::uint64_t>(field) << 3U) | static_cast<std::uint32_t>(type));
    }
    void raw_fixed(std::uint64_t bits, std::size_t bytes) {
        char buffer[8];
        for (std::size_t i = 0; i < bytes; ++i) {
            buffer[i] = static_cast<char>((bits >> (8U * i)) & 0xFFU);
        }
        sink_->append(buffer, bytes);
    }

    /// A varint field (int32, int64, uint64, bool, enum), written even when zero.
    void varint_field(std::uint32_t field, std::uint64_t value) {
        tag(field, wire_type::varint);
        raw_varint(value);
    }
    /// A signed integer field: negative values take ten bytes, as in protobuf.
    void int_field(std::uint32_t field, std::int64_t value) { varint_field(field, static_cast<std::uint64_t>(value)); }
    /// A double field, written even when zero.
    void double_field(std::uint32_t field, double value) {
        tag(field, wire_type::fixed64);
        raw_fixed(bits_of(value), 8);
    }
    /// A float field, written even when zero.
    void float_field(std::uint32_t field, float value) {
        tag(field, wire_type::fixed32);
        raw_fixed(bits_of(value), 4);
    }
    /// A string or bytes field, written even when empty.
    void bytes_field(std::uint32_t field, std::string_view bytes) {
        tag(field, wire_type::length_delimited);
        raw_varint(bytes.size());
        sink_->append(bytes.data(), bytes.size());
    }
    /// A string or bytes field whose value is `parts` one after the other (written even when
    /// empty): no string is built for it.
    void bytes_field(std::uint32_t field, std::initializer_list<std::string_view> parts) {
        std::size_t size = 0;
        for (const std::string_view part : parts) {
            size += part.size();
        }
        tag(field, wire_type::length_delimited);
        raw_varint(size);
        for (const std::string_view part : parts) {
            sink_->append(part.data(), part.size());
        }
    }
    /// A packed repeated double field (omitted when empty, as protobuf does).
    void packed_doubles(std::uint32_t field, const std::vector<double>& values) {
        if (values.empty()) {
            return;
        }
        tag(field, wire_type::length_delimited);
        raw_varint(values.size() * 8);
        for (double v : values) {
            raw_fixed(bits_of(v), 8);
        }
    }
    /// A nested message field, always written (explicit presence).
    template <class Body>
    void message_field(std::uint32_t field, Body&& body) {
        if constexpr (std::is_same_v<Sink, string_cursor>) {
            // Into a string: the body is written once after a one-byte place for its length,
            // which is widened when the body turns out longer than a one-byte varint holds.
            tag(field, wire_type::length_delimited);
            const std::size_t at = sink_->size();
            sink_->push('\0');
            body(*this);
            std::uint64_t size = sink_->size() - at - 1;
            const std::size_t n = varint_size(size);
            if (n > 1) {
                sink_->open_gap(at, n - 1);
            }
            char* length = sink_->at(at);
            for (std::size_t i = 0; i + 1 < n; ++i) {
                length[i] = static_cast<char>((size & 0x7FU) | 0x80U);
                size >>= 7U;
            }
            length[n - 1] = static_cast<char>(size);
            return;
        }
        size_sink counter;
        proto_writer<size_sink> measure(counter);
        body(measure);
        tag(field, wire_type::length_delimited);
        raw_varint(counter.size);
        if constexpr (std::is_same_v<Sink, size_sink>) {
            sink_->size += counter.size;
        } else {
            body(*this);
        }
    }

    // proto3 implicit presence: a field equal to its default is not written.
    // Floating-point defaults are compared bitwise, as protobuf does, so -0.0 is written.
    void varint_field_if(std::uint32_t field, std::uint64_t value) {
        if (value != 0) {
            varint_field(field, value);
        }
    }
    void int_field_if(std::uint32_t field, std::int64_t value) {
        if (value != 0) {
            int_field(field, value);
        }
    }
    void double_field_if(std::uint32_t field, double value) {
        if (bits_of(value) != 0) {
            double_field(field, value);
        }
    }
    void bytes_field_if(std::uint32_t field, std::string_view bytes) {
        if (!bytes.empty()) {
            bytes_field(field, bytes);
        }
    }

private:
    Sink* sink_;
};

/// Encodes one top-level message: `body(writer)` writes its fields.
template <class Body>
std::string encode_message(Body&& body) {
    std::string out;
    {
        string_cursor sink(out);
        proto_writer<string_cursor> writer(sink);
        body(writer);
    }
    return out;
}

} // namespace tdbg::format::detail
