#pragma once
/// \file
/// Definitions of tdbg/format/layout.hpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/format/layout.hpp"

namespace tdbg::format {

namespace detail {

TDBG_DECL std::string zero_padded(std::int64_t value, std::size_t width, const char* what) {
    if (value < 0) {
        throw error(fmt::format("negative {} {} has no file name", what, value));
    }
    std::string digits = std::to_string(value);
    if (digits.size() < width) {
        digits.insert(0, width - digits.size(), '0');
    }
    return digits;
}

TDBG_DECL bool all_digits(std::string_view text) noexcept {
    if (text.empty()) {
        return false;
    }
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

/// Parses a non-negative decimal that fits in int64.
TDBG_DECL std::optional<std::int64_t> parse_step_digits(std::string_view text) noexcept {
    if (!all_digits(text) || text.size() > 18) { // 18 digits always fit in int64
        return std::nullopt;
    }
    std::int64_t value = 0;
    for (char c : text) {
        value = value * 10 + (c - '0');
    }
    return value;
}

// "<digits>_<worker><suffix>" in the last component of `key`, whose directory
// must end in "<dir_name>/<subdir>/" (with any prefix before dir_name).
TDBG_DECL std::optional<index_key_info> parse_step_worker_key(std::string_view key, std::string_view dir_name,
                                                              std::string_view suffix) {
    const std::size_t slash = key.rfind('/');
    if (slash == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view name = key.substr(slash + 1);
    std::string_view dir = key.substr(0, slash);
    const std::size_t dir_slash = dir.rfind('/');
    if (dir_slash == std::string_view::npos || !all_digits(dir.substr(dir_slash + 1))) {
        return std::nullopt;
    }
    dir = dir.substr(0, dir_slash);
    if (dir.size() < dir_name.size() || dir.substr(dir.size() - dir_name.size()) != dir_name ||
        (dir.size() > dir_name.size() && dir[dir.size() - dir_name.size() - 1] != '/')) {
        return std::nullopt;
    }
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
        return std::nullopt;
    }
    name.remove_suffix(suffix.size());
    const std::size_t underscore = name.find('_');
    if (underscore == std::string_view::npos) {
        return std::nullopt;
    }
    const auto step = parse_step_digits(name.substr(0, underscore));
    const std::string_view worker = name.substr(underscore + 1);
    if (!step) {
        return std::nullopt;
    }
    try {
        validate_worker_name(worker);
    } catch (const invalid_name&) {
        return std::nullopt;
    }
    return index_key_info{*step, worker_from_file_part(worker, false, name.find("__") != std::string_view::npos)};
}

} // namespace detail

TDBG_DECL void validate_worker_name(std::string_view worker) {
    auto fail = [&](const char* why) {
        std::string shown(worker.substr(0, 100));
        for (char& c : shown) {
            c = c == '\0' ? '?' : c;
        }
        throw invalid_name(fmt::format("invalid worker name '{}{}': {}", shown, worker.size() > 100 ? "..." : "", why));
    };
    if (worker.empty()) {
        fail("empty");
    }
    if (worker.size() > 255) {
        fail("longer than 255 bytes");
    }
    if (worker.find('/') != std::string_view::npos) {
        fail("contains '/'");
    }
    // The storage layer rejects backslashes in keys; refuse them here, where the message is clearer.
    if (worker.find('\\') != std::string_view::npos) {
        fail("contains a backslash");
    }
    if (worker.find("..") != std::string_view::npos) {
        fail("contains '..'");
    }
    if (worker.find('\0') != std::string_view::npos) {
        fail("contains a NUL byte");
    }
}

TDBG_DECL std::string worker_from_file_part(std::string_view part, bool collections_file,
                                            bool name_has_double_underscore) {
    const bool device = collections_file ? (!part.empty() && part.front() == '_') : name_has_double_underscore;
    std::string out(part);
    if (device) {
        for (char& c : out) {
            c = c == '_' ? '/' : c == '-' ? ':' : c;
        }
    }
    return out;
}

TDBG_DECL std::string worker_file_part(std::string_view worker) {
    std::string out(worker);
    if (out.find('/') != std::string::npos) {
        for (char& c : out) {
            c = c == '/' ? '_' : c == ':' ? '-' : c;
        }
    }
    return out;
}

TDBG_DECL std::string event_file_key(std::int64_t step, std::string_view worker) {
    validate_worker_name(worker);
    const std::string s = step_string(step);
    return "events/" + s + "/" + s + "_" + std::string(worker) + ".tfevents";
}

TDBG_DECL std::string index_file_key(std::int64_t step, std::string_view worker) {
    validate_worker_name(worker);
    return "index/" + index_dir_string(step) + "/" + step_string(step) + "_" + std::string(worker) + ".json";
}

TDBG_DECL std::string collections_file_key(std::string_view worker) {
    validate_worker_name(worker);
    return "collections/000000000/" + std::string(worker) + "_collections.json";
}

TDBG_DECL std::optional<std::int64_t> index_file_folder(std::string_view key) {
    if (!parse_index_file_key(key)) {
        return std::nullopt;
    }
    const std::string_view dir = key.substr(0, key.rfind('/'));
    return detail::parse_step_digits(dir.substr(dir.rfind('/') + 1));
}

TDBG_DECL std::optional<std::string> parse_collections_file_key(std::string_view key) {
    constexpr std::string_view suffix = "_collections.json";
    const std::size_t slash = key.rfind('/');
    if (slash == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view name = key.substr(slash + 1);
    const std::string_view dir = key.substr(0, slash);
    constexpr std::string_view want_dir = "collections/000000000";
    if (dir.size() < want_dir.size() || dir.substr(dir.size() - want_dir.size()) != want_dir ||
        (dir.size() > want_dir.size() && dir[dir.size() - want_dir.size() - 1] != '/')) {
        return std::nullopt;
    }
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
        return std::nullopt;
    }
    name.remove_suffix(suffix.size());
    try {
        validate_worker_name(name);
    } catch (const invalid_name&) {
        return std::nullopt;
    }
    return worker_from_file_part(name, true, false);
}

TDBG_DECL std::string strip_colon_index(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == ':' && i + 1 < name.size() && name[i + 1] >= '0' && name[i + 1] <= '9') {
            ++i;
            while (i + 1 < name.size() && name[i + 1] >= '0' && name[i + 1] <= '9') {
                ++i;
            }
            continue;
        }
        out.push_back(name[i]);
    }
    return out;
}

TDBG_DECL std::optional<std::pair<reduction, std::string>> parse_reduction_tensor_name(std::string_view name) {
    if (name.substr(0, reduction_prefix.size()) != reduction_prefix) {
        return std::nullopt;
    }
    name.remove_prefix(reduction_prefix.size());
    const std::size_t slash = name.find('/');
    if (slash == std::string_view::npos || slash + 1 == name.size()) {
        return std::nullopt;
    }
    const std::string_view spelled = name.substr(0, slash);
    const auto r = parse_reduction(spelled);
    // Only the spelling smdebug writes counts ("l2", not "l2_norm").
    if (!r || reduction_name(*r) != spelled) {
        return std::nullopt;
    }
    return std::pair<reduction, std::string>{*r, std::string(name.substr(slash + 1))};
}

} // namespace tdbg::format
