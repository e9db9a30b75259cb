/// \file
/// tdbg::cuda's host side: the device queries and multi_reducer, which checks the tensors,
/// keeps the scratch memory and launches the kernel (reduce_kernel.cu) through the CUDA
/// runtime. Compiled by the C++ compiler; only the kernel needs nvcc.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

// Only inline parts of tdbg: the library links with programs of either mode (tdbg/config.hpp).
#define TDBG_NO_MODE_GUARD 1
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/cuda/detail/launch.hpp"
#include "tdbg/cuda/reduce.hpp"
#include "runtime.hpp"

namespace tdbg::cuda {
namespace {

using detail::check;
using detail::kind_of;

/// cudaGetDeviceCount, leaving no error behind for the caller's next cudaGetLastError.
cudaError_t device_count(int& count) noexcept {
    count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        count = 0;
    }
    return status;
}

} // namespace

bool device_available() noexcept {
    int count = 0;
    return device_count(count) == cudaSuccess && count > 0;
}

std::string device_status() {
    int count = 0;
    const cudaError_t status = device_count(count);
    if (status != cudaSuccess) {
        return std::string("no CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(status);
    }
    if (count == 0) {
        return "no CUDA device: the CUDA runtime sees none";
    }
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    int driver = 0;
    int runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    return std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + "; device 0: " + props.name +
           " (compute capability " + std::to_string(props.major) + "." + std::to_string(props.minor) + ", " +
           std::to_string(props.totalGlobalMem >> 20U) + " MiB); driver " + version(driver) + ", runtime " +
           version(runtime);
}

/// The scratch of a reducer and what it needs to order its reuse.
struct multi_reducer::state {
    tensor_stats* partials = nullptr; ///< one per block of a launch
    std::size_t partial_capacity = 0;
    std::uint32_t* counters = nullptr; ///< large_launch_tensors of them, 0 between launches
    cudaEvent_t done = nullptr; ///< recorded after the last launch
    cudaStream_t stream = nullptr; ///< the stream of the last launch
    bool launched = false;
    detail::launch_params<detail::small_launch_tensors> small;
    std::unique_ptr<detail::launch_params<detail::large_launch_tensors>> large;

    state() = default;
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    state(state&&) = delete;
    state& operator=(state&&) = delete;

    ~state() {
        // Nothing may use the scratch once the last launch is done; errors are ignored (the
        // runtime may be shutting down at exit).
        if (done != nullptr) {
            (void)cudaEventSynchronize(done);
            (void)cudaEventDestroy(done);
        }
        (void)cudaFree(partials);
        (void)cudaFree(counters);
    }

    /// Orders this launch after the previous one when the stream changed, and allocates the
    /// counters the first time (stream-ordered: no synchronization).
    void prepare(cudaStream_t s) {
        if (launched && s != stream) {
            check(cudaStreamWaitEvent(s, done, 0), "cudaStreamWaitEvent");
        }
        if (done == nullptr) {
            check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        }
        if (counters == nullptr) {
            void* p = nullptr;
            const std::size_t bytes = sizeof(std::uint32_t) * detail::large_launch_tensors;
            check(cudaMallocAsync(&p, bytes, s), "cudaMallocAsync");
            counters = static_cast<std::uint32_t*>(p);
            check(cudaMemsetAsync(counters, 0, bytes, s), "cudaMemsetAsync");
        }
    }

    /// At least `blocks` partials, in stream order on `s`.
    void reserve_partials(std::size_t blocks, cudaStream_t s) {
        if (blocks <= partial_capacity) {
            return;
        }
        const std::size_t capacity = std::max(blocks, 2 * partial_capacity);
        if (partials != nullptr) {
            check(cudaFreeAsync(partials, s), "cudaFreeAsync"); // after the launches that used it
            partials = nullptr;
            partial_capacity = 0;
        }
        void* p = nullptr;
        check(cudaMallocAsync(&p, sizeof(tensor_stats) * capacity, s), "cudaMallocAsync");
        partials = static_cast<tensor_stats*>(p);
        partial_capacity = capacity;
    }

    /// Fills `params` with tensors [first, first + count) and launches them.
    template <std::size_t Capacity>
    void launch(detail::launch_params<Capacity>& params, const device_tensor* tensors, std::size_t first,
                std::size_t count, tensor_stats* out, cudaStream_t s) {
        std::uint64_t blocks = 0;
        for (std::size_t j = 0; j < count; ++j) {
            const device_tensor& t = tensors[first + j];
            detail::launch_tensor& lt = params.tensors[j];
            lt.data = t.data;
            lt.count = t.count;
            lt.first_block = static_cast<std::uint32_t>(blocks);
            lt.kind = kind_of(t.type);
            lt.aligned = reinterpret_cast<std::uintptr_t>(t.data) % detail::group_bytes == 0;
            blocks += detail::chunks_of(t.count);
            if (blocks > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
                throw error("tdbg::cuda::multi_reducer: tensors " + std::to_string(first) + ".." +
                            std::to_string(first + j) + " need more than 2^31 - 1 blocks of " +
                            std::to_string(detail::chunk_elements) + " elements");
            }
        }
        reserve_partials(static_cast<std::size_t>(blocks), s);
        params.out = out + first;
        params.partials = partials;
        params.counters = counters;
        params.tensor_count = static_cast<std::uint32_t>(count);
        check(static_cast<cudaError_t>(detail::launch_reduce(params, static_cast<std::uint32_t>(blocks), s)),
              "launching the reduction kernel");
    }
};

multi_reducer::multi_reducer() noexcept = default;
multi_reducer::~multi_reducer() = default;
multi_reducer::multi_reducer(multi_reducer&& other) noexcept = default;
multi_reducer& multi_reducer::operator=(multi_reducer&& other) noexcept = default;

void multi_reducer::enqueue(const device_tensor* tensors, std::size_t n, tensor_stats* device_out,
                            CUstream_st* stream) {
    for (std::size_t i = 0; i < n; ++i) {
        const device_tensor& t = tensors[i];
        if (!reducible(t.type)) {
            throw error("tdbg::cuda::multi_reducer: tensor " + std::to_string(i) + " is " +
                        std::string(dtype_name(t.type)) +
                        ", which the kernel does not reduce (float16, bfloat16, float32, float64)");
        }
        if (t.data == nullptr && t.count != 0) {
            throw error("tdbg::cuda::multi_reducer: tensor " + std::to_string(i) + " has " + std::to_string(t.count) +
                        " elements at a null pointer");
        }
    }
    if (n == 0) {
        return;
    }
    if (device_out == nullptr) {
        throw error("tdbg::cuda::multi_reducer: no output for " + std::to_string(n) + " tensors");
    }
    if (!state_) {
        state_ = std::make_unique<state>();
    }
    state& st = *state_;
    st.prepare(stream);
    for (std::size_t first = 0; first < n;) {
        const std::size_t left = n - first;
        if (left <= detail::small_launch_tensors) {
            st.launch(st.small, tensors, first, left, device_out, stream);
            first += left;
        } else {
            if (!st.large) {
                st.large = std::make_unique<detail::launch_params<detail::large_launch_tensors>>();
            }
            const std::size_t count = std::min(left, detail::large_launch_tensors);
            st.launch(*st.large, tensors, first, count, device_out, stream);
            first += count;
        }
    }
    check(cudaEventRecord(st.done, stream), "cudaEventRecord");
    st.stream = stream;
    st.launched = true;
}

} // namespace tdbg::cuda
