#pragma once
/// \file
/// Opening paths beneath a run's directory, and nothing outside it: local_storage's path
/// safety (storage/local_storage.hpp). A key is resolved one component at a time from the
/// run's root descriptor (openat2 with RESOLVE_BENEATH where the kernel has it, else a walk
/// that refuses symbolic links leaving the root), so that a key cannot name a file outside the
/// run, however the directory changes meanwhile; files are listed, read, published and removed
/// through those descriptors. POSIX only.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__) && __has_include(<linux/openat2.h>) && __has_include(<sys/syscall.h>)
#include <linux/openat2.h>
#include <sys/syscall.h>
#if defined(SYS_openat2)
#define TDBG_HAVE_OPENAT2 1
#endif
#endif

#include <fmt/core.h>

#include "tdbg/core/error.hpp"

namespace tdbg::detail {

inline std::string errno_text(int e) { return std::strerror(e); }

// Closes a descriptor when it goes.
struct fd_guard {
    int fd = -1;
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    fd_guard(fd_guard&&) = delete;
    fd_guard& operator=(fd_guard&&) = delete;
    explicit fd_guard(int f) noexcept : fd(f) {}
    ~fd_guard() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

// What a file of mode `mode` is, for messages: "a FIFO", "a directory", ...
inline const char* file_kind(unsigned mode) noexcept {
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
    }
}

// The same for a directory entry's d_type.
inline unsigned mode_of_dirent_type(unsigned char type) noexcept {
    switch (type) {
    case DT_REG: return S_IFREG;
    case DT_DIR: return S_IFDIR;
    case DT_FIFO: return S_IFIFO;
    case DT_CHR: return S_IFCHR;
    case DT_BLK: return S_IFBLK;
    case DT_SOCK: return S_IFSOCK;
    case DT_LNK: return S_IFLNK;
    default: return 0;
    }
}

[[noreturn]] inline void throw_not_regular(const std::string& path, unsigned mode) {
    throw storage_error(fmt::format("{}: {}, not a regular file: refused (a run holds regular files only)", path,
                                    file_kind(mode)));
}

// The size of the regular file open as `fd`; a storage_error naming `path` when it is
// anything else (a FIFO, a device: reading those would block or never end).
template <class Path>
std::uint64_t regular_file_size(int fd, const Path& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int saved = errno;
        throw storage_error(fmt::format("cannot stat {}: {}", path(), errno_text(saved)));
    }
    if (!S_ISREG(st.st_mode)) {
        throw_not_regular(path(), st.st_mode);
    }
    return static_cast<std::uint64_t>(st.st_size);
}

// openat2(2) with RESOLVE_BENEATH: `path` resolved below `dir`, refused (EXDEV) where a
// symbolic link or ".." would leave it, or a link is absolute. ENOSYS where it is missing.
inline int open_beneath(int dir, const char* path, int flags) {
#if defined(TDBG_HAVE_OPENAT2)
    open_how how{};
    how.flags = static_cast<std::uint64_t>(static_cast<unsigned>(flags));
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int tries = 0;; ++tries) {
        const long fd = ::syscall(SYS_openat2, dir, path, &how, sizeof how);
        // EAGAIN: a concurrent rename made the kernel unsure that ".." stayed below; it may be retried.
        if (fd < 0 && (errno == EINTR || (errno == EAGAIN && tries < 8))) {
            continue;
        }
        return static_cast<int>(fd);
    }
#else
    (void)dir;
    (void)path;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

// The run directory of a local_storage, opened on first use and held, so that every read
// resolves its key below it. Copies of a local_storage share one.
class local_root {
public:
    explicit local_root(std::string path) : path_(path.empty() ? std::string(".") : std::move(path)) {}
    local_root(const local_root&) = delete;
    local_root& operator=(const local_root&) = delete;
    local_root(local_root&&) = delete;
    local_root& operator=(local_root&&) = delete;
    ~local_root() {
        const int fd = fd_.load(std::memory_order_relaxed);
        if (fd >= 0) {
            ::close(fd);
        }
        for (const int old : retired_) {
            ::close(old);
        }
    }

