#pragma once
/// \file
/// The payload of event-file records: TensorFlow's `Event` protobuf with a
/// `Summary` holding a tensor (smdebug), a scalar or a histogram (TensorBoard).
/// Encoding reproduces the bytes smdebug's Python writer produces: fields in
/// number order, proto3 defaults omitted, an empty tensor_shape for 0-d
/// tensors, dims named "<tag>_<size>", mode and mode step as plugin data.

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
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

// An integer in decimal, as Python's str() writes it, held without allocating.
struct decimal {
    explicit decimal(std::int64_t v) noexcept
        : size(static_cast<std::size_t>(std::to_chars(std::begin(digits), std::end(digits), v).ptr - digits)) {}
    [[nodiscard]] std::string_view view() const noexcept { return {digits, size}; }

    char digits[24] = {};
    std::size_t size;
};

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
                // The dim's name, "<tag>_<size>", written in parts: the encoder measures a
                // nested message before writing it, so this runs once per level of nesting.
                char digits[24];
                const auto end = std::to_chars(std::begin(digits), std::end(digits), size).ptr;
                dim.bytes_field(2, {tag, std::string_view("_"),
                                    std::string_view(digits, static_cast<std::size_t>(end - digits))});
            });
        }
    });
    if (is_string) {
        for (const std::string_view s : value.string_views()) {
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
                // Written once here: the encoder measures each nested message before writing it.
                const decimal mode_step_text(ev.mode_step.value_or(0));
                const decimal mode_text(static_cast<int>(ev.mode.value_or(tdbg::mode::global)));
                value.message_field(9, [&](auto& metadata) {
                    if (ev.mode_step) {
                        metadata.message_field(1, [&](auto& plugin) {
                            plugin.bytes_field(1, mode_step_plugin_name);
                            plugin.bytes_field(2, mode_step_text.view());
                        });
                    }
                    if (ev.mode) {
                        metadata.message_field(1, [&](auto& plugin) {
                            plugin.bytes_field(1, mode_plugin_name);
                            plugin.bytes_field(2, mode_text.view());
                        });
                    }
                });
            }
        });
    });
}

} // namespace detail

/// Decodes any Event payload. `offset` is where the payload starts in `file`
/// (a record's offset + record_header_size) and is used in error messages.
/// Tensor values view the payload when `keep_alive` (which owns the payload's
/// buffer) is given and the bytes are aligned; otherwise they are copied.
[[nodiscard]] TDBG_DECL event decode_event(std::string_view payload, std::string_view file, std::uint64_t offset,
                                           const std::shared_ptr<const void>& keep_alive = nullptr);

/// The wall_time of an Event payload (0 when unset), its other fields skipped unread: the
/// summary costs nothing, whatever it holds. Throws format_error naming file and offset when
/// the Event's own fields are malformed.
[[nodiscard]] TDBG_DECL double decode_event_wall_time(std::string_view payload, std::string_view file,
                                                      std::uint64_t offset);

/// Encodes a tensor as smdebug does: the Event payload of one events/ record.
[[nodiscard]] TDBG_DECL std::string encode_tensor_event(const tensor_event& ev);

/// Decodes an events/ record's payload holding one tensor. `offset` is where
/// the payload starts in `file`. The value views the payload when aligned and
/// `keep_alive` owns the buffer (it is copied when keep_alive is null).
/// Throws format_error naming file and offset for anything else; a second
/// summary value is refused where it starts, before it is read.
[[nodiscard]] TDBG_DECL tensor_event decode_tensor_event(std::string_view payload,
                                                         const std::shared_ptr<const void>& keep_alive,
                                                         std::string_view file, std::uint64_t offset);

/// The first event of a TensorBoard file: `file_version: "brain.Event:2"`.
[[nodiscard]] TDBG_DECL std::string encode_file_version_event(double wall_time);

/// A TensorBoard scalar: Summary.Value{tag, simple_value}.
[[nodiscard]] TDBG_DECL std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                                        float value);

/// A TensorBoard histogram: Summary.Value{tag, histo}.
[[nodiscard]] TDBG_DECL std::string encode_histogram_event(double wall_time, std::int64_t step, std::string_view tag,
                                                           const histogram& h);

} // namespace tdbg::format

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/event.ipp"
#endif
