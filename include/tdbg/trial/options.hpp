#pragma once
/// \file
/// How a trial reads a run (trial_options).

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tdbg {

/// How a trial reads a run. The defaults suit both finished and live runs.
struct trial_options {
    /// wait_for_steps polls the storage this often while a step is not yet available.
    std::chrono::milliseconds poll_interval{2000};
    /// How long opening waits for the first collection file of a live run (0: not at all).
    std::chrono::milliseconds collection_wait{0};
    /// smdebug's INCOMPLETE_STEP_WAIT_WINDOW: after this many steps waiting for a
    /// lagging worker, the older half is declared complete (0: never).
    std::size_t incomplete_step_wait_window = 1000;
    /// Threads that read index files (0: as many as the storage's requests and the cores suit).
    std::size_t threads = 0;
    /// Event files of small records up to this size may be read whole and kept
    /// when a second record of theirs is read.
    std::uint64_t whole_file_limit = std::uint64_t{16} << 20U;
    /// The bytes of whole event files kept in memory.
    std::uint64_t file_cache_bytes = std::uint64_t{256} << 20U;
};

} // namespace tdbg
