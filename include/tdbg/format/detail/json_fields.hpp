#pragma once
/// \file
/// Checked access to the members of a parsed JSON file: every error is a
/// format_error naming the file and the key path ("collections.weights.save_config").

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format::detail {

/// See the file comment; `what` names the kind of file ("collections file").
class json_fields {
public:
    json_fields(std::string_view file, const char* what) : file_(file), what_(what) {}

    [[noreturn]] TDBG_DECL void fail(std::string_view key, std::string_view why) const;

    [[nodiscard]] TDBG_DECL const json_value& member(const json_value& parent, std::string_view key,
                                                     std::string_view path) const;
    [[nodiscard]] TDBG_DECL const json_value& object(const json_value& parent, std::string_view key,
                                                     std::string_view path) const;
    [[nodiscard]] TDBG_DECL const json_value& array(const json_value& parent, std::string_view key,
                                                    std::string_view path) const;
    [[nodiscard]] TDBG_DECL std::string string(const json_value& j, std::string_view path) const;
    [[nodiscard]] TDBG_DECL std::int64_t integer(const json_value& j, std::string_view path) const;
    [[nodiscard]] TDBG_DECL std::uint64_t unsigned_integer(const json_value& j, std::string_view path) const;
    [[nodiscard]] TDBG_DECL bool boolean(const json_value& j, std::string_view path) const;
    [[nodiscard]] TDBG_DECL std::vector<std::string> string_list(const json_value& j, std::string_view path) const;

private:
    // A number as written, anything else by its kind.
    static std::string shown(const json_value& j) { return j.is_number() ? dump_json(j) : std::string(j.type_name()); }

    std::string file_;
    const char* what_;
};

} // namespace tdbg::format::detail

#if TDBG_HEADER_ONLY
#include "tdbg/format/detail/impl/json_fields.ipp"
#endif