    // The directory's descriptor; -1 with errno set when it cannot be opened (ENOENT: not yet).
    [[nodiscard]] int get() const {
        const int fd = fd_.load(std::memory_order_acquire);
        if (fd >= 0) {
            return fd;
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        const int again = fd_.load(std::memory_order_relaxed);
        return again >= 0 ? again : open_locked();
    }

    // After ENOENT below the root: true when its path now names another directory (the run was
    // removed and written again), which is held from now on.
    [[nodiscard]] bool renew() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        struct stat st {};
        const int old = fd_.load(std::memory_order_relaxed);
        if (old < 0 || ::stat(path_.c_str(), &st) != 0 || (st.st_dev == dev_ && st.st_ino == ino_)) {
            return false;
        }
        if (open_locked() < 0) {
            return false;
        }
        retired_.push_back(old); // another thread may be resolving a key below it right now
        return true;
    }

    // True when openat2's RESOLVE_BENEATH works here (Linux 5.6 and later, unless filtered).
    [[nodiscard]] bool beneath() const noexcept { return beneath_.load(std::memory_order_relaxed); }
    // The directory as the caller named it.
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    // `rel` below it, for messages.
    [[nodiscard]] std::string path_of(std::string_view rel) const {
        if (rel.empty() || rel == ".") {
            return path_;
        }
        return fmt::format("{}{}{}", path_, path_.back() == '/' ? "" : "/", rel);
    }

private:
    int open_locked() const {
#if defined(O_PATH)
        const int fd = ::open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
        const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
        if (fd < 0) {
            return -1;
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            const int saved = errno;
            ::close(fd);
            errno = saved;
            return -1;
        }
        dev_ = st.st_dev;
        ino_ = st.st_ino;
        // Where openat2 is missing or filtered (ENOSYS, EPERM), links are checked by hand.
#if defined(O_PATH)
        const int probe = open_beneath(fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
        const int probe = open_beneath(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
        beneath_.store(probe >= 0 || (errno != ENOSYS && errno != EPERM), std::memory_order_relaxed);
        if (probe >= 0) {
            ::close(probe);
        }
        fd_.store(fd, std::memory_order_release);
        return fd;
    }

    std::string path_;
    mutable std::mutex mutex_; // guards opening and renewing, and the members below fd_
    mutable std::atomic<int> fd_{-1};
    mutable std::atomic<bool> beneath_{false};
    mutable dev_t dev_ = 0;
    mutable ino_t ino_ = 0;
    mutable std::vector<int> retired_; // replaced descriptors, closed with the object
};

// Whether `rel`'s symbolic links, resolved one component at a time below `root`, stay in it.
struct link_check {
    enum class verdict { inside, outside, unknown } what = verdict::unknown;
    std::string message; // outside: names the link and where it leads
};

inline bool path_within(const std::filesystem::path& p, const std::filesystem::path& dir) {
    const std::string& a = p.native();
    const std::string& b = dir.native();
    if (b == "/") {
        return true;
    }
    return a.size() >= b.size() && a.compare(0, b.size(), b) == 0 && (a.size() == b.size() || a[b.size()] == '/');
}

// The slow path, off the kernel's: where openat2 refused a link (an absolute one may still lead
// back in) or is missing. A component that does not exist ends the check (the open reports it).
inline link_check check_links(const local_root& root, std::string_view rel) {
    namespace fs = std::filesystem;
    link_check out;
    std::error_code ec;
    const fs::path base = fs::canonical(root.path(), ec);
    if (ec) {
        return out;
    }
    fs::path at = base;
    std::size_t start = 0;
    int links = 0;
    while (start < rel.size()) {
        std::size_t end = rel.find('/', start);
        if (end == std::string_view::npos) {
            end = rel.size();
        }
        const std::string_view part = rel.substr(start, end - start);
        start = end + 1;
        if (part.empty() || part == ".") {
            continue;
        }
        fs::path next = at / std::string(part);
        const fs::file_status status = fs::symlink_status(next, ec);
        if (ec || !fs::exists(status)) {
            out.what = link_check::verdict::inside;
            return out;
        }
        if (fs::is_symlink(status)) {
            if (++links > 40) {
                return out; // ELOOP: the open reports it
            }
            const fs::path target = fs::read_symlink(next, ec);
            if (ec) {
                return out;
            }
            const fs::path lands = fs::weakly_canonical(target.is_absolute() ? target : at / target, ec);
            if (ec) {
                return out;
            }
            if (!path_within(lands, base)) {
                out.what = link_check::verdict::outside;
                out.message = fmt::format(
                    "{}: a symbolic link to '{}', which leads out of the run directory {} (to {}): refused (links "
                    "must stay inside the run)",
                    root.path_of(rel.substr(0, end)), target.string(), root.path(), lands.string());
                return out;
            }
            next = lands;
        }
        at = std::move(next);
    }
    out.what = link_check::verdict::inside;
    return out;
}

// `rel` opened with `flags` below the root open as `dir`, following links that stay inside
// it; a storage_error names a link that leaves it. -1 with errno set on other failures.
inline int open_below(const local_root& root, int dir, const std::string& rel, int flags) {
    if (root.beneath()) {
        const int fd = open_beneath(dir, rel.c_str(), flags);
        if (fd >= 0 || (errno != EXDEV && errno != EAGAIN)) {
            return fd;
        }
    }
    const link_check check = check_links(root, rel);
    if (check.what == link_check::verdict::outside) {
        throw storage_error(check.message);
    }
    if (check.what == link_check::verdict::unknown && root.beneath()) {
        throw storage_error(fmt::format(
            "cannot open {}: a symbolic link on its way leads out of the run directory {}, or could not be followed",
            root.path_of(rel), root.path()));
    }
    return ::openat(dir, rel.c_str(), flags);
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

// Removes a writer's temporary file `temp`, of which `fd` is an open descriptor (or -1): by its
// path, or, where the path names nothing because a directory above the file was renamed or
// moved since it was created, where the descriptor says the file now is (Linux's
// /proc/self/fd), once that is checked to be the same file under the same name. A file found
// nowhere is left; readers skip "*.tmp" files.
inline void remove_temp_file(const std::filesystem::path& temp, int fd) noexcept {
    if (::unlink(temp.c_str()) == 0 || errno != ENOENT || fd < 0) {
        return;
    }
    const std::string_view name = [&] {
        const std::string_view p(temp.native());
        return p.substr(p.rfind('/') + 1); // npos + 1: the whole path
    }();
    char link[32];
    char where[4096];
    if (std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd) <= 0) {
        return;
    }
    const ssize_t n = ::readlink(link, where, sizeof where - 1);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof where - 1) {
        return;
    }
    where[n] = '\0';
    const std::string_view found(where, static_cast<std::size_t>(n));
    struct stat by_fd {};
    struct stat by_path {};
    if (found.front() != '/' || !ends_with(found, name) || found[found.size() - name.size() - 1] != '/' ||
        ::fstat(fd, &by_fd) != 0 || ::lstat(where, &by_path) != 0 || by_fd.st_dev != by_path.st_dev ||
        by_fd.st_ino != by_path.st_ino) {
        return; // removed meanwhile (the link then reads "... (deleted)"), or not ours
    }
    (void)::unlink(where);
}

// One entry of a directory: its name and what it is, links followed (mode 0: a link that
// cannot be followed, `problem` says why).
struct directory_entry {
    std::string name;
    unsigned mode = 0;
    std::string problem;
};

// What the entry `name` of the directory open as `dir` is, following a link; false when it
// vanished.
inline bool classify_entry(const local_root& root, const std::string& rel, int dir, directory_entry& e,
                           unsigned char type) {
    e.mode = mode_of_dirent_type(type);
    struct stat st {};
    if (e.mode == 0) { // DT_UNKNOWN: file systems that do not fill d_type
        if (::fstatat(dir, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            return false;
        }
        e.mode = st.st_mode & S_IFMT;
    }
    if (e.mode != S_IFLNK) {
        return true;
    }
    if (::fstatat(dir, e.name.c_str(), &st, 0) == 0) {
        e.mode = st.st_mode & S_IFMT;
        return true;
    }
    const int saved = errno;
    e.mode = 0;
    std::string target(4096, '\0');
    const ssize_t n = ::readlinkat(dir, e.name.c_str(), target.data(), target.size());
    target.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    const std::string path = root.path_of(rel == "." ? e.name : fmt::format("{}/{}", rel, e.name));
    e.problem = saved == ENOENT
                    ? fmt::format("{}: a symbolic link to '{}', which does not exist", path, target)
                    : fmt::format("{}: a symbolic link to '{}' that cannot be followed: {}", path, target, errno_text(saved));
    return true;
}

// Calls `each` with every entry of the directory `rel` below the root (open as `root_fd`), as
// it is read: a directory of a million files is never held whole. False when it does not
// exist; a storage_error when it cannot be read (a run with an unreadable directory is not a
// run with fewer files).
template <class Each>
inline bool directory_entries(const local_root& root, int root_fd, const std::string& rel, const Each& each) {
    const int fd = open_below(root, root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int saved = errno;
        if (saved == ENOENT) {
            return false;
        }
        if (saved == ENOTDIR) {
            throw storage_error(fmt::format("cannot list {}: not a directory", root.path_of(rel)));
        }
        throw storage_error(fmt::format("cannot list the directory {}: {}", root.path_of(rel), errno_text(saved)));
    }
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
        const int saved = errno;
        ::close(fd);
        throw storage_error(fmt::format("cannot list the directory {}: {}", root.path_of(rel), errno_text(saved)));
    }
    struct dir_closer {
        DIR* d;
        explicit dir_closer(DIR* dir) noexcept : d(dir) {}
        dir_closer(const dir_closer&) = delete;
        dir_closer& operator=(const dir_closer&) = delete;
        dir_closer(dir_closer&&) = delete;
        dir_closer& operator=(dir_closer&&) = delete;
        ~dir_closer() { ::closedir(d); }
    } const closer(d);
    for (;;) {
        errno = 0;
        const dirent* e = ::readdir(d);
        if (e == nullptr) {
            if (errno != 0) {
                throw storage_error(
                    fmt::format("cannot list the directory {}: {}", root.path_of(rel), errno_text(errno)));
            }
            return true;
        }
        const std::string_view name(e->d_name);
        if (name == "." || name == "..") {
            continue;
        }
        directory_entry entry;
        entry.name = std::string(name);
        if (classify_entry(root, rel, ::dirfd(d), entry, e->d_type)) {
            each(entry);
        }
    }
}

// Adds the keys below directory `rel` (whose keys start with `base`, "index/000000001/")
// that start with `prefix` and sort after `start_after`, skipping subtrees that hold none.
// A key that would be listed but is not a regular file is a storage_error naming it. False
// when `rel` does not exist.
inline bool list_below(const local_root& root, int root_fd, const std::string& rel, const std::string& base,
                       const std::string& prefix, const std::string& start_after, std::vector<std::string>& keys) {
    std::vector<std::string> dirs;
    const bool found = directory_entries(root, root_fd, rel, [&](directory_entry& e) {
        if (e.mode == S_IFDIR) {
            dirs.push_back(std::move(e.name));
            return;
        }
        std::string key = base + e.name;
        if (ends_with(key, ".tmp") || key.compare(0, prefix.size(), prefix) != 0 || key <= start_after) {
            return; // .tmp: being written
        }
        if (!e.problem.empty()) {
            throw storage_error(e.problem);
        }
        if (e.mode != S_IFREG) {
            throw_not_regular(root.path_of(key), e.mode);
        }
        keys.push_back(std::move(key));
    });
    if (!found) {
        return false;
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
        (void)list_below(root, root_fd, rel == "." ? name : fmt::format("{}/{}", rel, name), below, prefix, start_after,
                         keys);
    }
    return true;
}

} // namespace tdbg::detail
