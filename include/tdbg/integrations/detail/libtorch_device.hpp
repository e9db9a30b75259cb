#pragma once
/// \file
/// torch_hook's device path, its parts: the reductions, histograms and raw values of tensors
/// that are not on the CPU, computed where they live and copied to the host without stalling
/// the training stream. A step's tensors go as one batch per device (libtorch_batch.hpp):
///   1. reductions and histogram counts by torch operations on the tensor's device (CUDA
///      tensors go through tdbg::cuda::device_saver instead, where it is built); every result
///      lands in one small device buffer;
///   2. that buffer and each raw value copied to host memory with non-blocking copies (pinned
///      memory from a bounded pool for raw values), then one event recorded on the stream;
///   3. each tensor handed to the hook as a deferred save (hook/deferred.hpp) whose values a
///      writer thread reads once the event has completed.
/// The training thread launches work and never waits for the device, except when the pool of
/// host memory is full and the hook's full-queue policy is to block.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/core.h>
#include <torch/types.h>

#include "tdbg/core/detail/byte_budget.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/reduce/convention.hpp"

namespace tdbg::detail {

/// Host memory for device tensors in flight, bounded by the bytes lent at once. A buffer
/// returns its bytes when the last reference to it goes (after the writer has encoded it).
class host_buffers : public std::enable_shared_from_this<host_buffers> {
public:
    explicit host_buffers(std::size_t max_bytes) : budget_(max_bytes) {}

    /// A host tensor of `n` bytes, page-locked when `pinned` (what a non-blocking copy from a
    /// CUDA device needs). While the pool's bytes are lent: waits for them (`wait`), or returns
    /// nullptr. A request larger than the whole pool is served when nothing else is lent.
    std::shared_ptr<torch::Tensor> take(std::size_t n, bool pinned, bool wait) {
        if (!budget_.take(n, wait)) {
            return nullptr;
        }
        torch::Tensor buffer;
        try {
            buffer = torch::empty({static_cast<std::int64_t>(n)},
                                  torch::TensorOptions().dtype(torch::kByte).pinned_memory(pinned));
        } catch (...) {
            budget_.give_back(n);
            throw;
        }
        std::weak_ptr<host_buffers> pool = weak_from_this();
        return std::shared_ptr<torch::Tensor>(new torch::Tensor(std::move(buffer)), [pool, n](torch::Tensor* t) {
            delete t;
            if (auto alive = pool.lock()) {
                alive->budget_.give_back(n);
            }
        });
    }

    /// Bytes lent now.
    [[nodiscard]] std::size_t lent() const { return budget_.lent(); }
    /// How many take() calls had to wait for bytes to come back.
    [[nodiscard]] std::uint64_t waits() const { return budget_.waits(); }

private:
    byte_budget budget_;
};

/// An event recorded on a device's current stream after the copies of a batch; an empty one
/// (the CPU) is complete at once.
class device_event {
public:
    device_event() = default;

    /// Records an event on the current stream of `device`.
    static device_event record(const c10::Device& device) {
        device_event out;
        if (device.is_cpu()) {
            return out;
        }
        const c10::impl::DeviceGuardImplInterface* impl = c10::impl::getDeviceGuardImpl(device.type());
        out.event_ = std::make_shared<c10::Event>(device.type());
        out.event_->record(impl->getStream(device));
        return out;
    }

    /// Waits until the work before the event is done; throws what the device reports.
    void wait() const {
        if (event_) {
            synchronize(*event_);
        }
    }

private:
    template <class E, class = void>
    struct has_synchronize : std::false_type {};
    template <class E>
    struct has_synchronize<E, std::void_t<decltype(std::declval<E&>().synchronize())>> : std::true_type {};

