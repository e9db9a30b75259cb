/// \file
/// tdbg::cuda's kernel: every tensor of a launch in one grid, one block per chunk of
/// chunk_elements elements. A block reduces its chunk (the per-thread arithmetic of
/// detail/stats_ops.hpp, then a tree of merges); a tensor of one chunk writes its statistics
/// directly, a larger one leaves a partial per block, and the tensor's last block to finish
/// (an atomic counter per tensor) merges the partials in chunk order and writes the result,
/// then resets the counter for the next launch. Compiled with floating-point contraction off
/// (cmake/cuda.cmake) so that detail/host_pass.hpp replays it bit for bit.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

// Only inline parts of tdbg: the library links with programs of either mode (tdbg/config.hpp).
#define TDBG_NO_MODE_GUARD 1
#include "tdbg/cuda/detail/launch.hpp"
#include "tdbg/cuda/detail/stats_ops.hpp"

namespace tdbg::cuda::detail {
namespace {

constexpr unsigned full_warp = 0xFFFFFFFFU;
/// Blocks an SM keeps resident (ptxas then keeps to 80 registers a thread, without spills,
/// which the merges need): 768 threads, each with groups_in_flight loads of 16 bytes in flight.
constexpr int min_blocks_per_sm = 3;

/// s of the lane whose index differs from this one's in `mask`.
__device__ tensor_stats shuffle_xor(const tensor_stats& s, int mask) {
    tensor_stats o;
    o.count = __shfl_xor_sync(full_warp, s.count, mask);
    o.min = __shfl_xor_sync(full_warp, s.min, mask);
    o.max = __shfl_xor_sync(full_warp, s.max, mask);
    o.abs_min = __shfl_xor_sync(full_warp, s.abs_min, mask);
    o.sum = __shfl_xor_sync(full_warp, s.sum, mask);
    o.mean = __shfl_xor_sync(full_warp, s.mean, mask);
    o.m2 = __shfl_xor_sync(full_warp, s.m2, mask);
    o.abs_sum = __shfl_xor_sync(full_warp, s.abs_sum, mask);
    o.abs_mean = __shfl_xor_sync(full_warp, s.abs_mean, mask);
    o.abs_m2 = __shfl_xor_sync(full_warp, s.abs_m2, mask);
    o.sum_sq = __shfl_xor_sync(full_warp, s.sum_sq, mask);
    o.prod = __shfl_xor_sync(full_warp, s.prod, mask);
    o.prod_exp = __shfl_xor_sync(full_warp, s.prod_exp, mask);
    return o;
}

/// The warp's statistics in lane order, in every lane: a butterfly whose pairs merge
/// (lower lane, upper lane), so lane 0 ends with the in-order pairwise tree.
__device__ tensor_stats warp_merge(tensor_stats s) {
    const unsigned lane = threadIdx.x % 32U;
    for (int mask = 1; mask < 32; mask *= 2) {
        const tensor_stats other = shuffle_xor(s, mask);
        // One merge on selected copies, not one per branch: fewer registers live.
        const bool upper = (lane & static_cast<unsigned>(mask)) != 0;
        const tensor_stats lower_half = upper ? other : s;
        const tensor_stats upper_half = upper ? s : other;
        s = merged(lower_half, upper_half);
    }
    return s;
}

/// The block's statistics in thread order, valid in thread 0. Every thread must call it;
/// `warps` is block_warps entries of shared memory.
__device__ tensor_stats block_merge(tensor_stats s, tensor_stats* warps) {
    const unsigned lane = threadIdx.x % 32U;
    const unsigned warp = threadIdx.x / 32U;
    s = warp_merge(s);
    if (lane == 0) {
        warps[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
        s = warp_merge(lane < block_warps ? warps[lane] : tensor_stats{});
    }
    __syncthreads(); // `warps` may be reused
    return s;
}

/// A partial another block wrote, read past this SM's L1 (which may hold an older line).
__device__ tensor_stats load_partial(const tensor_stats* p) {
    tensor_stats s;
    s.count = __ldcg(&p->count);
    s.min = __ldcg(&p->min);
    s.max = __ldcg(&p->max);
    s.abs_min = __ldcg(&p->abs_min);
    s.sum = __ldcg(&p->sum);
    s.mean = __ldcg(&p->mean);
    s.m2 = __ldcg(&p->m2);
    s.abs_sum = __ldcg(&p->abs_sum);
    s.abs_mean = __ldcg(&p->abs_mean);
    s.abs_m2 = __ldcg(&p->abs_m2);
    s.sum_sq = __ldcg(&p->sum_sq);
    s.prod = __ldcg(&p->prod);
    s.prod_exp = __ldcg(&p->prod_exp);
    return s;
}

template <class E>
__device__ tensor_stats chunk_thread_pass(const launch_tensor& t, std::uint64_t begin, unsigned length) {
    const auto* chunk = static_cast<const typename E::storage*>(t.data) + begin;
    return thread_pass<E>(chunk, length, threadIdx.x, t.aligned);
}

template <std::size_t Capacity>
__global__ void __launch_bounds__(block_threads, min_blocks_per_sm) reduce_kernel(const __grid_constant__ launch_params<Capacity> params) {
    // Raw storage: a __shared__ variable cannot have a constructor (tensor_stats' initial values).
    __shared__ alignas(tensor_stats) unsigned char warp_storage[sizeof(tensor_stats) * block_warps];
    auto* warps = reinterpret_cast<tensor_stats*>(warp_storage);
    __shared__ unsigned tensor_index;
    __shared__ bool last;

    const unsigned block = blockIdx.x;
    if (threadIdx.x == 0) {
        // The tensor whose blocks include this one: the last with first_block <= block.
        unsigned low = 0;
        unsigned high = params.tensor_count;
        while (high - low > 1) {
            const unsigned mid = low + (high - low) / 2;
            if (params.tensors[mid].first_block <= block) {
                low = mid;
            } else {
                high = mid;
            }
        }
        tensor_index = low;
    }
    __syncthreads();
    const unsigned i = tensor_index;
    const launch_tensor& t = params.tensors[i];
    const auto chunk = static_cast<std::uint64_t>(block - t.first_block);
    const std::uint64_t begin = chunk * chunk_elements;
    const std::uint64_t left = t.count - (begin < t.count ? begin : t.count);
    const auto length = static_cast<unsigned>(left < chunk_elements ? left : chunk_elements);

    tensor_stats s;
    switch (t.kind) {
    case element_kind::float32: s = chunk_thread_pass<float32_element>(t, begin, length); break;
    case element_kind::float64: s = chunk_thread_pass<float64_element>(t, begin, length); break;
    case element_kind::float16: s = chunk_thread_pass<float16_element>(t, begin, length); break;
    case element_kind::bfloat16: s = chunk_thread_pass<bfloat16_element>(t, begin, length); break;
    }
    s = block_merge(s, warps);

    const auto chunks = static_cast<unsigned>(chunks_of(t.count));
    if (chunks == 1) {
        if (threadIdx.x == 0) {
            params.out[i] = s;
        }
        return;
    }
    if (threadIdx.x == 0) {
        params.partials[block] = s;
        __threadfence(); // the partial is visible before the count that announces it
        last = atomicAdd(&params.counters[i], 1U) == chunks - 1;
    }
    __syncthreads();
    if (!last) {
        return;
    }
    __threadfence(); // every partial of the tensor is visible past the count
    const partial_range range = partials_of(chunks, threadIdx.x);
    tensor_stats total;
    for (unsigned c = range.begin; c < range.end; ++c) {
        total = merged(total, load_partial(params.partials + t.first_block + c));
    }
    total = block_merge(total, warps);
    if (threadIdx.x == 0) {
        params.out[i] = total;
        params.counters[i] = 0; // ready for the next launch, which runs after this one in stream order
    }
}

} // namespace

template <std::size_t Capacity>
int launch_reduce(const launch_params<Capacity>& params, std::uint32_t blocks, CUstream_st* stream) noexcept {
    // cudaLaunchKernel returns this launch's status, never an earlier call's error.
    void* args[] = {const_cast<launch_params<Capacity>*>(&params)};
    return static_cast<int>(cudaLaunchKernel(reduce_kernel<Capacity>, dim3(blocks), dim3(block_threads), args, 0, stream));
}

template int launch_reduce<small_launch_tensors>(const launch_params<small_launch_tensors>&, std::uint32_t,
                                                 CUstream_st*) noexcept;
template int launch_reduce<large_launch_tensors>(const launch_params<large_launch_tensors>&, std::uint32_t,
                                                 CUstream_st*) noexcept;

} // namespace tdbg::cuda::detail
