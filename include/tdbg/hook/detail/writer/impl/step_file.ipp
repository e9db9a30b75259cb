#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/step_file.hpp.

#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/crc32c.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/writer/step_file.hpp"

namespace tdbg::detail {

TDBG_DECL step_file::step_file(std::int64_t step, std::string worker, std::size_t chunk_bytes)
    : step_(step), worker_(std::move(worker)), chunk_bytes_(chunk_bytes) {}

TDBG_DECL void step_file::restart(std::int64_t step) {
    step_ = step;
    file_.reset();
    buffer_.clear();
    written_ = 0;
    index_.clear();
    has_meta_ = false;
    failed_ = false;
}

TDBG_DECL void step_file::open(any_storage::writer file) { file_.emplace(std::move(file)); }

TDBG_DECL void step_file::add_tensor(const format::tensor_event& event) {
    format::detail::encode_tensor_event_pieces(event, pieces_);
    const format::detail::event_pieces& payload = pieces_;
    const std::uint64_t start = written_ + buffer_.size();
    write_record(payload);
    name_records(event.mode.value_or(mode::global), event.mode_step.value_or(event.step));
    index_.add_tensor(event.tag, start, payload.size() + format::record_overhead);
}

TDBG_DECL void step_file::add_records(write_items::records& records) {
    const std::uint64_t start = written_ + buffer_.size();
    if (records.bytes.size() >= chunk_bytes_ / 4) {
        drain();
        file_->append(records.bytes);
        written_ += records.bytes.size();
    } else if (buffer_.empty()) {
        buffer_.swap(records.bytes); // a step's one block (the usual case) is written without a copy
    } else {
        buffer_.append(records.bytes);
        if (buffer_.size() >= chunk_bytes_) {
            drain();
        }
    }
    name_records(records.mode, records.mode_step);
    const std::string_view names = records.names;
    index_.reserve_tensors(records.entries.size(), names.size());
    for (const write_items::records::entry& e : records.entries) {
        index_.add_tensor(names.substr(e.name_at, e.name_size), start + e.start, e.length);
    }
}

// The index's meta of a step whose event file holds records: that of the first record (or shape).
TDBG_DECL void step_file::name_records(mode m, std::int64_t mode_step) {
    if (!has_meta_ || !index_.has_event_file_name()) {
        index_.set_meta(m, mode_step);
        index_.set_event_file_name(format::event_file_key(step_, worker_));
        has_meta_ = true;
    }
}

TDBG_DECL void step_file::add_shape(write_items::shape& shape) {
    if (!has_meta_) {
        index_.set_meta(shape.mode, shape.mode_step);
        has_meta_ = true;
    }
    index_.add_shape(shape.entry);
}

TDBG_DECL std::optional<std::string> step_file::commit() {
    if (!file_) {
        return std::nullopt;
    }
    drain();
    file_->commit();
    return format::event_file_key(step_, worker_);
}

TDBG_DECL std::optional<std::string> step_file::take_index() {
    if (index_.empty()) {
        return std::nullopt;
    }
    return index_.text();
}

// Small pieces gather in the chunk buffer; large ones (tensor contents) go to
// storage straight from the tensor's memory.
TDBG_DECL void step_file::write_record(const format::detail::event_pieces& payload) {
    struct chunk_sink {
        step_file* file;
        std::size_t direct_from; // pieces this large bypass the buffer
        void append(const char* p, std::size_t n) const {
            if (n >= direct_from) {
                file->drain();
                file->file_->append(std::string_view(p, n));
                file->written_ += n;
            } else {
                file->buffer_.append(p, n);
            }
        }
    } sink{this, chunk_bytes_ / 4};
    format::frame_record(
        sink, payload.size(),
        [&](const chunk_sink& to) { payload.for_each([&](std::string_view piece) { to.append(piece.data(), piece.size()); }); },
        format::smdebug_footer_crc);
    if (buffer_.size() >= chunk_bytes_) {
        drain();
    }
}

TDBG_DECL void step_file::drain() {
    if (!buffer_.empty()) {
        file_->append(buffer_);
        written_ += buffer_.size();
        buffer_.clear();
    }
}

} // namespace tdbg::detail
