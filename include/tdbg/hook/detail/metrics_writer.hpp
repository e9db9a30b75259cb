#pragma once
/// \file
/// SageMaker's metrics file, as smdebug writes it through sagemaker-experiments'
/// SageMakerFileMetricsWriter: `<dir>/<pid>.json`, opened for appending at the
/// first metric, one JSON object a line:
/// {"MetricName": "...", "Value": 0.5, "Timestamp": 1700000000.25, "IterationNumber": 3}.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::detail {

/// The variable naming the directory SageMaker collects metrics files from.
inline constexpr const char* sagemaker_metrics_env = "SAGEMAKER_METRICS_DIRECTORY";

/// Appends metrics to `<dir>/<pid>.json`, flushing each line.
class metrics_writer {
public:
    explicit metrics_writer(std::filesystem::path dir) : dir_(std::move(dir)) {}

    /// The file metrics go to.
    [[nodiscard]] std::filesystem::path file() const { return dir_ / fmt::format("{}.json", ::getpid()); }

    /// Writes one metric line; throws storage_error naming the file when it cannot.
    TDBG_DECL void log(std::string_view name, double value, double timestamp, std::int64_t iteration);

    /// Closes the file (a later metric opens it again, appending).
    void close() noexcept { file_.reset(); }

private:
    struct file_closer {
        void operator()(std::FILE* f) const noexcept { std::fclose(f); }
    };

    std::filesystem::path dir_;
    std::unique_ptr<std::FILE, file_closer> file_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/metrics_writer.ipp"
#endif
