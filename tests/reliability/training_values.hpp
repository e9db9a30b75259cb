#pragma once
// The tensors the reliability trainer saves: their names and values follow
// from (step, tensor) alone, so that a reader can check every element it
// reads without knowing how far the trainer got.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tdbg::test::reliability {

/// Tensors per step: small ones (gathered in the writer's chunk buffer) and
/// one large one (appended to storage straight from the tensor's memory).
inline constexpr int small_tensors = 4;
inline constexpr std::size_t small_size = 16;
/// 256 KiB of float32: at the writer's direct-append threshold, so its bytes reach the file in their own write.
inline constexpr std::size_t large_size = std::size_t{1} << 16U;

/// The name of tensor `k` (0 .. small_tensors-1 are small; small_tensors is the large one).
inline std::string tensor_name(int k) {
    return k < small_tensors ? "layer" + std::to_string(k) + ".weight" : "layer_big.weight";
}

/// Every raw tensor name saved at each step, sorted as a trial lists them.
inline std::vector<std::string> tensor_names() {
    std::vector<std::string> names;
    for (int k = 0; k <= small_tensors; ++k) {
        names.push_back(tensor_name(k));
    }
    names.emplace_back("step_id");
    return names;
}

/// Element `i` of tensor `k` at `step`: whole numbers below 2^24, exact in float32.
inline float element(std::int64_t step, int k, std::size_t i) {
    if (k < small_tensors) {
        return static_cast<float>((step * 8 + k) * 1000 + static_cast<std::int64_t>(i));
    }
    return static_cast<float>((step * 7919 + static_cast<std::int64_t>(i)) % 16777216);
}

/// Tensor `k`'s values at `step`.
inline std::vector<float> values(std::int64_t step, int k) {
    const std::size_t n = k < small_tensors ? small_size : large_size;
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = element(step, k, i);
    }
    return out;
}

} // namespace tdbg::test::reliability
