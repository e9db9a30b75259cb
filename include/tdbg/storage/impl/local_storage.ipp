#pragma once
/// \file
/// Definitions of tdbg/storage/local_storage.hpp.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg {

namespace detail {

inline std::string errno_text(int e) { return std::strerror(e); }

// Opens `path` for reading: object_not_found when it does not exist.
inline int open_for_read(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int saved = errno;
        if (saved == ENOENT) {
            throw object_not_found(fmt::format("no such object: {}", path));
        }
        throw storage_error(fmt::format("cannot open {}: {}", path, errno_text(saved)));
    }
    return fd;
}

inline std::uint64_t file_size(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int saved = errno;
        ::close(fd);
        throw storage_error(fmt::format("cannot stat {}: {}", path, errno_text(saved)));
    }
    return static_cast<std::uint64_t>(st.st_size);
}

// Fills out[0, length) from `offset` of `fd`; throws past the end of the file.
inline void pread_all(int fd, const std::string& path, std::uint64_t offset, char* out, std::size_t length) {
    std::size_t done = 0;
    while (done < length) {
        const ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw storage_error(fmt::format("cannot read {}: {}", path, errno_text(errno)));
        }
        if (n == 0) {
            throw storage_error(fmt::format("{}: wanted bytes {}..{} but the file ends at byte {}", path,
                                            offset, offset + length, offset + done));
        }
        done += static_cast<std::size_t>(n);
    }
}

inline void sync_directory(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)::fsync(fd);
        ::close(fd);
    }
}

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The entries of directory `dir`: its subdirectories (symbolic links to directories are not
// followed) and its regular files (through links). Nothing when it cannot be read.
inline void directory_entries(const std::string& dir, std::vector<std::string>& dirs, std::vector<std::string>& files) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
        return;
    }
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name(e->d_name);
        if (name == "." || name == "..") {
            continue;
        }
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN || type == DT_LNK) {
            struct stat st {};
            const std::string path = fmt::format("{}/{}", dir, name);
            if (type == DT_UNKNOWN && ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
                type = DT_DIR;
            } else if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
                type = DT_REG;
            }
        }
        if (type == DT_DIR) {
            dirs.emplace_back(name);
        } else if (type == DT_REG) {
            files.emplace_back(name);
        }
    }
    ::closedir(d);
}

// Adds the keys below directory `path` (whose keys start with `base`, "index/000000001/")
// that start with `prefix` and sort after `start_after`, skipping subtrees that hold none.
inline void list_below(const std::string& path, const std::string& base, const std::string& prefix,
                       const std::string& start_after, std::vector<std::string>& keys) {
    std::vector<std::string> dirs;
    std::vector<std::string> files;
    directory_entries(path, dirs, files);
    for (const std::string& name : files) {
        std::string key = base + name;
        if (ends_with(key, ".tmp") || key.compare(0, prefix.size(), prefix) != 0 || key <= start_after) {
            continue; // .tmp: being written
        }
        keys.push_back(std::move(key));
    }
    for (const std::string& name : dirs) {
        const std::string below = fmt::format("{}{}/", base, name);
        // Every key below starts with `below`: none starts with `prefix` unless one is a prefix of the other...
        const std::size_t common = std::min(below.size(), prefix.size());
        if (below.compare(0, common, prefix, 0, common) != 0) {
            continue;
        }
        // ...and none sorts after `start_after` when `below` sorts before it without being its prefix.
        if (below < start_after && start_after.compare(0, below.size(), below) != 0) {
            continue;
        }
        list_below(fmt::format("{}/{}", path, name), below, prefix, start_after, keys);
    }
}

} // namespace detail

// ---- writer ------------------------------------------------------------------

TDBG_DECL local_storage::writer::writer(std::filesystem::path final_path, bool durable)
    : final_(std::move(final_path)), durable_(durable) {
    static std::atomic<std::uint64_t> counter{0};
    temp_ = final_;
    temp_ += fmt::format(".{}.{}.tmp", ::getpid(), counter++);
    std::error_code ec;
    std::filesystem::create_directories(final_.parent_path(), ec);
    if (ec) {
        throw storage_error(fmt::format("cannot create directory {}: {}", final_.parent_path().string(), ec.message()));
    }
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        throw storage_error(fmt::format("cannot create {}: {}", temp_.string(), detail::errno_text(errno)));
    }
}

TDBG_DECL local_storage::writer::writer(writer&& other) noexcept
    : final_(std::move(other.final_)), temp_(std::move(other.temp_)), fd_(std::exchange(other.fd_, -1)),
      durable_(other.durable_), written_(other.written_) {}

TDBG_DECL local_storage::writer::~writer() {
    if (fd_ >= 0) {
        ::close(fd_);
        std::error_code ignored;
        std::filesystem::remove(temp_, ignored);
    }
}

TDBG_DECL void local_storage::writer::append(std::string_view bytes) {
    if (fd_ < 0) {
        throw storage_error(fmt::format("write to {} after commit", final_.string()));
    }
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd_, p, left);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw storage_error(
                fmt::format("cannot write {} at byte {}: {}", temp_.string(), written_, detail::errno_text(errno)));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
        written_ += static_cast<std::uint64_t>(n);
    }
}

