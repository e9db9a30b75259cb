#pragma once
/// \file
/// tdbg::cuda::device_ops: the few device operations the save path of device buffers needs
/// (cuda/save.hpp): stream-ordered scratch memory, the fused reduction pass, histogram counts,
/// copies to page-locked host memory and an event that says they are done. runtime_ops() are
/// the CUDA runtime's (the tdbg::cuda library); host_ops (cuda/host_ops.hpp) runs the same
/// operations on the host, so the save path is tested where no GPU is. Needs no CUDA header.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "tdbg/core/detail/interface_base.hpp"
#include "tdbg/cuda/reduce.hpp"

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace tdbg::cuda {

/// Device operations, each enqueued on a stream and never waiting for the device (but
/// host_free, which may). Errors throw tdbg::error with the runtime's text.
class device_ops : public tdbg::detail::interface_base {
public:
    /// `n` bytes of device memory, usable by work enqueued on `stream` after this call.
    [[nodiscard]] virtual void* device_alloc(std::size_t n, CUstream_st* stream) = 0;
    /// Frees device_alloc's memory once the work enqueued on `stream` so far is done.
    virtual void device_free(void* p, CUstream_st* stream) = 0;
    /// `n` bytes of page-locked host memory (what a copy that does not block needs).
    [[nodiscard]] virtual void* host_alloc(std::size_t n) = 0;
    /// Frees host_alloc's memory; errors are ignored (it may run at exit).
    virtual void host_free(void* p) noexcept = 0;
    /// The statistics of tensors[0..n) into device_out[0..n) (multi_reducer::enqueue).
    virtual void reduce(const device_tensor* tensors, std::size_t n, tensor_stats* device_out, CUstream_st* stream) = 0;
    /// The histogram counts of `tensor` (reducible() dtypes) over histogram_edges(), one per
    /// bucket, into device_counts (device memory, zeroed here first).
    virtual void histogram(const device_tensor& tensor, std::uint64_t* device_counts, CUstream_st* stream) = 0;
    /// Copies `n` bytes from device memory to host memory from host_alloc.
    virtual void copy_to_host(void* host, const void* device, std::size_t n, CUstream_st* stream) = 0;
    /// Marks the work enqueued on `stream` so far; the function returned waits until it is done
    /// (on any thread, once) and throws the device's error.
    [[nodiscard]] virtual std::function<void()> record_event(CUstream_st* stream) = 0;
};

/// The CUDA runtime's operations, on the current device (defined in the tdbg::cuda library).
[[nodiscard]] std::shared_ptr<device_ops> runtime_ops();

} // namespace tdbg::cuda
