#pragma once
/// \file
/// A fast path for the records a trial reads most: an Event holding one
/// tensor whose elements are in tensor_content, as smdebug and tdbg write
/// them, read with the same wire_cursor as the full decoder but without its
/// exceptions and allocations. Anything else (typed value fields, strings,
/// unknown fields, bad bytes) returns nullopt, and the caller decodes with
/// format::decode_tensor_event, which reads every variant and names the
/// problem in its errors.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/detail/proto_reader.hpp"

namespace tdbg::format::detail {

/// What the fast path found in an Event payload.
struct fast_tensor {
    std::string_view tag;
    tensor_value value;
    /// Where the elements start in the payload (for aligning the next read).
    std::size_t content_offset = 0;
};

/// Decodes `payload` (an Event) when it is the common case; the value views
/// the payload when its bytes are aligned (`keep_alive` owns them).
TDBG_DECL std::optional<fast_tensor> decode_tensor_fast(std::string_view payload,
                                                        const std::shared_ptr<const void>& keep_alive);

/// What the first bytes of a tensor event say: its tag, dtype and shape, and where its
/// elements (tensor_content, the TensorProto's last field) lie in the payload.
struct tensor_head {
    std::string_view tag;
    dtype type = dtype::float32;
    tensor_value::shape_type shape;
    std::uint64_t content_offset = 0; // in the payload
    std::uint64_t content_size = 0;   // bytes: the shape's element count times the dtype's size
};

/// Reads the head of an Event of `payload_size` bytes from `prefix`, its first bytes: the
/// same common case as decode_tensor_fast, with the elements left unread (they may lie past
/// the prefix). nullopt when the head is not within the prefix, or anything is not the
/// common case (the caller reads the whole record). Checks no CRC: what follows the
/// prefix is the caller's.
TDBG_DECL std::optional<tensor_head> decode_tensor_head(std::string_view prefix, std::uint64_t payload_size);

} // namespace tdbg::format::detail

#if TDBG_HEADER_ONLY
#include "tdbg/format/detail/impl/fast_event.ipp"
#endif
