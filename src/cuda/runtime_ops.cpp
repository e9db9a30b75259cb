/// \file
/// runtime_ops(): tdbg::cuda::device_ops with the CUDA runtime, on the current device. Scratch
/// memory is stream-ordered (cudaMallocAsync), host memory page-locked (cudaHostAlloc), the
/// statistics come from one multi_reducer per stream and the histogram counts from the
/// histogram kernel, with the bucket edges copied once to each device that bins.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

// Only inline parts of tdbg: the library links with programs of either mode (tdbg/config.hpp).
#define TDBG_NO_MODE_GUARD 1
#include "tdbg/cuda/detail/launch.hpp"
#include "tdbg/cuda/device_ops.hpp"
#include "runtime.hpp"
#include "tdbg/hook/deferred.hpp"

namespace tdbg::cuda {
namespace {

using detail::check;

// Neither copied nor moved (device_ops is neither).
class runtime_device_ops final : public device_ops {
public:
    runtime_device_ops() = default;
    ~runtime_device_ops() override {
        // Errors are ignored: the runtime may be shutting down at exit.
        for (const auto& [device, edges] : edges_) {
            (void)cudaFree(edges);
        }
    }

    void* device_alloc(std::size_t n, CUstream_st* stream) override {
        void* p = nullptr;
        check(cudaMallocAsync(&p, n, stream), "cudaMallocAsync");
        return p;
    }

    void device_free(void* p, CUstream_st* stream) override { check(cudaFreeAsync(p, stream), "cudaFreeAsync"); }

    void* host_alloc(std::size_t n) override {
        void* p = nullptr;
        check(cudaHostAlloc(&p, n, cudaHostAllocDefault), "cudaHostAlloc");
        return p;
    }

    void host_free(void* p) noexcept override { (void)cudaFreeHost(p); }

    void reduce(const device_tensor* tensors, std::size_t n, tensor_stats* device_out, CUstream_st* stream) override {
        std::unique_ptr<multi_reducer>& reducer = reducers_[stream];
        if (!reducer) {
            reducer = std::make_unique<multi_reducer>();
        }
        reducer->enqueue(tensors, n, device_out, stream);
    }

    void histogram(const device_tensor& tensor, std::uint64_t* device_counts, CUstream_st* stream) override {
        if (!reducible(tensor.type)) {
            throw error("tdbg::cuda: the histogram kernel does not bin " + std::string(dtype_name(tensor.type)) +
                        " tensors (float16, bfloat16, float32, float64)");
        }
        const std::vector<double>& edges = histogram_edges();
        check(cudaMemsetAsync(device_counts, 0, (edges.size() - 1) * sizeof(std::uint64_t), stream), "cudaMemsetAsync");
        detail::histogram_params params;
        params.data = tensor.data;
        params.count = tensor.count;
        params.kind = detail::kind_of(tensor.type);
        params.edges = edges_on_current_device();
        params.edge_count = static_cast<std::uint32_t>(edges.size());
        params.counts = device_counts;
        check(static_cast<cudaError_t>(detail::launch_histogram(params, stream)), "launching the histogram kernel");
    }

    void copy_to_host(void* host, const void* device, std::size_t n, CUstream_st* stream) override {
        check(cudaMemcpyAsync(host, device, n, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    }

    std::function<void()> record_event(CUstream_st* stream) override {
        cudaEvent_t event = nullptr;
        check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        const std::shared_ptr<CUevent_st> owned(event, [](cudaEvent_t e) { (void)cudaEventDestroy(e); });
        check(cudaEventRecord(event, stream), "cudaEventRecord");
        return [owned] { check(cudaEventSynchronize(owned.get()), "waiting for the device (cudaEventSynchronize)"); };
    }

private:
    // The bucket edges in the current device's memory, copied there at its first histogram.
    const double* edges_on_current_device() {
        int device = 0;
        check(cudaGetDevice(&device), "cudaGetDevice");
        double*& edges = edges_[device];
        if (edges == nullptr) {
            const std::vector<double>& host = histogram_edges();
            void* p = nullptr;
            check(cudaMalloc(&p, host.size() * sizeof(double)), "cudaMalloc");
            edges = static_cast<double*>(p);
            check(cudaMemcpy(edges, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice),
                  "cudaMemcpy of the histogram edges");
        }
        return edges;
    }

    std::map<CUstream_st*, std::unique_ptr<multi_reducer>> reducers_;
    std::map<int, double*> edges_;
};

} // namespace

std::shared_ptr<device_ops> runtime_ops() { return std::make_shared<runtime_device_ops>(); }

} // namespace tdbg::cuda