    // c10::Event::synchronize where torch has it (2.x); older torch can only be asked whether the
    // event has completed: asked again after a pause that grows to a millisecond.
    template <class E>
    static void synchronize(E& event) {
        if constexpr (has_synchronize<E>::value) {
            event.synchronize();
        } else {
            auto pause = std::chrono::microseconds(10);
            while (!event.query()) {
                std::this_thread::sleep_for(pause);
                pause = std::min(pause * 2, std::chrono::microseconds(1000));
            }
        }
    }

    std::shared_ptr<c10::Event> event_;
};

/// A 0-d result's bytes as a 1-d byte tensor (to gather many results in one buffer).
inline torch::Tensor as_bytes(const torch::Tensor& result) { return result.reshape({1}).view(torch::kByte); }

/// The reductions `which` of `x` by torch operations on its device, as smdebug's PyTorch hook
/// stores them: 0-d tensors of torch's dtypes, std and variance unbiased; an undefined tensor
/// where torch has no such reduction for the dtype. Each pass serves every reduction it can:
/// min and max together (max |x| from them), the moments for std and variance (their unbiased
/// form from the population variance, in float64), the l1 norm for l1, abs_sum and abs_mean,
/// and one pass over |x| for abs_min, abs_std and abs_variance; the mean, sum, l2 norm and
/// product take a pass each, since the moments lose them with infinities.
/// One function on purpose (~125 lines): the passes are computed at first use by one switch
/// over the reductions and shared between its cases.
inline std::vector<torch::Tensor> torch_reductions(const torch::Tensor& x, dtype type,
                                                   const std::vector<reduction>& which) {
    const torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> out(which.size());
    const auto n = static_cast<double>(x.numel());
    if (!is_floating(type)) {
        // Integers, bool and complex: one torch operation per reduction, as smdebug calls them.
        torch::Tensor absolute;
        for (std::size_t k = 0; k < which.size(); ++k) {
            const reduction r = which[k];
            if (!has_reduction(reduction_convention::pytorch, type, r)) {
                continue;
            }
            if (r.abs && !absolute.defined()) {
                absolute = x.abs();
            }
            const torch::Tensor& v = r.abs ? absolute : x;
            switch (r.kind) {
            case reduction_kind::min: out[k] = v.min(); break;
            case reduction_kind::max: out[k] = v.max(); break;
            case reduction_kind::mean: out[k] = v.mean(); break;
            case reduction_kind::std: out[k] = v.std(); break;
            case reduction_kind::variance: out[k] = v.var(); break;
            case reduction_kind::sum: out[k] = v.sum(); break;
            case reduction_kind::prod: out[k] = v.prod(); break;
            case reduction_kind::l1: out[k] = torch::norm(v, 1); break;
            case reduction_kind::l2: out[k] = torch::norm(v, 2); break;
            }
        }
        return out;
    }
    const auto scalar = x.scalar_type();
    const auto min_max = [](const torch::Tensor& v) {
        if (v.is_cpu() && v.scalar_type() == torch::kHalf) { // no CPU aminmax of float16 in older torch
            return std::make_pair(v.min(), v.max());
        }
        auto [lo, hi] = torch::aminmax(v);
        return std::make_pair(lo, hi);
    };
    // Population variance and mean, in float64, of x or |x|.
    const auto moments = [](const torch::Tensor& v) {
        auto [var, mean] = torch::var_mean(v, /*unbiased=*/false);
        return std::make_pair(var.to(torch::kDouble), mean.to(torch::kDouble));
    };
    std::optional<std::pair<torch::Tensor, torch::Tensor>> plain_mm;
    std::optional<std::pair<torch::Tensor, torch::Tensor>> abs_mm;
    std::optional<std::pair<torch::Tensor, torch::Tensor>> plain_moments;
    std::optional<std::pair<torch::Tensor, torch::Tensor>> abs_moments;
    torch::Tensor absolute;
    torch::Tensor l1;
    torch::Tensor mean;
    torch::Tensor product;
    const auto abs_value = [&]() -> const torch::Tensor& {
        if (!absolute.defined()) {
            absolute = x.abs();
        }
        return absolute;
    };
    // Σ|x|, exact with infinities (the moments give NaN for them, as torch's var does).
    const auto sum_of_abs = [&]() -> const torch::Tensor& {
        if (!l1.defined()) {
            l1 = torch::norm(x, 1).to(torch::kDouble);
        }
        return l1;
    };
    for (std::size_t k = 0; k < which.size(); ++k) {
        const reduction r = which[k];
        torch::Tensor v;
        switch (r.kind) {
        case reduction_kind::min:
            if (r.abs) {
                if (!abs_mm) {
                    abs_mm = min_max(abs_value());
                }
                v = abs_mm->first;
            } else {
                if (!plain_mm) {
                    plain_mm = min_max(x);
                }
                v = plain_mm->first;
            }
            break;
        case reduction_kind::max:
            // max |x| = max(|min x|, |max x|): no pass over |x| for it.
            if (!plain_mm) {
                plain_mm = min_max(x);
            }
            v = r.abs ? torch::maximum(plain_mm->first.abs(), plain_mm->second.abs()) : plain_mm->second;
            break;
        case reduction_kind::mean:
            if (r.abs) {
                v = sum_of_abs() / n;
            } else {
                if (!mean.defined()) {
                    mean = x.mean();
                }
                v = mean;
            }
            break;
        case reduction_kind::variance:
        case reduction_kind::std: {
            auto& m = r.abs ? abs_moments : plain_moments;
            if (!m) {
                m = moments(r.abs ? abs_value() : x);
            }
            // torch's unbiased estimator: n / (n - 1) times the population variance (NaN for n = 1).
            v = m->first * (n / (n - 1));
            if (r.kind == reduction_kind::std) {
                v = v.sqrt();
            }
            break;
        }
        case reduction_kind::sum: v = r.abs ? sum_of_abs() : x.sum(); break;
        case reduction_kind::prod:
            if (!product.defined()) {
                product = x.to(torch::kDouble).prod(); // float16 has no CPU product in older torch
            }
            v = r.abs ? product.abs() : product;
            break;
        case reduction_kind::l1: v = sum_of_abs(); break;
        case reduction_kind::l2: v = torch::norm(x, 2); break; // exact with infinities, which the moments are not
        }
        out[k] = v.to(scalar);
    }
    return out;
}

/// TensorBoard histogram data of real `x` on its device, as one float64 tensor: the counts over
/// histogram_edges() (see histogram_counts), then min, max, sum and sum of squares.
inline torch::Tensor torch_histogram(const torch::Tensor& x, const torch::Tensor& edges) {
    const torch::NoGradGuard no_grad;
    const torch::Tensor v = x.flatten().to(torch::kDouble);
    const std::int64_t buckets = edges.numel() - 1;
    // numpy.histogram: bucket i holds [edge_i, edge_i+1), the last one also its right edge;
    // values outside the edges and NaN in none.
    const torch::Tensor inside = (v >= edges[0]) & (v <= edges[buckets]);
    const torch::Tensor bins =
        (torch::bucketize(v, edges, /*out_int32=*/false, /*right=*/true) - 1).clamp(0, buckets - 1);
    const torch::Tensor counts = torch::bincount(bins.masked_select(inside), {}, buckets).to(torch::kDouble);
    auto [lo, hi] = std::make_pair(v.min(), v.max()); // propagate NaN, as numpy's
    return torch::cat({counts, lo.reshape({1}), hi.reshape({1}), v.sum().reshape({1}), (v * v).sum().reshape({1})});
}

/// histogram_counts from the host copy of torch_histogram's result (`buckets` counts + 4).
inline histogram_counts read_histogram(const double* data, std::size_t buckets, std::size_t values) {
    histogram_counts h;
    h.counts.assign(data, data + buckets);
    h.min = data[buckets];
    h.max = data[buckets + 1];
    h.sum = data[buckets + 2];
    h.sum_squares = data[buckets + 3];
    h.num = static_cast<double>(values);
    return h;
}

} // namespace tdbg::detail
