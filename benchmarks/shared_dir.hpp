#pragma once
// Where the benchmarks find the shared reference material (Python smdebug's tools).

#include <cstdlib>
#include <filesystem>

namespace tdbg::bench {

/// The shared tools directory: $TDBG_SHARED_DIR, else `shared` beside the source tree.
inline std::filesystem::path shared_dir() {
    if (const char* dir = std::getenv("TDBG_SHARED_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
#ifdef TDBG_BENCH_SOURCE_DIR
    return std::filesystem::path(TDBG_BENCH_SOURCE_DIR).parent_path() / "shared";
#else
    return std::filesystem::current_path().parent_path() / "shared";
#endif
}

} // namespace tdbg::bench
