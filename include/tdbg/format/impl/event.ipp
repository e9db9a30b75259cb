#pragma once
/// \file
/// Definitions of tdbg/format/event.hpp: the Event decoder and the encoders of whole events
/// (the tensor-event encoder itself, write_tensor_event, is a template over its writer and
/// stays in the header).

#include <array>
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

#include "tdbg/core/error.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/detail/proto_reader.hpp"

namespace tdbg::format {

namespace detail {

TDBG_DECL std::optional<std::int64_t> parse_decimal(std::string_view text) noexcept {
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

// A TensorProto's string_val fields as they lie in the record while they follow one another,
// as every writer writes them, and gathered into a buffer of their own (encoded alike) when
// other fields come between them: never a view or a std::string per element, so that a record
// of millions of empty strings costs a fraction of its size (tensor_value::view_string_fields).
struct string_val_fields {
    std::size_t count = 0;
    std::string_view run; // the fields so far, while they are one run of the record's bytes
    std::string gathered; // the fields so far, once they are not
    bool is_gathered = false;

    // `field`: the whole field as read, key included; `element`: its bytes.
    void add(std::string_view field, std::string_view element) {
        ++count;
        // As is unless its key was written in more bytes than one.
        const bool as_is = field.front() == tdbg::detail::string_table::field_key;
        if (!is_gathered && as_is && (count == 1 || run.data() + run.size() == field.data())) {
            run = count == 1 ? field : std::string_view(run.data(), run.size() + field.size());
            return;
        }
        if (!is_gathered) {
            gathered.assign(run);
            is_gathered = true;
        }
        tdbg::detail::string_table::append_field(gathered, element);
    }
};

// Counts a typed repeated field's values without keeping them (proto_reader::repeated's `out`).
struct value_count {
    std::size_t n = 0;
    template <class T>
    void push_back(const T&) noexcept {
        ++n;
    }
    [[nodiscard]] std::size_t size() const noexcept { return n; }
    void reserve(std::size_t) const noexcept {}
};

// Appends each value of a typed repeated field to `out` as the little-endian bytes of `T`
// (proto_reader::repeated's `out`).
template <class T>
struct value_bytes {
    std::string& out;
    template <class V>
    void push_back(V v) {
        const T element = static_cast<T>(v);
        out.append(reinterpret_cast<const char*>(&element), sizeof(T));
    }
    [[nodiscard]] std::size_t size() const noexcept { return out.size() / sizeof(T); }
    void reserve(std::size_t) const noexcept {} // the caller reserves the whole value
};

// Reads the typed repeated field `t` is on (float_val, int_val, ...) into `out`, each value as
// the field's type (float, std::int32_t, ...). False, reading nothing, for any other field.
template <class Out>
bool read_typed_values(proto_reader& t, Out& out) {
    const auto as_u16 = [](std::uint64_t v) { return static_cast<std::uint16_t>(v); };
    const auto as_i32 = [](std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); };
    const auto as_i64 = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
    const auto as_bool = [](std::uint64_t v) { return static_cast<std::uint8_t>(v != 0 ? 1 : 0); };
    const auto as_u32 = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
    const auto same = [](auto v) { return v; };
    switch (t.field()) {
    case 5: t.repeated<float>(out, "float_val", same); return true;
    case 6: t.repeated<double>(out, "double_val", same); return true;
    case 7: t.repeated<std::uint64_t>(out, "int_val", as_i32); return true;
    case 9: t.repeated<float>(out, "scomplex_val", same); return true;
    case 10: t.repeated<std::uint64_t>(out, "int64_val", as_i64); return true;
    case 11: t.repeated<std::uint64_t>(out, "bool_val", as_bool); return true;
    case 12: t.repeated<double>(out, "dcomplex_val", same); return true;
    case 13: t.repeated<std::uint64_t>(out, "half_val", as_u16); return true;
    case 16: t.repeated<std::uint64_t>(out, "uint32_val", as_u32); return true;
    case 17: t.repeated<std::uint64_t>(out, "uint64_val", same); return true;
    default: return false;
    }
}

// The highest field number of a typed repeated field (uint64_val).
inline constexpr std::uint32_t last_typed_field = 17;

// The typed repeated field that holds the values of a `type` tensor, and the type each is
// stored as in the tensor's bytes.
template <class F>
void with_typed_field(dtype type, F&& f) {
    const auto as = [&](std::uint32_t field, auto stored) { f(field, stored); };
    switch (type) {
    case dtype::float32: as(5, float{}); break;
    case dtype::float64: as(6, double{}); break;
    case dtype::int8: as(7, std::int8_t{}); break;
    case dtype::int16: as(7, std::int16_t{}); break;
    case dtype::int32: as(7, std::int32_t{}); break;
    case dtype::uint8: as(7, std::uint8_t{}); break;
    case dtype::uint16: as(7, std::uint16_t{}); break;
    case dtype::int64: as(10, std::int64_t{}); break;
    case dtype::uint32: as(16, std::uint32_t{}); break;
    case dtype::uint64: as(17, std::uint64_t{}); break;
    case dtype::boolean: as(11, std::uint8_t{}); break;
    case dtype::float16:
    case dtype::bfloat16: as(13, std::uint16_t{}); break;
    case dtype::complex64: as(9, float{}); break;
    case dtype::complex128: as(12, double{}); break;
    case dtype::string: break; // string tensors are read from string_val (make_tensor_value)
    }
}

// The fields of a TensorProto as found on the wire, before they become a tensor_value.
struct tensor_proto_fields {
    explicit tensor_proto_fields(const proto_reader& m) : message(m) {}

