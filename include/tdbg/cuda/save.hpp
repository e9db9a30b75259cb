#pragma once
/// \file
/// tdbg::cuda::device_saver: saves tensors that live in device memory through a tdbg hook,
/// for any CUDA program (torch_hook is one user; a trainer with its own buffers is another).
/// Device pointers, dtypes, shapes and a stream go in; the hook receives deferred saves
/// (hook/deferred.hpp) whose values a writer thread reads once the device is done:
///
///     tdbg::cuda::device_saver saver(hook);                       // links tdbg::cuda
///     hook.begin_step();
///     saver.add("dense1.weight", d_w1, tdbg::dtype::float32, {512, 256});
///     saver.add("gradient/dense1.weight", d_g1, tdbg::dtype::float32, {512, 256});
///     saver.launch(stream);                                       // never waits for the device
///
/// One launch handles the tensors added since the last:
///   1. the statistics of every floating tensor by the fused kernel (one launch), and the
///      histogram counts of those the plan bins, into one scratch buffer on the device;
///   2. that buffer copied to page-locked host memory, then each raw value (from a bounded
///      pool: device_saver_options::pinned_pool_bytes), all with copies that do not block;
///   3. an event recorded on the stream, and each tensor handed to the hook as a deferred save
///      that waits for the event, then finishes the reductions (tdbg::cuda::finish) and the
///      histogram (bucket counts from the device, min, max and sums from the statistics).
/// Integer and boolean tensors have no kernel: their value is copied to the host and reduced
/// and binned there by the CPU path's code, on the writer thread.
///
/// The buffers must hold their values until the stream reaches the work (stream order): free
/// or overwrite them with work enqueued on the same stream, after launch(). When the pool is
/// full, the hook's full-queue policy applies to raw values: wait for a writer to return memory
/// (block), or drop the value (drop, counted by dropped()). A device error while launching is a
/// write error of every tensor of the batch (hook_options::on_write_error); training goes on.
/// Driven by one thread, like the hook.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/cuda/detail/pinned_pool.hpp"
#include "tdbg/cuda/device_ops.hpp"
#include "tdbg/cuda/reduce.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/deferred_sources.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"

namespace tdbg::cuda {

/// Settings of a device_saver.
struct device_saver_options {
    /// Page-locked host memory that raw values in flight may hold at once, in bytes.
    std::size_t pinned_pool_bytes = std::size_t{256} << 20U;
    /// How reductions are stored: numpy's (the hook's save_tensor, smdebug's core hook) or
    /// PyTorch's (0-d, torch's dtypes, unbiased std and variance; what torch_hook writes).
    reduction_convention convention = reduction_convention::numpy;
};

namespace detail {

/// The histogram of a tensor from the device's bucket counts and its statistics.
[[nodiscard]] inline histogram_counts histogram_from_stats(const std::uint64_t* counts, std::size_t buckets,
                                                           const tensor_stats& stats) {
    histogram_counts h;
    h.counts.assign(counts, counts + buckets);
    if (stats.count != 0) {
        const bool nan = stats.saw_nan();
        h.min = nan ? std::numeric_limits<double>::quiet_NaN() : stats.min;
        h.max = nan ? std::numeric_limits<double>::quiet_NaN() : stats.max;
    }
    h.sum = stats.sum;
    h.sum_squares = stats.sum_sq;
    h.num = static_cast<double>(stats.count);
    return h;
}

} // namespace detail

/// Saves tensors in device memory through a hook (see the file comment).
class device_saver {
public:
    /// Saves through `target` with the CUDA runtime's operations (runtime_ops).
    explicit device_saver(hook& target, device_saver_options options = {})
        : device_saver(target, runtime_ops(), options) {}
    /// Saves through `target` with `ops` (host_ops: no GPU needed).
    device_saver(hook& target, std::shared_ptr<device_ops> ops, device_saver_options options = {})
        : hook_(&target), ops_(std::move(ops)), options_(options),
          pool_(std::make_shared<detail::pinned_pool>(ops_, options.pinned_pool_bytes)) {}

