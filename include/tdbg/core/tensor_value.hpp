#pragma once
/// \file
/// `tensor_value`: an immutable tensor (dtype + shape + bytes) that owns its
/// bytes, shares a buffer it views into, or borrows the caller's memory.
/// Its xtensor views (`as<T>()`, `to_xarray<T>()`) and `to_tensor_value(expression)`
/// come with <tdbg/core/xtensor.hpp>: this header itself needs no xtensor.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg {

class tensor_value;

namespace detail {
/// The xtensor side of tensor_value, defined by <tdbg/core/xtensor.hpp>.
template <class T, class = void>
struct xtensor_bridge {
    static_assert(sizeof(T) == 0, "tensor_value::as<T>() and to_xarray<T>() need #include <tdbg/core/xtensor.hpp>");
};
} // namespace detail

/// The most dimensions a tensor read from a run may have: numpy's limit (NPY_MAXDIMS is 64 in
/// numpy 2, 32 before), so nothing Python smdebug can read is refused, and nothing that walks a
/// shape (nested JSON values, reports) recurses without a bound.
inline constexpr std::size_t max_tensor_rank = 64;

/// A tensor's value. Copies are cheap: they share the bytes, which never change.
class tensor_value {
public:
    using shape_type = std::vector<std::size_t>;

    /// An empty float32 tensor of shape (0,).
    tensor_value() : shape_{0} {}

    /// Owns `data` (moved in, not copied), shaped as `shape`.
    template <class T, class = std::enable_if_t<has_dtype_v<T> && !std::is_same_v<T, bool>>>
    explicit tensor_value(std::vector<T> data, shape_type shape) : type_(dtype_v<T>), shape_(std::move(shape)) {
        take(std::move(data));
    }
    /// Owns `data` as a 1-D tensor.
    template <class T, class = std::enable_if_t<has_dtype_v<T> && !std::is_same_v<T, bool>>>
    explicit tensor_value(std::vector<T> data) : type_(dtype_v<T>), shape_{data.size()} {
        take(std::move(data));
    }

    /// Booleans are stored one byte each (0 or 1), as on disk.
    explicit tensor_value(const std::vector<bool>& data, shape_type shape) : type_(dtype::boolean), shape_(std::move(shape)) {
        check_count(data.size());
        auto buffer = allocate(data.size());
        for (std::size_t i = 0; i < data.size(); ++i) {
            buffer.get()[i] = data[i] ? std::byte{1} : std::byte{0};
        }
        adopt(std::move(buffer), data.size());
    }
    explicit tensor_value(const std::vector<bool>& data) : tensor_value(data, shape_type{data.size()}) {}

    /// A 0-d tensor holding `value`.
    template <class T, class = std::enable_if_t<has_dtype_v<T>>>
    [[nodiscard]] static tensor_value scalar(T value) {
        if constexpr (std::is_same_v<T, bool>) {
            return tensor_value(std::vector<bool>{value}, shape_type{});
        } else if constexpr (std::is_same_v<T, std::string>) {
            return tensor_value(std::vector<T>{std::move(value)}, shape_type{});
        } else {
            // One element in the small buffer: one allocation.
            tensor_value v(dtype_v<T>, shape_type{});
            auto buffer = allocate(sizeof(T));
            std::memcpy(buffer.get(), &value, sizeof(T));
            v.adopt(std::move(buffer), sizeof(T));
            return v;
        }
    }

    /// Borrows `data` (like `xt::adapt`): no copy; the caller keeps it alive and unchanged.
    template <class T, class = std::enable_if_t<has_dtype_v<T> && !std::is_same_v<T, std::string>>>
    [[nodiscard]] static tensor_value borrow(const T* data, shape_type shape) {
        tensor_value v(dtype_v<T>, std::move(shape));
        v.data_ = reinterpret_cast<const std::byte*>(data);
        v.nbytes_ = element_count(v.shape_) * sizeof(T);
        if (data == nullptr && v.nbytes_ != 0) {
            throw error("tensor_value::borrow: null data for a non-empty shape");
        }
        return v;
    }

    /// Copies raw little-endian bytes of `type` into an owned buffer.
    [[nodiscard]] static tensor_value from_bytes(dtype type, shape_type shape, std::string_view bytes) {
        tensor_value v = prepare(type, std::move(shape), bytes.size());
        auto buffer = allocate(bytes.size());
        if (!bytes.empty()) {
            std::memcpy(buffer.get(), bytes.data(), bytes.size());
        }
        v.adopt(std::move(buffer), bytes.size());
        v.normalise_booleans();
        return v;
    }

    /// Views `bytes` inside a buffer that `keep_alive` owns, without a copy when
    /// the bytes are aligned for the element type (they are copied otherwise).
    [[nodiscard]] static tensor_value view_bytes(dtype type, shape_type shape, std::string_view bytes,
                                                 std::shared_ptr<const void> keep_alive) {
        const std::size_t element = dtype_size(type);
        const bool aligned = element == 0 || reinterpret_cast<std::uintptr_t>(bytes.data()) % alignment_of(type) == 0;
        if (!aligned || type == dtype::boolean) {
            return from_bytes(type, std::move(shape), bytes);
        }
        tensor_value v = prepare(type, std::move(shape), bytes.size());
        v.data_ = reinterpret_cast<const std::byte*>(bytes.data());
        v.nbytes_ = bytes.size();
        v.holder_ = std::move(keep_alive);
        return v;
    }

