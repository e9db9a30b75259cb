#pragma once
/// \file
/// Definitions of tdbg/format/detail/fast_event.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "tdbg/format/detail/fast_event.hpp"
#include "tdbg/format/detail/proto_reader.hpp"

namespace tdbg::format::detail {

/// True for a decimal the full decoder accepts in plugin data: an optional
/// sign and 1 to 18 digits.
inline bool plugin_decimal(std::string_view text, std::int64_t& value) noexcept {
    bool negative = false;
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || text.size() > 18) {
        return false;
    }
    value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        value = value * 10 + (c - '0');
    }
    value = negative ? -value : value;
    return true;
}

/// True when SummaryMetadata holds only well-formed plugin data, with a
/// numeric mode step and a mode number 1..4 where those are present.
inline bool metadata_is_valid(std::string_view metadata) noexcept {
    wire_cursor m(metadata);
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    while (!m.at_end()) {
        std::string_view plugin;
        if (!m.key(field, wire) || field != 1 || wire != wire_type::length_delimited || !m.length_delimited(plugin)) {
            return false;
        }
        wire_cursor p(plugin);
        std::string_view name;
        std::string_view content;
        while (!p.at_end()) {
            if (!p.key(field, wire) || wire != wire_type::length_delimited || (field != 1 && field != 2)) {
                return false;
            }
            if (!p.length_delimited(field == 1 ? name : content)) {
                return false;
            }
        }
        std::int64_t n = 0;
        if (name == "mode_step" && !plugin_decimal(content, n)) {
            return false;
        }
        if (name == "mode" && (!plugin_decimal(content, n) || n < 1 || n > 4)) {
            return false;
        }
    }
    return true;
}

