#pragma once
/// \file
/// torch_hook's device tensors, launched one batch per device (libtorch_device.hpp says how the
/// training thread stays off the device's critical path). Two routes:
/// - CUDA tensors, where tdbg::cuda is built and torch has CUDA (TDBG_TORCH_HAS_CUDA) and the
///   reducer is automatic: tdbg::cuda::device_saver, the framework-neutral save path of device
///   buffers (cuda/save.hpp), on torch's current stream;
/// - any other device tensor (torch_ops, a build without tdbg::cuda, force_device_path on the
///   CPU): torch operations on the tensor's device (torch_reductions, torch_histogram), their
///   results gathered in one buffer, raw values copied into a bounded pool of host memory,
///   both behind one event.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <c10/core/DeviceGuard.h>
#include <fmt/core.h>
#include <torch/types.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/deferred_sources.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/detail/libtorch_device.hpp"
#include "tdbg/integrations/torch_dtype.hpp"
#include "tdbg/reduce/convention.hpp"

#if defined(TDBG_HAS_CUDA) && defined(TDBG_TORCH_HAS_CUDA)
#include <c10/cuda/CUDAStream.h>

#include "tdbg/cuda/save.hpp"
#define TDBG_DETAIL_TORCH_FUSED 1
#else
#define TDBG_DETAIL_TORCH_FUSED 0
#endif

namespace tdbg::detail {

/// torch_hook's device path: the batches of device tensors it saves, one call at a time.
class torch_device_batches {
public:
    /// Saves through `target`; copies of raw values in flight hold at most `pinned_pool_bytes`
    /// of host memory; `use_cuda`: CUDA tensors through tdbg::cuda::device_saver (where built).
    torch_device_batches(hook& target, std::size_t pinned_pool_bytes, bool use_cuda)
        : hook_(&target), pinned_pool_bytes_(pinned_pool_bytes), use_cuda_(use_cuda) {}

    /// A device tensor this step saves, and what of it.
    struct device_item {
        std::string name;
        torch::Tensor tensor;
        dtype type = dtype::float32;
        tensor_value::shape_type shape;
        save_plan plan;
    };

    /// What this step saves of device tensor `tensor` under `name` (hook::plan_save); nullopt
    /// when nothing. Throws tdbg::error for an undefined tensor or a dtype tdbg does not have.
    std::optional<device_item> plan(std::string_view name, const torch::Tensor& tensor,
                                    std::initializer_list<std::string_view> collections) {
        if (!tensor.defined()) {
            throw error(fmt::format("torch_hook: cannot save '{}': the tensor is undefined", name));
        }
        const auto type = dtype_from_torch(tensor.scalar_type());
        if (!type) {
            throw error(fmt::format("torch_hook: cannot save '{}': tdbg has no dtype for torch's {} (convert it "
                                    "first, e.g. tensor.dequantize() or tensor.to(torch::kFloat))",
                                    name, c10::toString(tensor.scalar_type())));
        }
        tensor_value::shape_type shape;
        shape.reserve(static_cast<std::size_t>(tensor.dim()));
        for (const std::int64_t size : tensor.sizes()) {
            shape.push_back(static_cast<std::size_t>(size));
        }
        auto plan = hook_->plan_save(name, *type, shape, collections);
        if (!plan) {
            return std::nullopt;
        }
        return device_item{std::string(name), tensor, *type, std::move(shape), std::move(*plan)};
    }

    /// Launches the device work of `items`, one batch per device, and hands each to the hook
    /// as a deferred save.
    void launch(std::vector<device_item>& items) {
        while (!items.empty()) {
            const c10::Device device = items.front().tensor.device();
            std::vector<device_item> group;
            std::vector<device_item> rest;
            for (device_item& item : items) {
                (item.tensor.device() == device ? group : rest).push_back(std::move(item));
            }
            if (device.is_cuda() && use_cuda_) {
                launch_cuda(device, group);
            } else {
                launch_on(device, group);
            }
            items = std::move(rest);
        }
    }

    /// Raw values not saved because host memory was full under the drop policy.
    [[nodiscard]] std::uint64_t dropped() const noexcept {
#if TDBG_DETAIL_TORCH_FUSED
        if (cuda_saver_) {
            return dropped_ + cuda_saver_->dropped();
        }
#endif
        return dropped_;
    }
    /// Host memory that copies in flight hold now.
    [[nodiscard]] std::size_t pinned_bytes_in_use() const {
#if TDBG_DETAIL_TORCH_FUSED
        if (cuda_saver_) {
            return buffers_->lent() + cuda_saver_->pinned_bytes_in_use();
        }
#endif
        return buffers_->lent();
    }

private:
    // What a batch's device work leaves in host memory, read once its event has completed.
    struct batch_result {
        torch::Tensor host; // the reductions, statistics and histogram counts of every tensor
        [[nodiscard]] const std::byte* at(std::size_t offset) const {
            return static_cast<const std::byte*>(host.data_ptr()) + offset;
        }
    };

