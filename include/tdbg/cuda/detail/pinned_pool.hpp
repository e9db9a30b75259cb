#pragma once
/// \file
/// The page-locked host memory of the save path of device buffers (cuda/save.hpp): blocks
/// from device_ops::host_alloc, lent out and kept for reuse when they come back (allocating
/// and freeing page-locked memory is slow, and freeing it waits for the device). Raw values are
/// bounded by the bytes lent at once; a batch's statistics (small) are always served.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tdbg/core/detail/byte_budget.hpp"
#include "tdbg/cuda/device_ops.hpp"

namespace tdbg::cuda::detail {

using tdbg::detail::byte_budget;

/// Blocks of page-locked host memory; lent blocks come back when their last reference goes
/// (after a writer thread has read them), from any thread.
class pinned_pool : public std::enable_shared_from_this<pinned_pool> {
public:
    /// Lends at most `max_bytes` at once to bounded requests, and keeps at most as many for reuse.
    pinned_pool(std::shared_ptr<device_ops> ops, std::size_t max_bytes) : ops_(std::move(ops)), budget_(max_bytes) {}
    ~pinned_pool() {
        for (const auto& [size, block] : free_) {
            ops_->host_free(block);
        }
    }
    pinned_pool(const pinned_pool&) = delete;
    pinned_pool& operator=(const pinned_pool&) = delete;
    pinned_pool(pinned_pool&&) = delete;
    pinned_pool& operator=(pinned_pool&&) = delete;

    /// A block of at least `n` bytes. A `bounded` request waits (`wait`) while the pool's bytes
    /// are lent, or returns nullptr; one larger than the whole pool is served when nothing else
    /// is lent. An unbounded one is served at once.
    std::shared_ptr<void> take(std::size_t n, bool bounded, bool wait) {
        const std::size_t size = block_size(n);
        if (bounded && !budget_.take(size, wait)) {
            return nullptr;
        }
        void* block = nullptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto it = free_.find(size); it != free_.end()) {
                block = it->second;
                cached_ -= size;
                free_.erase(it);
            }
        }
        if (block == nullptr) {
            try {
                block = ops_->host_alloc(size);
            } catch (...) {
                give_back(nullptr, size, bounded);
                throw;
            }
        }
        std::weak_ptr<pinned_pool> pool = weak_from_this();
        std::shared_ptr<device_ops> ops = ops_;
        return std::shared_ptr<void>(block, [pool, ops, size, bounded](void* p) {
            if (auto alive = pool.lock()) {
                alive->give_back(p, size, bounded);
            } else {
                ops->host_free(p);
            }
        });
    }

    /// Bytes lent now to bounded requests.
    [[nodiscard]] std::size_t lent() const { return budget_.lent(); }
    /// Bounded requests that waited for bytes to come back.
    [[nodiscard]] std::uint64_t waits() const { return budget_.waits(); }

private:
    // Blocks come in powers of two from 4 KiB, so that returned ones fit later requests.
    static std::size_t block_size(std::size_t n) noexcept {
        std::size_t size = 4096;
        while (size < n) {
            size *= 2;
        }
        return size;
    }

    // Takes back a block (nullptr: an allocation that failed), keeping it while the cache has room.
    void give_back(void* block, std::size_t size, bool bounded) noexcept {
        void* spare = block;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (block != nullptr && cached_ + size <= budget_.max_bytes()) {
                free_.emplace(size, block);
                cached_ += size;
                spare = nullptr;
            }
        }
        if (bounded) {
            budget_.give_back(size); // after the block is back in the cache, for the request it wakes
        }
        if (spare != nullptr) {
            ops_->host_free(spare);
        }
    }

    std::shared_ptr<device_ops> ops_;
    byte_budget budget_;
    std::mutex mutex_; // guards the cache
    std::multimap<std::size_t, void*> free_;
    std::size_t cached_ = 0;
};

} // namespace tdbg::cuda::detail
