#pragma once
/// \file
/// The hook's encoder of its most frequent record, an Event holding one numeric tensor: the
/// bytes of write_tensor_event (event.hpp), computed in two flat passes instead of nested
/// ones. The lengths of the nested messages (tensor, value, summary) are added up from the
/// inside out, then every byte is written once from the outside in: no measuring pass per
/// level, no moving of a message whose length took two bytes. String tensors are written by
/// write_tensor_event itself. tests/format/test_flat_event.cpp holds the two encoders to the
/// same bytes.

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/event.hpp"

namespace tdbg::format::detail {

/// The key byte of a field below 16.
[[nodiscard]] constexpr char field_key(std::uint32_t field, wire_type type) noexcept {
    return static_cast<char>((field << 3U) | static_cast<std::uint32_t>(type));
}

/// Writes into memory sized ahead: each call advances `p`.
struct flat_writer {
    char* p;

    void key(std::uint32_t field, wire_type type) noexcept { *p++ = field_key(field, type); }
    void varint(std::uint64_t value) noexcept {
        while (value >= 0x80U) {
            *p++ = static_cast<char>((value & 0x7FU) | 0x80U);
            value >>= 7U;
        }
        *p++ = static_cast<char>(value);
    }
    void bytes(std::string_view b) noexcept {
        if (!b.empty()) {
            std::memcpy(p, b.data(), b.size());
            p += b.size();
        }
    }
    /// A length-delimited field's key and length.
    void open(std::uint32_t field, std::size_t length) noexcept {
        key(field, wire_type::length_delimited);
        varint(length);
    }
};

/// The bytes of a length-delimited field whose body takes `body` bytes.
[[nodiscard]] constexpr std::size_t delimited_size(std::size_t body) noexcept { return 1 + varint_size(body) + body; }

/// True when append_flat_tensor_event writes `ev` (its value is not a string tensor).
[[nodiscard]] inline bool flat_encodable(const tensor_event& ev) noexcept { return ev.value.type() != dtype::string; }

/// What append_flat_event reads of an Event holding one numeric tensor: a tensor_event's fields,
/// the value given as its dtype, extents and bytes (a reduction's element needs no tensor_value).
struct flat_tensor_event {
    std::string_view tag;
    double wall_time = 0;
    std::int64_t step = 0;
    std::optional<tdbg::mode> mode;
    std::optional<std::int64_t> mode_step;
    dtype type = dtype::float32;   ///< not dtype::string
    const std::size_t* extents = nullptr; ///< `rank` of them
    std::size_t rank = 0;
    std::string_view content; ///< the elements' little-endian bytes
};

/// The extents of a flat_tensor_event, for a range-for.
struct extent_range {
    const std::size_t* first;
    const std::size_t* last;
    [[nodiscard]] const std::size_t* begin() const noexcept { return first; }
    [[nodiscard]] const std::size_t* end() const noexcept { return last; }
};

/// `ev` as append_flat_event reads it (flat_encodable(ev)); it refers to `ev`.
[[nodiscard]] inline flat_tensor_event flat_view(const tensor_event& ev) noexcept {
    const tensor_value& v = ev.value;
    return {ev.tag, ev.wall_time, ev.step, ev.mode, ev.mode_step, v.type(), v.shape().data(), v.shape().size(),
            v.bytes()};
}

/// Appends the Event payload of `ev` to `out`: write_tensor_event's bytes for the event it views.
inline void append_flat_event(std::string& out, const flat_tensor_event& ev) {
    const std::string_view tag = ev.tag;
    const std::string_view content = ev.content;
    const auto dtype_number = static_cast<std::uint64_t>(ev.type);
    const extent_range shape{ev.extents, ev.extents + ev.rank};

    // A dim: its size (when not 0), and its name "<tag>_<size>".
    const auto digits_of = [](std::size_t size) {
        std::size_t n = 1;
        for (; size >= 10; size /= 10) {
            ++n;
        }
        return n;
    };
    const auto dim_body = [&](std::size_t size) {
        const std::size_t name = tag.size() + 1 + digits_of(size);
        return (size != 0 ? 1 + varint_size(size) : 0) + delimited_size(name);
    };
    std::size_t shape_body = 0;
    for (const std::size_t size : shape) {
        shape_body += delimited_size(dim_body(size));
    }
    const std::size_t tensor_body = (dtype_number != 0 ? 1 + varint_size(dtype_number) : 0) +
                                    delimited_size(shape_body) + (content.empty() ? 0 : delimited_size(content.size()));

    const bool has_metadata = ev.mode.has_value() || ev.mode_step.has_value();
    const decimal mode_step_text(ev.mode_step.value_or(0));
    const decimal mode_text(static_cast<int>(ev.mode.value_or(tdbg::mode::global)));
    const std::size_t mode_step_plugin =
        delimited_size(mode_step_plugin_name.size()) + delimited_size(mode_step_text.size);
    const std::size_t mode_plugin = delimited_size(mode_plugin_name.size()) + delimited_size(mode_text.size);
    const std::size_t metadata_body =
        (ev.mode_step ? delimited_size(mode_step_plugin) : 0) + (ev.mode ? delimited_size(mode_plugin) : 0);

    const std::size_t value_body = (tag.empty() ? 0 : delimited_size(tag.size())) + delimited_size(tensor_body) +
                                   (has_metadata ? delimited_size(metadata_body) : 0);
    const std::size_t summary_body = delimited_size(value_body);
    const std::uint64_t wall_bits = bits_of(ev.wall_time);
    const auto step = static_cast<std::uint64_t>(ev.step);
    const std::size_t event_body =
        (wall_bits != 0 ? 9 : 0) + (step != 0 ? 1 + varint_size(step) : 0) + delimited_size(summary_body);

    const std::size_t start = out.size();
    out.resize(start + event_body);
    flat_writer w{out.data() + start};
    if (wall_bits != 0) {
        w.key(1, wire_type::fixed64);
        for (unsigned i = 0; i < 8; ++i) {
            *w.p++ = static_cast<char>((wall_bits >> (8U * i)) & 0xFFU);
        }
    }
    if (step != 0) {
        w.key(2, wire_type::varint);
        w.varint(step);
    }
    w.open(5, summary_body);
    w.open(1, value_body);
    if (!tag.empty()) {
        w.open(1, tag.size());
        w.bytes(tag);
    }
    w.open(8, tensor_body);
    if (dtype_number != 0) {
        w.key(1, wire_type::varint);
        w.varint(dtype_number);
    }
    w.open(2, shape_body);
    for (const std::size_t size : shape) {
        w.open(2, dim_body(size));
        if (size != 0) {
            w.key(1, wire_type::varint);
            w.varint(size);
        }
        char digits[24];
        const auto end = std::to_chars(std::begin(digits), std::end(digits), size).ptr;
        w.open(2, tag.size() + 1 + static_cast<std::size_t>(end - digits));
        w.bytes(tag);
        *w.p++ = '_';
        w.bytes(std::string_view(digits, static_cast<std::size_t>(end - digits)));
    }
    if (!content.empty()) {
        w.open(4, content.size());
        w.bytes(content);
    }
    if (has_metadata) {
        w.open(9, metadata_body);
        const auto plugin = [&w](std::size_t body, std::string_view name, std::string_view content) {
            w.open(1, body);
            w.open(1, name.size());
            w.bytes(name);
            w.open(2, content.size());
            w.bytes(content);
        };
        if (ev.mode_step) {
            plugin(mode_step_plugin, mode_step_plugin_name, mode_step_text.view());
        }
        if (ev.mode) {
            plugin(mode_plugin, mode_plugin_name, mode_text.view());
        }
    }
}

/// Appends the Event payload of `ev` to `out`: write_tensor_event's bytes (flat_encodable(ev)).
inline void append_flat_tensor_event(std::string& out, const tensor_event& ev) { append_flat_event(out, flat_view(ev)); }

} // namespace tdbg::format::detail
