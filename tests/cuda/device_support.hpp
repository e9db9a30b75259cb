#pragma once
// Shared by the tests that run on a CUDA device: the skip without one (a failure when
// TDBG_REQUIRE_CUDA=1), device memory and a stream that free themselves.

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>

#include "support.hpp"
#include "tdbg/cuda/reduce.hpp"

// Skips the test without a device, or fails it when TDBG_REQUIRE_CUDA=1.
#define TDBG_REQUIRE_DEVICE()                                                                                          \
    do {                                                                                                               \
        if (!tdbg::cuda::device_available()) {                                                                         \
            const char* required = std::getenv("TDBG_REQUIRE_CUDA");                                                   \
            if (required != nullptr && std::string_view(required) == "1") {                                            \
                FAIL("TDBG_REQUIRE_CUDA=1 but " << tdbg::cuda::device_status());                                       \
            }                                                                                                          \
            TDBG_SKIP("no CUDA device (" << tdbg::cuda::device_status() << ")");                                       \
        }                                                                                                              \
    } while (false)

namespace tdbg::test {

inline void check_cuda(cudaError_t status, const char* what) {
    INFO(what << ": " << cudaGetErrorString(status));
    REQUIRE(status == cudaSuccess);
}

/// Device memory, freed at scope exit.
class device_memory {
public:
    explicit device_memory(std::size_t bytes) { check_cuda(cudaMalloc(&p_, bytes == 0 ? 1 : bytes), "cudaMalloc"); }
    ~device_memory() { (void)cudaFree(p_); }
    device_memory(const device_memory&) = delete;
    device_memory& operator=(const device_memory&) = delete;
    [[nodiscard]] std::byte* get() const { return static_cast<std::byte*>(p_); }

private:
    void* p_ = nullptr;
};

/// A stream, destroyed at scope exit.
class stream {
public:
    stream() { check_cuda(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
    ~stream() { (void)cudaStreamDestroy(s_); }
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;
    [[nodiscard]] cudaStream_t get() const { return s_; }

private:
    cudaStream_t s_ = nullptr;
};

} // namespace tdbg::test
