#pragma once
/// \file
/// Definitions of tdbg/storage/open.hpp.

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/open.hpp"

namespace tdbg {

namespace detail {

struct storage_schemes_state {
    std::mutex mutex;
    std::map<std::string, storage_opener, std::less<>> openers;
};

inline storage_schemes_state& storage_scheme_table() {
    static storage_schemes_state state;
    return state;
}

} // namespace detail

TDBG_DECL void register_storage_scheme(std::string scheme, storage_opener open) {
    auto& table = detail::storage_scheme_table();
    const std::lock_guard<std::mutex> lock(table.mutex);
    table.openers[std::move(scheme)] = open;
}

TDBG_DECL std::vector<std::string> storage_schemes() {
    auto& table = detail::storage_scheme_table();
    const std::lock_guard<std::mutex> lock(table.mutex);
    std::vector<std::string> out;
    for (const auto& item : table.openers) {
        out.push_back(item.first);
    }
    return out;
}

TDBG_DECL resolved_location resolve_location(std::string_view location) {
    resolved_location out;
    out.url = location.find("://") != std::string_view::npos;
    out.text = std::string(location);
    if (!out.url && out.text.size() >= 2 && out.text[0] == '~' && out.text[1] == '/') {
        if (const char* home = std::getenv("HOME")) {
            out.text = std::string(home) + out.text.substr(1);
        }
    }
    return out;
}

TDBG_DECL any_storage open_storage(std::string_view location) {
    const resolved_location where = resolve_location(location);
    if (!where.url) {
        return local_storage(std::filesystem::path(where.text));
    }
    const auto colon = location.find("://");
    const std::string_view scheme = location.substr(0, colon);
    storage_opener open = nullptr;
    {
        auto& table = detail::storage_scheme_table();
        const std::lock_guard<std::mutex> lock(table.mutex);
        if (const auto it = table.openers.find(scheme); it != table.openers.end()) {
            open = it->second;
        }
    }
    if (open == nullptr) {
        throw config_error(fmt::format("{}: no storage backend for {}:// URLs in this program{}", location, scheme,
                                       scheme == "s3" ? " (the S3 backend is tdbg/storage/s3.hpp, CMake target tdbg::s3)"
                                                      : ""));
    }
    return open(location);
}

} // namespace tdbg