    // Where a tensor's values lie in a batch_result.
    struct item_layout {
        std::vector<std::pair<std::size_t, std::size_t>> reductions; // (plan index, byte offset) of a torch result
        std::vector<dtype> reduction_types; // their dtypes, in the same order
        std::optional<std::size_t> histogram;
        std::shared_ptr<torch::Tensor> raw; // host memory of the raw value, from the pool
    };

    // A device error while launching (out of memory, say) is a write error like one the writer
    // meets later: every tensor of the batch gets it as its deferred values, so that the hook's
    // policy applies (hook_options::on_write_error) and training is not taken down.
    void launch_on(const c10::Device& device, std::vector<device_item>& items) {
        std::size_t handed = 0; // items given to the hook
        try {
            launch_now(device, items, handed);
        } catch (const c10::Error& e) {
            fail(items, handed, e.what_without_backtrace());
        }
    }

    // Hands items [from, end) to the hook with deferred values that report `failure`.
    void fail(const std::vector<device_item>& items, std::size_t from, const std::string& failure) {
        for (; from < items.size(); ++from) {
            const device_item& item = items[from];
            hook_->save_deferred(item.name, item.type, item.shape, item.plan, failed_source(failure));
        }
    }

#if TDBG_DETAIL_TORCH_FUSED
    // CUDA tensors through tdbg::cuda::device_saver, on torch's current stream of `device`:
    // the fused kernel's reductions, histograms binned on the device, raw values through its
    // pool of page-locked memory; integer and boolean tensors reduced on the host from a copy.
    void launch_cuda(const c10::Device& device, std::vector<device_item>& items) {
        const torch::NoGradGuard no_grad;
        const c10::DeviceGuard guard(device);
        std::vector<torch::Tensor> dense_tensors; // alive until the work is enqueued
        dense_tensors.reserve(items.size());
        try {
            for (const device_item& item : items) {
                dense_tensors.push_back(dense(item.tensor).contiguous());
            }
        } catch (const c10::Error& e) {
            fail(items, 0, e.what_without_backtrace());
            return;
        }
        if (!cuda_saver_) {
            cuda::device_saver_options options;
            options.pinned_pool_bytes = pinned_pool_bytes_;
            options.convention = reduction_convention::pytorch;
            cuda_saver_.emplace(*hook_, cuda::runtime_ops(), options);
        }
        for (std::size_t i = 0; i < items.size(); ++i) {
            device_item& item = items[i];
            const cuda::device_tensor where{dense_tensors[i].data_ptr(), item.type,
                                            static_cast<std::size_t>(dense_tensors[i].numel())};
            cuda_saver_->add_planned(std::move(item.name), where, std::move(item.shape), std::move(item.plan));
        }
        cuda_saver_->launch(c10::cuda::getCurrentCUDAStream(device.index()).stream());
    }
#else
    void launch_cuda(const c10::Device& device, std::vector<device_item>& items) { launch_on(device, items); }
#endif

    void launch_now(const c10::Device& device, std::vector<device_item>& items, std::size_t& handed) {
        const torch::NoGradGuard no_grad;
        const c10::DeviceGuard guard(device);
        const bool pinned = device.is_cuda();
        std::vector<torch::Tensor> pieces;
        std::size_t offset = 0;
        const auto add_piece = [&](torch::Tensor bytes) {
            const std::size_t at = offset;
            offset += static_cast<std::size_t>(bytes.numel());
            pieces.push_back(std::move(bytes));
            return at;
        };
        std::vector<item_layout> layouts(items.size());
        for (std::size_t i = 0; i < items.size(); ++i) {
            device_item& item = items[i];
            item.tensor = dense(item.tensor);
            if (item.plan.reductions.empty()) {
                continue;
            }
            const std::vector<torch::Tensor> results =
                detail::torch_reductions(item.tensor, item.type, item.plan.reductions);
            for (std::size_t k = 0; k < results.size(); ++k) {
                if (results[k].defined()) {
                    layouts[i].reductions.emplace_back(k, add_piece(detail::as_bytes(results[k])));
                    layouts[i].reduction_types.push_back(*dtype_from_torch(results[k].scalar_type()));
                }
            }
        }
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (items[i].plan.histogram) {
                const torch::Tensor counts = detail::torch_histogram(items[i].tensor, edges_on(device));
                layouts[i].histogram = add_piece(counts.view(torch::kByte));
            }
        }
        auto result = std::make_shared<batch_result>();
        if (!pieces.empty()) {
            const torch::Tensor bytes = pieces.size() == 1 ? pieces.front() : torch::cat(pieces);
            result->host =
                torch::empty({bytes.numel()}, torch::TensorOptions().dtype(torch::kByte).pinned_memory(pinned));
            result->host.copy_(bytes, /*non_blocking=*/true);
        }
        // Tensors go to the hook behind an event recorded after their copies. The pool's memory
        // comes back only from tensors the hook has, so before waiting for it those launched so
        // far go to the hook first, behind an event of their own.
        const auto hand_over = [&](std::size_t end) {
            auto done = std::make_shared<once_waiter>([event = device_event::record(device)] { event.wait(); });
            for (; handed < end; ++handed) {
                device_item& item = items[handed];
                hook_->save_deferred(item.name, item.type, item.shape, item.plan,
                                     deliver(result, done, item.type, item.shape, item.plan, std::move(layouts[handed]),
                                             static_cast<std::size_t>(item.tensor.numel())));
            }
        };
        const bool block = hook_->options().on_full_queue == full_queue_policy::block;
        for (std::size_t i = 0; i < items.size(); ++i) {
            const device_item& item = items[i];
            if (!item.plan.raw) {
                continue;
            }
            const std::size_t nbytes = static_cast<std::size_t>(item.tensor.numel()) * dtype_size(item.type);
            layouts[i].raw = buffers_->take(nbytes, pinned, /*wait=*/false);
            if (!layouts[i].raw && block) {
                hand_over(i);
                layouts[i].raw = buffers_->take(nbytes, pinned, /*wait=*/true);
            }
            if (!layouts[i].raw) {
                ++dropped_;
                continue;
            }
            layouts[i]
                .raw->view(item.tensor.scalar_type())
                .view(item.tensor.sizes())
                .copy_(item.tensor, /*non_blocking=*/true);
        }
        hand_over(items.size());
    }

