#pragma once
// The two ways the hook's writer frames a record, for the tests that hold them to the bytes
// smdebug writes: a large record as pieces over the tensor's memory (a data thread), a small
// one encoded straight into the step's block and framed in place (the training thread).

#include <string>
#include <string_view>

#include "tdbg/format/detail/event_pieces.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"

namespace tdbg::test {

/// `prefix`, then the record of `ev` as a data thread writes it.
inline std::string framed_by_pieces(const format::tensor_event& ev, std::string prefix = {}) {
    const format::detail::event_pieces pieces = format::detail::encode_tensor_event_pieces(ev);
    {
        format::detail::string_cursor sink(prefix);
        format::frame_record(
            sink, pieces.size(),
            [&](auto& to) { pieces.for_each([&](std::string_view p) { to.append(p.data(), p.size()); }); },
            format::smdebug_footer_crc);
    }
    return prefix;
}

/// `prefix`, then the record of `ev` as the training thread writes it into a step's block.
inline std::string framed_in_place(const format::tensor_event& ev, std::string prefix = {}) {
    format::append_record_in_place(
        prefix,
        [&](std::string& out) {
            format::detail::string_cursor cursor(out);
            format::detail::proto_writer<format::detail::string_cursor> w(cursor);
            format::detail::write_tensor_event(w, ev);
        },
        format::smdebug_footer_crc);
    return prefix;
}

} // namespace tdbg::test
