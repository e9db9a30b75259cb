#pragma once
/// \file
/// The library's one pool of threads, behind its parallel loops: index files
/// read side by side, steps of a rule evaluated at once, chunks of a large
/// tensor reduced apart. Workers start on first use, as many as a loop asks
/// for (up to a cap), and wait for the next loop instead of exiting. The
/// calling thread works on its own loop too and never waits for an item that
/// no thread has started, so loops nest (a rule's parallel steps reducing
/// large tensors) without deadlock.

#include <algorithm>
#include <cstddef>
#include <utility>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/function_ref.hpp"

namespace tdbg::detail {

/// The threads to use when `requested` is 0: the hardware's, at least 1.
[[nodiscard]] TDBG_DECL std::size_t default_thread_count(std::size_t requested) noexcept;

/// Calls `f(i)` for every i in [0, n) on up to `threads` threads (0: the
/// hardware's), this one included, with the process's pool (see the file
/// comment). Every item runs even when another throws; the exception of the
/// lowest failing item is rethrown.
TDBG_DECL void for_each_index(std::size_t n, std::size_t threads, function_ref<void(std::size_t)> f);

/// for_each_index for any callable.
template <class F>
void parallel_for_each_index(std::size_t n, std::size_t threads, F&& f) {
    for_each_index(n, threads, function_ref<void(std::size_t)>(f));
}

/// Calls `f(first, last)` on contiguous blocks covering [0, n), as many blocks as
/// threads (0: the hardware's) but at least `min_per_block` items each.
template <class F>
void parallel_blocks(std::size_t n, std::size_t threads, std::size_t min_per_block, F&& f) {
    if (n == 0) {
        return;
    }
    const std::size_t useful = std::max<std::size_t>(1, n / std::max<std::size_t>(1, min_per_block));
    const std::size_t blocks = std::min({default_thread_count(threads), useful, n});
    parallel_for_each_index(blocks, blocks,
                            [&](std::size_t block) { f(n * block / blocks, n * (block + 1) / blocks); });
}

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/core/detail/impl/thread_pool.ipp"
#endif
