#pragma once
/// \file
/// One reduction's result held by value, without a heap allocation: its dtype and its bytes (16
/// at most, a complex128). compute_reduction_values_of gives these; the hook encodes a tensor's
/// reduction records straight from them, and a tensor_value is made only where one is asked for
/// (to_tensor: the 0-d tensor compute_reductions gives).

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg {

/// A reduction's result: one element of a numeric dtype.
class reduction_value {
public:
    /// The largest element held (complex128).
    static constexpr std::size_t max_bytes = 16;

    /// A float32 zero.
    reduction_value() = default;

    /// `value` as an element of its dtype (bool as one byte, 0 or 1, as tensor_value stores it).
    template <class T, class = std::enable_if_t<has_dtype_v<T> && !std::is_same_v<T, std::string>>>
    [[nodiscard]] static reduction_value of(T value) noexcept {
        static_assert(sizeof(T) <= max_bytes && std::is_trivially_copyable_v<T>);
        reduction_value out;
        out.type_ = dtype_v<T>;
        out.size_ = sizeof(T);
        if constexpr (std::is_same_v<T, bool>) {
            out.bytes_[0] = value ? 1 : 0;
        } else {
            std::memcpy(out.bytes_.data(), &value, sizeof(T));
        }
        return out;
    }

    /// The element of a numeric tensor_value holding one (of any shape). Throws tdbg::error
    /// otherwise, naming its dtype and element count.
    [[nodiscard]] static reduction_value from(const tensor_value& value) {
        const std::string_view b = value.bytes();
        if (value.size() != 1 || b.empty() || b.size() > max_bytes) {
            throw error(fmt::format("a reduction's value is one numeric element; found a {} tensor of {} elements",
                                    dtype_name(value.type()), value.size()));
        }
        reduction_value out;
        out.type_ = value.type();
        out.size_ = static_cast<unsigned char>(b.size());
        std::memcpy(out.bytes_.data(), b.data(), b.size());
        return out;
    }

    /// The element's dtype.
    [[nodiscard]] dtype type() const noexcept { return type_; }
    /// The element's little-endian bytes.
    [[nodiscard]] std::string_view bytes() const noexcept {
        return {reinterpret_cast<const char*>(bytes_.data()), size_};
    }

    /// The same bytes read as `type`, of the same size (torch's int64 for an unsigned sum).
    [[nodiscard]] reduction_value retyped(dtype type) const {
        if (dtype_size(type) != size_) {
            throw error(fmt::format("cannot read a {} reduction as {}: their sizes differ", dtype_name(type_),
                                    dtype_name(type)));
        }
        reduction_value out = *this;
        out.type_ = type;
        return out;
    }

    /// The element as a tensor_value of `shape` (0-d by default, as compute_reductions gives it).
    [[nodiscard]] tensor_value to_tensor(tensor_value::shape_type shape = {}) const {
        return tensor_value::from_bytes(type_, std::move(shape), bytes());
    }

private:
    alignas(max_bytes) std::array<unsigned char, max_bytes> bytes_{};
    dtype type_ = dtype::float32;
    unsigned char size_ = sizeof(float);
};

} // namespace tdbg
