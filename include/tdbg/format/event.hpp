#pragma once
/// \file
/// The payload of event-file records: TensorFlow's `Event` protobuf with a
/// `Summary` holding a tensor (smdebug), a scalar or a histogram (TensorBoard).
/// Encoding reproduces the bytes smdebug's Python writer produces: fields in
/// number order, proto3 defaults omitted, an empty tensor_shape for 0-d
/// tensors, dims named "<tag>_<size>", mode and mode step as plugin data.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/tfrecord.hpp"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tdbg's event encoding copies tensor bytes as they are in memory: it needs a little-endian target"
#endif

namespace tdbg::format {

/// The plugin name under which smdebug stores the mode step.
inline constexpr std::string_view mode_step_plugin_name = "mode_step";
/// The plugin name under which smdebug stores the mode (1..4).
inline constexpr std::string_view mode_plugin_name = "mode";
/// The file_version TensorBoard expects in the first event of a file.
inline constexpr std::string_view tensorboard_file_version = "brain.Event:2";

/// One saved tensor: an Event holding one Summary.Value with a TensorProto.
struct tensor_event {
    std::int64_t step = 0;
    double wall_time = 0;
    std::string tag;
    tensor_value value;
    /// smdebug always writes both; when absent, smdebug's reader takes GLOBAL and the global step.
    std::optional<tdbg::mode> mode;
    std::optional<std::int64_t> mode_step;
};

/// TensorFlow's HistogramProto, as TensorBoard reads it.
struct histogram {
    double min = 0;
    double max = 0;
    double num = 0;
    double sum = 0;
    double sum_squares = 0;
    std::vector<double> bucket_limit;
    std::vector<double> bucket;

    friend bool operator==(const histogram& a, const histogram& b) {
        return a.min == b.min && a.max == b.max && a.num == b.num && a.sum == b.sum && a.sum_squares == b.sum_squares &&
               a.bucket_limit == b.bucket_limit && a.bucket == b.bucket;
    }
    friend bool operator!=(const histogram& a, const histogram& b) { return !(a == b); }
};

/// One Summary.Value: a tag and at most one of scalar, histogram or tensor.
struct summary_value {
    std::string tag;
    std::string node_name;
    std::optional<float> simple_value;
    std::optional<histogram> histo;
    std::optional<tensor_value> tensor;
    /// SummaryMetadata.plugin_data entries (plugin_name, content), in file order.
    std::vector<std::pair<std::string, std::string>> plugin_data;
    /// Read from the "mode" and "mode_step" plugin data, when present.
    std::optional<tdbg::mode> mode;
    std::optional<std::int64_t> mode_step;
};

/// A decoded Event (the fields tdbg knows; others are skipped).
struct event {
    double wall_time = 0;
    std::int64_t step = 0;
    std::optional<std::string> file_version;
    /// True when the Event holds a Summary (possibly with no values).
    bool has_summary = false;
    std::vector<summary_value> values;
};

namespace detail {

inline std::string decimal(std::int64_t v) { return std::to_string(v); }

// Writes a TensorProto exactly as smdebug's make_tensor_proto builds it.
template <class Writer>
void write_tensor_proto(Writer& w, std::string_view tag, const tensor_value& value) {
    const bool is_string = value.type() == dtype::string;
    // smdebug leaves dtype unset (DT_INVALID) for strings; its reader keys on that.
    if (!is_string) {
        w.varint_field_if(1, static_cast<std::uint64_t>(value.type()));
    }
    w.message_field(2, [&](auto& shape) {
        for (std::size_t size : value.shape()) {
            shape.message_field(2, [&](auto& dim) {
                dim.varint_field_if(1, static_cast<std::uint64_t>(size));
                std::string name(tag);
                name += '_';
                name += std::to_string(size);
                dim.bytes_field_if(2, name);
            });
        }
    });
    if (is_string) {
        for (const std::string& s : value.strings()) {
            w.bytes_field(8, s);
        }
    } else {
        w.bytes_field_if(4, value.bytes());
    }
}

template <class Writer>
void write_event_header(Writer& w, double wall_time, std::int64_t step) {
    w.double_field_if(1, wall_time);
    w.int_field_if(2, step);
}

// Writes an Event holding one tensor exactly as smdebug's FileWriter.write_tensor does.
template <class Writer>
void write_tensor_event(Writer& w, const tensor_event& ev) {
    write_event_header(w, ev.wall_time, ev.step);
    w.message_field(5, [&](auto& summary) {
        summary.message_field(1, [&](auto& value) {
            value.bytes_field_if(1, ev.tag);
            value.message_field(8, [&](auto& tensor) { write_tensor_proto(tensor, ev.tag, ev.value); });
            // smdebug always writes both entries, mode step first.
            if (ev.mode || ev.mode_step) {
                value.message_field(9, [&](auto& metadata) {
                    if (ev.mode_step) {
                        metadata.message_field(1, [&](auto& plugin) {
                            plugin.bytes_field(1, mode_step_plugin_name);
                            plugin.bytes_field(2, decimal(*ev.mode_step));
                        });
                    }
                    if (ev.mode) {
                        metadata.message_field(1, [&](auto& plugin) {
                            plugin.bytes_field(1, mode_plugin_name);
                            plugin.bytes_field(2, decimal(static_cast<int>(*ev.mode)));
                        });
                    }
                });
            }
        });
    });
}

inline std::optional<std::int64_t> parse_decimal(std::string_view text) noexcept {
    bool negative = false;
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || text.size() > 18) {
        return std::nullopt;
    }
    std::int64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        v = v * 10 + (c - '0');
    }
    return negative ? -v : v;
}

