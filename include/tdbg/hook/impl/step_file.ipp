#pragma once
/// \file
/// Definitions of tdbg/hook/detail/step_file.hpp.

#include <string_view>
#include <utility>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/crc32c.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/step_file.hpp"

namespace tdbg::detail {

TDBG_DECL step_file::step_file(std::int64_t step, std::string worker, std::size_t chunk_bytes)
    : step_(step), worker_(std::move(worker)), chunk_bytes_(chunk_bytes) {}

TDBG_DECL void step_file::open(any_storage::writer file) { file_.emplace(std::move(file)); }

TDBG_DECL void step_file::add_tensor(const format::tensor_event& event) {
    format::detail::encode_tensor_event_pieces(event, pieces_);
    const format::detail::event_pieces& payload = pieces_;
    const std::uint64_t start = written_ + buffer_.size();
    write_record(payload);
    if (!has_meta_ || index_.event_file_name.empty()) {
        index_.mode = event.mode.value_or(mode::global);
        index_.mode_step = event.mode_step.value_or(event.step);
        index_.event_file_name = format::event_file_key(step_, worker_);
        has_meta_ = true;
    }
    index_.tensor_payload.push_back(format::tensor_location{event.tag, start, payload.size() + format::record_overhead});
}

TDBG_DECL void step_file::add_shape(write_items::shape& shape) {
    if (!has_meta_) {
        index_.mode = shape.mode;
        index_.mode_step = shape.mode_step;
        has_meta_ = true;
    }
    index_.shape_payload.push_back(std::move(shape.entry));
}

TDBG_DECL std::optional<std::string> step_file::commit() {
    if (!file_) {
        return std::nullopt;
    }
    drain();
    file_->commit();
    return format::event_file_key(step_, worker_);
}

TDBG_DECL std::optional<format::index_file> step_file::take_index() {
    if (index_.tensor_payload.empty() && index_.shape_payload.empty()) {
        return std::nullopt;
    }
    return std::move(index_);
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
