#pragma once
/// \file
/// tdbg::cuda: the reductions of tensors in device memory, computed on the device in one
/// launch over every tensor of a call and one pass over their bytes, accumulated in double as
/// tdbg's CPU path accumulates them; only the statistics (104 bytes a tensor) need to leave
/// the device. The optional CMake target `tdbg::cuda` (cmake/cuda.cmake), built where a CUDA
/// compiler is found; this header needs no CUDA header.
///
///     tdbg::cuda::multi_reducer reducer;                      // one per stream
///     reducer.enqueue(tensors.data(), tensors.size(), device_stats, stream);
///     // ... copy device_stats to the host (cudaMemcpyAsync, an event), then for each tensor:
///     auto values = tdbg::cuda::finish(stats[i], tensors[i].type, {{reduction_kind::mean}});
///
/// The values are those of tdbg::compute_reductions (same NaN and infinity rules, the product
/// with a separate exponent, std and variance by Chan's merges of shifted sums); the order of
/// the additions differs, so they can differ in the last bits. host_stats runs the kernel's own
/// order on the host.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/cuda/detail/host_pass.hpp"
#include "tdbg/cuda/detail/stats_ops.hpp"
#include "tdbg/cuda/stats.hpp"
#include "tdbg/reduce/detail/finish.hpp"

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace tdbg::cuda {

/// One contiguous tensor in device memory.
struct device_tensor {
    const void* data = nullptr;
    tdbg::dtype type = tdbg::dtype::float32;
    std::size_t count = 0; ///< elements
};

// tensor_stats, what a pass leaves per tensor, is the CPU kernels' own type (cuda/stats.hpp).

/// True when the CUDA runtime sees at least one device; device_status() says why not.
[[nodiscard]] bool device_available() noexcept;

/// One line about the devices: how many, the first one's name and compute capability, the
/// driver and runtime versions; or why there is none ("no CUDA device: ...").
[[nodiscard]] std::string device_status();

/// True for the dtypes the kernel reduces: float16, bfloat16, float32, float64.
[[nodiscard]] constexpr bool reducible(tdbg::dtype type) noexcept {
    return type == dtype::float16 || type == dtype::bfloat16 || type == dtype::float32 || type == dtype::float64;
}

/// Reduces many tensors in one launch. Use one per stream: its scratch memory (a partial per
/// block of 65,536 elements, a counter per tensor) is reused launch after launch, in stream order.
class multi_reducer {
public:
    /// Touches no device: the scratch is allocated by the first enqueue.
    multi_reducer() noexcept;
    /// Waits for this reducer's last launch to finish, then frees its scratch.
    ~multi_reducer();
    multi_reducer(multi_reducer&& other) noexcept;
    multi_reducer& operator=(multi_reducer&& other) noexcept;
    multi_reducer(const multi_reducer&) = delete;
    multi_reducer& operator=(const multi_reducer&) = delete;

    /// Enqueues on `stream` one pass over tensors[0..n); the statistics of tensors[i] land in
    /// device_out[i] (device memory the caller owns, n entries) when the stream reaches them.
    /// One launch for up to 1,024 tensors (more take one launch per 1,024). Never synchronizes
    /// the device or the stream; the first calls may allocate scratch (stream-ordered). An
    /// empty tensor gives the statistics of no values. Throws tdbg::error naming the tensor's
    /// index for a dtype reducible() rejects or a null pointer with a count (before anything
    /// is enqueued), and for a CUDA error (with cudaGetErrorString's text).
    void enqueue(const device_tensor* tensors, std::size_t n, tensor_stats* device_out, CUstream_st* stream);

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// The statistics the kernel computes for `count` elements of `type` at `data` in host memory,
/// in the kernel's order of operations (bit for bit the device's result where the host does
/// not contract a*b+c into fma; x86-64 without -mfma does not). For tensors that live on the
/// CPU, and for tests. tdbg::error for a dtype reducible() rejects.
[[nodiscard]] inline tensor_stats host_stats(const void* data, tdbg::dtype type, std::size_t count) {
    return detail::host_pass(data, type, count);
}

namespace detail {

template <class T>
[[nodiscard]] std::vector<tensor_value> finish_all(const tdbg::detail::real_stats& stats,
                                                   const std::vector<reduction>& which, unsigned ddof) {
    std::vector<tensor_value> out;
    out.reserve(which.size());
    for (const reduction r : which) {
        out.push_back(tdbg::detail::finish_real<T>(stats, r, ddof).to_tensor());
    }
    return out;
}

} // namespace detail

/// The reductions `which` of a tensor of floating `type` from its statistics, as
/// tdbg::compute_reductions returns them (0-d tensor_values of `type`), with `ddof` subtracted
/// from the count for std and variance (0: numpy's, 1: torch's default; NaN when count <= ddof).
/// min and max of an empty tensor throw tdbg::error, as compute_reductions does.
[[nodiscard]] inline std::vector<tensor_value> finish(const tensor_stats& stats, tdbg::dtype type,
                                                      const std::vector<reduction>& which, unsigned ddof = 0) {
    switch (type) {
    case dtype::float32: return detail::finish_all<float>(stats, which, ddof);
    case dtype::float64: return detail::finish_all<double>(stats, which, ddof);
    case dtype::float16: return detail::finish_all<float16>(stats, which, ddof);
    case dtype::bfloat16: return detail::finish_all<bfloat16>(stats, which, ddof);
    default: break;
    }
    throw error("tdbg::cuda::finish: " + std::string(dtype_name(type)) +
                " is not a dtype the reduction kernel reduces (float16, bfloat16, float32, float64)");
}

} // namespace tdbg::cuda
