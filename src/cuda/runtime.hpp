#pragma once
/// \file
/// What the compiled sources share: a failed CUDA runtime call as tdbg::error, and a dtype as
/// the kernels' element kind.

#include <string>

#include <cuda_runtime_api.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/cuda/detail/launch.hpp"

namespace tdbg::cuda::detail {

/// Throws tdbg::error for a failed CUDA call: "tdbg::cuda: <what>: <text> (<name>)".
inline void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        throw error(std::string("tdbg::cuda: ") + what + ": " + cudaGetErrorString(status) + " (" +
                    cudaGetErrorName(status) + ")");
    }
}

/// The kernels' element kind of a dtype cuda::reducible() accepts (float32 for any other).
[[nodiscard]] inline element_kind kind_of(dtype type) noexcept {
    switch (type) {
    case dtype::float64: return element_kind::float64;
    case dtype::float16: return element_kind::float16;
    case dtype::bfloat16: return element_kind::bfloat16;
    default: return element_kind::float32;
    }
}

} // namespace tdbg::cuda::detail
