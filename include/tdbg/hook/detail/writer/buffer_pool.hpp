#pragma once
/// \file
/// Recycled buffers for the copies of raw tensors the training thread makes.
/// A fresh large allocation costs a page fault per 4 KiB on first touch (and
/// an munmap when the writer frees it); reusing the buffers the writer threads
/// have finished with keeps the copy at memcpy speed.

#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg::detail {

class buffer_pool : public std::enable_shared_from_this<buffer_pool> {
public:
    /// Buffers below this size are not worth pooling.
    static constexpr std::size_t min_pooled = std::size_t{64} << 10U;

    /// `max_bytes`: how much free memory the pool may keep.
    explicit buffer_pool(std::size_t max_bytes) : max_bytes_(max_bytes) {}

    /// An owning copy of `value` (a pooled buffer when it is large).
    TDBG_DECL tensor_value copy(const tensor_value& value);

    /// Free bytes held for reuse.
    [[nodiscard]] std::size_t free_bytes() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return free_bytes_;
    }

private:
    // Buffers come in power-of-two capacities so that sizes that vary a little reuse each other.
    TDBG_DECL static std::size_t capacity_of(std::size_t n);

    TDBG_DECL std::unique_ptr<std::byte[]> take(std::size_t n);

    TDBG_DECL void give_back(std::byte* p, std::size_t capacity);

    struct releaser {
        std::weak_ptr<buffer_pool> pool;
        std::size_t capacity;
        void operator()(const void* p) const {
            auto* bytes = static_cast<std::byte*>(const_cast<void*>(p));
            if (auto alive = pool.lock()) {
                alive->give_back(bytes, capacity);
            } else {
                delete[] bytes;
            }
        }
    };

    mutable std::mutex mutex_;
    std::map<std::size_t, std::vector<std::unique_ptr<std::byte[]>>> free_;
    std::size_t free_bytes_ = 0;
    std::size_t max_bytes_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/buffer_pool.ipp"
#endif
