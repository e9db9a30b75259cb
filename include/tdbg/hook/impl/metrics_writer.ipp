#pragma once
/// \file
/// Definitions of tdbg/hook/detail/metrics_writer.hpp.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "tdbg/hook/detail/metrics_writer.hpp"

namespace tdbg::detail {

TDBG_DECL void metrics_writer::log(std::string_view name, double value, double timestamp, std::int64_t iteration) {
    if (!file_) {
        const std::string path = file().string();
        file_.reset(std::fopen(path.c_str(), "ab"));
        if (!file_) {
            throw storage_error(fmt::format("cannot open the SageMaker metrics file {}", path));
        }
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