    // The TensorProto, to read again for the typed values once the dtype is known.
    proto_reader message;
    std::uint64_t dtype_number = 0;
    // The first max_tensor_rank + 1 dimensions (more fail as more than a tensor may have),
    // and how many there are.
    std::vector<std::int64_t> dims;
    std::size_t rank = 0;
    bool unknown_rank = false;
    std::string_view content;
    string_val_fields string_val;
    // How many values each typed repeated field holds (by field number): counted, not kept,
    // so that values of a field the dtype does not read cost nothing.
    std::array<value_count, last_typed_field + 1> typed_values{};
};

TDBG_DECL void read_tensor_shape(proto_reader shape, tensor_proto_fields& out) {
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
            // A shape of millions of dimensions is refused without keeping them (read_proto_shape).
            if (out.dims.size() <= max_tensor_rank) {
                out.dims.push_back(size);
            }
            ++out.rank;
            break;
        }
        case 3: out.unknown_rank = shape.varint("unknown_rank") != 0; break;
        default: shape.skip();
        }
    }
}

TDBG_DECL tensor_proto_fields read_tensor_proto(proto_reader t) {
    tensor_proto_fields f(t);
    while (t.next()) {
        switch (t.field()) {
        case 1: f.dtype_number = t.varint("dtype"); break;
        case 2: read_tensor_shape(t.message("tensor_shape", "TensorShapeProto"), f); break;
        case 4: f.content = t.bytes("tensor_content"); break;
        case 8: {
            const std::string_view element = t.bytes("string_val");
            f.string_val.add(t.field_bytes(), element);
            break;
        }
        default:
            // Typed values are checked and counted here, and read once the dtype is known.
            if (t.field() > last_typed_field || !read_typed_values(t, f.typed_values[t.field()])) {
                t.skip();
            }
        }
    }
    return f;
}

// Where a TensorProto is, for its errors: the tensor's tag, the file and the payload's offset.
struct tensor_proto_place {
    std::string_view tag;
    std::string_view file;
    std::uint64_t offset = 0;

    [[noreturn]] void fail(const std::string& why) const {
        throw format_error(fmt::format("TensorProto of tensor '{}': {}", tag, why), std::string(file), offset);
    }
};

// The shape a TensorProto declares and its element count (count is SIZE_MAX when it overflows:
// no buffer can hold it, so the size checks after it fail).
struct tensor_proto_shape {
    tensor_value::shape_type shape;
    std::size_t count = 1;
    bool overflow = false;

    [[nodiscard]] std::string count_text() const { return overflow ? std::string("too many") : std::to_string(count); }
};

TDBG_DECL tensor_proto_shape read_proto_shape(const tensor_proto_fields& f, const tensor_proto_place& at) {
    if (f.unknown_rank) {
        at.fail("the shape has unknown rank");
    }
    if (f.rank > max_tensor_rank) {
        at.fail(fmt::format("the shape has {} dimensions, more than the {} a tensor may have", f.rank,
                            max_tensor_rank));
    }
    tensor_proto_shape out;
    out.shape.reserve(f.dims.size());
    for (std::int64_t d : f.dims) {
        if (d < 0) {
            at.fail(fmt::format("dimension {} has size {}", out.shape.size(), d));
        }
        const auto size = static_cast<std::size_t>(d);
        if (size != 0 && out.count > std::numeric_limits<std::size_t>::max() / size) {
            out.overflow = true;
        }
        out.count *= size;
        out.shape.push_back(size);
    }
    if (out.overflow) {
        out.count = std::numeric_limits<std::size_t>::max();
    }
    return out;
}