// The fields of a TensorProto as found on the wire, before they become a tensor_value.
struct tensor_proto_fields {
    std::uint64_t dtype_number = 0;
    std::vector<std::int64_t> dims;
    bool unknown_rank = false;
    std::string_view content;
    std::vector<std::string_view> string_val;
    std::vector<std::uint16_t> half_val;
    std::vector<float> float_val;
    std::vector<double> double_val;
    std::vector<std::int32_t> int_val;
    std::vector<std::int64_t> int64_val;
    std::vector<std::uint8_t> bool_val;
    std::vector<std::uint32_t> uint32_val;
    std::vector<std::uint64_t> uint64_val;
    std::vector<float> scomplex_val;
    std::vector<double> dcomplex_val;
};

inline void read_tensor_shape(proto_reader shape, tensor_proto_fields& out) {
    while (shape.next()) {
        switch (shape.field()) {
        case 2: {
            proto_reader dim = shape.message("dim", "TensorShapeProto.Dim");
            std::int64_t size = 0;
            while (dim.next()) {
                if (dim.field() == 1) {
                    size = dim.int64("size");
                } else {
                    dim.skip(); // name
                }
            }
            out.dims.push_back(size);
            break;
        }
        case 3: out.unknown_rank = shape.varint("unknown_rank") != 0; break;
        default: shape.skip();
        }
    }
}

inline tensor_proto_fields read_tensor_proto(proto_reader t) {
    tensor_proto_fields f;
    const auto as_u16 = [](std::uint64_t v) { return static_cast<std::uint16_t>(v); };
    const auto as_i32 = [](std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); };
    const auto as_i64 = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
    const auto as_bool = [](std::uint64_t v) { return static_cast<std::uint8_t>(v != 0 ? 1 : 0); };
    const auto as_u32 = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
    const auto same = [](auto v) { return v; };
    while (t.next()) {
        switch (t.field()) {
        case 1: f.dtype_number = t.varint("dtype"); break;
        case 2: read_tensor_shape(t.message("tensor_shape", "TensorShapeProto"), f); break;
        case 4: f.content = t.bytes("tensor_content"); break;
        case 5: t.repeated<float>(f.float_val, "float_val", same); break;
        case 6: t.repeated<double>(f.double_val, "double_val", same); break;
        case 7: t.repeated<std::uint64_t>(f.int_val, "int_val", as_i32); break;
        case 8: f.string_val.push_back(t.bytes("string_val")); break;
        case 9: t.repeated<float>(f.scomplex_val, "scomplex_val", same); break;
        case 10: t.repeated<std::uint64_t>(f.int64_val, "int64_val", as_i64); break;
        case 11: t.repeated<std::uint64_t>(f.bool_val, "bool_val", as_bool); break;
        case 12: t.repeated<double>(f.dcomplex_val, "dcomplex_val", same); break;
        case 13: t.repeated<std::uint64_t>(f.half_val, "half_val", as_u16); break;
        case 16: t.repeated<std::uint64_t>(f.uint32_val, "uint32_val", as_u32); break;
        case 17: t.repeated<std::uint64_t>(f.uint64_val, "uint64_val", same); break;
        default: t.skip();
        }
    }
    return f;
}

