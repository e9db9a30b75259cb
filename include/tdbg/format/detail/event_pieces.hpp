#pragma once
/// \file
/// A tensor Event encoded as pieces: the small protobuf parts are copied, the
/// tensor's bytes are referenced in place. The writer thread then appends the
/// pieces to the event file without building a payload string as large as the
/// tensor (a copy, and page faults on fresh memory, per tensor). A sink of the
/// one tensor-event encoder, so the bytes are those of encode_tensor_event.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/event.hpp"

namespace tdbg::format::detail {

/// The payload of one events/ record, in order: copied parts and views of the tensor.
class event_pieces {
public:
    /// Pieces that may reference large runs inside `referable` (the tensor's bytes) only.
    explicit event_pieces(std::string_view referable = {}) : referable_(referable) {}

    /// Empties the pieces for another event whose large runs may lie in `referable`, keeping
    /// the memory: a writer encoding event after event allocates nothing once warm.
    void reset(std::string_view referable) noexcept {
        referable_ = referable;
        owned_.clear();
        parts_.clear();
        size_ = 0;
    }

    /// Appends bytes; a large run inside the referable bytes is referenced, not copied.
    void append(const char* p, std::size_t n) {
        const bool inside = !referable_.empty() && std::less_equal<>()(referable_.data(), p) &&
                            std::less_equal<>()(p + n, referable_.data() + referable_.size());
        if (n >= by_reference && inside) {
            parts_.push_back(piece{owned_.size(), std::string_view(p, n)});
            size_ += n;
            return;
        }
        owned_.append(p, n);
        size_ += n;
    }
    void push(char c) {
        owned_.push_back(c);
        ++size_;
    }

    /// The payload's size.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

    /// Calls `out(std::string_view)` for each piece in order.
    template <class Out>
    void for_each(Out&& out) const {
        std::size_t from = 0;
        for (const piece& p : parts_) {
            if (p.owned_end > from) {
                out(std::string_view(owned_).substr(from, p.owned_end - from));
            }
            out(p.view);
            from = p.owned_end;
        }
        if (owned_.size() > from) {
            out(std::string_view(owned_).substr(from));
        }
    }

private:
    static constexpr std::size_t by_reference = 4096;
    struct piece {
        std::size_t owned_end; // the owned bytes before this view end here
        std::string_view view;
    };
    std::string_view referable_;
    std::string owned_;
    std::vector<piece> parts_;
    std::size_t size_ = 0;
};

/// The Event payload of `ev`, as pieces: the bytes of encode_tensor_event, written by
/// the same encoder (write_tensor_event). `ev` must outlive the pieces.
inline event_pieces encode_tensor_event_pieces(const tensor_event& ev) {
    event_pieces pieces(ev.value.bytes());
    proto_writer<event_pieces> w(pieces);
    write_tensor_event(w, ev);
    return pieces;
}

/// encode_tensor_event_pieces into `pieces`, reusing their memory.
inline void encode_tensor_event_pieces(const tensor_event& ev, event_pieces& pieces) {
    pieces.reset(ev.value.bytes());
    proto_writer<event_pieces> w(pieces);
    write_tensor_event(w, ev);
}

} // namespace tdbg::format::detail
