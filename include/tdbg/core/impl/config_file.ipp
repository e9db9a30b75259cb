#pragma once
/// \file
/// Definitions of tdbg/core/config_file.hpp.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tdbg/core/config_file.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg {

namespace detail {

// What a file of mode `mode` is, for a refusal's message.
inline const char* config_file_kind(unsigned mode) noexcept {
    switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
    }
}

// Closes a descriptor when it goes.
class config_fd {
public:
    explicit config_fd(int fd) noexcept : fd_(fd) {}
    config_fd(const config_fd&) = delete;
    config_fd& operator=(const config_fd&) = delete;
    config_fd(config_fd&&) = delete;
    config_fd& operator=(config_fd&&) = delete;
    ~config_fd() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    [[nodiscard]] int get() const noexcept { return fd_; }

private:
    int fd_;
};

} // namespace detail

TDBG_DECL std::string read_config_file(const std::filesystem::path& file, std::string_view what,
                                       std::uint64_t max_bytes) {
    const std::string path = file.string();
    // O_NONBLOCK: opening a FIFO for reading never waits for a writer; the descriptor is then
    // refused below before any read.
    const detail::config_fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (fd.get() < 0) {
        const int saved = errno;
        throw config_error(fmt::format("cannot open the {} {}: {}", what, path, std::strerror(saved)));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        const int saved = errno;
        throw config_error(fmt::format("cannot read the {} {}: {}", what, path, std::strerror(saved)));
    }
    if (!S_ISREG(st.st_mode)) {
        throw config_error(fmt::format("the {} {} is {}, not a regular file: refused (reading it could block "
                                       "or never end)",
                                       what, path, detail::config_file_kind(st.st_mode)));
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes) {
        throw config_error(fmt::format("the {} {} holds {} bytes, more than the {} a configuration may hold: refused "
                                       "before reading it",
                                       what, path, size, max_bytes));
    }
    std::string text(static_cast<std::size_t>(size), '\0');
    std::size_t done = 0;
    // Up to the size fstat gave, and one byte more to see a file that grew meanwhile.
    while (true) {
        if (done == text.size()) {
            if (text.size() > max_bytes) {
                throw config_error(fmt::format("the {} {} grew past {} bytes while it was read: refused", what, path,
                                               max_bytes));
            }
            text.resize(text.size() + 1);
        }
        const ::ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int saved = errno;
            throw config_error(fmt::format("cannot read the {} {}: {}", what, path, std::strerror(saved)));
        }
        if (n == 0) {
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    text.resize(done);
    return text;
}

} // namespace tdbg
