#pragma once
/// \file
/// Definitions of tdbg/storage/storage.hpp.

#include <string>
#include <string_view>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

TDBG_DECL void validate_key(std::string_view key) {
    auto fail = [&](const char* why) {
        std::string shown(key.substr(0, 200));
        for (char& c : shown) {
            if (c == '\0') {
                c = '?';
            }
        }
        throw invalid_name(fmt::format("invalid storage key '{}{}: {}", shown, key.size() > 200 ? "...'" : "'", why));
    };
    if (key.empty()) {
        fail("empty");
    }
    if (key.size() > 4096) {
        fail("longer than 4096 bytes");
    }
    if (key.front() == '/') {
        fail("absolute path");
    }
    std::size_t start = 0;
    while (start <= key.size()) {
        std::size_t end = key.find('/', start);
        if (end == std::string_view::npos) {
            end = key.size();
        }
        const std::string_view part = key.substr(start, end - start);
        if (part.empty()) {
            fail("empty path component");
        }
        if (part == "." || part == "..") {
            fail("'.' or '..' component");
        }
        if (part.size() > 255) {
            fail("a path component longer than 255 bytes");
        }
        for (const char c : part) {
            if (c == '\0') {
                fail("NUL byte");
            }
            if (c == '\\') {
                fail("backslash");
            }
        }
        start = end + 1;
    }
}

} // namespace tdbg
