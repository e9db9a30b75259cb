#pragma once
/// \file
/// smdebug's index files: for one step and worker, where each tensor's record
/// lies in the event file, and the shapes saved without values.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/detail/python_json.hpp"

namespace tdbg::format {

/// One record in the event file: the whole record (header and footer included).
struct tensor_location {
    std::string tensorname;
    std::uint64_t start_idx = 0;
    std::uint64_t length = 0;

    friend bool operator==(const tensor_location& a, const tensor_location& b) {
        return a.tensorname == b.tensorname && a.start_idx == b.start_idx && a.length == b.length;
    }
    friend bool operator!=(const tensor_location& a, const tensor_location& b) { return !(a == b); }
};

/// A tensor's shape, saved when only its reductions are (ReductionConfig save_shape).
struct shape_entry {
    std::string tensorname;
    std::string originalname;
    std::vector<std::int64_t> shape;

    friend bool operator==(const shape_entry& a, const shape_entry& b) {
        return a.tensorname == b.tensorname && a.originalname == b.originalname && a.shape == b.shape;
    }
    friend bool operator!=(const shape_entry& a, const shape_entry& b) { return !(a == b); }
};

/// The contents of one index file. An empty `event_file_name` means the file
/// has none (smdebug omits it when a step saved only shapes).
struct index_file {
    tdbg::mode mode = mode::global;
    std::int64_t mode_step = 0;
    std::string event_file_name;
    std::vector<tensor_location> tensor_payload;
    std::vector<shape_entry> shape_payload;

    friend bool operator==(const index_file& a, const index_file& b) {
        return a.mode == b.mode && a.mode_step == b.mode_step && a.event_file_name == b.event_file_name &&
               a.tensor_payload == b.tensor_payload && a.shape_payload == b.shape_payload;
    }
    friend bool operator!=(const index_file& a, const index_file& b) { return !(a == b); }
};

/// The JSON text, byte for byte as smdebug writes it (Python's json.dumps, keys in smdebug's order).
[[nodiscard]] inline std::string to_json(const index_file& index) {
    std::string out;
    out.reserve(128 + 80 * (index.tensor_payload.size() + index.shape_payload.size()));
    out += R"({"meta": {"mode": )";
    detail::append_json_string(out, mode_name(index.mode));
    out += ", \"mode_step\": " + std::to_string(index.mode_step);
    if (!index.event_file_name.empty()) {
        out += ", \"event_file_name\": ";
        detail::append_json_string(out, index.event_file_name);
    }
    out += "}, \"tensor_payload\": [";
    for (std::size_t i = 0; i < index.tensor_payload.size(); ++i) {
        const tensor_location& t = index.tensor_payload[i];
        out += i == 0 ? "{\"tensorname\": " : ", {\"tensorname\": ";
        detail::append_json_string(out, t.tensorname);
        out += ", \"start_idx\": " + std::to_string(t.start_idx) + ", \"length\": " + std::to_string(t.length) + "}";
    }
    out += "], \"shape_payload\": [";
    for (std::size_t i = 0; i < index.shape_payload.size(); ++i) {
        const shape_entry& s = index.shape_payload[i];
        out += i == 0 ? "{\"tensorname\": " : ", {\"tensorname\": ";
        detail::append_json_string(out, s.tensorname);
        out += ", \"originalname\": ";
        detail::append_json_string(out, s.originalname);
        out += ", \"shape\": ";
        detail::append_json_int_list(out, s.shape);
        out += "}";
    }
    out += "]}";
    return out;
}

/// Parses an index file; throws format_error naming `file` and the key (or the
/// byte offset of a JSON syntax error). Unknown keys are ignored.
[[nodiscard]] inline index_file parse_index_file(std::string_view json, std::string_view file) {
    const detail::ordered_json doc = detail::parse_json_text(json, file, "index file");
    const detail::json_fields f(file, "index file");
    if (!doc.is_object()) {
        f.fail("(top level)", std::string("must be an object, found ") + doc.type_name());
    }
    index_file out;
    const auto& meta = f.object(doc, "meta", "meta");
    const std::string mode_text = f.string(f.member(meta, "mode", "meta.mode"), "meta.mode");
    const auto m = try_parse_mode(mode_text);
    if (!m) {
        f.fail("meta.mode", "must be TRAIN, EVAL, PREDICT or GLOBAL, found '" + mode_text + "'");
    }
    out.mode = *m;
    out.mode_step = f.integer(f.member(meta, "mode_step", "meta.mode_step"), "meta.mode_step");
    if (const auto it = meta.find("event_file_name"); it != meta.end()) {
        out.event_file_name = f.string(*it, "meta.event_file_name");
    }
    // smdebug always writes both lists; a missing one is read as empty.
    if (doc.contains("tensor_payload")) {
        const auto& list = f.array(doc, "tensor_payload", "tensor_payload");
        out.tensor_payload.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string path = "tensor_payload[" + std::to_string(i) + "]";
            const auto& item = list[i];
            if (!item.is_object()) {
                f.fail(path, std::string("must be an object, found ") + item.type_name());
            }
            tensor_location loc;
            loc.tensorname = f.string(f.member(item, "tensorname", path + ".tensorname"), path + ".tensorname");
            loc.start_idx = f.unsigned_integer(f.member(item, "start_idx", path + ".start_idx"), path + ".start_idx");
            loc.length = f.unsigned_integer(f.member(item, "length", path + ".length"), path + ".length");
            out.tensor_payload.push_back(std::move(loc));
        }
        if (!out.tensor_payload.empty() && out.event_file_name.empty()) {
            f.fail("meta.event_file_name", "is missing, but tensor_payload lists records");
        }
    }
    if (doc.contains("shape_payload")) {
        const auto& list = f.array(doc, "shape_payload", "shape_payload");
        out.shape_payload.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string path = "shape_payload[" + std::to_string(i) + "]";
            const auto& item = list[i];
            if (!item.is_object()) {
                f.fail(path, std::string("must be an object, found ") + item.type_name());
            }
            shape_entry entry;
            entry.tensorname = f.string(f.member(item, "tensorname", path + ".tensorname"), path + ".tensorname");
            if (const auto it = item.find("originalname"); it != item.end()) {
                entry.originalname = f.string(*it, path + ".originalname");
            } else {
                entry.originalname = entry.tensorname;
            }
            const auto& dims = f.array(item, "shape", path + ".shape");
            entry.shape.reserve(dims.size());
            for (std::size_t d = 0; d < dims.size(); ++d) {
                const std::string dim_path = path + ".shape[" + std::to_string(d) + "]";
                const std::int64_t size = f.integer(dims[d], dim_path);
                if (size < 0) {
                    f.fail(dim_path, "must not be negative, found " + std::to_string(size));
                }
                entry.shape.push_back(size);
            }
            out.shape_payload.push_back(std::move(entry));
        }
    }
    return out;
}

} // namespace tdbg::format
