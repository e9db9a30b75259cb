#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/buffer_pool.hpp.

#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/hook/detail/writer/buffer_pool.hpp"

namespace tdbg::detail {

TDBG_DECL tensor_value buffer_pool::copy(const tensor_value& value) {
    const std::size_t n = value.nbytes();
    if (n < min_pooled || value.type() == dtype::string || value.type() == dtype::boolean) {
        return value.copy();
    }
    std::unique_ptr<std::byte[]> buffer = take(n);
    std::memcpy(buffer.get(), value.bytes().data(), n);
    const std::string_view bytes(reinterpret_cast<const char*>(buffer.get()), n);
    // The tensor keeps the buffer alive; when the last copy goes, the buffer comes back here.
    std::shared_ptr<const void> holder(buffer.release(), releaser{weak_from_this(), capacity_of(n)});
    return tensor_value::view_bytes(value.type(), value.shape(), bytes, std::move(holder));
}

TDBG_DECL std::size_t buffer_pool::capacity_of(std::size_t n) {
    std::size_t c = min_pooled;
    while (c < n) {
        c <<= 1U;
    }
    return c;
}

TDBG_DECL std::unique_ptr<std::byte[]> buffer_pool::take(std::size_t n) {
    const std::size_t capacity = capacity_of(n);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = free_.find(capacity);
        if (it != free_.end() && !it->second.empty()) {
            std::unique_ptr<std::byte[]> b = std::move(it->second.back());
            it->second.pop_back();
            free_bytes_ -= capacity;
            return b;
        }
    }
    return std::unique_ptr<std::byte[]>(new std::byte[capacity]);
}

TDBG_DECL void buffer_pool::give_back(std::byte* p, std::size_t capacity) {
    std::unique_ptr<std::byte[]> b(p);
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_bytes_ + capacity <= max_bytes_) {
        free_[capacity].push_back(std::move(b));
        free_bytes_ += capacity;
    }
}

} // namespace tdbg::detail
