#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/record_block.hpp.

#include <string>
#include <utility>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/detail/flat_event.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/writer/record_block.hpp"

namespace tdbg::detail {

TDBG_DECL bool record_block::other_step(const format::tensor_event& ev) const noexcept {
    return !empty() && (block_.step != ev.step || block_.mode != ev.mode.value_or(mode::global) ||
                        block_.mode_step != ev.mode_step.value_or(ev.step));
}

TDBG_DECL void record_block::add(const format::tensor_event& ev) {
    if (empty()) {
        block_.step = ev.step;
        block_.mode = ev.mode.value_or(mode::global);
        block_.mode_step = ev.mode_step.value_or(ev.step);
        block_.bytes.reserve(last_.bytes);
        block_.names.reserve(last_.names);
        block_.entries.reserve(last_.entries);
    }
    const std::uint64_t start = block_.bytes.size();
    format::append_record_in_place(
        block_.bytes,
        [&](std::string& out) {
            if (format::detail::flat_encodable(ev)) {
                format::detail::append_flat_tensor_event(out, ev); // the same bytes, in two flat passes
                return;
            }
            format::detail::string_cursor sink(out);
            format::detail::proto_writer<format::detail::string_cursor> w(sink);
            format::detail::write_tensor_event(w, ev);
        },
        format::smdebug_footer_crc);
    block_.entries.push_back(
        write_items::records::entry{block_.names.size(), ev.tag.size(), start, block_.bytes.size() - start});
    block_.names += ev.tag;
}

TDBG_DECL write_items::records record_block::take() {
    last_ = {block_.bytes.size(), block_.names.size(), block_.entries.size()};
    write_items::records out = std::move(block_);
    block_ = write_items::records{};
    return out;
}

} // namespace tdbg::detail
