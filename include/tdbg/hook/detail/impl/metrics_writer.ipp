#pragma once
/// \file
/// Definitions of tdbg/hook/detail/metrics_writer.hpp.

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tdbg/hook/detail/metrics_writer.hpp"
#include "tdbg/storage/detail/owned_directory.hpp"

namespace tdbg::detail {

// `path` opened for appending, created if missing. Opened without blocking (a FIFO with no
// reader would block the training thread for good) and refused unless it is a regular file.
// On a shared machine (docs/reliability.md, "A shared machine"), nothing is appended through a
// link (O_NOFOLLOW), nor into a file of another user's, nor in a directory another user could
// have filled: the name, `<pid>.json`, is one anybody can foresee.
inline std::FILE* open_regular_for_append(const std::filesystem::path& path) {
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    struct stat dir_st {};
    if (::stat(dir.c_str(), &dir_st) == 0) { // a missing directory: the open below says so
        if (const std::string why = untrusted_directory(dir.string(), dir_st); !why.empty()) {
            throw storage_error(fmt::format("cannot open the SageMaker metrics file {}: {}", path.string(), why));
        }
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC,
                          0644);
    if (fd < 0) {
        const int saved = errno;
        struct stat link {};
        if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) { // ELOOP, or EACCES (fs.protected_regular)
            throw storage_error(fmt::format("cannot open the SageMaker metrics file {}: a symbolic link of {}: refused, "
                                            "nothing is appended through a link",
                                            path.string(), user_description(link.st_uid)));
        }
        throw storage_error(fmt::format("cannot open the SageMaker metrics file {}: {}", path.string(),
                                        saved == ENXIO ? "a FIFO, not a regular file: refused" : std::strerror(saved)));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw storage_error(fmt::format("cannot open the SageMaker metrics file {}: not a regular file: refused (writing "
                                        "it could block the training loop)",
                                        path.string()));
    }
    if (st.st_uid != ::geteuid()) {
        ::close(fd);
        throw storage_error(fmt::format("cannot open the SageMaker metrics file {}: a file owned by {}, not by {}: "
                                        "refused (another user's file)",
                                        path.string(), user_description(st.st_uid), user_description(::geteuid())));
    }
    std::FILE* file = ::fdopen(fd, "ab");
    if (file == nullptr) {
        const int saved = errno;
        ::close(fd);
        throw storage_error(fmt::format("cannot open the SageMaker metrics file {}: {}", path.string(),
                                        std::strerror(saved)));
    }
    return file;
}

TDBG_DECL void metrics_writer::log(std::string_view name, double value, double timestamp, std::int64_t iteration) {
    if (!file_) {
        file_.reset(open_regular_for_append(file()));
    }
    const format::json_value record = format::json_value::object({
        {"MetricName", format::json_value(name)},
        {"Value", value},
        {"Timestamp", timestamp},
        {"IterationNumber", iteration},
    });
    const std::string line = format::dump_json(record, {-1, false, true}) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_.get()) != line.size() || std::fflush(file_.get()) != 0) {
        throw storage_error(fmt::format("cannot write to the SageMaker metrics file {}", file().string()));
    }
}

} // namespace tdbg::detail
