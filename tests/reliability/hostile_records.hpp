#pragma once
// Runs of one step and one hostile record each, written byte by byte (a hook never writes
// them): a DT_STRING tensor of millions of empty strings, two bytes an element on the wire,
// and an Event whose Summary holds millions of small values before its tensor's. The records
// are valid protobuf; what they hold costs a careless reader many times their size.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::test::hostile {

inline void append_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80U) {
        out.push_back(static_cast<char>((v & 0x7FU) | 0x80U));
        v >>= 7U;
    }
    out.push_back(static_cast<char>(v));
}

// A length-delimited field (wire type 2) of `field` holding `bytes`.
inline void append_bytes_field(std::string& out, std::uint32_t field, std::string_view bytes) {
    append_varint(out, (std::uint64_t{field} << 3U) | 2U);
    append_varint(out, bytes.size());
    out.append(bytes);
}

// SummaryMetadata with smdebug's two plugin entries: mode step 0, mode TRAIN.
inline std::string train_metadata() {
    std::string step;
    append_bytes_field(step, 1, "mode_step");
    append_bytes_field(step, 2, "0");
    std::string mode;
    append_bytes_field(mode, 1, "mode");
    append_bytes_field(mode, 2, "1");
    std::string metadata;
    append_bytes_field(metadata, 1, step);
    append_bytes_field(metadata, 1, mode);
    return metadata;
}

// A TensorShapeProto of one dimension of `size`, its dim named as smdebug names it.
inline std::string one_dimension(std::string_view tag, std::uint64_t size) {
    std::string dim;
    dim.push_back(0x08); // size, a varint
    append_varint(dim, size);
    append_bytes_field(dim, 2, std::string(tag) + "_" + std::to_string(size));
    std::string shape;
    append_bytes_field(shape, 2, dim);
    return shape;
}

// Summary.Value{tag, tensor, metadata}.
inline std::string tensor_summary_value(std::string_view tag, const std::string& tensor_proto) {
    std::string value;
    append_bytes_field(value, 1, tag);
    append_bytes_field(value, 8, tensor_proto);
    append_bytes_field(value, 9, train_metadata());
    return value;
}

// An Event at step 0 whose Summary holds `values` (each an encoded Summary.Value, in order).
template <class Values>
std::string event_of(const Values& values) {
    std::string summary;
    for (const std::string& v : values) {
        append_bytes_field(summary, 1, v);
    }
    std::string event;
    append_bytes_field(event, 5, summary);
    return event;
}

/// The Event of a DT_STRING tensor `tag` of `count` empty strings (smdebug leaves the dtype
/// unset for strings): two bytes an element.
inline std::string empty_strings_event(std::string_view tag, std::size_t count) {
    std::string tensor;
    append_bytes_field(tensor, 2, one_dimension(tag, count));
    tensor.reserve(tensor.size() + 2 * count);
    for (std::size_t i = 0; i < count; ++i) {
        tensor.append("\x42\x00", 2); // string_val, empty
    }
    const std::string only[] = {tensor_summary_value(tag, tensor)};
    return event_of(only);
}

/// The Event of a float32 tensor `tag` of 4 elements after `count` small summary values
/// (a tag and a simple_value each, 21 bytes on the wire).
inline std::string many_values_event(std::string_view tag, std::size_t count) {
    std::string small;
    append_bytes_field(small, 1, "scalar/value");
    small.push_back(0x15); // simple_value, a fixed32
    small.append("\x00\x00\x80\x3f", 4);
    std::string tensor;
    tensor.push_back(0x08); // dtype DT_FLOAT
    tensor.push_back(0x01);
    append_bytes_field(tensor, 2, one_dimension(tag, 4));
    append_bytes_field(tensor, 4, std::string(16, '\0'));
    std::string summary;
    summary.reserve(count * (small.size() + 2) + 256);
    for (std::size_t i = 0; i < count; ++i) {
        append_bytes_field(summary, 1, small);
    }
    append_bytes_field(summary, 1, tensor_summary_value(tag, tensor));
    std::string event;
    append_bytes_field(event, 5, summary);
    return event;
}

/// The Event of a float32 tensor `tag` of 2 elements in float_val, whose TensorProto also holds
/// `count` zeros in a packed int64_val (one byte each on the wire), which a float32 tensor
/// does not read.
inline std::string foreign_values_event(std::string_view tag, std::size_t count) {
    std::string tensor;
    tensor.push_back(0x08); // dtype DT_FLOAT
    tensor.push_back(0x01);
    append_bytes_field(tensor, 2, one_dimension(tag, 2));
    append_bytes_field(tensor, 5, std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8)); // 1.0, 2.0
    append_bytes_field(tensor, 10, std::string(count, '\0'));
    const std::string only[] = {tensor_summary_value(tag, tensor)};
    return event_of(only);
}

/// Writes a finished run of one worker and one step (TRAIN step 0) whose one record, of
/// tensor `tag`, holds `payload`. Returns the record's size.
inline std::uint64_t write_one_record_run(const std::filesystem::path& run, const std::string& tag,
                                          std::string_view payload) {
    std::string record;
    format::append_record(record, payload, format::footer_kind::smdebug_constant);
    local_storage storage(run);
    const std::string event_file = format::event_file_key(0, "worker_0");
    storage.put(event_file, record);
    format::index_file index;
    index.mode = mode::train;
    index.mode_step = 0;
    index.event_file_name = event_file;
    index.tensor_payload.push_back({tag, 0, record.size()});
    storage.put(format::index_file_key(0, "worker_0"), format::to_json(index));
    format::collections_file collections;
    storage.put(format::collections_file_key("worker_0"), format::to_json(collections));
    storage.put(std::string(format::end_marker_key), "");
    return record.size();
}

} // namespace tdbg::test::hostile
