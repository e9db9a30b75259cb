#pragma once
/// \file
/// A budget of bytes lent at once, shared by the threads that lend and return them: the bound
/// of the host memory that copies of device tensors in flight hold (torch_hook's pool of host
/// tensors, tdbg::cuda's pool of page-locked blocks).

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace tdbg::detail {

/// Bytes lent at once, at most `max_bytes`; a request larger than the whole budget is granted
/// when nothing else is lent.
class byte_budget {
public:
    explicit byte_budget(std::size_t max_bytes) noexcept : max_bytes_(max_bytes) {}

    /// Lends `n` bytes. While they do not fit: waits for returns (`wait`), or returns false.
    [[nodiscard]] bool take(std::size_t n, bool wait) {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto fits = [&] { return lent_ == 0 || lent_ + n <= max_bytes_; };
        if (!fits()) {
            if (!wait) {
                return false;
            }
            ++waits_;
            returned_.wait(lock, fits);
        }
        lent_ += n;
        return true;
    }

    /// Returns `n` bytes lent by take().
    void give_back(std::size_t n) noexcept {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            lent_ -= n;
        }
        returned_.notify_all();
    }

    /// Bytes lent now.
    [[nodiscard]] std::size_t lent() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return lent_;
    }
    /// How many take() calls had to wait for bytes to come back.
    [[nodiscard]] std::uint64_t waits() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return waits_;
    }
    /// The most bytes lent at once to requests that fit.
    [[nodiscard]] std::size_t max_bytes() const noexcept { return max_bytes_; }

private:
    mutable std::mutex mutex_;
    std::condition_variable returned_;
    std::size_t lent_ = 0;
    std::uint64_t waits_ = 0;
    std::size_t max_bytes_;
};

} // namespace tdbg::detail
