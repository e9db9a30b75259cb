#pragma once
/// \file
/// What the host hands the kernels (reduce_kernel.cu, histogram_kernel.cu): the tensors of a
/// launch as a kernel parameter, and the launches themselves. Plain types only, so the host
/// side (multi_reducer.cpp, runtime_ops.cpp) and nvcc share it.

#include <cstddef>
#include <cstdint>

#include "tdbg/cuda/detail/stats_ops.hpp"

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace tdbg::cuda::detail {

/// The element types the kernel reduces.
enum class element_kind : std::uint8_t { float32, float64, float16, bfloat16 };

/// One tensor of a launch. Its chunks are blocks first_block, ..., first_block + chunks_of(count) - 1.
struct launch_tensor {
    const void* data = nullptr;
    std::uint64_t count = 0;
    std::uint32_t first_block = 0;
    element_kind kind = element_kind::float32;
    bool aligned = false; ///< data is 16-byte aligned: the threads load 16 bytes at once
};

/// Chunks (blocks) of a tensor of `count` elements; an empty tensor has one, which writes
/// the empty statistics.
[[nodiscard]] TDBG_CUDA_HD constexpr std::uint64_t chunks_of(std::uint64_t count) noexcept {
    return count == 0 ? 1 : (count + chunk_elements - 1) / chunk_elements;
}

/// Everything one launch reads, passed by value as the kernel's parameter (no copy to stage).
template <std::size_t Capacity>
struct launch_params {
    tensor_stats* out = nullptr; ///< out[i]: the statistics of tensors[i]
    tensor_stats* partials = nullptr; ///< one per block of the launch
    std::uint32_t* counters = nullptr; ///< per tensor: its blocks done; 0 between launches
    std::uint32_t tensor_count = 0;
    launch_tensor tensors[Capacity];
};

/// Tensors of a launch whose parameter fits the 4 KiB every CUDA version accepts.
inline constexpr std::size_t small_launch_tensors = 160;
/// Tensors of the larger launch: its parameter fits the 32,764 bytes of CUDA 12.1+ on Volta and newer.
inline constexpr std::size_t large_launch_tensors = 1024;
static_assert(sizeof(launch_params<small_launch_tensors>) <= 4096, "small launch parameter over 4 KiB");
static_assert(sizeof(launch_params<large_launch_tensors>) <= 32764, "large launch parameter over 32,764 bytes");

/// Launches the kernel over `blocks` blocks (the tensors' chunks together) on `stream`;
/// returns the launch's cudaError_t as an int (0: launched). Defined in reduce_kernel.cu for
/// the two capacities above.
template <std::size_t Capacity>
int launch_reduce(const launch_params<Capacity>& params, std::uint32_t blocks, CUstream_st* stream) noexcept;

/// One tensor's histogram: its values binned over `edge_count` ascending edges in device
/// memory, each bucket's count added to counts[bucket] (zeroed by the caller).
struct histogram_params {
    const void* data = nullptr;
    std::uint64_t count = 0;
    element_kind kind = element_kind::float32;
    const double* edges = nullptr;
    std::uint32_t edge_count = 0;
    std::uint64_t* counts = nullptr;
};

/// Launches the histogram kernel on `stream`; returns the launch's cudaError_t as an int.
/// Defined in histogram_kernel.cu.
int launch_histogram(const histogram_params& params, CUstream_st* stream) noexcept;

} // namespace tdbg::cuda::detail
