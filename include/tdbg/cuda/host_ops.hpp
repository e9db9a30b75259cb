#pragma once
/// \file
/// tdbg::cuda::host_ops: device_ops whose "device" is host memory and whose work is done at
/// once, in the kernels' own arithmetic (host_stats, histogram_bucket). With it, the save path
/// of device buffers (cuda/save.hpp) runs where no GPU is: its tests, and a trainer's own test
/// of the calls it makes. Streams are ignored.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/cuda/detail/histogram_bins.hpp"
#include "tdbg/cuda/detail/host_pass.hpp"
#include "tdbg/cuda/detail/stats_ops.hpp"
#include "tdbg/cuda/device_ops.hpp"
#include "tdbg/hook/deferred.hpp"

namespace tdbg::cuda {

/// device_ops on the host; counts the allocations it has out, for tests.
class host_ops final : public device_ops {
public:
    void* device_alloc(std::size_t n, CUstream_st* /*stream*/) override { return allocate(n); }
    void device_free(void* p, CUstream_st* /*stream*/) override { release(p); }
    void* host_alloc(std::size_t n) override { return allocate(n); }
    void host_free(void* p) noexcept override { release(p); }

    void reduce(const device_tensor* tensors, std::size_t n, tensor_stats* device_out,
                CUstream_st* /*stream*/) override {
        for (std::size_t i = 0; i < n; ++i) {
            device_out[i] = detail::host_pass(tensors[i].data, tensors[i].type, tensors[i].count);
        }
    }

    void histogram(const device_tensor& tensor, std::uint64_t* device_counts, CUstream_st* /*stream*/) override {
        const std::vector<double>& edges = histogram_edges();
        const auto n = static_cast<unsigned>(edges.size());
        std::fill(device_counts, device_counts + (n - 1), std::uint64_t{0});
        const auto count = [&](auto element) {
            using E = decltype(element);
            const auto* data = static_cast<const typename E::storage*>(tensor.data);
            for (std::size_t i = 0; i < tensor.count; ++i) {
                const int bucket = detail::histogram_bucket(E::value(data[i]), edges.data(), n);
                if (bucket >= 0) {
                    ++device_counts[bucket];
                }
            }
        };
        switch (tensor.type) {
        case dtype::float32: count(detail::float32_element{}); break;
        case dtype::float64: count(detail::float64_element{}); break;
        case dtype::float16: count(detail::float16_element{}); break;
        case dtype::bfloat16: count(detail::bfloat16_element{}); break;
        default: throw error("tdbg::cuda::host_ops: no histogram kernel for " + std::string(dtype_name(tensor.type)));
        }
    }

    void copy_to_host(void* host, const void* device, std::size_t n, CUstream_st* /*stream*/) override {
        if (n != 0) {
            std::memcpy(host, device, n);
        }
    }

    std::function<void()> record_event(CUstream_st* /*stream*/) override {
        ++events_;
        return [] {};
    }

    /// Allocations (device and host) not yet freed.
    [[nodiscard]] std::size_t outstanding() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return blocks_.size();
    }
    /// Events recorded so far.
    [[nodiscard]] std::size_t events() const noexcept { return events_; }

private:
    void* allocate(std::size_t n) {
        auto block = std::make_unique<std::byte[]>(n == 0 ? 1 : n);
        void* p = block.get();
        std::lock_guard<std::mutex> lock(mutex_);
        blocks_.emplace(p, std::move(block));
        return p;
    }
    // A writer thread returns host memory while the training thread takes some.
    void release(void* p) noexcept {
        std::unique_ptr<std::byte[]> block;
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = blocks_.find(p); it != blocks_.end()) {
            block = std::move(it->second);
            blocks_.erase(it);
        }
    }

    mutable std::mutex mutex_;
    std::unordered_map<void*, std::unique_ptr<std::byte[]>> blocks_;
    std::size_t events_ = 0;
};

} // namespace tdbg::cuda
