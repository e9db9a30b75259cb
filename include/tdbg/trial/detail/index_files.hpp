#pragma once
/// \file
/// Lists and reads index files. Any storage does it with `list("index/",
/// start_after)` and `read(key)`. For a local run tdbg lists only the index
/// directories at or after the one of `start_after` (smdebug puts 1000 steps
/// in each), so that polling a long live run costs the files of its last
/// directory, not a walk of the whole tree; and it opens index files relative
/// to their directory, which costs less than resolving the whole path each time.

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <system_error>
#include <vector>

#include "tdbg/storage/local_storage.hpp"

namespace tdbg::detail {

/// The prefix under which index files live.
inline constexpr std::string_view index_prefix = "index/";

namespace listing {

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The entries of a directory (not "." or ".."); empty when it cannot be read.
inline std::vector<std::string> entries_of(const std::string& dir, bool directories) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
        return out;
    }
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name(e->d_name);
        if (name == "." || name == "..") {
            continue;
        }
        bool is_dir = e->d_type == DT_DIR;
        bool is_file = e->d_type == DT_REG;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
            std::error_code ec;
            const auto status = std::filesystem::status(dir + "/" + std::string(name), ec);
            is_dir = !ec && std::filesystem::is_directory(status);
            is_file = !ec && std::filesystem::is_regular_file(status);
        }
        if (directories ? is_dir : is_file) {
            out.emplace_back(name);
        }
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace listing

/// The published keys under "index/" greater than `start_after`, sorted.
template <class Storage>
std::vector<std::string> list_index_keys(const Storage& storage, const std::string& start_after) {
    if constexpr (std::is_same_v<Storage, local_storage>) {
        // The directory part of start_after ("index/000000003/"): earlier directories hold only earlier keys.
        std::string floor_dir;
        if (start_after.compare(0, index_prefix.size(), index_prefix) == 0) {
            const auto slash = start_after.find('/', index_prefix.size());
            if (slash != std::string::npos) {
                floor_dir = start_after.substr(index_prefix.size(), slash - index_prefix.size());
            }
        }
        const std::string root = (storage.root() / "index").string();
        std::vector<std::string> keys;
        for (const std::string& dir : listing::entries_of(root, true)) {
            if (dir < floor_dir) {
                continue;
            }
            std::string dir_path = root;
            dir_path.append(1, '/').append(dir);
            for (const std::string& name : listing::entries_of(dir_path, false)) {
                if (listing::ends_with(name, ".tmp")) {
                    continue; // being written
                }
                std::string key;
                key.reserve(index_prefix.size() + dir.size() + 1 + name.size());
                key.append(index_prefix).append(dir).append(1, '/').append(name);
                if (key > start_after) {
                    keys.push_back(std::move(key));
                }
            }
        }
        // "index/<dir>/<name>" sorts by dir, then name, except where a directory
        // name is a prefix of another; sort to match storage.list exactly.
        if (!std::is_sorted(keys.begin(), keys.end())) {
            std::sort(keys.begin(), keys.end());
        }
        return keys;
    } else {
        return storage.list(std::string(index_prefix), start_after);
    }
}

/// Reads whole index files, one thread's share: consecutive keys are mostly in
/// one directory, which stays open between them (local runs).
template <class Storage>
class index_file_reader {
public:
    explicit index_file_reader(const Storage& storage) noexcept : storage_(storage) {}
    index_file_reader(const index_file_reader&) = delete;
    index_file_reader& operator=(const index_file_reader&) = delete;
    ~index_file_reader() {
        if (dir_fd_ >= 0) {
            ::close(dir_fd_);
        }
    }

    /// The whole object `key`; throws storage_error (object_not_found when it is gone).
    std::string read(const std::string& key) {
        if constexpr (std::is_same_v<Storage, local_storage>) {
            validate_key(key);
            const auto slash = key.rfind('/');
            const std::string_view dir = slash == std::string::npos ? std::string_view() : std::string_view(key).substr(0, slash);
            if (slash == std::string::npos || dir.find('/') == std::string_view::npos) {
                return storage_.read(key); // not index/<dir>/<name>
            }
            if (dir != dir_) {
                if (dir_fd_ >= 0) {
                    ::close(dir_fd_);
                    dir_fd_ = -1;
                }
                dir_.assign(dir);
                dir_fd_ = ::open((storage_.root() / dir_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            }
            if (dir_fd_ < 0) {
                return storage_.read(key); // let it report the problem
            }
            const int fd = ::openat(dir_fd_, key.c_str() + slash + 1, O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                return storage_.read(key);
            }
            std::string out;
            char buffer[1 << 15];
            for (;;) {
                const ssize_t n = ::read(fd, buffer, sizeof buffer);
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n < 0) {
                    const int saved = errno;
                    ::close(fd);
                    throw storage_error("cannot read " + (storage_.root() / key).string() + ": " + std::strerror(saved));
                }
                out.append(buffer, static_cast<std::size_t>(n));
                // A regular file returns less than asked only at its end.
                if (static_cast<std::size_t>(n) < sizeof buffer) {
                    break;
                }
            }
            ::close(fd);
            return out;
        } else {
            return storage_.read(key);
        }
    }

private:
    const Storage& storage_;
    std::string dir_;
    int dir_fd_ = -1;
};

} // namespace tdbg::detail
