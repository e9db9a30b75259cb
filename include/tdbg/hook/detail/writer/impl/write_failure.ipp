#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/write_failure.hpp.

#include <algorithm>
#include <utility>

#include "tdbg/hook/detail/writer/write_failure.hpp"

namespace tdbg::detail {

TDBG_DECL void write_failure::record(std::exception_ptr e, std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopped()) {
        error_ = std::move(e);
        failed_.store(true, std::memory_order_release);
    }
    // Jobs sent while closing carry no_item_seq: an error there still stops the writer.
    const std::uint64_t at = std::min(seq, no_item_seq - 1);
    if (at < seq_.load(std::memory_order_relaxed)) {
        seq_.store(at, std::memory_order_release);
    }
}

TDBG_DECL std::exception_ptr write_failure::take() {
    if (!failed_.load(std::memory_order_acquire)) {
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    failed_.store(false, std::memory_order_release);
    return std::exchange(error_, nullptr);
}

} // namespace tdbg::detail