TDBG_DECL tensor_value make_tensor_value(tensor_proto_fields& f, std::string_view tag,
                                         const std::shared_ptr<const void>& keep_alive, std::string_view file,
                                         std::uint64_t offset) {
    const tensor_proto_place at{tag, file, offset};
    tensor_proto_shape s = read_proto_shape(f, at);
    // dtype 0 (DT_INVALID) is how smdebug marks string tensors.
    const bool is_string = f.dtype_number == 0 || f.dtype_number == static_cast<std::uint64_t>(dtype::string);
    if (is_string) {
        if (!f.content.empty()) {
            at.fail(fmt::format("tensor_content with dtype {} (string)", f.dtype_number));
        }
        string_val_fields& strings = f.string_val;
        if (strings.count != s.count) {
            at.fail(fmt::format("{} string values for a shape of {} elements", strings.count, s.count_text()));
        }
        // Viewed in the record when it is kept alive, else in a copy of their bytes.
        std::shared_ptr<const void> owner = keep_alive;
        std::string_view fields = strings.run;
        if (strings.is_gathered || !keep_alive) {
            auto buffer = std::make_shared<const std::string>(strings.is_gathered ? std::move(strings.gathered)
                                                                                  : std::string(strings.run));
            fields = *buffer;
            owner = std::move(buffer);
        }
        try {
            return tensor_value::view_string_fields(std::move(s.shape), fields, std::move(owner));
        } catch (const format_error&) {
            throw;
        } catch (const error& e) { // not reached: the fields were read as string_val above
            at.fail(e.what());
        }
    }
    const auto type = f.dtype_number <= 1000 ? dtype_from_int(static_cast<long long>(f.dtype_number)) : std::nullopt;
    if (!type) {
        at.fail(fmt::format("unsupported dtype {}", f.dtype_number));
    }
    const std::size_t element = dtype_size(*type);
    if (!f.content.empty() || s.count == 0) {
        if (s.overflow || f.content.size() / element != s.count || f.content.size() % element != 0) {
            at.fail(fmt::format("tensor_content has {} bytes, a {} tensor of {} elements needs {}", f.content.size(),
                                dtype_name(*type), s.count_text(),
                                s.overflow ? std::string("more") : std::to_string(s.count * element)));
        }
        if (keep_alive) {
            return tensor_value::view_bytes(*type, std::move(s.shape), f.content, keep_alive);
        }
        return tensor_value::from_bytes(*type, std::move(s.shape), f.content);
    }
    std::string bytes;
    with_typed_field(*type, [&](std::uint32_t field, auto stored) {
        using T = decltype(stored);
        const std::size_t values = f.typed_values[field].n;
        if (is_complex(*type) && values % 2 != 0) {
            at.fail(fmt::format("{} holds an odd number of {} ({})", field == 9 ? "scomplex_val" : "dcomplex_val",
                                field == 9 ? "floats" : "doubles", values));
        }
        const std::size_t found = is_complex(*type) ? values / 2 : values;
        // TensorFlow repeats the last value to fill the shape; tdbg accepts only a
        // full list, so that a tiny record cannot claim a huge tensor.
        if (found != s.count) {
            at.fail(fmt::format("{} typed values for a {} tensor of {} elements", found, dtype_name(*type),
                                s.count_text()));
        }
        // The one field the dtype reads, straight into the value's bytes.
        bytes.reserve(values * sizeof(T));
        value_bytes<T> out{bytes};
        proto_reader again = f.message;
        while (again.next()) {
            if (again.field() != field || !read_typed_values(again, out)) {
                again.skip();
            }
        }
    });
    return tensor_value::from_bytes(*type, std::move(s.shape), bytes);
}

TDBG_DECL histogram read_histogram(proto_reader h) {
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

// `keep_plugin_data`: also keep every entry in value.plugin_data (a tensor event needs only
// the mode and the mode step read from them).
TDBG_DECL void read_metadata(proto_reader m, summary_value& value, bool keep_plugin_data) {
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
                throw format_error(fmt::format("tensor '{}': mode_step plugin content '{}' is not an integer",
                                               value.tag, entry.second),
                                   std::string(m.file()), content_at);
            }
            value.mode_step = *n;
        } else if (entry.first == mode_plugin_name) {
            const auto n = parse_decimal(entry.second);
            const auto mode = n ? mode_from_int(*n) : std::nullopt;
            if (!mode) {
                throw format_error(fmt::format("tensor '{}': mode plugin content '{}' is not a mode number 1..4",
                                               value.tag, entry.second),
                                   std::string(m.file()), content_at);
            }
            value.mode = *mode;
        }
        if (keep_plugin_data) {
            value.plugin_data.push_back(std::move(entry));
        }
    }
}