    /// Plans `name`, `data` in device memory holding a tensor of `type` and `shape` (dense, in
    /// row-major order), at the hook's current step, as hook::save_tensor would save it, and
    /// queues it for the next launch() when the step saves it. Returns whether it was queued.
    /// tdbg::error for a null pointer with elements and for string tensors.
    bool add(std::string_view name, const void* data, dtype type, const std::vector<std::size_t>& shape,
             std::initializer_list<std::string_view> collections = {}) {
        std::size_t count = 1;
        for (const std::size_t size : shape) {
            count *= size;
        }
        if (type == dtype::string) {
            throw error(fmt::format("tdbg::cuda::device_saver: '{}': a device holds no string tensors", name));
        }
        if (data == nullptr && count != 0) {
            throw error(fmt::format("tdbg::cuda::device_saver: '{}': {} elements at a null pointer", name, count));
        }
        auto plan = hook_->plan_save(name, type, shape, collections);
        if (!plan) {
            return false;
        }
        add_planned(std::string(name), device_tensor{data, type, count}, shape, std::move(*plan));
        return true;
    }

    /// Queues a tensor already planned at this step (hook::plan_save): what torch_hook does.
    void add_planned(std::string name, device_tensor tensor, tensor_value::shape_type shape, save_plan plan) {
        queue_.push_back(item{std::move(name), tensor, std::move(shape), std::move(plan)});
    }

    /// Launches the queued tensors' work on `stream` and hands each to the hook (see the file
    /// comment). Never waits for the device, but for pool memory under the block policy.
    void launch(CUstream_st* stream) {
        std::vector<item> items = std::move(queue_);
        queue_.clear();
        if (items.empty()) {
            return;
        }
        std::size_t handed = 0;
        std::string failure;
        try {
            launch_batch(items, stream, handed);
            return;
        } catch (const std::exception& e) {
            failure = e.what();
        }
        for (; handed < items.size(); ++handed) {
            const item& it = items[handed];
            hook_->save_deferred(it.name, it.tensor.type, it.shape, it.plan, tdbg::detail::failed_source(failure));
        }
    }

    /// Tensors queued for the next launch().
    [[nodiscard]] std::size_t queued() const noexcept { return queue_.size(); }
    /// Raw values not saved because the pool was full under the drop policy.
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
    /// Page-locked bytes that raw values in flight hold now.
    [[nodiscard]] std::size_t pinned_bytes_in_use() const { return pool_->lent(); }
    [[nodiscard]] const device_saver_options& options() const noexcept { return options_; }

private:
    struct item {
        std::string name;
        device_tensor tensor;
        tensor_value::shape_type shape;
        save_plan plan;
    };

    // Where a tensor's results lie in the batch's host block, and its value's host copy.
    struct layout {
        std::optional<std::size_t> stats; // byte offset of its tensor_stats
        std::optional<std::size_t> counts; // byte offset of its histogram's bucket counts
        std::shared_ptr<void> value; // its host copy, from the pool
        bool value_needed = false; // copied (raw, or reduced on the host); dropped when null
    };

    // A tensor's floating values go through the kernels; others are copied and done on the host.
    static bool on_device(const item& it) noexcept { return reducible(it.tensor.type); }
    static bool host_work(const item& it) noexcept {
        return !on_device(it) && (!it.plan.reductions.empty() || it.plan.histogram);
    }

