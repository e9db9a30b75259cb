#pragma once
/// \file
/// The first error that stops the hook's writer (hook/detail/writer/async_writer.hpp), and which queued
/// items it stops: everything queued from the item it hit on is given up, nothing before it.

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>

#include "tdbg/config.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"

namespace tdbg::detail {

/// The writer's first error, shared by its threads.
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

private:
    std::mutex mutex_;
    std::exception_ptr error_;                     // the first error, until taken
    std::atomic<bool> failed_{false};              // error_ is waiting to be taken
    std::atomic<std::uint64_t> seq_{no_item_seq}; // the item the first error hit; no_item_seq: none
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/write_failure.ipp"
#endif
