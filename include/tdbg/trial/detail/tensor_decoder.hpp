#pragma once
/// \file
/// A fast path for the records a trial reads most: an Event holding one
/// tensor whose elements are in tensor_content, as smdebug and tdbg write
/// them. Anything else (typed value fields, strings, unknown fields, bad
/// bytes) returns nullopt, and the caller decodes with format::decode_tensor_event,
/// which reads every variant and names the problem in its errors.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg::detail {

/// What the fast path found in an Event payload.
struct fast_tensor {
    std::string_view tag;
    tensor_value value;
    /// Where the elements start in the payload (for aligning the next read).
    std::size_t content_offset = 0;
};

/// Protobuf wire reading over a bounded view; every read checks its bounds.
class wire_reader {
public:
    explicit wire_reader(std::string_view data) noexcept : p_(data.data()), end_(data.data() + data.size()) {}

    [[nodiscard]] bool done() const noexcept { return p_ == end_; }

    bool varint(std::uint64_t& out) noexcept {
        if (p_ != end_ && static_cast<unsigned char>(*p_) < 0x80U) { // one byte: nearly every key and length
            out = static_cast<unsigned char>(*p_++);
            return true;
        }
        out = 0;
        for (unsigned shift = 0; shift < 64; shift += 7) {
            if (p_ == end_) {
                return false;
            }
            const auto byte = static_cast<unsigned char>(*p_++);
            out |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
            if ((byte & 0x80U) == 0) {
                return true;
            }
        }
        return false;
    }

    /// The next field's number and wire type.
    bool key(std::uint32_t& field, std::uint32_t& wire) noexcept {
        std::uint64_t k = 0;
        if (!varint(k) || (k >> 3U) == 0 || (k >> 3U) > std::numeric_limits<std::uint32_t>::max()) {
            return false;
        }
        field = static_cast<std::uint32_t>(k >> 3U);
        wire = static_cast<std::uint32_t>(k & 7U);
        return true;
    }

    /// A length-delimited field's bytes.
    bool bytes(std::string_view& out) noexcept {
        std::uint64_t n = 0;
        if (!varint(n) || n > static_cast<std::uint64_t>(end_ - p_)) {
            return false;
        }
        out = std::string_view(p_, static_cast<std::size_t>(n));
        p_ += n;
        return true;
    }

    /// Skips a field of wire type `wire` (varint, fixed64, bytes, fixed32).
    bool skip(std::uint32_t wire) noexcept {
        std::uint64_t ignored = 0;
        std::string_view view;
        switch (wire) {
        case 0: return varint(ignored);
        case 1: return advance(8);
        case 2: return bytes(view);
        case 5: return advance(4);
        default: return false;
        }
    }

private:
    bool advance(std::size_t n) noexcept {
        if (static_cast<std::size_t>(end_ - p_) < n) {
            return false;
        }
        p_ += n;
        return true;
    }

