#pragma once
/// \file
/// A small fork-join loop for evaluating a rule at several steps (or reading
/// several tensors) at once: items are handed out one at a time, so a slow
/// step does not hold back a whole block.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tdbg::rules::detail {

/// The threads to use when `requested` is 0: the hardware's, at least 1.
[[nodiscard]] inline std::size_t thread_count(std::size_t requested) noexcept {
    if (requested != 0) {
        return requested;
    }
    const unsigned hardware = std::thread::hardware_concurrency();
    return hardware == 0 ? 1 : hardware;
}

/// Calls `f(i)` for every i in [0, n) on up to `threads` threads (0: the
/// hardware's). Every item runs even when another throws; the exception of
/// the lowest failing item is rethrown.
template <class F>
void parallel_for_each_index(std::size_t n, std::size_t threads, F&& f) {
    const std::size_t count = std::min(thread_count(threads), n);
    if (count <= 1) {
        std::exception_ptr first;
        for (std::size_t i = 0; i < n; ++i) {
            try {
                f(i);
            } catch (...) {
                if (!first) {
                    first = std::current_exception();
                }
            }
        }
        if (first) {
            std::rethrow_exception(first);
        }
        return;
    }
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(n);
    auto work = [&]() {
        for (;;) {
            const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= n) {
                return;
            }
            try {
                f(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(count - 1);
    try {
        for (std::size_t t = 1; t < count; ++t) {
            pool.emplace_back(work);
        }
    } catch (...) {
        // No more threads to be had: the ones running and this one share the work.
    }
    work();
    for (auto& t : pool) {
        t.join();
    }
    for (const auto& e : errors) {
        if (e) {
            std::rethrow_exception(e);
        }
    }
}

} // namespace tdbg::rules::detail
