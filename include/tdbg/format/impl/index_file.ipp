#pragma once
/// \file
/// Definitions of tdbg/format/index_file.hpp.

#include <charconv>
#include <string>
#include <string_view>

#include "tdbg/format/detail/index_parser.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format {

TDBG_DECL void index_writer::add_tensor(std::string_view name, std::uint64_t start_idx, std::uint64_t length) {
    tensor_json_ += tensors_ == 0 ? "{\"tensorname\": " : ", {\"tensorname\": ";
    append_json_string(tensor_json_, name);
    char digits[24];
    tensor_json_ += ", \"start_idx\": ";
    tensor_json_.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, start_idx).ptr - digits));
    tensor_json_ += ", \"length\": ";
    tensor_json_.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, length).ptr - digits));
    tensor_json_ += '}';
    ++tensors_;
}

TDBG_DECL void index_writer::add_shape(const shape_entry& shape) {
    shape_json_ += shapes_ == 0 ? "{\"tensorname\": " : ", {\"tensorname\": ";
    append_json_string(shape_json_, shape.tensorname);
    shape_json_ += ", \"originalname\": ";
    append_json_string(shape_json_, shape.originalname);
    shape_json_ += ", \"shape\": ";
    append_json_list(shape_json_, shape.shape);
    shape_json_ += '}';
    ++shapes_;
}

TDBG_DECL std::string index_writer::text() const {
    std::string out;
    out.reserve(160 + event_file_name_.size() + tensor_json_.size() + shape_json_.size());
    out += R"({"meta": {"mode": )";
    append_json_string(out, mode_name(mode_));
    char digits[24];
    out += R"(, "mode_step": )";
    out.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, mode_step_).ptr - digits));
    if (!event_file_name_.empty()) {
        out += ", \"event_file_name\": ";
        append_json_string(out, event_file_name_);
    }
    out += "}, \"tensor_payload\": [";
    out += tensor_json_;
    out += "], \"shape_payload\": [";
    out += shape_json_;
    out += "]}";
    return out;
}

TDBG_DECL std::string to_json(const index_file& index) {
    index_writer w;
    w.set_meta(index.mode, index.mode_step);
    w.set_event_file_name(index.event_file_name);
    for (const tensor_location& t : index.tensor_payload) {
        w.add_tensor(t.tensorname, t.start_idx, t.length);
    }
    for (const shape_entry& s : index.shape_payload) {
        w.add_shape(s);
    }
    return w.text();
}

TDBG_DECL index_file parse_index_file(std::string_view json, std::string_view file) {
    detail::decoded_strings decoded;
    detail::index_view view;
    detail::parse_index_view(json, file, view, decoded);
    index_file out;
    out.mode = view.index_mode;
    out.mode_step = view.mode_step;
    out.event_file_name = std::string(view.event_file_name);
    out.tensor_payload.reserve(view.tensors.size());
    for (const auto& t : view.tensors) {
        out.tensor_payload.push_back(tensor_location{std::string(t.name), t.start, t.length});
    }
    out.shape_payload.reserve(view.shapes.size());
    for (auto& s : view.shapes) {
        // smdebug's reader takes the tensor name where the original name is missing.
        out.shape_payload.push_back(
            shape_entry{std::string(s.name), std::string(s.original_name.value_or(s.name)), std::move(s.shape)});
    }
    return out;
}

} // namespace tdbg::format