// What read_summary_value keeps: all of it (decode_event), or what a tensor event needs: the
// tag, the tensor, its mode and mode step (decode_tensor_event).
enum class summary_fields { all, tensor };

TDBG_DECL summary_value read_summary_value(proto_reader v, const std::shared_ptr<const void>& keep_alive,
                                           summary_fields keep = summary_fields::all) {
    summary_value out;
    std::optional<tensor_proto_fields> tensor;
    std::uint64_t tensor_offset = 0;
    const bool all = keep == summary_fields::all;
    while (v.next()) {
        switch (v.field()) {
        case 1: out.tag = std::string(v.bytes("tag")); break;
        case 2: out.simple_value = v.float32("simple_value"); break;
        case 5:
            if (all) {
                out.histo = read_histogram(v.message("histo", "HistogramProto"));
            } else {
                (void)v.bytes("histo");
            }
            break;
        case 7:
            if (all) {
                out.node_name = std::string(v.bytes("node_name"));
            } else {
                (void)v.bytes("node_name");
            }
            break;
        case 8:
            tensor_offset = v.field_offset();
            tensor = read_tensor_proto(v.message("tensor", "TensorProto"));
            break;
        case 9: read_metadata(v.message("metadata", "SummaryMetadata"), out, all); break;
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

TDBG_DECL event decode_event(std::string_view payload, std::string_view file, std::uint64_t offset,
                             const std::shared_ptr<const void>& keep_alive) {
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

TDBG_DECL double decode_event_wall_time(std::string_view payload, std::string_view file, std::uint64_t offset) {
    double wall_time = 0;
    detail::proto_reader e(payload, file, offset, "Event");
    while (e.next()) {
        if (e.field() == 1) {
            wall_time = e.float64("wall_time");
        } else {
            e.skip();
        }
    }
    return wall_time;
}

TDBG_DECL std::string encode_tensor_event(const tensor_event& ev) {
    return detail::encode_message([&](auto& w) { detail::write_tensor_event(w, ev); });
}

TDBG_DECL tensor_event decode_tensor_event(std::string_view payload, const std::shared_ptr<const void>& keep_alive,
                                           std::string_view file, std::uint64_t offset) {
    // The fields of decode_event, but one summary value at most: a second is refused where it
    // starts, before it is read, so that an Event of millions of values costs nothing to refuse
    // (docs/reliability.md, "Hostile records: memory").
    tensor_event out;
    std::optional<summary_value> only;
    detail::proto_reader e(payload, file, offset, "Event");
    while (e.next()) {
        switch (e.field()) {
        case 1: out.wall_time = e.float64("wall_time"); break;
        case 2: out.step = e.int64("step"); break;
        case 3: (void)e.bytes("file_version"); break;
        case 5: {
            detail::proto_reader s = e.message("summary", "Summary");
            while (s.next()) {
                if (s.field() != 1) {
                    s.skip();
                    continue;
                }
                if (only) {
                    throw format_error("expected an Event with one tensor summary, found a second summary value",
                                       std::string(file), s.field_offset());
                }
                only = detail::read_summary_value(s.message("value", "Summary.Value"), keep_alive,
                                                  detail::summary_fields::tensor);
            }
            break;
        }
        default: e.skip();
        }
    }
    if (!only || !only->tensor) {
        throw format_error(
            fmt::format("expected an Event with one tensor summary, found 0 tensors in {} summary values", only ? 1 : 0),
            std::string(file), offset);
    }
    out.tag = std::move(only->tag);
    out.value = std::move(*only->tensor);
    out.mode = only->mode;
    out.mode_step = only->mode_step;
    return out;
}

TDBG_DECL std::string encode_file_version_event(double wall_time) {
    return detail::encode_message([&](auto& w) {
        w.double_field_if(1, wall_time);
        w.bytes_field(3, tensorboard_file_version);
    });
}

TDBG_DECL std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value) {
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

TDBG_DECL std::string encode_histogram_event(double wall_time, std::int64_t step, std::string_view tag,
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
