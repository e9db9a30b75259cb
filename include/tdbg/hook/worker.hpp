#pragma once
/// \file
/// Which data-parallel worker this process is: from the hook's options or from
/// the environment that the usual launchers set.

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"

namespace tdbg {

/// This process's place among the workers of a run.
struct worker_info {
    /// 0-based rank.
    int rank = 0;
    /// Number of workers (>= 1).
    int size = 1;
    /// The name used in file names: "worker_<rank>".
    std::string name = "worker_0";
    /// Where the rank came from: an environment variable's name, "options" or "default".
    std::string source = "default";
};

/// smdebug's worker name for a rank: "worker_<rank>".
[[nodiscard]] inline std::string worker_name(int rank) { return fmt::format("worker_{}", rank); }

namespace detail {

/// A non-negative int from an environment variable, or config_error naming it.
inline int parse_env_int(const char* variable, const char* text) {
    std::string_view s(text);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) {
        s.remove_suffix(1);
    }
    std::int64_t value = 0;
    bool ok = !s.empty() && s.size() <= 9;
    for (char c : s) {
        ok = ok && c >= '0' && c <= '9';
        value = value * 10 + (c - '0');
    }
    if (!ok) {
        throw config_error(fmt::format("environment variable {}='{}' is not a non-negative integer", variable,
                                       std::string_view(text).substr(0, 40)));
    }
    return static_cast<int>(value);
}

} // namespace detail

/// Detects the worker from the launchers' variables, first found wins:
/// OpenMPI (OMPI_COMM_WORLD_RANK/SIZE), MPICH and Intel MPI (PMI_RANK/PMI_SIZE),
/// torchrun (RANK/WORLD_SIZE), Slurm (SLURM_PROCID/SLURM_NTASKS or SLURM_NPROCS);
/// otherwise rank 0 of 1. `getenv` is `const char*(const char*)` (tests pass their own).
/// Throws config_error for a rank without a size, a bad number, or a rank >= size.
template <class Getenv>
[[nodiscard]] worker_info detect_worker(Getenv&& getenv) {
    struct launcher {
        const char* rank;
        const char* size;
        const char* size_fallback;
    };
    constexpr std::array<launcher, 4> launchers{{
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr},
        {"PMI_RANK", "PMI_SIZE", nullptr},
        {"RANK", "WORLD_SIZE", nullptr},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS"},
    }};
    for (const auto& l : launchers) {
        const char* rank_text = getenv(l.rank);
        if (rank_text == nullptr) {
            continue;
        }
        const char* size_name = l.size;
        const char* size_text = getenv(l.size);
        if (size_text == nullptr && l.size_fallback != nullptr) {
            size_name = l.size_fallback;
            size_text = getenv(l.size_fallback);
        }
        if (size_text == nullptr) {
            throw config_error(fmt::format("environment variable {} is set but {} is not: cannot tell the number of "
                                           "workers",
                                           l.rank, l.size));
        }
        worker_info info;
        info.rank = detail::parse_env_int(l.rank, rank_text);
        info.size = detail::parse_env_int(size_name, size_text);
        if (info.size < 1 || info.rank >= info.size) {
            throw config_error(fmt::format("environment: {}={} with {}={} (expected 0 <= rank < size)", l.rank,
                                           info.rank, size_name, info.size));
        }
        info.name = worker_name(info.rank);
        info.source = l.rank;
        return info;
    }
    return worker_info{};
}

/// detect_worker() over the process environment.
[[nodiscard]] inline worker_info detect_worker() {
    return detect_worker([](const char* name) -> const char* { return std::getenv(name); });
}

} // namespace tdbg
