#pragma once
/// \file
/// The hook writer's queue (hook/detail/writer/async_writer.hpp): what the training thread pushes, waiting
/// for the data threads. One queue per data thread (a lane), bounded together by the bytes of
/// tensor data they hold, with the policy for a full queue:
///
/// - When the queue is full, `push` blocks (full_queue_policy::block) or drops the tensor and
///   counts it (full_queue_policy::drop); step ends and files are never dropped.
/// - A step stays with one lane; the next step goes to the next lane.
/// - Small items wait for the step's end or for a batch worth writing, so that the training
///   thread does not pay a context switch for each. A lane that has just handled a batch dozes
///   (writer_options::doze) while steps end more often than a doze lasts: what is pushed
///   meanwhile waits for the doze to end without waking it, unless it holds wake_bytes or lent
///   memory, or a flush or the close comes. A doze that finds nothing ends the dozing until a
///   step ends within a doze's time of the lane's going to sleep (long steps then cost one
///   wake-up each, as without it).
/// - Every item has its place in the order of pushes (its seq); the queue tells which places
///   are all handled, so that what is published keeps that order.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"
#include "tdbg/hook/options.hpp"

namespace tdbg::detail {

/// The bounded queue between the training thread and the data threads.
class write_queue {
public:
    /// Queues for `lanes` data threads (at least 1), bounded and woken as `options` says.
    TDBG_DECL write_queue(std::size_t lanes, const writer_options& options);

    /// The number of lanes.
    [[nodiscard]] std::size_t lanes() const noexcept { return lanes_.size(); }

    /// Queues `it` on its step's lane. Returns false when a tensor was dropped (drop policy,
    /// queue full). Throws after close().
    TDBG_DECL bool push(write_item it);

    /// Waits for items queued on `lane` and moves them all into `batch` (empty), which the lane
    /// then holds: the training thread meets the lock once per batch, not once per item. Returns
    /// false, leaving `batch` empty, once the queue is closed and the lane's queue is empty.
    TDBG_DECL bool take(std::size_t lane, std::deque<write_entry>& batch);

    /// Says that `lane` handled `items` items costing `bytes`; `next` is the seq of the first
    /// item it still holds (no_item_seq: none).
    TDBG_DECL void done(std::size_t lane, std::size_t bytes, std::uint64_t items, std::uint64_t next);

    /// Wakes every lane and waits until every item pushed so far is handled.
    TDBG_DECL void wait_handled();

    /// Refuses further pushes and wakes every lane: each takes what is left, then take() is false.
    TDBG_DECL void close();

    /// Every item queued before this seq has been handled.
    [[nodiscard]] std::uint64_t handled() const noexcept { return handled_.load(std::memory_order_acquire); }

    /// Tensors dropped because the queue was full (drop policy).
    [[nodiscard]] TDBG_DECL std::uint64_t dropped() const;
    /// How many pushes had to wait for room (block policy).
    [[nodiscard]] TDBG_DECL std::uint64_t blocked() const;
    /// Bytes of tensor data waiting in the queue.
    [[nodiscard]] TDBG_DECL std::size_t queued_bytes() const;

private:
    // The items of one data thread (under mutex_).
    struct lane_queue {
        std::deque<write_entry> items;
        std::condition_variable work;
        std::uint64_t in_hand = no_item_seq; // the first item taken from `items` and not yet handled
        bool unwoken = false;                // holds items queued without waking its thread
        bool dozing = false;                 // its thread waits for the doze to end
        bool roused = false;                 // woken before the doze's end
        bool doze_next = true;               // steps end more often than the doze lasts
    };

    // Which lane the training thread's current step goes to.
    struct route_state {
        std::int64_t step = 0;
        std::size_t lane = 0;
        bool ended = false;
        bool wrote = false; // the step queued data to write
    };

    // What an item counts against the bound.
    TDBG_DECL static std::size_t cost_of(const write_item& it);
    // Data items (tensors, shapes, TensorBoard values) may wait in the queue; the rest wake the writer.
    TDBG_DECL static bool is_data(const write_item& it);
    // A deferred raw value holds host memory its producer may be waiting for.
    TDBG_DECL static bool holds_lent_memory(const write_item& it);
    // The step an item belongs to; none for whole objects.
    TDBG_DECL static std::optional<std::int64_t> step_of(const write_item& it);

    // Under mutex_:
    TDBG_DECL lane_queue& route(const write_item& it);
    TDBG_DECL void enqueue(lane_queue& q, write_item it, std::size_t cost);
    TDBG_DECL void wake_all();
    TDBG_DECL void update_handled();

    std::size_t max_bytes_;
    full_queue_policy on_full_;
    std::size_t wake_bytes_;
    std::chrono::microseconds doze_;

    mutable std::mutex mutex_;
    std::condition_variable room_;
    std::vector<std::unique_ptr<lane_queue>> lanes_;
    std::optional<route_state> route_;
    std::uint64_t next_seq_ = 0;
    std::size_t queued_bytes_ = 0;
    std::uint64_t pushed_ = 0;
    std::uint64_t processed_ = 0;
    std::uint64_t dropped_ = 0;
    std::uint64_t blocked_ = 0;
    bool closing_ = false;
    std::atomic<std::uint64_t> handled_{0};
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/write_queue.ipp"
#endif
