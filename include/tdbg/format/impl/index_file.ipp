#pragma once
/// \file
/// Definitions of tdbg/format/index_file.hpp.

#include <string>
#include <string_view>

#include <fmt/core.h>

#include "tdbg/format/detail/index_parser.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format {

TDBG_DECL std::string to_json(const index_file& index) {
    std::string out;
    out.reserve(128 + 80 * (index.tensor_payload.size() + index.shape_payload.size()));
    out += R"({"meta": {"mode": )";
    append_json_string(out, mode_name(index.mode));
    out += fmt::format(R"(, "mode_step": {})", index.mode_step);
    if (!index.event_file_name.empty()) {
        out += ", \"event_file_name\": ";
        append_json_string(out, index.event_file_name);
    }
    out += "}, \"tensor_payload\": [";
    for (std::size_t i = 0; i < index.tensor_payload.size(); ++i) {
        const tensor_location& t = index.tensor_payload[i];
        out += i == 0 ? "{\"tensorname\": " : ", {\"tensorname\": ";
        append_json_string(out, t.tensorname);
        out += fmt::format(R"(, "start_idx": {}, "length": {}}})", t.start_idx, t.length);
    }
    out += "], \"shape_payload\": [";
    for (std::size_t i = 0; i < index.shape_payload.size(); ++i) {
        const shape_entry& s = index.shape_payload[i];
        out += i == 0 ? "{\"tensorname\": " : ", {\"tensorname\": ";
        append_json_string(out, s.tensorname);
        out += ", \"originalname\": ";
        append_json_string(out, s.originalname);
        out += ", \"shape\": ";
        append_json_list(out, s.shape);
        out += "}";
    }
    out += "]}";
    return out;
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