// Copies typed values into the little-endian bytes of `T`.
template <class T, class Source>
std::string typed_bytes(const std::vector<Source>& values) {
    std::string out(values.size() * sizeof(T), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) {
        const T v = static_cast<T>(values[i]);
        std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
    }
    return out;
}

inline tensor_value make_tensor_value(const tensor_proto_fields& f, std::string_view tag,
                                      const std::shared_ptr<const void>& keep_alive, std::string_view file,
                                      std::uint64_t offset) {
    auto fail = [&](const std::string& why) {
        throw format_error(fmt::format("TensorProto of tensor '{}': {}", tag, why), std::string(file), offset);
    };
    if (f.unknown_rank) {
        fail("the shape has unknown rank");
    }
    if (f.dims.size() > max_tensor_rank) {
        fail(fmt::format("the shape has {} dimensions, more than the {} a tensor may have", f.dims.size(),
                         max_tensor_rank));
    }
    tensor_value::shape_type shape;
    shape.reserve(f.dims.size());
    std::size_t count = 1;
    bool overflow = false;
    for (std::int64_t d : f.dims) {
        if (d < 0) {
            fail(fmt::format("dimension {} has size {}", shape.size(), d));
        }
        const auto size = static_cast<std::size_t>(d);
        if (size != 0 && count > std::numeric_limits<std::size_t>::max() / size) {
            overflow = true;
        }
        count *= size;
        shape.push_back(size);
    }
    if (overflow) {
        count = std::numeric_limits<std::size_t>::max(); // no buffer can hold it: the size checks below fail
    }
    // dtype 0 (DT_INVALID) is how smdebug marks string tensors.
    const bool is_string = f.dtype_number == 0 || f.dtype_number == static_cast<std::uint64_t>(dtype::string);
    if (is_string) {
        if (!f.content.empty()) {
            fail(fmt::format("tensor_content with dtype {} (string)", f.dtype_number));
        }
        if (f.string_val.size() != count) {
            fail(fmt::format("{} string values for a shape of {} elements", f.string_val.size(),
                             overflow ? std::string("too many") : std::to_string(count)));
        }
        std::vector<std::string> strings(f.string_val.begin(), f.string_val.end());
        return tensor_value(std::move(strings), std::move(shape));
    }
    const auto type = f.dtype_number <= 1000 ? dtype_from_int(static_cast<long long>(f.dtype_number)) : std::nullopt;
    if (!type) {
        fail(fmt::format("unsupported dtype {}", f.dtype_number));
    }
    const std::size_t element = dtype_size(*type);
    if (!f.content.empty() || count == 0) {
        if (overflow || f.content.size() / element != count || f.content.size() % element != 0) {
            fail(fmt::format("tensor_content has {} bytes, a {} tensor of {} elements needs {}", f.content.size(),
                             dtype_name(*type), overflow ? std::string("too many") : std::to_string(count),
                             overflow ? std::string("more") : std::to_string(count * element)));
        }
        if (keep_alive) {
            return tensor_value::view_bytes(*type, std::move(shape), f.content, keep_alive);
        }
        return tensor_value::from_bytes(*type, std::move(shape), f.content);
    }
    // No tensor_content: the typed repeated field that belongs to the dtype.
    std::string bytes;
    switch (*type) {
    case dtype::float32: bytes = typed_bytes<float>(f.float_val); break;
    case dtype::float64: bytes = typed_bytes<double>(f.double_val); break;
    case dtype::int8: bytes = typed_bytes<std::int8_t>(f.int_val); break;
    case dtype::int16: bytes = typed_bytes<std::int16_t>(f.int_val); break;
    case dtype::int32: bytes = typed_bytes<std::int32_t>(f.int_val); break;
    case dtype::uint8: bytes = typed_bytes<std::uint8_t>(f.int_val); break;
    case dtype::uint16: bytes = typed_bytes<std::uint16_t>(f.int_val); break;
    case dtype::int64: bytes = typed_bytes<std::int64_t>(f.int64_val); break;
    case dtype::uint32: bytes = typed_bytes<std::uint32_t>(f.uint32_val); break;
    case dtype::uint64: bytes = typed_bytes<std::uint64_t>(f.uint64_val); break;
    case dtype::boolean: bytes = typed_bytes<std::uint8_t>(f.bool_val); break;
    case dtype::float16:
    case dtype::bfloat16: bytes = typed_bytes<std::uint16_t>(f.half_val); break;
    case dtype::complex64:
        if (f.scomplex_val.size() % 2 != 0) {
            fail(fmt::format("scomplex_val holds an odd number of floats ({})", f.scomplex_val.size()));
        }
        bytes = typed_bytes<float>(f.scomplex_val);
        break;
    case dtype::complex128:
        if (f.dcomplex_val.size() % 2 != 0) {
            fail(fmt::format("dcomplex_val holds an odd number of doubles ({})", f.dcomplex_val.size()));
        }
        bytes = typed_bytes<double>(f.dcomplex_val);
        break;
    case dtype::string: break; // handled above
    }
    const std::size_t found = bytes.size() / element;
    // TensorFlow repeats the last value to fill the shape; tdbg accepts only a
    // full list, so that a tiny record cannot claim a huge tensor.
    if (found != count) {
        fail(fmt::format("{} typed values for a {} tensor of {} elements", found, dtype_name(*type),
                         overflow ? std::string("too many") : std::to_string(count)));
    }
    return tensor_value::from_bytes(*type, std::move(shape), bytes);
}

