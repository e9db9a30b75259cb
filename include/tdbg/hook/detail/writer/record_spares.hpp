#pragma once
/// \file
/// The memory of the training thread's blocks of small records (record_block.hpp), handed back
/// by the data threads once written (write_lane.hpp), for the next blocks.

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"

namespace tdbg::detail {

/// The memory of blocks the writer has written, kept for the training thread's next blocks: a
/// step's block then costs neither an allocation nor a page fault on either thread (a fresh
/// block of tens of KiB, freed on another thread, faults its pages in again every step).
/// Shared by the training thread and the writer's data threads.
class record_spares {
public:
    /// The memory kept at the most: enough for the steps that a writer which fell behind on a
    /// busy machine writes in one go (a block holds at most about 64 KiB).
    static constexpr std::size_t max_kept_bytes = std::size_t{8} << 20U;

    /// Keeps `block`'s memory (emptied) for a later take(), or frees it when enough are kept.
    TDBG_DECL void give_back(write_items::records&& block);
    /// An empty block whose memory was kept, if any.
    [[nodiscard]] TDBG_DECL std::optional<write_items::records> take();

private:
    // The memory `block` holds.
    static std::size_t footprint(const write_items::records& block) noexcept {
        return block.bytes.capacity() + block.names.capacity() +
               block.entries.capacity() * sizeof(write_items::records::entry);
    }

    std::mutex mutex_;
    std::vector<write_items::records> kept_;
    std::size_t kept_bytes_ = 0;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/record_spares.ipp"
#endif
