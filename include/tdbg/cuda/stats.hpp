#pragma once
/// \file
/// tdbg::cuda::tensor_stats: the statistics one pass of the reduction kernel leaves per tensor
/// (104 bytes), the same type and the same merge as the CPU kernels' (their count, min, max,
/// sums, Chan's means and M2s, the product and its exponent), so that tdbg::cuda::finish turns
/// them into reductions with the CPU path's own code. Needs no CUDA header.

#include "tdbg/reduce/detail/real_stats.hpp"

namespace tdbg::cuda {

/// The statistics of one tensor (tdbg::detail::real_stats); a default-constructed value is that
/// of no values, which is what an empty tensor gives. `merge` adds the statistics of the values
/// that follow, on the host and on the device alike.
using tensor_stats = tdbg::detail::real_stats;

} // namespace tdbg::cuda