    const char* p_;
    const char* end_;
};

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
    wire_reader m(metadata);
    std::uint32_t field = 0;
    std::uint32_t wire = 0;
    while (!m.done()) {
        std::string_view plugin;
        if (!m.key(field, wire) || field != 1 || wire != 2 || !m.bytes(plugin)) {
            return false;
        }
        wire_reader p(plugin);
        std::string_view name;
        std::string_view content;
        while (!p.done()) {
            if (!p.key(field, wire) || wire != 2 || (field != 1 && field != 2)) {
                return false;
            }
            if (!p.bytes(field == 1 ? name : content)) {
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

/// Decodes `payload` (an Event) when it is the common case; the value views
/// the payload when its bytes are aligned (`keep_alive` owns them).
inline std::optional<fast_tensor> decode_tensor_fast(std::string_view payload, const std::shared_ptr<const void>& keep_alive) {
    std::string_view summary;
    {
        wire_reader event(payload);
        bool found = false;
        std::uint32_t field = 0;
        std::uint32_t wire = 0;
        while (!event.done()) {
            if (!event.key(field, wire)) {
                return std::nullopt;
            }
            if (field == 5 && wire == 2) {
                if (found || !event.bytes(summary)) {
                    return std::nullopt;
                }
                found = true;
            } else if ((field == 1 && wire == 1) || (field == 2 && wire == 0)) {
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
    }
    std::string_view value_bytes;
    {
        wire_reader s(summary);
        std::uint32_t field = 0;
        std::uint32_t wire = 0;
        if (!s.key(field, wire) || field != 1 || wire != 2 || !s.bytes(value_bytes) || !s.done()) {
            return std::nullopt;
        }
    }
    std::string_view tag;
    std::string_view tensor;
    bool has_tag = false;
    bool has_tensor = false;
    {
        wire_reader v(value_bytes);
        std::uint32_t field = 0;
        std::uint32_t wire = 0;
        while (!v.done()) {
            if (!v.key(field, wire) || wire != 2) {
                return std::nullopt;
            }
            if (field == 1) {
                has_tag = v.bytes(tag);
                if (!has_tag) {
                    return std::nullopt;
                }
            } else if (field == 8) {
                if (has_tensor || !v.bytes(tensor)) {
                    return std::nullopt;
                }
                has_tensor = true;
            } else if (field == 7) { // node_name
                if (!v.skip(wire)) {
                    return std::nullopt;
                }
            } else if (field == 9) { // metadata: the index has mode and mode step; only checked here
                std::string_view metadata;
                if (!v.bytes(metadata) || !metadata_is_valid(metadata)) {
                    return std::nullopt;
                }
            } else {
                return std::nullopt;
            }
        }
    }
    if (!has_tag || !has_tensor) {
        return std::nullopt;
    }
    std::uint64_t dtype_number = 0;
    std::string_view content;
    tensor_value::shape_type shape;
    std::size_t count = 1;
    {
        wire_reader t(tensor);
        std::uint32_t field = 0;
        std::uint32_t wire = 0;
        while (!t.done()) {
            if (!t.key(field, wire)) {
                return std::nullopt;
            }
            if (field == 1 && wire == 0) {
                if (!t.varint(dtype_number)) {
                    return std::nullopt;
                }
            } else if (field == 4 && wire == 2) {
                if (!t.bytes(content)) {
                    return std::nullopt;
                }
            } else if (field == 2 && wire == 2) {
                std::string_view shape_bytes;
                if (!t.bytes(shape_bytes)) {
                    return std::nullopt;
                }
                wire_reader sh(shape_bytes);
                while (!sh.done()) {
                    std::string_view dim_bytes;
                    if (!sh.key(field, wire) || field != 2 || wire != 2 || !sh.bytes(dim_bytes)) {
                        return std::nullopt; // unknown_rank and the like: the full decoder decides
                    }
                    wire_reader dim(dim_bytes);
                    std::uint64_t size = 0;
                    while (!dim.done()) {
                        if (!dim.key(field, wire)) {
                            return std::nullopt;
                        }
                        if (field == 1 && wire == 0) {
                            if (!dim.varint(size)) {
                                return std::nullopt;
                            }
                        } else if (field != 2 || wire != 2 || !dim.skip(wire)) { // the dim's name
                            return std::nullopt;
                        }
                    }
                    if (size > (std::uint64_t{1} << 48U) || (size != 0 && count > (std::uint64_t{1} << 48U) / size)) {
                        return std::nullopt;
                    }
                    count *= static_cast<std::size_t>(size);
                    shape.push_back(static_cast<std::size_t>(size));
                }
            } else {
                return std::nullopt; // typed value fields, string_val, ...
            }
        }
    }
    const auto type = dtype_number <= 64 ? dtype_from_int(static_cast<long long>(dtype_number)) : std::nullopt;
    if (!type || *type == dtype::string || count * dtype_size(*type) != content.size()) {
        return std::nullopt;
    }
    return fast_tensor{tag, tensor_value::view_bytes(*type, std::move(shape), content, keep_alive),
                       static_cast<std::size_t>(content.data() - payload.data())};
}

} // namespace tdbg::detail
