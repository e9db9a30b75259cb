#pragma once
/// \file
/// What the training thread hands to the hook's writer (hook/detail/writer/async_writer.hpp), and the
/// writer's settings.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"
#include "tdbg/hook/options.hpp"

namespace tdbg::detail {

class record_spares;

/// What the training thread hands to the writer.
namespace write_items {
/// Where a record's value comes from when it arrives later (hook/deferred.hpp): one of the
/// values of a deferred save, which the data thread waits for before it encodes the record.
struct deferred_ref {
    /// `slot` of a raw value.
    static constexpr std::size_t raw = static_cast<std::size_t>(-1);

    std::shared_ptr<detail::deferred_cell> cell;
    /// The reduction's index in the save's plan, or `raw`.
    std::size_t slot = raw;
    /// The bytes the value will hold (they count against the queue's bound).
    std::size_t bytes = 0;
};
/// One tensor record of a step's event file; with `deferred`, its value arrives later.
struct tensor {
    format::tensor_event event;
    std::optional<deferred_ref> deferred;
};
/// Tensor records of one step encoded on the training thread (record_block.hpp): whole framed
/// records, appended to the step's event file as they are, and their index entries, whose
/// `start_idx` counts from the block's first byte. Small values travel this way: one hand-off
/// for many records, no object per record.
struct records {
    /// A record's index entry: its name in `names`, its place in `bytes`.
    struct entry {
        std::size_t name_at = 0;
        std::size_t name_size = 0;
        std::uint64_t start = 0;
        std::uint64_t length = 0;
    };
    std::int64_t step = 0;
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t mode_step = 0;
    std::string bytes;
    std::string names; // the records' names, one after the other
    std::vector<entry> entries;
    /// Where the block's memory goes once the writer is done with it, for the training thread to
    /// fill again (record_spares); empty: it is freed.
    std::shared_ptr<record_spares> spares;
};
/// A shape saved in the step's index file (ReductionConfig save_shape).
struct shape {
    std::int64_t step = 0;
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t mode_step = 0;
    format::shape_entry entry;
};
/// The end of a step: publish its event file, then its index file and TensorBoard files.
struct step_end {
    std::int64_t step = 0;
};
/// A TensorBoard scalar.
struct tb_scalar {
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t step = 0;
    double wall_time = 0;
    std::string tag;
    float value = 0;
    /// When set, the value is the raw value of this deferred save, once it arrives.
    std::shared_ptr<detail::deferred_cell> deferred;
};
/// A TensorBoard histogram of `values` (bucketed on a data thread).
struct tb_histogram {
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t step = 0;
    double wall_time = 0;
    std::string tag;
    tensor_value values;
    /// When set, the histogram is this deferred save's, once it arrives (`values` is empty).
    std::shared_ptr<detail::deferred_cell> deferred;
};
/// A whole object written atomically (collections file, end marker).
struct object {
    std::string key;
    std::string bytes;
};
} // namespace write_items

/// Any item the writer takes.
using write_item = std::variant<write_items::tensor, write_items::records, write_items::shape, write_items::step_end,
                                write_items::tb_scalar, write_items::tb_histogram, write_items::object>;

/// The place of a queued item in the order of pushes that no item has: "none", "after the last".
inline constexpr std::uint64_t no_item_seq = std::numeric_limits<std::uint64_t>::max();

/// A queued item and its place in the order of pushes.
struct write_entry {
    write_item it;
    /// What it counts against the queue's bound.
    std::size_t cost = 0;
    std::uint64_t seq = 0;
};

/// Settings of the writer threads.
struct writer_options {
    std::string worker = "worker_0";
    std::size_t max_queue_bytes = std::size_t{64} << 20U;
    full_queue_policy on_full_queue = full_queue_policy::block;
    /// Writes one TensorBoard file (key, bytes); empty: TensorBoard items are ignored.
    std::function<void(const std::string&, const std::string&)> tensorboard_put;
    /// Threads writing event files, each taking whole steps in turn (0 counts as 1).
    std::size_t data_threads = 2;
    /// Event-file bytes gathered before one storage append.
    std::size_t chunk_bytes = std::size_t{1} << 20U;
    /// Queued tensor bytes that wake the writer before the step ends.
    std::size_t wake_bytes = std::size_t{256} << 10U;
    /// hook_options::writer_doze: how long a data thread that has just written a batch waits,
    /// woken by nothing but a flush, the close, wake_bytes or lent memory.
    std::chrono::microseconds doze{2000};
    /// Added to the writer threads' nice value (Linux: per thread), so that on a
    /// busy machine the training thread gets the CPU first; 0 leaves it alone.
    int nice = 10;
};

} // namespace tdbg::detail