/// The Summary of an Event that holds only wall_time, step and one summary; nullopt otherwise.
inline std::optional<std::string_view> fast_event_summary(std::string_view payload) noexcept {
    std::string_view summary;
    wire_cursor event(payload);
    bool found = false;
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    while (!event.at_end()) {
        if (!event.key(field, wire)) {
            return std::nullopt;
        }
        if (field == 5 && wire == wire_type::length_delimited) {
            if (found || !event.length_delimited(summary)) {
                return std::nullopt;
            }
            found = true;
        } else if ((field == 1 && wire == wire_type::fixed64) || (field == 2 && wire == wire_type::varint)) {
            if (!event.skip(wire)) { // wall_time, step: the index already says which step
                return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
    }
    if (!found) {
        return std::nullopt;
    }
    return summary;
}

/// The one Summary.Value of a Summary; nullopt when it has another number of values.
inline std::optional<std::string_view> fast_summary_value(std::string_view summary) noexcept {
    std::string_view value_bytes;
    wire_cursor s(summary);
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    if (!s.key(field, wire) || field != 1 || wire != wire_type::length_delimited || !s.length_delimited(value_bytes) ||
        !s.at_end()) {
        return std::nullopt;
    }
    return value_bytes;
}

/// The tag and the TensorProto of a Summary.Value (its node name skipped, its metadata
/// checked); nullopt when either is missing or anything else is there.
inline std::optional<std::pair<std::string_view, std::string_view>> fast_tag_and_tensor(
    std::string_view value_bytes) noexcept {
    std::string_view tag;
    std::string_view tensor;
    bool has_tag = false;
    bool has_tensor = false;
    wire_cursor v(value_bytes);
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    while (!v.at_end()) {
        if (!v.key(field, wire) || wire != wire_type::length_delimited) {
            return std::nullopt;
        }
        if (field == 1) {
            has_tag = v.length_delimited(tag);
            if (!has_tag) {
                return std::nullopt;
            }
        } else if (field == 8) {
            if (has_tensor || !v.length_delimited(tensor)) {
                return std::nullopt;
            }
            has_tensor = true;
        } else if (field == 7) { // node_name
            if (!v.skip(wire)) {
                return std::nullopt;
            }
        } else if (field == 9) { // metadata: the index has mode and mode step; only checked here
            std::string_view metadata;
            if (!v.length_delimited(metadata) || !metadata_is_valid(metadata)) {
                return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
    }
    if (!has_tag || !has_tensor) {
        return std::nullopt;
    }
    return std::pair<std::string_view, std::string_view>{tag, tensor};
}

/// What the fast path reads of a TensorProto: its dtype number, tensor_content and shape.
struct fast_tensor_fields {
    std::uint64_t dtype_number = 0;
    std::string_view content;
    tensor_value::shape_type shape;
    std::size_t count = 1; // the shape's element count
};

/// Adds the dims of a TensorShapeProto to `out`; false for anything the full decoder decides
/// (unknown_rank, a size that cannot be, too many dims).
inline bool fast_tensor_shape(std::string_view shape_bytes, fast_tensor_fields& out) {
    wire_cursor sh(shape_bytes);
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    while (!sh.at_end()) {
        std::string_view dim_bytes;
        if (!sh.key(field, wire) || field != 2 || wire != wire_type::length_delimited ||
            !sh.length_delimited(dim_bytes)) {
            return false; // unknown_rank and the like: the full decoder decides
        }
        wire_cursor dim(dim_bytes);
        std::uint64_t size = 0;
        while (!dim.at_end()) {
            if (!dim.key(field, wire)) {
                return false;
            }
            if (field == 1 && wire == wire_type::varint) {
                if (!dim.varint(size)) {
                    return false;
                }
            } else if (field != 2 || wire != wire_type::length_delimited || !dim.skip(wire)) { // the dim's name
                return false;
            }
        }
        if (size > (std::uint64_t{1} << 48U) || (size != 0 && out.count > (std::uint64_t{1} << 48U) / size)) {
            return false;
        }
        if (out.shape.size() == max_tensor_rank) {
            return false; // the full decoder says why
        }
        out.count *= static_cast<std::size_t>(size);
        out.shape.push_back(static_cast<std::size_t>(size));
    }
    return true;
}

/// The fields of a TensorProto holding only dtype, shape and tensor_content; nullopt otherwise
/// (typed value fields, string_val, ...).
inline std::optional<fast_tensor_fields> fast_tensor_proto(std::string_view tensor) {
    fast_tensor_fields out;
    wire_cursor t(tensor);
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    while (!t.at_end()) {
        if (!t.key(field, wire)) {
            return std::nullopt;
        }
        if (field == 1 && wire == wire_type::varint) {
            if (!t.varint(out.dtype_number)) {
                return std::nullopt;
            }
        } else if (field == 4 && wire == wire_type::length_delimited) {
            if (!t.length_delimited(out.content)) {
                return std::nullopt;
            }
        } else if (field == 2 && wire == wire_type::length_delimited) {
            std::string_view shape_bytes;
            if (!t.length_delimited(shape_bytes) || !fast_tensor_shape(shape_bytes, out)) {
                return std::nullopt;
            }
        } else {
            return std::nullopt; // typed value fields, string_val, ...
        }
    }
    return out;
}

TDBG_DECL std::optional<fast_tensor> decode_tensor_fast(std::string_view payload,
                                                        const std::shared_ptr<const void>& keep_alive) {
    const auto summary = fast_event_summary(payload);
    const auto value_bytes = summary ? fast_summary_value(*summary) : std::nullopt;
    const auto tag_and_tensor = value_bytes ? fast_tag_and_tensor(*value_bytes) : std::nullopt;
    if (!tag_and_tensor) {
        return std::nullopt;
    }
    auto fields = fast_tensor_proto(tag_and_tensor->second);
    if (!fields) {
        return std::nullopt;
    }
    const auto type =
        fields->dtype_number <= 64 ? dtype_from_int(static_cast<long long>(fields->dtype_number)) : std::nullopt;
    if (!type || *type == dtype::string || fields->count * dtype_size(*type) != fields->content.size()) {
        return std::nullopt;
    }
    return fast_tensor{tag_and_tensor->first,
                       tensor_value::view_bytes(*type, std::move(fields->shape), fields->content, keep_alive),
                       static_cast<std::size_t>(fields->content.data() - payload.data())};
}

namespace head {

/// A length-delimited field entered where its bytes may run past the prefix: its declared
/// length, and the bytes of it the prefix holds.
struct entered {
    std::uint64_t declared = 0;
    std::string_view present;
};

/// Enters the length-delimited field at `c`'s position (its key read), which must end at or
/// before `limit` bytes from the cursor's start of data.
inline bool enter(wire_cursor& c, std::uint64_t limit, entered& out) noexcept {
    std::uint64_t n = 0;
    if (!c.varint(n) || n > limit - std::min<std::uint64_t>(limit, c.position())) {
        return false;
    }
    const std::size_t at = c.position();
    out.declared = n;
    out.present = c.data().substr(at, static_cast<std::size_t>(std::min<std::uint64_t>(n, c.data().size() - at)));
    return true;
}

} // namespace head

TDBG_DECL std::optional<tensor_head> decode_tensor_head(std::string_view prefix, std::uint64_t payload_size) {
    if (prefix.size() > payload_size) {
        return std::nullopt;
    }
    std::uint32_t field = 0;
    wire_type wire = wire_type::varint;
    // Event: wall_time and step, then the summary (whose end may lie past the prefix).
    wire_cursor event(prefix);
    head::entered summary;
    for (;;) {
        if (!event.key(field, wire)) {
            return std::nullopt;
        }
        if (field == 5 && wire == wire_type::length_delimited) {
            if (!head::enter(event, payload_size, summary) || event.position() + summary.declared != payload_size) {
                return std::nullopt; // the summary is the payload's last field
            }
            break;
        }
        if (!((field == 1 && wire == wire_type::fixed64) || (field == 2 && wire == wire_type::varint)) ||
            !event.skip(wire)) {
            return std::nullopt;
        }
    }
    const std::uint64_t summary_at = event.position();
    // Summary: one value.
    wire_cursor s(summary.present);
    head::entered value;
    if (!s.key(field, wire) || field != 1 || wire != wire_type::length_delimited ||
        !head::enter(s, summary.declared, value) || s.position() + value.declared != summary.declared) {
        return std::nullopt;
    }
    const std::uint64_t value_at = summary_at + s.position();
    // Summary.Value: the tag, then the tensor (metadata may follow it).
    wire_cursor v(value.present);
    tensor_head out;
    bool has_tag = false;
    head::entered tensor;
    for (;;) {
        if (!v.key(field, wire) || wire != wire_type::length_delimited) {
            return std::nullopt;
        }
        if (field == 1) {
            if (!v.length_delimited(out.tag)) {
                return std::nullopt;
            }
            has_tag = true;
        } else if (field == 7) { // node_name
            if (!v.skip(wire)) {
                return std::nullopt;
            }
        } else if (field == 8 && has_tag) {
            if (!head::enter(v, value.declared, tensor)) {
                return std::nullopt;
            }
            break;
        } else {
            return std::nullopt;
        }
    }
    const std::uint64_t tensor_at = value_at + v.position();
    // TensorProto: dtype and shape, then tensor_content as its last field.
    wire_cursor t(tensor.present);
    fast_tensor_fields fields;
    for (;;) {
        if (!t.key(field, wire)) {
            return std::nullopt;
        }
        if (field == 1 && wire == wire_type::varint) {
            if (!t.varint(fields.dtype_number)) {
                return std::nullopt;
            }
        } else if (field == 2 && wire == wire_type::length_delimited) {
            std::string_view shape_bytes;
            if (!t.length_delimited(shape_bytes) || !fast_tensor_shape(shape_bytes, fields)) {
                return std::nullopt;
            }
        } else if (field == 4 && wire == wire_type::length_delimited) {
            std::uint64_t n = 0;
            if (!t.varint(n) || t.position() + n != tensor.declared) {
                return std::nullopt;
            }
            out.content_offset = tensor_at + t.position();
            out.content_size = n;
            break;
        } else {
            return std::nullopt;
        }
    }
    const auto type =
        fields.dtype_number <= 64 ? dtype_from_int(static_cast<long long>(fields.dtype_number)) : std::nullopt;
    if (!type || *type == dtype::string || fields.count * dtype_size(*type) != out.content_size) {
        return std::nullopt;
    }
    out.type = *type;
    out.shape = std::move(fields.shape);
    return out;
}

} // namespace tdbg::format::detail
