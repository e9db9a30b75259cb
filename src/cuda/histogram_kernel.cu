/// \file
/// tdbg::cuda's histogram kernel: a tensor's values binned over TensorBoard's bucket edges, as
/// the CPU path bins them (detail/histogram_bins.hpp). Each block copies the edges to shared
/// memory, counts its share of the values in shared counters, then adds the counters that are
/// not zero to the tensor's counts in device memory. The moments of the histogram (min, max,
/// sums) come from the reduction kernel's statistics, not from here.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

// Only inline parts of tdbg: the library links with programs of either mode (tdbg/config.hpp).
#define TDBG_NO_MODE_GUARD 1
#include "tdbg/cuda/detail/histogram_bins.hpp"
#include "tdbg/cuda/detail/launch.hpp"
#include "tdbg/cuda/detail/stats_ops.hpp"

namespace tdbg::cuda::detail {
namespace {

constexpr unsigned histogram_threads = 256;
/// Values a block takes at least, and the most blocks a launch has: a block's shared counters
/// (32 bits) then hold counts up to 2^32 for tensors of up to 2^44 values.
constexpr std::uint64_t values_per_block = 16 * histogram_threads;
constexpr std::uint64_t max_histogram_blocks = 4096;

static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t), "atomicAdd's 64-bit counters");

template <class E>
__device__ void bin_values(const histogram_params& p, const double* edges, unsigned* local) {
    const auto* data = static_cast<const typename E::storage*>(p.data);
    const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.count;
         i += stride) {
        const int bucket = histogram_bucket(E::value(data[i]), edges, p.edge_count);
        if (bucket >= 0) {
            atomicAdd(local + bucket, 1U);
        }
    }
}

__global__ void __launch_bounds__(histogram_threads) histogram_kernel(const histogram_params p) {
    extern __shared__ double shared[]; // the edges, then one counter per bucket
    double* edges = shared;
    auto* local = reinterpret_cast<unsigned*>(shared + p.edge_count);
    const unsigned buckets = p.edge_count - 1;
    for (unsigned i = threadIdx.x; i < p.edge_count; i += blockDim.x) {
        edges[i] = p.edges[i];
    }
    for (unsigned i = threadIdx.x; i < buckets; i += blockDim.x) {
        local[i] = 0;
    }
    __syncthreads();
    switch (p.kind) {
    case element_kind::float32: bin_values<float32_element>(p, edges, local); break;
    case element_kind::float64: bin_values<float64_element>(p, edges, local); break;
    case element_kind::float16: bin_values<float16_element>(p, edges, local); break;
    case element_kind::bfloat16: bin_values<bfloat16_element>(p, edges, local); break;
    }
    __syncthreads();
    auto* counts = reinterpret_cast<unsigned long long*>(p.counts);
    for (unsigned i = threadIdx.x; i < buckets; i += blockDim.x) {
        if (local[i] != 0) {
            atomicAdd(counts + i, static_cast<unsigned long long>(local[i]));
        }
    }
}

} // namespace

int launch_histogram(const histogram_params& params, CUstream_st* stream) noexcept {
    if (params.count == 0) {
        return static_cast<int>(cudaSuccess);
    }
    std::uint64_t blocks = (params.count + values_per_block - 1) / values_per_block;
    blocks = blocks < max_histogram_blocks ? blocks : max_histogram_blocks;
    const std::size_t shared = params.edge_count * sizeof(double) + (params.edge_count - 1) * sizeof(unsigned);
    void* args[] = {const_cast<histogram_params*>(&params)};
    return static_cast<int>(cudaLaunchKernel(histogram_kernel, dim3(static_cast<unsigned>(blocks)),
                                             dim3(histogram_threads), args, shared, stream));
}

} // namespace tdbg::cuda::detail
