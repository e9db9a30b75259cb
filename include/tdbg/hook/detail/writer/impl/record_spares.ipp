#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/record_spares.hpp.

#include <mutex>
#include <optional>
#include <utility>

#include "tdbg/hook/detail/writer/record_spares.hpp"

namespace tdbg::detail {

TDBG_DECL void record_spares::give_back(write_items::records&& block) {
    block.bytes.clear();
    block.names.clear();
    block.entries.clear();
    block.spares.reset();
    const std::size_t bytes = footprint(block);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (kept_bytes_ + bytes <= max_kept_bytes) {
        kept_bytes_ += bytes;
        kept_.push_back(std::move(block));
    }
}

TDBG_DECL std::optional<write_items::records> record_spares::take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.empty()) {
        return std::nullopt;
    }
    write_items::records block = std::move(kept_.back());
    kept_.pop_back();
    kept_bytes_ -= footprint(block);
    return block;
}

} // namespace tdbg::detail
