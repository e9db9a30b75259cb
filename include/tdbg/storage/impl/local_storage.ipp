#pragma once
/// \file
/// Definitions of tdbg/storage/local_storage.hpp.

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
#include "tdbg/storage/local_storage.hpp"

namespace tdbg {

namespace detail {

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

// The entries of the directory `rel` below the root (open as `root_fd`). False when it does
// not exist; a storage_error when it cannot be read (a run with an unreadable directory is
// not a run with fewer files).
inline bool directory_entries(const local_root& root, int root_fd, const std::string& rel,
                              std::vector<directory_entry>& entries) {
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
            entries.push_back(std::move(entry));
        }
    }
}

// Adds the keys below directory `rel` (whose keys start with `base`, "index/000000001/")
// that start with `prefix` and sort after `start_after`, skipping subtrees that hold none.
// A key that would be listed but is not a regular file is a storage_error naming it. False
// when `rel` does not exist.
inline bool list_below(const local_root& root, int root_fd, const std::string& rel, const std::string& base,
                       const std::string& prefix, const std::string& start_after, std::vector<std::string>& keys) {
    std::vector<directory_entry> entries;
    if (!directory_entries(root, root_fd, rel, entries)) {
        return false;
    }
    std::vector<std::string> dirs;
    for (directory_entry& e : entries) {
        if (e.mode == S_IFDIR) {
            dirs.push_back(std::move(e.name));
            continue;
        }
        std::string key = base + e.name;
        if (ends_with(key, ".tmp") || key.compare(0, prefix.size(), prefix) != 0 || key <= start_after) {
            continue; // .tmp: being written
        }
        if (!e.problem.empty()) {
            throw storage_error(e.problem);
        }
        if (e.mode != S_IFREG) {
            throw_not_regular(root.path_of(key), e.mode);
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
        (void)list_below(root, root_fd, rel == "." ? name : fmt::format("{}/{}", rel, name), below, prefix, start_after,
                         keys);
    }
    return true;
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
        const int saved = errno;
        throw storage_error(fmt::format("cannot create {}: {}", temp_.string(), detail::errno_text(saved)));
    }
}

TDBG_DECL local_storage::writer::writer(writer&& other) noexcept
    : final_(std::move(other.final_)), temp_(std::move(other.temp_)), fd_(std::exchange(other.fd_, -1)),
      durable_(other.durable_), written_(other.written_) {}

TDBG_DECL local_storage::writer::~writer() {
    if (fd_ >= 0) {
        detail::remove_temp_file(temp_, fd_);
        ::close(fd_);
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
            const int saved = errno;
            if (saved == EINTR) {
                continue;
            }
            throw storage_error(
                fmt::format("cannot write {} at byte {}: {}", temp_.string(), written_, detail::errno_text(saved)));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
        written_ += static_cast<std::uint64_t>(n);
    }
}

TDBG_DECL void local_storage::writer::commit() { (void)publish(true); }

TDBG_DECL bool local_storage::writer::publish(bool replace) {
    if (fd_ < 0) {
        throw storage_error(fmt::format("commit of {} twice", final_.string()));
    }
    if (durable_ && ::fsync(fd_) != 0) {
        fail_commit("fsync", -1);
    }
    // A second descriptor of the file, held until it is published: if the rename fails (the
    // run directory was renamed or removed under the writer), the file is found through it and
    // removed. -1 when no descriptor is left: the file is then removed by its path only.
    const detail::fd_guard held(::dup(fd_));
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
        fail_commit("close", held.fd);
    }
    // A new name only: link() fails with EEXIST, atomically, when the name is taken.
    if ((replace ? ::rename(temp_.c_str(), final_.c_str()) : ::link(temp_.c_str(), final_.c_str())) != 0) {
        const int saved = errno; // before anything else can change it
        detail::remove_temp_file(temp_, held.fd);
        if (!replace && saved == EEXIST) {
            return false;
        }
        throw storage_error(fmt::format("cannot publish {}: {}", final_.string(), detail::errno_text(saved)));
    }
    if (!replace) {
        detail::remove_temp_file(temp_, held.fd); // the file lives on under its name
    }
    if (durable_) {
        detail::sync_directory(final_.parent_path());
    }
    return true;
}

TDBG_DECL void local_storage::writer::fail_commit(const char* what, int held) {
    const int saved = errno;
    if (fd_ >= 0) {
        detail::remove_temp_file(temp_, fd_);
        ::close(std::exchange(fd_, -1));
    } else {
        detail::remove_temp_file(temp_, held);
    }
    throw storage_error(fmt::format("{} failed for {}: {}", what, temp_.string(), detail::errno_text(saved)));
}

// ---- reader ------------------------------------------------------------------

