#pragma once
/// \file
/// Definitions of tdbg/core/detail/thread_pool.hpp: the pool.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "tdbg/core/detail/fork_guard.hpp"
#include "tdbg/core/detail/thread_pool.hpp"

namespace tdbg::detail {

TDBG_DECL std::size_t default_thread_count(std::size_t requested) noexcept {
    if (requested != 0) {
        return requested;
    }
    const unsigned hardware = std::thread::hardware_concurrency();
    return hardware == 0 ? 1 : hardware;
}

/// See the file comment.
class thread_pool {
public:
    /// More threads than this are never started (loops asking for more share them).
    static constexpr std::size_t max_threads = 64;

    /// The process's pool. Freed at exit, but not in a child forked after it was made: its
    /// threads, and the waits on its condition, are the parent's (core/detail/fork_guard.hpp).
    static thread_pool& instance() {
        static const process_pool holder;
        return *holder.pool;
    }

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;
    thread_pool(thread_pool&&) = delete;
    thread_pool& operator=(thread_pool&&) = delete;
    ~thread_pool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : threads_) {
            t.join();
        }
    }

    /// Calls `f(i)` for every i in [0, n) on up to `threads` threads (0: the
    /// hardware's), this one included. Every item runs even when another throws;
    /// the exception of the lowest failing item is rethrown.
    void for_each_index(std::size_t n, std::size_t threads, function_ref<void(std::size_t)> f) {
        const std::size_t count = std::min(default_thread_count(threads), n);
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
        auto loop = std::make_shared<loop_state>(n, f);
        submit(loop, count - 1);
        loop->work();
        loop->close_and_wait();
        if (loop->error) {
            std::rethrow_exception(loop->error);
        }
    }

private:
    // Owns the process's pool: deletes it at exit, or leaves it whole in a forked child.
    struct process_pool {
        thread_pool* pool;
        std::uint64_t born;
        process_pool() : pool(new thread_pool()), born(forks_so_far()) {}
        process_pool(const process_pool&) = delete;
        process_pool& operator=(const process_pool&) = delete;
        process_pool(process_pool&&) = delete;
        process_pool& operator=(process_pool&&) = delete;
        ~process_pool() {
            if (forked_since(born)) {
                abandon(pool);
            } else {
                delete pool;
            }
        }
    };

    // One loop: items are claimed one at a time; `body` is touched only for a claimed
    // item, so a helper that starts after the loop is over leaves at once.
    struct loop_state {
        loop_state(std::size_t count, function_ref<void(std::size_t)> b) : n(count), body(b) {}

        void work() noexcept {
            for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
                 i = next.fetch_add(1, std::memory_order_relaxed)) {
                try {
                    body(i);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(mutex);
                    if (!error || i < error_index) {
                        error = std::current_exception();
                        error_index = i;
                    }
                }
            }
        }

        // A helper's turn: work, unless the loop's caller has stopped waiting for helpers.
        void help() noexcept {
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (closed) {
                    return;
                }
                ++started;
            }
            work();
            {
                std::lock_guard<std::mutex> lock(mutex);
                ++finished;
            }
            done.notify_all();
        }

        // After the caller's own work: no helper starts any more; waits for those that did
        // (every item is then finished). A turn still queued is never waited for, so a
        // loop nested in a busy pool finishes on its caller's thread alone.
        void close_and_wait() {
            std::unique_lock<std::mutex> lock(mutex);
            closed = true;
            done.wait(lock, [&] { return finished == started; });
        }

        const std::size_t n;
        const function_ref<void(std::size_t)> body;
        std::atomic<std::size_t> next{0};
        std::mutex mutex;
        std::condition_variable done;
        bool closed = false;
        std::size_t started = 0;
        std::size_t finished = 0;
        std::exception_ptr error;
        std::size_t error_index = 0;
    };

    thread_pool() = default;

    // Queues `helpers` turns of `loop`, starting threads (up to max_threads) so
    // that an idle one is there for each turn waiting.
    void submit(const std::shared_ptr<loop_state>& loop, std::size_t helpers) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            const std::size_t needed = queue_.size() + helpers;
            std::size_t missing = needed > idle_ ? needed - idle_ : 0;
            missing = std::min(missing, max_threads - std::min(max_threads, threads_.size()));
            for (std::size_t i = 0; i < missing; ++i) {
                try {
                    threads_.emplace_back([this] { run(); });
                } catch (const std::system_error&) {
                    break; // no more threads to be had: those there and the caller share the work
                }
            }
            if (threads_.empty()) {
                return;
            }
            for (std::size_t i = 0; i < helpers; ++i) {
                queue_.push_back(loop);
            }
        }
        wake_.notify_all();
    }

    void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            ++idle_;
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            --idle_;
            if (queue_.empty()) {
                return; // stopping
            }
            std::shared_ptr<loop_state> loop = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            loop->help();
            loop.reset();
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<loop_state>> queue_;
    std::vector<std::thread> threads_;
    std::size_t idle_ = 0;
    bool stopping_ = false;
};

TDBG_DECL void for_each_index(std::size_t n, std::size_t threads, function_ref<void(std::size_t)> f) {
    thread_pool::instance().for_each_index(n, threads, f);
}

} // namespace tdbg::detail
