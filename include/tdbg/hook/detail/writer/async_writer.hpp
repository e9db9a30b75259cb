#pragma once
/// \file
/// The hook's writer: background threads that encode and write what the
/// training thread queues, so that training never waits on the disk while the
/// queue has room. Behind the hook (hook/hook.hpp), which users configure through
/// hook_options (max_queue_bytes, on_full_queue, writer_threads, writer_nice, writer_doze).
///
/// - The queue (write_queue.hpp) is bounded by the bytes of tensor data it holds.
///   When it is full, `push` blocks (full_queue_policy::block) or drops the tensor
///   and counts it (full_queue_policy::drop); step ends and files are never dropped.
/// - Data threads (write_lane.hpp) encode records and append them to event files
///   (step_file.hpp) and build TensorBoard files (tensorboard_writer.hpp). Steps go
///   to them in turn (step 0 to the first, step 1 to the second, ...), so that the
///   kernel's copy of one step into the page cache overlaps with the next.
/// - A publisher thread (publisher.hpp) opens each step's event file ahead, commits
///   finished files and writes index, TensorBoard and other files, in the order the
///   training thread queued them: whatever the data threads' pace, index files
///   appear in step order, the collections file before the first of them and
///   the end marker after the last.
/// - Per step and worker: one event file (events/), committed by its data
///   thread when the step ends, and then its index file (index/), written by
///   the publisher: an index never names records that are not complete on
///   storage, so a crash leaves every published step readable.
/// - Open files are bounded by the threads, not by the queue: one event file
///   per data thread, at most one more per data thread opened ahead, and the
///   publisher's one.
/// - The first error (a full disk, too many open files, a storage outage) stops
///   the writer (write_failure, below): what was queued before the item it hit is
///   still published, nothing after it is (no index, no collections file, no end
///   marker), and an event file committed for a step whose index will not come is
///   removed (storage remove capability). The published steps thus stay a prefix of
///   the run, and the run stays readable. The error is kept for take_error().
/// - The threads step back for the training thread (writer_nice) and measure the CPU they
///   used (lower_thread_priority, thread_cpu_now, below).
///
/// The publisher and the lanes take the writer's write_failure by reference: their definitions
/// (hook/detail/writer/impl/publisher.ipp, write_lane.ipp) use it whole, so this file includes them when
/// header-only, after it is defined.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/hook/detail/writer/publisher.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"
#include "tdbg/hook/detail/writer/write_lane.hpp"
#include "tdbg/hook/detail/writer/write_queue.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// The writer's first error, shared by its threads, and which queued items it stops: everything
/// queued from the item it hit on is given up, nothing before it.
class write_failure {
public:
    /// Keeps the first error; from the item at `seq` on, nothing is published.
    TDBG_DECL void record(std::exception_ptr e, std::uint64_t seq);

    /// True once an error has stopped the writer.
    [[nodiscard]] bool stopped() const noexcept { return seq_.load(std::memory_order_acquire) != no_item_seq; }

    /// True when the item at `seq` (or the job queued in its place) comes after the error.
    [[nodiscard]] bool given_up(std::uint64_t seq) const noexcept {
        const std::uint64_t failed_at = seq_.load(std::memory_order_acquire);
        return failed_at != no_item_seq && seq >= failed_at;
    }

    /// The error that stopped the writer, the first time it is asked for; nullptr otherwise.
    [[nodiscard]] TDBG_DECL std::exception_ptr take();

    /// True while an error waits to be taken.
    [[nodiscard]] bool waiting() const noexcept { return failed_.load(std::memory_order_acquire); }

private:
    std::mutex mutex_;
    std::exception_ptr error_;                     // the first error, until taken
    std::atomic<bool> failed_{false};              // error_ is waiting to be taken
    std::atomic<std::uint64_t> seq_{no_item_seq}; // the item the first error hit; no_item_seq: none
};

/// Adds `nice` to the calling thread's nice value (Linux, where it is per thread; at most 19).
/// Nothing elsewhere, for `nice` <= 0, or when the system refuses.
TDBG_DECL void lower_thread_priority(int nice) noexcept;

/// CPU seconds the calling thread has used.
[[nodiscard]] TDBG_DECL double thread_cpu_now() noexcept;

/// The background writer of one hook (one worker of a run): its queue, data threads and publisher.
class async_writer {
public:
    using item = write_item;

    /// Starts the threads.
    TDBG_DECL async_writer(any_storage storage, const writer_options& options);
    async_writer(const async_writer&) = delete;
    async_writer& operator=(const async_writer&) = delete;
    async_writer(async_writer&&) = delete;
    async_writer& operator=(async_writer&&) = delete;
    /// Stops the threads after writing what is queued; errors are swallowed (call close() to see them).
    TDBG_DECL ~async_writer();

    /// Queues `it`. Returns false when it was not queued: a tensor dropped (drop
    /// policy, queue full), or anything once the writer has stopped on an error.
    TDBG_DECL bool push(item it);

    /// Says that `step` will have an event file: the publisher thread opens it
    /// ahead, while the data threads may still write earlier steps.
    TDBG_DECL void prepare_step(std::int64_t step);

    /// Waits until everything queued so far is written and its files are
    /// published (or, after an error, given up).
    TDBG_DECL void flush();

    /// Writes what is queued and stops the threads. Idempotent.
    TDBG_DECL void close();

    /// Stops the writer on an error met outside it (the hook's start failing on storage): nothing
    /// queued is published, and take_error() gives `e` as it gives the writer's own errors.
    TDBG_DECL void fail(std::exception_ptr e);

    /// True once an error has stopped the writer.
    [[nodiscard]] bool stopped() const noexcept { return failure_.stopped(); }

    /// The error that stopped the writer, the first time it is asked for; nullptr otherwise.
    [[nodiscard]] TDBG_DECL std::exception_ptr take_error();
    /// True while an error waits for take_error().
    [[nodiscard]] bool error_waiting() const noexcept { return failure_.waiting(); }

    /// Tensors dropped because the queue was full (drop policy).
    [[nodiscard]] TDBG_DECL std::uint64_t dropped() const;
    /// How many pushes had to wait for room (block policy).
    [[nodiscard]] TDBG_DECL std::uint64_t blocked() const;
    /// CPU seconds the data threads (together) and the publisher thread used, once they have stopped (after close()).
    [[nodiscard]] TDBG_DECL std::pair<double, double> thread_cpu_seconds() const noexcept;
    /// Bytes of tensor data waiting in the queue.
    [[nodiscard]] TDBG_DECL std::size_t queued_bytes() const;

private:
    TDBG_DECL void stop_lanes();

    write_failure failure_;
    write_queue queue_;
    publisher publisher_;
    std::vector<std::unique_ptr<write_lane>> lanes_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/publisher.ipp"
#include "tdbg/hook/detail/writer/impl/write_lane.ipp"
#include "tdbg/hook/detail/writer/impl/async_writer.ipp"
#endif