TDBG_DECL local_storage::reader::reader(int fd, std::string path) : path_(std::move(path)) {
    detail::fd_guard guard(fd); // a constructor that throws runs no destructor
    size_ = detail::regular_file_size(fd, [&] { return path_; });
    fd_ = std::exchange(guard.fd, -1);
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

TDBG_DECL local_storage::local_storage(std::filesystem::path root, options opts)
    : root_(std::move(root)), options_(opts), dir_(std::make_shared<const detail::local_root>(root_.string())) {}

TDBG_DECL std::filesystem::path local_storage::path_of(const std::string& key) const { return file_of(key); }

TDBG_DECL std::string local_storage::file_of(const std::string& key) const {
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

TDBG_DECL int local_storage::open_key(const std::string& key, int flags) const {
    // Resolved below the root's descriptor: no path is built or split on the way (one read
    // per index file), and a link that leaves the run is refused by the kernel.
    validate_key(key);
    for (bool renewed = false;; renewed = true) {
        const int root = dir_->get();
        if (root < 0) {
            const int saved = errno;
            if (saved == ENOENT) {
                throw object_not_found(fmt::format("no such object: {}", file_of(key)));
            }
            throw storage_error(fmt::format("cannot open the directory {}: {}", dir_->path(), detail::errno_text(saved)));
        }
#if defined(O_PATH)
        // openat2 refuses flags that O_PATH ignores.
        const int extra = (flags & O_PATH) != 0 ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
#else
        const int extra = O_CLOEXEC | O_NOCTTY;
#endif
        const int fd = detail::open_below(*dir_, root, key, flags | extra);
        if (fd >= 0) {
            return fd;
        }
        const int saved = errno;
        if (saved == ENOENT && !renewed && dir_->renew()) {
            continue; // the run directory was replaced since it was opened
        }
        if (saved == ENOENT || saved == ENOTDIR) {
            throw object_not_found(fmt::format("no such object: {}", file_of(key)));
        }
        throw storage_error(fmt::format("cannot open {}: {}", file_of(key), detail::errno_text(saved)));
    }
}

TDBG_DECL local_storage::writer local_storage::open_write(const std::string& key) const {
    return writer(path_of(key), options_.durable);
}

TDBG_DECL void local_storage::put(const std::string& key, std::string_view bytes) const {
    writer w = open_write(key);
    w.append(bytes);
    w.commit();
}

TDBG_DECL bool local_storage::put_if_absent(const std::string& key, std::string_view bytes) const {
    writer w = open_write(key);
    w.append(bytes);
    return w.publish(false);
}

TDBG_DECL void local_storage::check_read_size(const std::string& key, std::uint64_t size) const {
    if (size > options_.max_read_bytes) {
        throw storage_error(fmt::format("{} is {} bytes, more than the {} a file read whole may hold "
                                        "(local_storage::options::max_read_bytes): refused",
                                        file_of(key), size, options_.max_read_bytes));
    }
}

TDBG_DECL std::string local_storage::read(const std::string& key) const {
    // O_NONBLOCK: a FIFO in place of a file must not block the open or a read.
    const detail::fd_guard fd(open_key(key, O_RDONLY | O_NONBLOCK));
    const auto path = [&] { return file_of(key); };
    std::string out;
    // Read to the end (a file that grows is read as far as it goes). Most objects (index
    // files, collections) fit the first read; a larger one is sized by the file first. The
    // file's type is checked where fstat is called anyway (a device fills the first read), or
    // where the first read finds nothing or would block (a FIFO): no call per small file.
    char buffer[1 << 16];
    for (bool first = true;; first = false) {
        const ssize_t n = ::read(fd.fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int saved = errno;
            if (saved == EAGAIN || saved == EWOULDBLOCK) {
                (void)detail::regular_file_size(fd.fd, path); // a FIFO or a device: throws
            }
            throw storage_error(fmt::format("cannot read {}: {}", path(), detail::errno_text(saved)));
        }
        if (n == 0) {
            if (first) {
                (void)detail::regular_file_size(fd.fd, path);
            }
            break;
        }
        if (first && static_cast<std::size_t>(n) == sizeof buffer) {
            const std::uint64_t size = detail::regular_file_size(fd.fd, path);
            check_read_size(key, size);
            out.reserve(static_cast<std::size_t>(size));
        }
        check_read_size(key, out.size() + static_cast<std::size_t>(n)); // a file that grows while read
        out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
}

TDBG_DECL std::string local_storage::read_range(const std::string& key, std::uint64_t offset,
                                                std::uint64_t length) const {
    const reader r = open_read(key);
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

TDBG_DECL local_storage::reader local_storage::open_read(const std::string& key) const {
    const int fd = open_key(key, O_RDONLY | O_NONBLOCK);
    return reader(fd, file_of(key));
}

TDBG_DECL std::vector<std::string> local_storage::list(const std::string& prefix,
                                                       const std::string& start_after) const {
    // Keys below the directory part of the prefix ("index/" of "index/000"), walked from there.
    const auto slash = prefix.rfind('/');
    const std::string base = slash == std::string::npos ? std::string() : prefix.substr(0, slash + 1);
    const std::string rel = base.empty() ? std::string(".") : base.substr(0, base.size() - 1);
    if (rel != ".") {
        validate_key(rel);
    }
    std::vector<std::string> keys;
    for (bool renewed = false;; renewed = true) {
        const int root = dir_->get();
        if (root < 0) {
            const int saved = errno;
            if (saved == ENOENT) {
                return keys; // no run directory yet: nothing published
            }
            throw storage_error(fmt::format("cannot list the directory {}: {}", dir_->path(), detail::errno_text(saved)));
        }
        if (detail::list_below(*dir_, root, rel, base, prefix, start_after, keys) || renewed || !dir_->renew()) {
            break;
        }
    }
    std::sort(keys.begin(), keys.end());
    return keys;
}

TDBG_DECL void local_storage::remove(const std::string& key) const {
    const std::string path = file_of(key);
    if (::unlink(path.c_str()) != 0) {
        const int saved = errno;
        if (saved != ENOENT) {
            throw storage_error(fmt::format("cannot remove {}: {}", path, detail::errno_text(saved)));
        }
    }
}

TDBG_DECL bool local_storage::exists(const std::string& key) const {
    int fd = -1;
    try {
#if defined(O_PATH)
        fd = open_key(key, O_PATH);
#else
        fd = open_key(key, O_RDONLY | O_NONBLOCK);
#endif
    } catch (const object_not_found&) {
        return false;
    }
    const detail::fd_guard guard(fd);
    struct stat st {};
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace tdbg
