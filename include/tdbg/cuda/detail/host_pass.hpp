#pragma once
/// \file
/// The kernel's pass replayed on the host, in the kernel's order of operations: each chunk by
/// block_threads threads (thread_pass), their statistics merged as the device's warp
/// butterflies and block merge do, and a tensor of several chunks finished as its last block
/// does (partials_of). With floating-point contraction off on the host too (as x86-64 builds
/// without -mfma are), the result has the device's bits.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/cuda/detail/stats_ops.hpp"

namespace tdbg::cuda::detail {

/// Lane 0's statistics after the device's warp_merge: the in-order pairwise tree of 32 lanes.
[[nodiscard]] inline tensor_stats warp_tree(tensor_stats* lanes) noexcept {
    for (unsigned width = 1; width < 32; width *= 2) {
        for (unsigned i = 0; i < 32; i += 2 * width) {
            lanes[i] = merged(lanes[i], lanes[i + width]);
        }
    }
    return lanes[0];
}

/// Thread 0's statistics after the device's block_merge of one value per thread.
[[nodiscard]] inline tensor_stats block_tree(std::array<tensor_stats, block_threads>& threads) noexcept {
    std::array<tensor_stats, 32> warps{};
    for (unsigned w = 0; w < block_warps; ++w) {
        warps[w] = warp_tree(threads.data() + static_cast<std::size_t>(w) * 32);
    }
    return warp_tree(warps.data());
}

/// What a block leaves for a chunk of `length` elements.
template <class E>
[[nodiscard]] tensor_stats host_chunk(const typename E::storage* chunk, unsigned length) noexcept {
    std::array<tensor_stats, block_threads> threads{};
    for (unsigned t = 0; t < block_threads; ++t) {
        threads[t] = thread_pass<E>(chunk, length, t, false);
    }
    return block_tree(threads);
}

/// What a tensor's last block makes of its partials (one per chunk, in chunk order).
[[nodiscard]] inline tensor_stats host_final_merge(const std::vector<tensor_stats>& partials) noexcept {
    std::array<tensor_stats, block_threads> threads{};
    const auto chunks = static_cast<unsigned>(partials.size());
    for (unsigned t = 0; t < block_threads; ++t) {
        const partial_range range = partials_of(chunks, t);
        for (unsigned c = range.begin; c < range.end; ++c) {
            threads[t] = merged(threads[t], partials[c]);
        }
    }
    return block_tree(threads);
}

/// The kernel's statistics of `count` elements of E at `data` (host memory).
template <class E>
[[nodiscard]] tensor_stats host_tensor(const void* data, std::uint64_t count) {
    const auto* p = static_cast<const typename E::storage*>(data);
    if (count <= chunk_elements) {
        return host_chunk<E>(p, static_cast<unsigned>(count));
    }
    std::vector<tensor_stats> partials;
    partials.reserve(static_cast<std::size_t>((count + chunk_elements - 1) / chunk_elements));
    for (std::uint64_t begin = 0; begin < count; begin += chunk_elements) {
        const std::uint64_t left = count - begin;
        partials.push_back(host_chunk<E>(p + begin, static_cast<unsigned>(left < chunk_elements ? left : chunk_elements)));
    }
    return host_final_merge(partials);
}

/// host_tensor for a dtype known at run time; tdbg::error for one the kernel does not reduce.
[[nodiscard]] inline tensor_stats host_pass(const void* data, dtype type, std::uint64_t count) {
    switch (type) {
    case dtype::float32: return host_tensor<float32_element>(data, count);
    case dtype::float64: return host_tensor<float64_element>(data, count);
    case dtype::float16: return host_tensor<float16_element>(data, count);
    case dtype::bfloat16: return host_tensor<bfloat16_element>(data, count);
    default: break;
    }
    throw error("tdbg::cuda: the reduction kernel does not reduce " + std::string(dtype_name(type)) +
                " tensors (float16, bfloat16, float32, float64)");
}

} // namespace tdbg::cuda::detail