inline histogram read_histogram(proto_reader h) {
    histogram out;
    const auto same = [](double v) { return v; };
    while (h.next()) {
        switch (h.field()) {
        case 1: out.min = h.float64("min"); break;
        case 2: out.max = h.float64("max"); break;
        case 3: out.num = h.float64("num"); break;
        case 4: out.sum = h.float64("sum"); break;
        case 5: out.sum_squares = h.float64("sum_squares"); break;
        case 6: h.repeated<double>(out.bucket_limit, "bucket_limit", same); break;
        case 7: h.repeated<double>(out.bucket, "bucket", same); break;
        default: h.skip();
        }
    }
    return out;
}

inline void read_metadata(proto_reader m, summary_value& value) {
    while (m.next()) {
        if (m.field() != 1) {
            m.skip();
            continue;
        }
        proto_reader p = m.message("plugin_data", "SummaryMetadata.PluginData");
        std::pair<std::string, std::string> entry;
        std::uint64_t content_at = m.field_offset();
        while (p.next()) {
            switch (p.field()) {
            case 1: entry.first = std::string(p.bytes("plugin_name")); break;
            case 2:
                content_at = p.field_offset();
                entry.second = std::string(p.bytes("content"));
                break;
            default: p.skip();
            }
        }
        // Like smdebug's reader: the last entry of each name wins.
        if (entry.first == mode_step_plugin_name) {
            const auto n = parse_decimal(entry.second);
            if (!n) {
                throw format_error(
                    fmt::format("tensor '{}': mode_step plugin content '{}' is not an integer", value.tag, entry.second),
                    std::string(m.file()), content_at);
            }
            value.mode_step = *n;
        } else if (entry.first == mode_plugin_name) {
            const auto n = parse_decimal(entry.second);
            const auto mode = n ? mode_from_int(*n) : std::nullopt;
            if (!mode) {
                throw format_error(
                    fmt::format("tensor '{}': mode plugin content '{}' is not a mode number 1..4", value.tag, entry.second),
                    std::string(m.file()), content_at);
            }
            value.mode = *mode;
        }
        value.plugin_data.push_back(std::move(entry));
    }
}

inline summary_value read_summary_value(proto_reader v, const std::shared_ptr<const void>& keep_alive) {
    summary_value out;
    std::optional<tensor_proto_fields> tensor;
    std::uint64_t tensor_offset = 0;
    while (v.next()) {
        switch (v.field()) {
        case 1: out.tag = std::string(v.bytes("tag")); break;
        case 2: out.simple_value = v.float32("simple_value"); break;
        case 5: out.histo = read_histogram(v.message("histo", "HistogramProto")); break;
        case 7: out.node_name = std::string(v.bytes("node_name")); break;
        case 8:
            tensor_offset = v.field_offset();
            tensor = read_tensor_proto(v.message("tensor", "TensorProto"));
            break;
        case 9: read_metadata(v.message("metadata", "SummaryMetadata"), out); break;
        default: v.skip();
        }
    }
    if (tensor) {
        // Built once the tag is known: the fields may come in any order.
        out.tensor = make_tensor_value(*tensor, out.tag, keep_alive, v.file(), tensor_offset);
    }
    return out;
}

} // namespace detail