    /// The element type.
    [[nodiscard]] dtype type() const noexcept { return type_; }
    /// The shape; empty for a 0-d tensor.
    [[nodiscard]] const shape_type& shape() const noexcept { return shape_; }
    /// The number of dimensions.
    [[nodiscard]] std::size_t dimension() const noexcept { return shape_.size(); }
    /// The number of elements.
    [[nodiscard]] std::size_t size() const noexcept { return element_count(shape_); }
    /// The number of bytes of the elements (0 for strings).
    [[nodiscard]] std::size_t nbytes() const noexcept { return nbytes_; }
    /// The raw little-endian bytes, C order (empty for strings).
    [[nodiscard]] std::string_view bytes() const noexcept {
        return {reinterpret_cast<const char*>(data_), nbytes_};
    }
    /// False when the bytes are borrowed from the caller (see `borrow`).
    [[nodiscard]] bool owns_data() const noexcept { return holder_ != nullptr || strings_ != nullptr || nbytes_ == 0; }

    /// The same elements under `shape` (as many elements), shared, not copied: a borrowed
    /// value stays borrowed. Throws tdbg::error when the counts differ.
    [[nodiscard]] tensor_value reshaped(shape_type shape) const {
        tensor_value out = *this;
        out.shape_ = std::move(shape);
        out.check_count(size());
        return out;
    }

    /// A deep copy that owns its bytes (a borrowed value becomes safe to keep).
    [[nodiscard]] tensor_value copy() const {
        if (type_ == dtype::string) {
            return *this;
        }
        return from_bytes(type_, shape_, bytes());
    }

    /// The elements as `const T*`; checks the dtype.
    template <class T>
    [[nodiscard]] const T* data_as() const {
        static_assert(!std::is_same_v<T, std::string>, "tensor_value::data_as: use strings() for string tensors");
        check_type<T>();
        return reinterpret_cast<const T*>(data_);
    }

    /// An xtensor adaptor over the bytes: no copy. Checks the dtype (needs <tdbg/core/xtensor.hpp>).
    template <class T, class Bridge = detail::xtensor_bridge<T>>
    [[nodiscard]] auto as() const {
        static_assert(!std::is_same_v<T, std::string>, "tensor_value::as: use strings() for string tensors");
        return Bridge::adapt(*this);
    }

    /// A copy as an `xt::xarray<T>`; checks the dtype (needs <tdbg/core/xtensor.hpp>).
    template <class T, class Bridge = detail::xtensor_bridge<T>>
    [[nodiscard]] auto to_xarray() const {
        return Bridge::to_xarray(*this);
    }

    /// The elements of a string tensor.
    [[nodiscard]] const std::vector<std::string>& strings() const {
        check_type<std::string>();
        return *strings_;
    }

    /// The number of elements of `shape` (1 for a 0-d shape).
    [[nodiscard]] static std::size_t element_count(const shape_type& shape) noexcept {
        return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
    }

private:
    static std::size_t alignment_of(dtype type) {
        return visit_dtype(type, [](auto tag) -> std::size_t {
            using T = typename decltype(tag)::type;
            return alignof(T);
        });
    }

    template <class T>
    void take(std::vector<T>&& data) {
        check_count(data.size());
        if constexpr (std::is_same_v<T, std::string>) {
            strings_ = std::make_shared<const std::vector<std::string>>(std::move(data));
        } else {
            auto owned = std::make_shared<const std::vector<T>>(std::move(data));
            data_ = reinterpret_cast<const std::byte*>(owned->data());
            nbytes_ = owned->size() * sizeof(T);
            holder_ = std::move(owned);
        }
    }

    static std::shared_ptr<std::byte[]> allocate(std::size_t n) {
        // A small buffer (a reduction, a scalar) shares one allocation with its count: for so
        // few bytes, an allocation costs as much as the rest.
        struct alignas(16) small_buffer {
            std::byte data[64];
        };
        if (n <= sizeof(small_buffer)) {
            auto block = std::make_shared<small_buffer>();
            return std::shared_ptr<std::byte[]>(block, block->data);
        }
        // operator new[] aligns for every element type we hold (16 bytes on common ABIs).
        return std::shared_ptr<std::byte[]>(new std::byte[n]);
    }

    [[nodiscard]] static TDBG_DECL tensor_value prepare(dtype type, shape_type shape, std::size_t nbytes);

    void adopt(std::shared_ptr<std::byte[]> buffer, std::size_t nbytes) {
        data_ = buffer.get();
        nbytes_ = nbytes;
        holder_ = std::move(buffer);
    }

    // A value of `type` and `shape` without elements yet (the default one allocates its shape {0}).
    tensor_value(dtype type, shape_type shape) noexcept : type_(type), shape_(std::move(shape)) {}

    void normalise_booleans() {
        if (type_ != dtype::boolean || nbytes_ == 0) {
            return;
        }
        auto* bytes = const_cast<std::byte*>(data_); // we own this fresh buffer
        for (std::size_t i = 0; i < nbytes_; ++i) {
            bytes[i] = bytes[i] != std::byte{0} ? std::byte{1} : std::byte{0};
        }
    }

    TDBG_DECL void check_count(std::size_t count) const;
    [[noreturn]] TDBG_DECL void type_mismatch(dtype wanted) const;

    template <class T>
    void check_type() const {
        static_assert(has_dtype_v<T>, "tensor_value: this C++ type has no dtype");
        if (dtype_v<T> != type_) {
            type_mismatch(dtype_v<T>);
        }
    }

    dtype type_ = dtype::float32;
    shape_type shape_;
    std::shared_ptr<const void> holder_;
    const std::byte* data_ = nullptr;
    std::size_t nbytes_ = 0;
    std::shared_ptr<const std::vector<std::string>> strings_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/tensor_value.ipp"
#endif