TDBG_DECL void local_storage::writer::commit() {
    if (fd_ < 0) {
        throw storage_error(fmt::format("commit of {} twice", final_.string()));
    }
    if (durable_ && ::fsync(fd_) != 0) {
        fail_commit("fsync");
    }
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
        fail_commit("close");
    }
    std::error_code ec;
    std::filesystem::rename(temp_, final_, ec);
    if (ec) {
        std::filesystem::remove(temp_, ec);
        throw storage_error(fmt::format("cannot publish {}: {}", final_.string(), ec.message()));
    }
    if (durable_) {
        detail::sync_directory(final_.parent_path());
    }
}

TDBG_DECL void local_storage::writer::fail_commit(const char* what) {
    const int saved = errno;
    if (fd_ >= 0) {
        ::close(std::exchange(fd_, -1));
    }
    std::error_code ignored;
    std::filesystem::remove(temp_, ignored);
    throw storage_error(fmt::format("{} failed for {}: {}", what, temp_.string(), detail::errno_text(saved)));
}

// ---- reader ------------------------------------------------------------------

TDBG_DECL local_storage::reader::reader(std::string path) : path_(std::move(path)) {
    fd_ = detail::open_for_read(path_);
    size_ = detail::file_size(fd_, path_);
}

TDBG_DECL local_storage::reader::reader(reader&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

TDBG_DECL local_storage::reader::~reader() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

TDBG_DECL void local_storage::reader::read_at(std::uint64_t offset, char* out, std::size_t length) const {
    if (offset > size_ || length > size_ - offset) {
        throw storage_error(fmt::format("{}: wanted bytes {}..{} but the file ends at byte {}", path_, offset,
                                        offset + length, size_));
    }
    detail::pread_all(fd_, path_, offset, out, length);
}

// ---- local_storage -----------------------------------------------------------

TDBG_DECL std::filesystem::path local_storage::path_of(const std::string& key) const { return file_of(key); }

TDBG_DECL std::string local_storage::file_of(const std::string& key) const {
    // A plain string: reads (one per index file) need no path split into components.
    validate_key(key);
    const std::string& root = root_.native();
    std::string out;
    out.reserve(root.size() + 1 + key.size());
    out.append(root);
    if (!out.empty() && out.back() != '/') {
        out.push_back('/');
    }
    out.append(key);
    return out;
}

TDBG_DECL local_storage::writer local_storage::open_write(const std::string& key) const {
    return writer(path_of(key), options_.durable);
}

TDBG_DECL void local_storage::put(const std::string& key, std::string_view bytes) const {
    writer w = open_write(key);
    w.append(bytes);
    w.commit();
}

TDBG_DECL std::string local_storage::read(const std::string& key) const {
    const std::string path = file_of(key);
    const int fd = detail::open_for_read(path);
    std::string out;
    // Read to the end (a file that grows is read as far as it goes). Most objects (index
    // files, collections) fit the first read; a larger one is sized by the file first.
    char buffer[1 << 16];
    for (bool first = true;; first = false) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int saved = errno;
            ::close(fd);
            throw storage_error(fmt::format("cannot read {}: {}", path, detail::errno_text(saved)));
        }
        if (n == 0) {
            break;
        }
        if (first && static_cast<std::size_t>(n) == sizeof buffer) {
            out.reserve(static_cast<std::size_t>(detail::file_size(fd, path)));
        }
        out.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

TDBG_DECL std::string local_storage::read_range(const std::string& key, std::uint64_t offset,
                                                std::uint64_t length) const {
    const reader r(file_of(key));
    // Bounded by the file before allocating: a corrupt index must not make a reader
    // allocate what the file cannot hold.
    if (offset > r.size() || length > r.size() - offset) {
        throw storage_error(fmt::format("{}: wanted bytes {}..{} but the file ends at byte {}", r.path_,
                                        offset, offset + length, r.size()));
    }
    std::string out(static_cast<std::size_t>(length), '\0');
    r.read_at(offset, out.data(), out.size());
    return out;
}

TDBG_DECL local_storage::reader local_storage::open_read(const std::string& key) const { return reader(file_of(key)); }

TDBG_DECL std::vector<std::string> local_storage::list(const std::string& prefix,
                                                       const std::string& start_after) const {
    // Keys below the directory part of the prefix ("index/" of "index/000"), walked from there.
    const auto slash = prefix.rfind('/');
    const std::string base = slash == std::string::npos ? std::string() : prefix.substr(0, slash + 1);
    std::string dir = root_.string();
    if (!base.empty()) {
        dir.append(1, '/').append(base, 0, base.size() - 1);
    }
    std::vector<std::string> keys;
    detail::list_below(dir, base, prefix, start_after, keys);
    std::sort(keys.begin(), keys.end());
    return keys;
}

TDBG_DECL bool local_storage::exists(const std::string& key) const {
    std::error_code ec;
    return std::filesystem::is_regular_file(path_of(key), ec);
}

} // namespace tdbg
