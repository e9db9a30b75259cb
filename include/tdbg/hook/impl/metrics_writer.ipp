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

namespace tdbg::detail {

// `path` opened for appending, created if missing. Opened without blocking (a FIFO with no
// reader would block the training thread for good) and refused unless it is a regular file.
inline std::FILE* open_regular_for_append(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int saved = errno;
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
