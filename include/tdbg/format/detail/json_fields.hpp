#pragma once
/// \file
/// Checked access to the members of a parsed JSON file: every error is a
/// format_error naming the file and the key path ("collections.weights.save_config").

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format::detail {

/// See the file comment; `what` names the kind of file ("collections file").
class json_fields {
public:
    json_fields(std::string_view file, const char* what) : file_(file), what_(what) {}

    [[noreturn]] void fail(std::string_view key, std::string_view why) const {
        throw format_error(fmt::format("{}: key '{}' {}", what_, key, why), file_, 0);
    }

    [[nodiscard]] const json_value& member(const json_value& parent, std::string_view key, std::string_view path) const {
        const json_value* j = parent.find(key);
        if (j == nullptr) {
            fail(path, "is missing");
        }
        return *j;
    }
    [[nodiscard]] const json_value& object(const json_value& parent, std::string_view key, std::string_view path) const {
        const json_value& j = member(parent, key, path);
        if (!j.is_object()) {
            fail(path, fmt::format("must be an object, found {}", j.type_name()));
        }
        return j;
    }
    [[nodiscard]] const json_value& array(const json_value& parent, std::string_view key, std::string_view path) const {
        const json_value& j = member(parent, key, path);
        if (!j.is_array()) {
            fail(path, fmt::format("must be a list, found {}", j.type_name()));
        }
        return j;
    }
    [[nodiscard]] std::string string(const json_value& j, std::string_view path) const {
        if (!j.is_string()) {
            fail(path, fmt::format("must be a string, found {}", j.type_name()));
        }
        return j.as_string();
    }
    [[nodiscard]] std::int64_t integer(const json_value& j, std::string_view path) const {
        if (j.type() != json_value::kind::integer) {
            fail(path, fmt::format("must be an integer, found {}", shown(j)));
        }
        return j.as_int64();
    }
    [[nodiscard]] std::uint64_t unsigned_integer(const json_value& j, std::string_view path) const {
        if (!j.is_integer() || (j.type() == json_value::kind::integer && j.as_int64() < 0)) {
            fail(path, fmt::format("must be a non-negative integer, found {}", shown(j)));
        }
        return j.as_uint64();
    }
    [[nodiscard]] bool boolean(const json_value& j, std::string_view path) const {
        if (!j.is_bool()) {
            fail(path, fmt::format("must be true or false, found {}", j.type_name()));
        }
        return j.as_bool();
    }
    [[nodiscard]] std::vector<std::string> string_list(const json_value& j, std::string_view path) const {
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

private:
    // A number as written, anything else by its kind.
    static std::string shown(const json_value& j) { return j.is_number() ? dump_json(j) : std::string(j.type_name()); }

    std::string file_;
    const char* what_;
};

} // namespace tdbg::format::detail
