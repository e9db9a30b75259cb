#pragma once
/// \file
/// A minimal fork-join loop: runs work on [0, n) on a few threads, in
/// contiguous blocks, and rethrows the exception of the lowest failing block.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tdbg::detail {

/// The threads to use when `requested` is 0: the hardware's, at least 1.
[[nodiscard]] inline std::size_t default_thread_count(std::size_t requested) noexcept {
    if (requested != 0) {
        return requested;
    }
    const unsigned hardware = std::thread::hardware_concurrency();
    return hardware == 0 ? 1 : hardware;
}

/// Calls `f(first, last)` on contiguous blocks covering [0, n), one block per
/// thread, using up to `threads` threads with at least `min_per_thread` items
/// each (threads are not free to start).
template <class F>
void parallel_blocks(std::size_t n, std::size_t threads, std::size_t min_per_thread, F&& f) {
    if (n == 0) {
        return;
    }
    const std::size_t useful = std::max<std::size_t>(1, n / std::max<std::size_t>(1, min_per_thread));
    const std::size_t count = std::min({default_thread_count(threads), useful, n});
    if (count <= 1) {
        f(std::size_t{0}, n);
        return;
    }
    std::vector<std::exception_ptr> errors(count);
    auto run_block = [&](std::size_t block) {
        try {
            f(n * block / count, n * (block + 1) / count);
        } catch (...) {
            errors[block] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(count - 1);
    try {
        for (std::size_t block = 1; block < count; ++block) {
            pool.emplace_back(run_block, block);
        }
    } catch (...) {
        // Could not start a thread: finish the blocks here.
        for (std::size_t block = pool.size() + 1; block < count; ++block) {
            run_block(block);
        }
    }
    run_block(0);
    for (auto& t : pool) {
        t.join();
    }
    for (const auto& e : errors) {
        if (e) {
            std::rethrow_exception(e);
        }
    }
}

/// Calls `f(i)` for every i in [0, n), in blocks as parallel_blocks does.
template <class F>
void parallel_for(std::size_t n, std::size_t threads, std::size_t min_per_thread, F&& f) {
    parallel_blocks(n, threads, min_per_thread, [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            f(i);
        }
    });
}

} // namespace tdbg::detail