    // The function a writer thread runs to read a tensor's values from the batch's host memory.
    static deferred_source deliver(std::shared_ptr<const batch_result> result, std::shared_ptr<once_waiter> done,
                                   dtype type, tensor_value::shape_type shape, save_plan plan, item_layout layout,
                                   std::size_t count) {
        return [result = std::move(result), done = std::move(done), type, shape = std::move(shape),
                plan = std::move(plan), layout = std::move(layout), count]() mutable {
            done->wait();
            deferred_values values;
            values.reductions.resize(plan.reductions.size());
            for (std::size_t j = 0; j < layout.reductions.size(); ++j) {
                const auto [k, at] = layout.reductions[j];
                const dtype rtype = layout.reduction_types[j];
                values.reductions[k] = tensor_value::from_bytes(
                    rtype, {}, std::string_view(reinterpret_cast<const char*>(result->at(at)), dtype_size(rtype)));
            }
            if (layout.histogram) {
                const std::size_t buckets = histogram_edges().size() - 1;
                std::vector<double> data(buckets + 4);
                std::memcpy(data.data(), result->at(*layout.histogram), data.size() * sizeof(double));
                values.histogram = detail::read_histogram(data.data(), buckets, count);
            }
            if (layout.raw) {
                const torch::Tensor& host = *layout.raw;
                const std::string_view bytes(static_cast<const char*>(host.data_ptr()),
                                             static_cast<std::size_t>(host.numel()));
                values.raw = tensor_value::view_bytes(type, shape, bytes,
                                                      std::shared_ptr<const void>(layout.raw, host.data_ptr()));
            }
            return values;
        };
    }

    // The dense, resolved tensor whose bytes are read: lazy conjugate and negative views and
    // sparse layouts materialised on the tensor's device.
    static torch::Tensor dense(const torch::Tensor& tensor) {
        torch::Tensor out = tensor;
        if (out.layout() != c10::kStrided) {
            out = out.to_dense();
        }
        return out.resolve_conj().resolve_neg();
    }

    // The histogram edges on `device`, copied there once.
    const torch::Tensor& edges_on(const c10::Device& device) {
        for (const auto& [where, edges] : edges_) {
            if (where == device) {
                return edges;
            }
        }
        const std::vector<double>& edges = histogram_edges();
        torch::Tensor host =
            torch::from_blob(const_cast<double*>(edges.data()), {static_cast<std::int64_t>(edges.size())},
                             torch::TensorOptions().dtype(torch::kDouble));
        edges_.emplace_back(device, host.to(device, /*non_blocking=*/false, /*copy=*/true));
        return edges_.back().second;
    }

    hook* hook_; // a pointer, not a reference: keeps the owner movable
    std::size_t pinned_pool_bytes_;
    bool use_cuda_;
    std::shared_ptr<host_buffers> buffers_ = std::make_shared<host_buffers>(pinned_pool_bytes_);
    std::vector<std::pair<c10::Device, torch::Tensor>> edges_; // histogram edges per device
#if TDBG_DETAIL_TORCH_FUSED
    std::optional<cuda::device_saver> cuda_saver_; // made at the first CUDA batch
#endif
    std::uint64_t dropped_ = 0;
};

} // namespace tdbg::detail
