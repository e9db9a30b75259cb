#pragma once
/// \file
/// The storage concept: where a run's bytes live. Keys are relative,
/// '/'-separated paths below the run's root ("index/000000000/...json").
///
/// A backend `S` provides:
///   - `s.put(key, bytes)`: publish an object atomically (readers see all of it or nothing);
///   - `s.open_write(key)`: a writer with `append(bytes)` and `commit()` (atomic publish;
///     destroying it uncommitted discards it);
///   - `s.read(key) -> std::string`, `s.read_range(key, offset, length) -> std::string`;
///   - `s.list(prefix, start_after) -> std::vector<std::string>`: the published keys that
///     start with `prefix` (a string prefix, as in S3), sorted, greater than `start_after`;
///   - `s.exists(key) -> bool`;
///   - `s.describe() -> std::string`: where it is, for messages ("/runs/a", "s3://b/p").
/// Missing objects make `read`/`read_range` throw `storage_error`.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"

namespace tdbg {

/// Throws invalid_name unless `key` is a safe relative key: not empty, not
/// absolute, no "." or ".." component, no empty component, no NUL or backslash,
/// at most 1024 bytes per component and 4096 in all.
inline void validate_key(std::string_view key) {
    auto fail = [&](const char* why) {
        std::string shown(key.substr(0, 200));
        for (char& c : shown) {
            if (c == '\0') {
                c = '?';
            }
        }
        throw invalid_name("invalid storage key '" + shown + (key.size() > 200 ? "...'" : "'") + ": " + why);
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
        for (char c : part) {
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

namespace detail {
template <class S, class = void>
struct is_storage : std::false_type {};

template <class S>
struct is_storage<
    S, std::void_t<decltype(std::declval<S&>().put(std::declval<const std::string&>(), std::declval<std::string_view>())),
                   decltype(std::declval<S&>().open_write(std::declval<const std::string&>())),
                   decltype(std::declval<S&>().open_write(std::declval<const std::string&>()).append(std::declval<std::string_view>())),
                   decltype(std::declval<S&>().open_write(std::declval<const std::string&>()).commit()),
                   decltype(std::declval<const S&>().read(std::declval<const std::string&>())),
                   decltype(std::declval<const S&>().read_range(std::declval<const std::string&>(), std::uint64_t{}, std::uint64_t{})),
                   decltype(std::declval<const S&>().list(std::declval<const std::string&>(), std::declval<const std::string&>())),
                   decltype(std::declval<const S&>().exists(std::declval<const std::string&>())),
                   decltype(std::declval<const S&>().describe())>>
    : std::bool_constant<
          std::is_same_v<decltype(std::declval<const S&>().read(std::declval<const std::string&>())), std::string> &&
          std::is_same_v<decltype(std::declval<const S&>().list(std::declval<const std::string&>(), std::declval<const std::string&>())),
                         std::vector<std::string>> &&
          std::is_convertible_v<decltype(std::declval<const S&>().exists(std::declval<const std::string&>())), bool>> {};
} // namespace detail

/// True when `S` satisfies the storage concept (C++17 detection).
template <class S>
inline constexpr bool is_storage_v = detail::is_storage<S>::value;

#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
/// The storage concept (C++20).
template <class S>
concept storage = is_storage_v<S>;
#endif

} // namespace tdbg
