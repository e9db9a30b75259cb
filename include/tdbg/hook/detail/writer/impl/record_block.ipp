#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/record_block.hpp.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/detail/flat_event.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/writer/record_block.hpp"

namespace tdbg::detail {

template <class WritePayload>
void record_block::append(std::int64_t step, mode m, std::int64_t mode_step, std::string_view tag,
                          WritePayload&& write_payload) {
    if (empty()) {
        block_.step = step;
        block_.mode = m;
        block_.mode_step = mode_step;
        // The last block's sizes and a quarter more: blocks of a step vary a little, and memory
        // that came back from the writer (record_spares) then serves the next ones as it is.
        const auto room = [](std::size_t n) { return n + n / 4; };
        block_.bytes.reserve(room(last_.bytes));
        block_.names.reserve(room(last_.names));
        block_.entries.reserve(room(last_.entries));
    }
    const std::uint64_t start = block_.bytes.size();
    format::append_record_in_place(block_.bytes, std::forward<WritePayload>(write_payload), format::smdebug_footer_crc);
    block_.entries.push_back(
        write_items::records::entry{block_.names.size(), tag.size(), start, block_.bytes.size() - start});
    block_.names += tag;
}

TDBG_DECL bool record_block::other_step(std::int64_t step, mode m, std::int64_t mode_step) const noexcept {
    return !empty() && (block_.step != step || block_.mode != m || block_.mode_step != mode_step);
}

TDBG_DECL bool record_block::other_step(const format::tensor_event& ev) const noexcept {
    return other_step(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step));
}

TDBG_DECL void record_block::add(const format::tensor_event& ev) {
    if (format::detail::flat_encodable(ev)) {
        add(format::detail::flat_view(ev)); // the same bytes, in two flat passes
        return;
    }
    append(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step), ev.tag, [&](std::string& out) {
        format::detail::string_cursor sink(out);
        format::detail::proto_writer<format::detail::string_cursor> w(sink);
        format::detail::write_tensor_event(w, ev);
    });
}

TDBG_DECL void record_block::add(const format::detail::flat_tensor_event& ev) {
    append(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step), ev.tag,
           [&](std::string& out) { format::detail::append_flat_event(out, ev); });
}

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

TDBG_DECL write_items::records record_block::take() {
    last_ = {block_.bytes.size(), block_.names.size(), block_.entries.size()};
    write_items::records out = std::move(block_);
    out.spares = spares_;
    block_ = spares_->take().value_or(write_items::records{});
    return out;
}

} // namespace tdbg::detail
