#pragma once
/// \file
/// Definitions of tdbg/format/detail/index_parser.hpp.

#include <cstdint>
#include <forward_list>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/format/detail/index_parser.hpp"

namespace tdbg::format::detail {

TDBG_DECL std::string key_path::str() const {
    std::string out(head);
    if (index != none) {
        out += fmt::format("[{}]", index);
    }
    if (!field.empty()) {
        out.append(1, '.').append(field);
    }
    if (field_index != none) {
        out += fmt::format("[{}]", field_index);
    }
    return out;
}

TDBG_DECL void index_parser::parse(index_view& out) {
    bool has_meta = false;
    in_.begin_object();
    std::string_view key;
    while (in_.next_key(key)) {
        if (key == "meta") {
            read_meta(out);
            has_meta = true;
        } else if (key == "tensor_payload") {
            read_tensors(out.tensors);
        } else if (key == "shape_payload") {
            read_shapes(out.shapes);
        } else {
            in_.skip_value();
        }
    }
    in_.finish();
    if (!has_meta) {
        fail("meta", "is missing");
    }
    if (!out.tensors.empty() && out.event_file_name.empty()) {
        fail("meta.event_file_name", "is missing, but tensor_payload lists records");
    }
}

TDBG_DECL void index_parser::fail(const key_path& path, std::string_view why) const {
    throw format_error(fmt::format("index file: key '{}' {}", path.str(), why), std::string(file_), in_.offset());
}

TDBG_DECL std::string_view index_parser::lasting(std::string_view s) {
    return in_.string_in_text() ? s : std::string_view(decoded_.emplace_front(s));
}

TDBG_DECL std::string_view index_parser::string_at(const key_path& path) {
    if (in_.peek() != json_reader::value_kind::string) {
        fail(path, "must be a string");
    }
    return lasting(in_.read_string());
}

TDBG_DECL std::int64_t index_parser::integer_at(const key_path& path) {
    if (in_.peek() != json_reader::value_kind::number) {
        fail(path, "must be an integer");
    }
    const json_number n = in_.read_number();
    if (n.type != json_number::kind::integer) {
        fail(path, "must be an integer that fits 64 bits");
    }
    return n.integer;
}

TDBG_DECL std::uint64_t index_parser::unsigned_at(const key_path& path) {
    if (in_.peek() != json_reader::value_kind::number) {
        fail(path, "must be a non-negative integer");
    }
    const json_number n = in_.read_number();
    if (n.type == json_number::kind::unsigned_integer) {
        return n.unsigned_integer;
    }
    if (n.type != json_number::kind::integer || n.integer < 0) {
        fail(path, "must be a non-negative integer");
    }
    return static_cast<std::uint64_t>(n.integer);
}

TDBG_DECL void index_parser::expect_kind(json_reader::value_kind kind, const key_path& path, std::string_view what) {
    if (in_.peek() != kind) {
        fail(path, fmt::format("must be {}", what));
    }
}

TDBG_DECL void index_parser::read_meta(index_view& out) {
    expect_kind(json_reader::value_kind::object, "meta", "an object");
    bool has_mode = false;
    bool has_mode_step = false;
    in_.begin_object();
    std::string_view key;
    while (in_.next_key(key)) {
        if (key == "mode") {
            const std::string_view text = string_at("meta.mode");
            const auto m = try_parse_mode(text);
            if (!m) {
                fail("meta.mode", fmt::format("must be TRAIN, EVAL, PREDICT or GLOBAL, found '{}'", text.substr(0, 100)));
            }
            out.index_mode = *m;
            has_mode = true;
        } else if (key == "mode_step") {
            out.mode_step = integer_at("meta.mode_step");
            has_mode_step = true;
        } else if (key == "event_file_name") {
            out.event_file_name = string_at("meta.event_file_name");
        } else {
            in_.skip_value();
        }
    }
    if (!has_mode) {
        fail("meta.mode", "is missing");
    }
    if (!has_mode_step) {
        fail("meta.mode_step", "is missing");
    }
}

TDBG_DECL void index_parser::read_tensors(std::vector<location_view>& out) {
    expect_kind(json_reader::value_kind::array, "tensor_payload", "a list");
    out.clear();
    in_.begin_array();
    while (in_.next_item()) {
        const std::size_t item = out.size();
        expect_kind(json_reader::value_kind::object, key_path("tensor_payload", item), "an object");
        location_view loc;
        bool name = false;
        bool start = false;
        bool length = false;
        in_.begin_object();
        std::string_view key;
        while (in_.next_key(key)) {
            if (key == "tensorname") {
                loc.name = string_at(key_path("tensor_payload", item, "tensorname"));
                name = true;
            } else if (key == "start_idx") {
                loc.start = unsigned_at(key_path("tensor_payload", item, "start_idx"));
                start = true;
            } else if (key == "length") {
                loc.length = unsigned_at(key_path("tensor_payload", item, "length"));
                length = true;
            } else {
                in_.skip_value();
            }
        }
        if (!name || !start || !length) {
            fail(key_path("tensor_payload", item, !name ? "tensorname" : !start ? "start_idx" : "length"), "is missing");
        }
        out.push_back(loc);
    }
}

TDBG_DECL void index_parser::read_shapes(std::vector<shape_view>& out) {
    expect_kind(json_reader::value_kind::array, "shape_payload", "a list");
    out.clear();
    in_.begin_array();
    while (in_.next_item()) {
        const std::size_t item = out.size();
        expect_kind(json_reader::value_kind::object, key_path("shape_payload", item), "an object");
        shape_view entry;
        bool name = false;
        bool shape = false;
        in_.begin_object();
        std::string_view key;
        while (in_.next_key(key)) {
            if (key == "tensorname") {
                entry.name = string_at(key_path("shape_payload", item, "tensorname"));
                name = true;
            } else if (key == "originalname") {
                entry.original_name = string_at(key_path("shape_payload", item, "originalname"));
            } else if (key == "shape") {
                expect_kind(json_reader::value_kind::array, key_path("shape_payload", item, "shape"), "a list");
                entry.shape.clear();
                in_.begin_array();
                while (in_.next_item()) {
                    const key_path dim_path("shape_payload", item, "shape", entry.shape.size());
                    if (entry.shape.size() == max_tensor_rank) {
                        fail(dim_path, fmt::format("is past the {} dimensions a tensor may have", max_tensor_rank));
                    }
                    const std::int64_t size = integer_at(dim_path);
                    if (size < 0) {
                        fail(dim_path, fmt::format("must not be negative, found {}", size));
                    }
                    entry.shape.push_back(size);
                }
                shape = true;
            } else {
                in_.skip_value();
            }
        }
        if (!name || !shape) {
            fail(key_path("shape_payload", item, !name ? "tensorname" : "shape"), "is missing");
        }
        out.push_back(std::move(entry));
    }
}

TDBG_DECL void parse_index_view(std::string_view text, std::string_view file, index_view& out,
                                decoded_strings& decoded) {
    index_parser(text, file, decoded).parse(out);
}

} // namespace tdbg::format::detail
