#pragma once
/// \file
/// The training thread's side of small records (write_items::records): each record encoded and
/// framed where it is saved, into one block per step that reaches the writer in one hand-off.
/// A record costs its encoding and an index entry, nothing more: no event, no value and no
/// queue entry of its own to make on one thread and free on another. The bytes are those of the
/// one event encoder (format::detail::write_tensor_event) and framer (format/tfrecord.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/detail/flat_event.hpp"
#include "tdbg/format/event.hpp"
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

/// The small records of one step, gathered.
class record_block {
public:
    /// Values up to this size are encoded into the block (copied); larger ones go to the writer
    /// as they are, to be written from their own memory.
    static constexpr std::size_t max_value_bytes = 4096;
    /// A block this large is handed over before the step ends, so that the writer works meanwhile.
    static constexpr std::size_t hand_over_bytes = std::size_t{64} << 10U;

    /// True when no record waits.
    [[nodiscard]] bool empty() const noexcept { return block_.entries.empty(); }
    /// The bytes waiting.
    [[nodiscard]] std::size_t bytes() const noexcept { return block_.bytes.size(); }
    /// True when the waiting records are of another step, mode or mode step than these.
    [[nodiscard]] TDBG_DECL bool other_step(std::int64_t step, mode m, std::int64_t mode_step) const noexcept;
    /// True when the waiting records are of another step, mode or mode step than `ev`'s.
    [[nodiscard]] TDBG_DECL bool other_step(const format::tensor_event& ev) const noexcept;

    /// Appends the record of `ev` and its index entry (`ev`'s step, mode and mode step are the block's).
    TDBG_DECL void add(const format::tensor_event& ev);
    /// The same for an event given as its fields and bytes (a reduction's element).
    TDBG_DECL void add(const format::detail::flat_tensor_event& ev);

    /// The waiting records as one write item; the block is empty again. The item's memory comes
    /// back through record_spares once the writer has written it (write_lane gives it back).
    [[nodiscard]] TDBG_DECL write_items::records take();

private:
    // Appends one record, its payload written by `write_payload(std::string&)`, and its index entry.
    template <class WritePayload>
    void append(std::int64_t step, mode m, std::int64_t mode_step, std::string_view tag, WritePayload&& write_payload);

    std::shared_ptr<record_spares> spares_ = std::make_shared<record_spares>();
    write_items::records block_;
    struct sizes {
        std::size_t bytes = 0;
        std::size_t names = 0;
        std::size_t entries = 0;
    };
    sizes last_; // the last block's, reserved for the next
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/record_block.ipp"
#endif
