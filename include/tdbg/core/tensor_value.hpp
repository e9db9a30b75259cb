#pragma once
/// \file
/// `tensor_value`: an immutable tensor (dtype + shape + bytes) that owns its
/// bytes, shares a buffer it views into, or borrows the caller's memory; the
/// elements of a string tensor are read in place (`string_views()`).
/// Its xtensor views (`as<T>()`, `to_xarray<T>()`) and `to_tensor_value(expression)`
/// come with <tdbg/core/xtensor.hpp>: this header itself needs no xtensor.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
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

/// The elements of a string tensor in one buffer, laid out as TensorProto's string_val fields
/// are on the wire: for each element the byte 0x42 (field 8, length-delimited), its length as
/// a varint, its bytes. A record's elements are viewed where they lie in it; a tensor built
/// from std::strings is encoded so once. N elements cost their bytes, two or more bytes each
/// and a mark every `stride` elements (for random access), where a std::string each cost 32
/// bytes or more: a record of millions of empty strings costs a fraction of its size, not 25
/// times it (docs/reliability.md, "Hostile records: memory").
class string_table {
public:
    /// Element i is found from the mark of element i - i % stride, at most stride - 1 skipped.
    static constexpr std::size_t stride = 64;
    /// The key byte before each element: TensorProto's field 8 (string_val), length-delimited.
    static constexpr char field_key = 0x42;

    /// Checks that `encoded` holds exactly `count` elements, and marks them. `owner` keeps the
    /// bytes alive. Throws tdbg::error naming the element and byte where it is not so.
    TDBG_DECL string_table(std::string_view encoded, std::size_t count, std::shared_ptr<const void> owner);
    string_table(const string_table&) = delete;
    string_table& operator=(const string_table&) = delete;
    string_table(string_table&&) = delete;
    string_table& operator=(string_table&&) = delete;
    ~string_table() = default;

    /// Appends `element` to `out`, encoded as above.
    static void append_field(std::string& out, std::string_view element) {
        out.push_back(field_key);
        for (std::uint64_t length = element.size();; length >>= 7U) {
            if (length < 0x80U) {
                out.push_back(static_cast<char>(length));
                break;
            }
            out.push_back(static_cast<char>((length & 0x7FU) | 0x80U));
        }
        out.append(element);
    }

    /// `strings` encoded into a buffer of their own.
    [[nodiscard]] static TDBG_DECL std::shared_ptr<const string_table> encode(const std::vector<std::string>& strings);

    [[nodiscard]] std::size_t size() const noexcept { return count_; }
    /// The elements' bytes, encoded as above.
    [[nodiscard]] std::string_view encoded() const noexcept { return encoded_; }
    /// Where element `i` (< size()) starts in encoded().
    [[nodiscard]] std::size_t position_of(std::size_t i) const noexcept {
        std::size_t pos = marks_[i / stride];
        for (std::size_t k = i % stride; k > 0; --k) {
            (void)next(pos);
        }
        return pos;
    }
    /// The element that starts at `pos` in encoded(); `pos` moves to the next one.
    [[nodiscard]] std::string_view next(std::size_t& pos) const noexcept {
        ++pos; // the key, checked by the constructor
        std::uint64_t length = 0;
        for (unsigned shift = 0;; shift += 7) {
            const auto byte = static_cast<unsigned char>(encoded_[pos++]);
            length |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
            if ((byte & 0x80U) == 0) {
                break;
            }
        }
        const std::string_view element = encoded_.substr(pos, static_cast<std::size_t>(length));
        pos += static_cast<std::size_t>(length);
        return element;
    }
    /// A std::string per element, made on the first call (tensor_value::strings()).
    [[nodiscard]] TDBG_DECL const std::vector<std::string>& materialized() const;

private:
    std::string_view encoded_;
    std::shared_ptr<const void> owner_;
    std::size_t count_ = 0;
    std::vector<std::size_t> marks_;
    mutable std::once_flag materialize_once_;
    mutable std::vector<std::string> materialized_;
};

} // namespace detail

/// The elements of a string tensor, in C order, as views into the bytes they are held in
/// (see tensor_value::string_views()). It shares those bytes: the views stay valid while the
/// list, or any value or list that shares them, lives. Indexing walks from the nearest of
/// the marks kept every 64 elements; iterating walks from one element to the next.
class string_view_list {
public:
    /// Reads the elements in order (an input iterator: each element is a view made as it is read).
    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = std::string_view;
        using difference_type = std::ptrdiff_t;
        using pointer = const std::string_view*;
        using reference = std::string_view;

        iterator() = default;
        [[nodiscard]] std::string_view operator*() const noexcept { return current_; }
        [[nodiscard]] const std::string_view* operator->() const noexcept { return &current_; }
        iterator& operator++() noexcept {
            ++index_;
            read();
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator before = *this;
            ++*this;
            return before;
        }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.index_ == b.index_; }
        friend bool operator!=(const iterator& a, const iterator& b) noexcept { return a.index_ != b.index_; }

    private:
        friend class string_view_list;
        iterator(const detail::string_table* table, std::size_t index) noexcept : table_(table), index_(index) {
            if (table_ != nullptr && index_ < table_->size()) {
                pos_ = table_->position_of(index_);
                read();
            }
        }
        void read() noexcept {
            if (index_ < table_->size()) {
                current_ = table_->next(pos_);
            }
        }

        const detail::string_table* table_ = nullptr;
        std::size_t index_ = 0;
        std::size_t pos_ = 0;
        std::string_view current_;
    };

    explicit string_view_list(std::shared_ptr<const detail::string_table> table) noexcept : table_(std::move(table)) {}

    [[nodiscard]] std::size_t size() const noexcept { return table_->size(); }
    [[nodiscard]] bool empty() const noexcept { return table_->size() == 0; }
    /// Element `i` (< size(), unchecked).
    [[nodiscard]] std::string_view operator[](std::size_t i) const noexcept {
        std::size_t pos = table_->position_of(i);
        return table_->next(pos);
    }
    [[nodiscard]] iterator begin() const noexcept { return iterator(table_.get(), 0); }
    [[nodiscard]] iterator end() const noexcept { return iterator(table_.get(), table_->size()); }

private:
    std::shared_ptr<const detail::string_table> table_;
};

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
    /// Views string elements encoded as TensorProto's string_val fields are on the wire, one after
    /// the other (for each, the byte 0x42, its length as a varint, its bytes), inside a buffer that
    /// `keep_alive` owns: no copy, and no std::string per element. Throws tdbg::error when
    /// `fields` do not hold exactly the shape's element count of such fields.
    [[nodiscard]] static tensor_value view_string_fields(shape_type shape, std::string_view fields,
                                                         std::shared_ptr<const void> keep_alive) {
        tensor_value v(dtype::string, std::move(shape));
        v.strings_ = std::make_shared<const detail::string_table>(fields, v.size(), std::move(keep_alive));
        return v;
    }

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

    /// The elements of a string tensor, read in place: a view per element, made as it is read.
    [[nodiscard]] string_view_list string_views() const {
        check_type<std::string>();
        return string_view_list(strings_);
    }

    /// The elements of a string tensor as std::strings, made on the first call and kept while
    /// the value or a copy of it lives: 32 bytes or more an element. string_views() reads them
    /// without that.
    [[nodiscard]] const std::vector<std::string>& strings() const {
        check_type<std::string>();
        return strings_->materialized();
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
            strings_ = detail::string_table::encode(data);
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
    std::shared_ptr<const detail::string_table> strings_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/tensor_value.ipp"
#endif
