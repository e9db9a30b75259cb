#pragma once
/// \file
/// The training thread's side of a step's records (step_records): a save's records queued in
/// smdebug's order, and the small ones (write_items::records) each encoded and framed where it is
/// saved, into one block per step that reaches the writer in one hand-off (record_block). A small
/// record costs its encoding and an index entry, nothing more: no event, no value and no queue
/// entry of its own to make on one thread and free on another. The bytes are those of the one
/// event encoder (format::detail::write_tensor_event) and framer (format/tfrecord.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/detail/flat_event.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"
#include "tdbg/hook/detail/save_planning.hpp"
#include "tdbg/hook/detail/step_clock.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"
#include "tdbg/hook/detail/writer/buffer_pool.hpp"
#include "tdbg/hook/detail/writer/record_spares.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg::detail {

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

/// The records of the steps of one hook, on the training thread, on their way to its writer: the
/// one place a save's records are queued (emit), small ones encoded at once into the step's
/// record_block, larger and deferred ones as items of their own after the block (the event file
/// keeps the order of the saves), shapes and TensorBoard items beside them. The first record of
/// a step lets the writer open the step's event file ahead, while it may still write the previous step.
class step_records {
public:
    /// The values a save's records take: at hand (hook_engine::save_prepared) or deferred (save_deferred).
    struct save_values {
        const tensor_value* value = nullptr; // at hand: the tensor, possibly borrowed
        // At hand: one per plan reduction (saved_reductions'), stored as `reduction_rank` says.
        const std::vector<std::optional<reduction_value>>* reductions = nullptr;
        std::size_t reduction_rank = 1;
        std::shared_ptr<deferred_cell> cell; // deferred: where the values arrive
    };

    /// Records of the steps `clock` counts, queued on `writer`; raw copies are made in recycled
    /// buffers of up to `max_pooled_bytes` in all (buffer_pool).
    TDBG_DECL step_records(async_writer& writer, const step_clock& clock, std::size_t max_pooled_bytes);

    /// Queues a save's records as `decision` (decide_save) says, in smdebug's order
    /// (_write_for_tensor): its shape, reductions, histogram, raw value and scalar, at `wall_time`.
    TDBG_DECL void emit(std::string_view name, const save_decision& decision, dtype type,
                        const tensor_value::shape_type& shape, const save_values& values, double wall_time);

    /// Queues the record of `value` named `tag`: a small value is encoded into the step's block at
    /// once (so `value` may borrow the caller's memory), a larger one goes as an item of its own
    /// (and must own its memory).
    TDBG_DECL void queue_record(std::string_view tag, tensor_value value, double wall_time);

    /// Queues an item beside the event file's records (shapes, TensorBoard).
    TDBG_DECL void push_item(write_item item);

    /// Hands the step's block of small records to the writer, when it holds any.
    TDBG_DECL void hand_over_block();

    /// A step begins: it has queued nothing yet.
    void begin_step() noexcept { step_wrote_ = false; }
    /// True when the current step queued a record or a shape.
    [[nodiscard]] bool step_wrote() const noexcept { return step_wrote_; }

private:
    // The tensor's shape in the step's index (ReductionConfig save_shape).
    TDBG_DECL void push_shape(std::string_view tensor_name, const tensor_value::shape_type& shape);

    [[nodiscard]] TDBG_DECL format::tensor_event make_event(std::string tag, tensor_value value,
                                                          double wall_time) const;

    // The first record of a step tells the writer to open the step's event file ahead.
    TDBG_DECL void open_step_file();

    // Queues the record of a reduction's element named `tag`, of `rank` 0 or 1 (shape (1,)),
    // encoded into the step's block.
    TDBG_DECL void queue_reduction(std::string_view tag, const reduction_value& value, std::size_t rank,
                                   double wall_time);

    // Encodes `ev` (a format::tensor_event or a format::detail::flat_tensor_event) into the step's
    // block, handing over the block first when it holds another step's records, and after when
    // it has grown to record_block::hand_over_bytes.
    template <class Event>
    void add_to_block(const Event& ev);

    // Queues one record as an item of its own (a large or deferred value), after the block.
    TDBG_DECL void push_record(format::tensor_event ev,
                               std::optional<write_items::deferred_ref> deferred = std::nullopt);

    async_writer& writer_;
    const step_clock& clock_;
    std::shared_ptr<buffer_pool> pool_;
    bool step_wrote_ = false;         // the current step queued a record or a shape
    std::int64_t prepared_step_ = -1; // the last step whose event file the writer was told to open
    record_block block_;               // the step's small records, encoded as they are saved
    format::tensor_event block_event_; // the record being encoded into block_, its memory reused
    std::string reduction_name_;       // the reduction being queued's name, its memory reused
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/record_block.ipp"
#endif