    void launch_batch(std::vector<item>& items, CUstream_st* stream, std::size_t& handed) {
        const std::size_t buckets = histogram_edges().size() - 1;
        std::vector<layout> layouts(items.size());
        std::vector<device_tensor> reduced;
        std::vector<std::size_t> binned;
        for (std::size_t i = 0; i < items.size(); ++i) {
            const item& it = items[i];
            if (on_device(it) && (!it.plan.reductions.empty() || it.plan.histogram)) {
                layouts[i].stats = reduced.size() * sizeof(tensor_stats);
                reduced.push_back(it.tensor);
                if (it.plan.histogram) {
                    binned.push_back(i);
                }
            }
            layouts[i].value_needed = it.plan.raw || host_work(it);
        }
        std::shared_ptr<void> results;
        const std::size_t stats_bytes = reduced.size() * sizeof(tensor_stats);
        const std::size_t bytes = stats_bytes + binned.size() * buckets * sizeof(std::uint64_t);
        if (bytes != 0) {
            results = pool_->take(bytes, /*bounded=*/false, /*wait=*/false);
            void* scratch = ops_->device_alloc(bytes, stream);
            // Freed in stream order after the copy, or when a later call throws (its own error
            // then says what went wrong; one of cudaFreeAsync after it would add nothing).
            const std::shared_ptr<void> release(scratch, [this, stream](void* p) {
                try {
                    ops_->device_free(p, stream);
                } catch (const std::exception&) {}
            });
            auto* base = static_cast<std::byte*>(scratch);
            ops_->reduce(reduced.data(), reduced.size(), reinterpret_cast<tensor_stats*>(base), stream);
            for (std::size_t j = 0; j < binned.size(); ++j) {
                const std::size_t at = stats_bytes + j * buckets * sizeof(std::uint64_t);
                layouts[binned[j]].counts = at;
                ops_->histogram(items[binned[j]].tensor, reinterpret_cast<std::uint64_t*>(base + at), stream);
            }
            ops_->copy_to_host(results.get(), scratch, bytes, stream);
        }
        // Tensors go to the hook behind an event recorded after their copies. The pool's memory
        // comes back only from tensors the hook has, so before waiting for it those launched so
        // far go to the hook first, behind an event of their own.
        const auto hand_over = [&](std::size_t end) {
            auto done = std::make_shared<tdbg::detail::once_waiter>(ops_->record_event(stream));
            for (; handed < end; ++handed) {
                const item& it = items[handed];
                hook_->save_deferred(it.name, it.tensor.type, it.shape, it.plan,
                                     deliver(results, done, it, std::move(layouts[handed]), options_.convention));
            }
        };
        const bool block = hook_->options().on_full_queue == full_queue_policy::block;
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (!layouts[i].value_needed) {
                continue;
            }
            const std::size_t nbytes = items[i].tensor.count * dtype_size(items[i].tensor.type);
            layouts[i].value = pool_->take(nbytes, /*bounded=*/true, /*wait=*/false);
            if (!layouts[i].value && block) {
                hand_over(i);
                layouts[i].value = pool_->take(nbytes, /*bounded=*/true, /*wait=*/true);
            }
            if (!layouts[i].value) {
                ++dropped_;
                continue;
            }
            ops_->copy_to_host(layouts[i].value.get(), items[i].tensor.data, nbytes, stream);
        }
        hand_over(items.size());
    }

    // The function a writer thread runs to read a tensor's values once the device is done.
    static deferred_source deliver(std::shared_ptr<void> results, std::shared_ptr<tdbg::detail::once_waiter> done,
                                   const item& it, layout where, reduction_convention convention) {
        return [results = std::move(results), done = std::move(done), type = it.tensor.type, shape = it.shape,
                count = it.tensor.count, plan = it.plan, where = std::move(where), convention]() {
            done->wait();
            deferred_values values;
            values.reductions.resize(plan.reductions.size());
            std::optional<tensor_value> value;
            if (where.value) {
                const std::string_view bytes(static_cast<const char*>(where.value.get()), count * dtype_size(type));
                value = tensor_value::view_bytes(type, shape, bytes, where.value);
            }
            const unsigned ddof = reduction_ddof(convention);
            std::vector<tensor_value> computed;
            tensor_stats stats{};
            if (where.stats) {
                std::memcpy(&stats, static_cast<const std::byte*>(results.get()) + *where.stats, sizeof stats);
                if (!plan.reductions.empty()) {
                    computed = finish(stats, type, plan.reductions, ddof);
                }
            } else if (value && !plan.reductions.empty()) {
                reduce::options opts;
                opts.ddof = ddof;
                computed = compute_reductions(*value, plan.reductions, opts);
            }
            for (std::size_t k = 0; k < computed.size(); ++k) {
                values.reductions[k] = stored_reduction(convention, type, plan.reductions[k], computed[k]);
            }
            if (where.counts) {
                const auto* counts = reinterpret_cast<const std::uint64_t*>(
                    static_cast<const std::byte*>(results.get()) + *where.counts);
                values.histogram = detail::histogram_from_stats(counts, histogram_edges().size() - 1, stats);
            } else if (value && plan.histogram) {
                if (auto doubles = tdbg::detail::histogram_values(*value)) {
                    values.histogram = tdbg::detail::count_histogram(*doubles);
                }
            }
            if (plan.raw) {
                values.raw = std::move(value);
            }
            return values;
        };
    }

    hook* hook_; // a pointer, not a reference: keeps the saver movable
    std::shared_ptr<device_ops> ops_;
    device_saver_options options_;
    std::shared_ptr<detail::pinned_pool> pool_;
    std::vector<item> queue_;
    std::uint64_t dropped_ = 0;
};

} // namespace tdbg::cuda
