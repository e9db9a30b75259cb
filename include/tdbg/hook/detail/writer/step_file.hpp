#pragma once
/// \file
/// One step's event file and its index, as a data thread of the hook's writer
/// (hook/detail/writer/async_writer.hpp) builds them: TFRecord records with smdebug's constant footer,
/// small pieces gathered into chunks, tensor contents appended straight from their memory.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tdbg/config.hpp"
#include "tdbg/format/detail/event_pieces.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// A step's event file (events/) of one worker while it is written, and its index (index/).
class step_file {
public:
    /// Step `step` of `worker`; `chunk_bytes` of small pieces are gathered before one append.
    TDBG_DECL step_file(std::int64_t step, std::string worker, std::size_t chunk_bytes);

    /// Starts step `step` afresh (not open, nothing named), keeping the memory of the step before:
    /// a lane's next step costs no allocations.
    TDBG_DECL void restart(std::int64_t step);

    /// The step.
    [[nodiscard]] std::int64_t step() const noexcept { return step_; }

    /// True when the file has been given its storage writer.
    [[nodiscard]] bool is_open() const noexcept { return file_.has_value(); }
    /// Gives the file its storage writer (before the first record).
    TDBG_DECL void open(any_storage::writer file);

    /// True once marked failed: the file is discarded and no index names it.
    [[nodiscard]] bool failed() const noexcept { return failed_; }
    /// Marks the file failed.
    void fail() noexcept { failed_ = true; }

    /// Appends the record of `event` (the file is open) and names it in the index.
    TDBG_DECL void add_tensor(const format::tensor_event& event);
    /// Appends records encoded elsewhere (the file is open) and names them in the index.
    TDBG_DECL void add_records(write_items::records& records);
    /// Names a shape in the index.
    TDBG_DECL void add_shape(write_items::shape& shape);

    /// Writes what is gathered and commits the event file; returns its key, nullopt when it was
    /// never opened. On failure the file is discarded and the error propagates.
    TDBG_DECL std::optional<std::string> commit();
    /// The index file's JSON, when it names anything.
    TDBG_DECL std::optional<std::string> take_index();

private:
    // Appends one record with smdebug's constant footer, framed by format::frame_record.
    TDBG_DECL void write_record(const format::detail::event_pieces& payload);
    // Appends what is gathered.
    TDBG_DECL void drain();
    // Sets the index's meta at the first record.
    TDBG_DECL void name_records(mode m, std::int64_t mode_step);

    std::int64_t step_;
    std::string worker_;
    std::size_t chunk_bytes_;
    std::optional<any_storage::writer> file_;
    format::detail::event_pieces pieces_; // the record being written, its memory reused
    std::string buffer_;
    std::uint64_t written_ = 0;
    format::index_writer index_;
    bool has_meta_ = false;
    bool failed_ = false;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/step_file.ipp"
#endif
