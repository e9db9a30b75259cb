#pragma once
/// \file
/// Index files read in one pass, as views into their text: the one parser of
/// index files, behind both the trial (which keeps only what it merges) and
/// format::parse_index_file (which copies the views out). Keys in any order,
/// unknown keys ignored, strings with escapes decoded into the caller's store;
/// every error names the file, the key and the byte offset.

#include <cstdint>
#include <forward_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/detail/json_reader.hpp"

namespace tdbg::format::detail {

/// Where strings that had escapes are decoded to: their addresses never move, and an
/// empty store allocates nothing (most index files have no escapes).
using decoded_strings = std::forward_list<std::string>;

/// One tensor_payload entry, its name viewing the text (or the decoded store).
struct location_view {
    std::string_view name;
    std::uint64_t start = 0;
    std::uint64_t length = 0;
};

/// One shape_payload entry.
struct shape_view {
    std::string_view name;
    std::optional<std::string_view> original_name; ///< absent from the file: smdebug's reader uses the name
    std::vector<std::int64_t> shape;
};

/// An index file's contents, viewing the text it was read from.
struct index_view {
    mode index_mode = mode::global;
    std::int64_t mode_step = 0;
    std::string_view event_file_name;
    std::vector<location_view> tensors;
    std::vector<shape_view> shapes;
};

/// Where a value sits in an index file ("tensor_payload[3].length"): held as parts and
/// formatted only when an error names it, so that reading pays nothing for it.
struct key_path {
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    key_path(const char* whole) : head(whole) {} // NOLINT(google-explicit-constructor): "meta.mode"
    key_path(std::string_view list, std::size_t item, std::string_view member = {}, std::size_t member_item = none)
        : head(list), index(item), field(member), field_index(member_item) {}

    [[nodiscard]] TDBG_DECL std::string str() const;

    std::string_view head;
    std::size_t index = none;
    std::string_view field;
    std::size_t field_index = none;
};

class index_parser {
public:
    index_parser(std::string_view text, std::string_view file, decoded_strings& decoded)
        : in_(text, file, "index file"), file_(file), decoded_(decoded) {}

    TDBG_DECL void parse(index_view& out);

private:
    [[noreturn]] TDBG_DECL void fail(const key_path& path, std::string_view why) const;

    // The string's view, made to last as long as the text: escapes were decoded into the reader's buffer.
    TDBG_DECL std::string_view lasting(std::string_view s);

    TDBG_DECL std::string_view string_at(const key_path& path);

    TDBG_DECL std::int64_t integer_at(const key_path& path);

    TDBG_DECL std::uint64_t unsigned_at(const key_path& path);

    TDBG_DECL void expect_kind(json_reader::value_kind kind, const key_path& path, std::string_view what);

    TDBG_DECL void read_meta(index_view& out);

    TDBG_DECL void read_tensors(std::vector<location_view>& out);

    TDBG_DECL void read_shapes(std::vector<shape_view>& out);

    json_reader in_;
    std::string_view file_;
    decoded_strings& decoded_;
};

/// Reads the index file `text` (named `file` in errors) into `out`, which views
/// `text` and, for strings with escapes, `decoded`. Throws format_error.
TDBG_DECL void parse_index_view(std::string_view text, std::string_view file, index_view& out,
                                decoded_strings& decoded);

} // namespace tdbg::format::detail

#if TDBG_HEADER_ONLY
#include "tdbg/format/detail/impl/index_parser.ipp"
#endif
