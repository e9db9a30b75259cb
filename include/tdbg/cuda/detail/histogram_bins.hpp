#pragma once
/// \file
/// The bucket of a value in a TensorBoard histogram, on the host and on the device alike: the
/// histogram kernel (src/histogram_kernel.cu) and host_ops bin with this one function, as the
/// hook's CPU path bins (count_histogram, numpy.histogram's rule).

#include "tdbg/core/detail/cuda_hd.hpp"

namespace tdbg::cuda::detail {

/// The bucket of `x` among the `n` ascending `edges` (n - 1 buckets): bucket i holds
/// [edges[i], edges[i + 1]), the last one also its right edge; -1 for a value outside the edges
/// or NaN, which no bucket counts.
[[nodiscard]] TDBG_CUDA_HD inline int histogram_bucket(double x, const double* edges, unsigned n) noexcept {
    if (!(x >= edges[0] && x <= edges[n - 1])) {
        return -1;
    }
    unsigned low = 0; // the first edge above x, by bisection (std::upper_bound)
    unsigned high = n;
    while (low < high) {
        const unsigned mid = low + (high - low) / 2;
        if (edges[mid] <= x) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    const unsigned bucket = low == 0 ? 0 : low - 1;
    return static_cast<int>(bucket < n - 1 ? bucket : n - 2);
}

} // namespace tdbg::cuda::detail
