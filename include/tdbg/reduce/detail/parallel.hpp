#pragma once
/// \file
/// Splits a long run into fixed chunks, computes them on up to N threads of
/// the library's pool and merges the partial results in chunk order. The
/// chunks do not depend on the thread count, so neither do the results.

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "tdbg/core/detail/thread_pool.hpp"
#include "tdbg/reduce/detail/real_stats.hpp"

namespace tdbg::detail {

/// Elements per chunk: 64 blocks (768 KiB of float32).
inline constexpr std::size_t chunk_size = 64 * block_size;

/// Below this many elements one thread does the work. Waking a pool thread costs
/// far less than a chunk of the 18 reductions (~125 us), but a second core is
/// often busy with the caller's own work: measured on a shared 2-core machine,
/// a second thread paid from 8 chunks up (see benchmarks/README.md).
inline constexpr std::size_t parallel_threshold = 8 * chunk_size;

/// The number of threads to use for n elements when the caller allows `max_threads` (0: all cores).
[[nodiscard]] inline unsigned thread_count(std::size_t n, unsigned max_threads) noexcept {
    if (n < parallel_threshold) {
        return 1;
    }
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    const unsigned allowed = max_threads == 0 ? cores : std::min(max_threads, cores);
    const std::size_t chunks = (n + chunk_size - 1) / chunk_size;
    return static_cast<unsigned>(std::min<std::size_t>(allowed, chunks));
}

/// The statistics of p[0..n) cut into chunk_size pieces, each reduced by
/// `chunk(piece, length, key)` on up to `threads` threads and merged in order.
template <class T, class Stats, class Key>
[[nodiscard]] Stats accumulate_chunks(const T* p, std::size_t n, Key key, unsigned threads,
                                      Stats (*chunk)(const T*, std::size_t, Key) noexcept) {
    if (n <= chunk_size) {
        return n == 0 ? Stats{} : chunk(p, n, key);
    }
    const std::size_t chunks = (n + chunk_size - 1) / chunk_size;
    std::vector<Stats> parts(chunks);
    parallel_for_each_index(chunks, threads, [&](std::size_t c) {
        const std::size_t begin = c * chunk_size;
        parts[c] = chunk(p + begin, std::min(n - begin, chunk_size), key);
    });
    Stats total = parts[0];
    for (std::size_t c = 1; c < chunks; ++c) {
        total.merge(parts[c]);
    }
    return total;
}

} // namespace tdbg::detail