/// Decodes any Event payload. `offset` is where the payload starts in `file`
/// (a record's offset + record_header_size) and is used in error messages.
/// Tensor values view the payload when `keep_alive` (which owns the payload's
/// buffer) is given and the bytes are aligned; otherwise they are copied.
[[nodiscard]] inline event decode_event(std::string_view payload, std::string_view file, std::uint64_t offset,
                                        const std::shared_ptr<const void>& keep_alive = nullptr) {
    event out;
    detail::proto_reader e(payload, file, offset, "Event");
    while (e.next()) {
        switch (e.field()) {
        case 1: out.wall_time = e.float64("wall_time"); break;
        case 2: out.step = e.int64("step"); break;
        case 3: out.file_version = std::string(e.bytes("file_version")); break;
        case 5: {
            out.has_summary = true;
            detail::proto_reader s = e.message("summary", "Summary");
            while (s.next()) {
                if (s.field() == 1) {
                    out.values.push_back(detail::read_summary_value(s.message("value", "Summary.Value"), keep_alive));
                } else {
                    s.skip();
                }
            }
            break;
        }
        default: e.skip();
        }
    }
    return out;
}

/// Encodes a tensor as smdebug does: the Event payload of one events/ record.
[[nodiscard]] inline std::string encode_tensor_event(const tensor_event& ev) {
    return detail::encode_message([&](auto& w) { detail::write_tensor_event(w, ev); });
}

/// Decodes an events/ record's payload holding one tensor. `offset` is where
/// the payload starts in `file`. The value views the payload when aligned and
/// `keep_alive` owns the buffer (it is copied when keep_alive is null).
/// Throws format_error naming file and offset for anything else.
[[nodiscard]] inline tensor_event decode_tensor_event(std::string_view payload,
                                                      const std::shared_ptr<const void>& keep_alive,
                                                      std::string_view file, std::uint64_t offset) {
    event e = decode_event(payload, file, offset, keep_alive);
    std::size_t tensors = 0;
    for (const summary_value& v : e.values) {
        tensors += v.tensor ? 1 : 0;
    }
    if (tensors != 1) {
        throw format_error(fmt::format("expected an Event with one tensor summary, found {} tensors in {} summary values",
                                       tensors, e.values.size()),
                           std::string(file), offset);
    }
    for (summary_value& v : e.values) {
        if (v.tensor) {
            tensor_event out;
            out.step = e.step;
            out.wall_time = e.wall_time;
            out.tag = std::move(v.tag);
            out.value = std::move(*v.tensor);
            out.mode = v.mode;
            out.mode_step = v.mode_step;
            return out;
        }
    }
    throw format_error("expected a tensor summary", std::string(file), offset); // not reached
}

/// The first event of a TensorBoard file: `file_version: "brain.Event:2"`.
[[nodiscard]] inline std::string encode_file_version_event(double wall_time) {
    return detail::encode_message([&](auto& w) {
        w.double_field_if(1, wall_time);
        w.bytes_field(3, tensorboard_file_version);
    });
}

/// A TensorBoard scalar: Summary.Value{tag, simple_value}.
[[nodiscard]] inline std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                                     float value) {
    return detail::encode_message([&](auto& w) {
        detail::write_event_header(w, wall_time, step);
        w.message_field(5, [&](auto& summary) {
            summary.message_field(1, [&](auto& v) {
                v.bytes_field_if(1, tag);
                v.float_field(2, value); // a oneof member: written even when zero
            });
        });
    });
}

/// A TensorBoard histogram: Summary.Value{tag, histo}.
[[nodiscard]] inline std::string encode_histogram_event(double wall_time, std::int64_t step, std::string_view tag,
                                                        const histogram& h) {
    return detail::encode_message([&](auto& w) {
        detail::write_event_header(w, wall_time, step);
        w.message_field(5, [&](auto& summary) {
            summary.message_field(1, [&](auto& v) {
                v.bytes_field_if(1, tag);
                v.message_field(5, [&](auto& p) {
                    p.double_field_if(1, h.min);
                    p.double_field_if(2, h.max);
                    p.double_field_if(3, h.num);
                    p.double_field_if(4, h.sum);
                    p.double_field_if(5, h.sum_squares);
                    p.packed_doubles(6, h.bucket_limit);
                    p.packed_doubles(7, h.bucket);
                });
            });
        });
    });
}

} // namespace tdbg::format
