#pragma once
/// \file
/// The local filesystem backend: a directory is the run's root.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

/// Stores objects as files below a root directory. Objects are written to a
/// `*.tmp` file and renamed into place on commit, so readers never see a
/// partial object; with `durable`, files and their directories are fsync'ed.
class local_storage {
public:
    struct options {
        /// fsync each file before its rename and the directory after it.
        bool durable = false;
    };

    explicit local_storage(std::filesystem::path root) : local_storage(std::move(root), options{}) {}
    local_storage(std::filesystem::path root, options opts) : root_(std::move(root)), options_(opts) {}

    /// Writes one object; `commit()` publishes it atomically. Destroyed
    /// uncommitted, it removes its temporary file.
    class writer {
    public:
        writer(const writer&) = delete;
        writer& operator=(const writer&) = delete;
        writer(writer&& other) noexcept
            : final_(std::move(other.final_)), temp_(std::move(other.temp_)), fd_(std::exchange(other.fd_, -1)),
              durable_(other.durable_), written_(other.written_) {}
        writer& operator=(writer&&) = delete;
        ~writer() {
            if (fd_ >= 0) {
                ::close(fd_);
                std::error_code ignored;
                std::filesystem::remove(temp_, ignored);
            }
        }

        /// Appends bytes to the object.
        void append(std::string_view bytes) {
            if (fd_ < 0) {
                throw storage_error("write to " + final_.string() + " after commit");
            }
            const char* p = bytes.data();
            std::size_t left = bytes.size();
            while (left > 0) {
                const ssize_t n = ::write(fd_, p, left);
                if (n < 0) {
                    if (errno == EINTR) {
                        continue;
                    }
                    throw storage_error("cannot write " + temp_.string() + " at byte " + std::to_string(written_) + ": " +
                                        std::strerror(errno));
                }
                p += n;
                left -= static_cast<std::size_t>(n);
                written_ += static_cast<std::uint64_t>(n);
            }
        }

        /// Bytes appended so far.
        [[nodiscard]] std::uint64_t size() const noexcept { return written_; }

        /// Publishes the object under its final name.
        void commit() {
            if (fd_ < 0) {
                throw storage_error("commit of " + final_.string() + " twice");
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
                throw storage_error("cannot publish " + final_.string() + ": " + ec.message());
            }
            if (durable_) {
                sync_directory(final_.parent_path());
            }
        }

    private:
        friend class local_storage;
        writer(std::filesystem::path final_path, bool durable) : final_(std::move(final_path)), durable_(durable) {
            static std::atomic<std::uint64_t> counter{0};
            temp_ = final_;
            temp_ += "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
            std::error_code ec;
            std::filesystem::create_directories(final_.parent_path(), ec);
            if (ec) {
                throw storage_error("cannot create directory " + final_.parent_path().string() + ": " + ec.message());
            }
            fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd_ < 0) {
                throw storage_error("cannot create " + temp_.string() + ": " + std::strerror(errno));
            }
        }

        void fail_commit(const char* what) {
            const int saved = errno;
            if (fd_ >= 0) {
                ::close(std::exchange(fd_, -1));
            }
            std::error_code ignored;
            std::filesystem::remove(temp_, ignored);
            throw storage_error(std::string(what) + " failed for " + temp_.string() + ": " + std::strerror(saved));
        }

        std::filesystem::path final_;
        std::filesystem::path temp_;
        int fd_ = -1;
        bool durable_ = false;
        std::uint64_t written_ = 0;
    };

    /// The root directory.
    [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }
    /// The root, for messages.
    [[nodiscard]] std::string describe() const { return root_.string(); }

    /// Starts writing `key`.
    [[nodiscard]] writer open_write(const std::string& key) const { return writer(path_of(key), options_.durable); }

    /// Writes and publishes `key` in one call.
    void put(const std::string& key, std::string_view bytes) const {
        writer w = open_write(key);
        w.append(bytes);
        w.commit();
    }

    /// The whole object.
    [[nodiscard]] std::string read(const std::string& key) const {
        const auto path = path_of(key);
        const int fd = open_for_read(path);
        std::string out;
        char buffer[1 << 16];
        for (;;) {
            const ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                const int saved = errno;
                ::close(fd);
                throw storage_error("cannot read " + path.string() + ": " + std::strerror(saved));
            }
            if (n == 0) {
                break;
            }
            out.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(fd);
        return out;
    }

    /// `length` bytes from `offset`; throws storage_error when the object is shorter.
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        const auto path = path_of(key);
        const int fd = open_for_read(path);
        // Bound the request by the file before allocating: a corrupt index must not
        // make a reader allocate what the file cannot hold.
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            const int saved = errno;
            ::close(fd);
            throw storage_error("cannot stat " + path.string() + ": " + std::strerror(saved));
        }
        const auto size = static_cast<std::uint64_t>(st.st_size);
        if (offset > size || length > size - offset) {
            ::close(fd);
            throw storage_error(path.string() + ": wanted bytes " + std::to_string(offset) + ".." +
                                std::to_string(offset + length) + " but the file ends at byte " + std::to_string(size));
        }
        std::string out(length, '\0');
        std::uint64_t done = 0;
        while (done < length) {
            const ssize_t n = ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                const int saved = errno;
                ::close(fd);
                if (n == 0) {
                    throw storage_error(path.string() + ": wanted bytes " + std::to_string(offset) + ".." +
                                        std::to_string(offset + length) + " but the file ends at byte " +
                                        std::to_string(offset + done));
                }
                throw storage_error("cannot read " + path.string() + ": " + std::strerror(saved));
            }
            done += static_cast<std::uint64_t>(n);
        }
        ::close(fd);
        return out;
    }

    /// Published keys starting with `prefix`, sorted, greater than `start_after`.
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after = {}) const {
        namespace fs = std::filesystem;
        const auto slash = prefix.rfind('/');
        const std::string dir = slash == std::string::npos ? std::string() : prefix.substr(0, slash);
        const fs::path base = dir.empty() ? root_ : root_ / dir;
        std::vector<std::string> keys;
        std::error_code ec;
        if (!fs::is_directory(base, ec)) {
            return keys;
        }
        for (fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
             !ec && it != end; it.increment(ec)) {
            if (!it->is_regular_file(ec)) {
                continue;
            }
            std::string key = it->path().lexically_relative(root_).generic_string();
            if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".tmp") == 0) {
                continue;
            }
            if (key.compare(0, prefix.size(), prefix) == 0 && key > start_after) {
                keys.push_back(std::move(key));
            }
        }
        std::sort(keys.begin(), keys.end());
        return keys;
    }

    /// True when `key` is published.
    [[nodiscard]] bool exists(const std::string& key) const {
        std::error_code ec;
        return std::filesystem::is_regular_file(path_of(key), ec);
    }

private:
    [[nodiscard]] std::filesystem::path path_of(const std::string& key) const {
        validate_key(key);
        return root_ / key;
    }

    static int open_for_read(const std::filesystem::path& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            const int saved = errno;
            if (saved == ENOENT) {
                throw object_not_found("no such object: " + path.string());
            }
            throw storage_error("cannot open " + path.string() + ": " + std::strerror(saved));
        }
        return fd;
    }

    static void sync_directory(const std::filesystem::path& dir) {
        const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            (void)::fsync(fd);
            ::close(fd);
        }
    }

    std::filesystem::path root_;
    options options_;
};

static_assert(is_storage_v<local_storage>, "local_storage must satisfy the storage concept");

} // namespace tdbg
