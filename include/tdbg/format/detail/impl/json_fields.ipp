#pragma once
/// \file
/// Definitions of tdbg/format/detail/json_fields.hpp.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/format/detail/json_fields.hpp"

namespace tdbg::format::detail {

TDBG_DECL void json_fields::fail(std::string_view key, std::string_view why) const {
    throw format_error(fmt::format("{}: key '{}' {}", what_, key, why), file_, 0);
}

TDBG_DECL const json_value& json_fields::member(const json_value& parent, std::string_view key,
                                                std::string_view path) const {
    const json_value* j = parent.find(key);
    if (j == nullptr) {
        fail(path, "is missing");
    }
    return *j;
}

TDBG_DECL const json_value& json_fields::object(const json_value& parent, std::string_view key,
                                                std::string_view path) const {
    const json_value& j = member(parent, key, path);
    if (!j.is_object()) {
        fail(path, fmt::format("must be an object, found {}", j.type_name()));
    }
    return j;
}

TDBG_DECL const json_value& json_fields::array(const json_value& parent, std::string_view key,
                                               std::string_view path) const {
    const json_value& j = member(parent, key, path);
    if (!j.is_array()) {
        fail(path, fmt::format("must be a list, found {}", j.type_name()));
    }
    return j;
}

TDBG_DECL std::string json_fields::string(const json_value& j, std::string_view path) const {
    if (!j.is_string()) {
        fail(path, fmt::format("must be a string, found {}", j.type_name()));
    }
    return j.as_string();
}

TDBG_DECL std::int64_t json_fields::integer(const json_value& j, std::string_view path) const {
    if (j.type() != json_value::kind::integer) {
        fail(path, fmt::format("must be an integer, found {}", shown(j)));
    }
    return j.as_int64();
}

TDBG_DECL std::uint64_t json_fields::unsigned_integer(const json_value& j, std::string_view path) const {
    if (!j.is_integer() || (j.type() == json_value::kind::integer && j.as_int64() < 0)) {
        fail(path, fmt::format("must be a non-negative integer, found {}", shown(j)));
    }
    return j.as_uint64();
}

TDBG_DECL bool json_fields::boolean(const json_value& j, std::string_view path) const {
    if (!j.is_bool()) {
        fail(path, fmt::format("must be true or false, found {}", j.type_name()));
    }
    return j.as_bool();
}

TDBG_DECL std::vector<std::string> json_fields::string_list(const json_value& j, std::string_view path) const {
    if (!j.is_array()) {
        fail(path, fmt::format("must be a list of strings, found {}", j.type_name()));
    }
    std::vector<std::string> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
        out.push_back(string(j.items()[i], fmt::format("{}[{}]", path, i)));
    }
    return out;
}

} // namespace tdbg::format::detail
