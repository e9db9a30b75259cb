#pragma once
/// \file
/// Definitions of tdbg/storage/local_storage.hpp.

#include <algorithm>
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

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/detail/beneath.hpp"
#include "tdbg/storage/detail/owned_directory.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg {


// ---- writer ------------------------------------------------------------------

TDBG_DECL local_storage::writer::writer(std::filesystem::path final_path, bool durable,
                                       detail::trusted_directories& dirs, std::string_view key_dir)
    : final_(std::move(final_path)), durable_(durable) {
    // A new file (O_EXCL), never one a link names (O_NOFOLLOW), under a name nobody can foresee:
    // what another user placed at a temporary name is never written through, nor published.
    for (int attempt = 0;; ++attempt) {
        dirs.prepare(key_dir);
        temp_ = final_;
        temp_ += fmt::format(".{}.{}.tmp", ::getpid(), detail::unguessable_suffix());
        fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd_ >= 0) {
            return;
        }
        const int saved = errno;
        // ENOENT: the directory was removed since it was checked (a run written again).
        if ((saved == ENOENT || saved == EEXIST) && attempt < 8) {
            if (saved == ENOENT) {
                dirs.forget();
            }
            continue;
        }
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
    : root_(std::move(root)), options_(opts), dir_(std::make_shared<const detail::local_root>(root_.string())),
      written_(std::make_shared<detail::trusted_directories>(root_)) {}

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
    std::string path = file_of(key); // validates the key
    const auto slash = key.rfind('/');
    return writer(std::move(path), options_.durable, *written_,
                  slash == std::string::npos ? std::string_view() : std::string_view(key).substr(0, slash));
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
