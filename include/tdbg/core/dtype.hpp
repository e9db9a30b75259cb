#pragma once
/// \file
/// Element types, numbered as TensorFlow's DataType enum (the numbers written
/// in TensorProto.dtype), mapped to C++ types by traits.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"

namespace tdbg {

/// An element type; the value is TensorFlow's DataType number.
enum class dtype : int {
    float32 = 1,
    float64 = 2,
    int32 = 3,
    uint8 = 4,
    int16 = 5,
    int8 = 6,
    string = 7,
    complex64 = 8,
    int64 = 9,
    boolean = 10,
    bfloat16 = 14,
    uint16 = 17,
    complex128 = 18,
    float16 = 19,
    uint32 = 22,
    uint64 = 23,
};

/// Marks a dtype's C++ type in `visit_dtype`.
template <class T>
struct type_tag {
    using type = T;
};

/// The dtype of a C++ element type; `dtype_of<T>::value`.
template <class T>
struct dtype_of;

#define TDBG_DETAIL_DTYPE_OF(T, D)                                                                                     \
    template <>                                                                                                        \
    struct dtype_of<T> {                                                                                               \
        static constexpr dtype value = dtype::D;                                                                       \
    };
TDBG_DETAIL_DTYPE_OF(float, float32)
TDBG_DETAIL_DTYPE_OF(double, float64)
TDBG_DETAIL_DTYPE_OF(std::int8_t, int8)
TDBG_DETAIL_DTYPE_OF(std::int16_t, int16)
TDBG_DETAIL_DTYPE_OF(std::int32_t, int32)
TDBG_DETAIL_DTYPE_OF(std::int64_t, int64)
TDBG_DETAIL_DTYPE_OF(std::uint8_t, uint8)
TDBG_DETAIL_DTYPE_OF(std::uint16_t, uint16)
TDBG_DETAIL_DTYPE_OF(std::uint32_t, uint32)
TDBG_DETAIL_DTYPE_OF(std::uint64_t, uint64)
TDBG_DETAIL_DTYPE_OF(bool, boolean)
TDBG_DETAIL_DTYPE_OF(std::complex<float>, complex64)
TDBG_DETAIL_DTYPE_OF(std::complex<double>, complex128)
TDBG_DETAIL_DTYPE_OF(tdbg::float16, float16)
TDBG_DETAIL_DTYPE_OF(tdbg::bfloat16, bfloat16)
TDBG_DETAIL_DTYPE_OF(std::string, string)
#undef TDBG_DETAIL_DTYPE_OF

/// True for the C++ types that have a dtype. `long`/`long long` map through
/// their fixed-width equivalents only where they are the same type.
template <class T, class = void>
struct has_dtype : std::false_type {};
template <class T>
struct has_dtype<T, std::void_t<decltype(dtype_of<T>::value)>> : std::true_type {};
template <class T>
inline constexpr bool has_dtype_v = has_dtype<std::remove_cv_t<T>>::value;
template <class T>
inline constexpr dtype dtype_v = dtype_of<std::remove_cv_t<T>>::value;

/// Calls `f(type_tag<T>{})` with the C++ type of `d`; returns what `f` returns.
template <class F>
decltype(auto) visit_dtype(dtype d, F&& f) {
    switch (d) {
    case dtype::float32: return f(type_tag<float>{});
    case dtype::float64: return f(type_tag<double>{});
    case dtype::int8: return f(type_tag<std::int8_t>{});
    case dtype::int16: return f(type_tag<std::int16_t>{});
    case dtype::int32: return f(type_tag<std::int32_t>{});
    case dtype::int64: return f(type_tag<std::int64_t>{});
    case dtype::uint8: return f(type_tag<std::uint8_t>{});
    case dtype::uint16: return f(type_tag<std::uint16_t>{});
    case dtype::uint32: return f(type_tag<std::uint32_t>{});
    case dtype::uint64: return f(type_tag<std::uint64_t>{});
    case dtype::boolean: return f(type_tag<bool>{});
    case dtype::complex64: return f(type_tag<std::complex<float>>{});
    case dtype::complex128: return f(type_tag<std::complex<double>>{});
    case dtype::float16: return f(type_tag<tdbg::float16>{});
    case dtype::bfloat16: return f(type_tag<tdbg::bfloat16>{});
    case dtype::string: return f(type_tag<std::string>{});
    }
    throw error("unknown dtype " + std::to_string(static_cast<int>(d)));
}

/// The dtype for TensorFlow's DataType number, if tdbg supports it.
[[nodiscard]] inline std::optional<dtype> dtype_from_int(long long tf_enum) noexcept {
    switch (tf_enum) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10:
    case 14: case 17: case 18: case 19: case 22: case 23:
        return static_cast<dtype>(tf_enum);
    default:
        return std::nullopt;
    }
}

/// numpy's name for the dtype: "float32", "int8", "bool", "complex64", "str".
[[nodiscard]] constexpr std::string_view dtype_name(dtype d) noexcept {
    switch (d) {
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::int8: return "int8";
    case dtype::int16: return "int16";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::uint8: return "uint8";
    case dtype::uint16: return "uint16";
    case dtype::uint32: return "uint32";
    case dtype::uint64: return "uint64";
    case dtype::boolean: return "bool";
    case dtype::complex64: return "complex64";
    case dtype::complex128: return "complex128";
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "bfloat16";
    case dtype::string: return "str";
    }
    return "unknown";
}

/// The dtype named `name` (numpy's names, as dtype_name writes them).
[[nodiscard]] inline std::optional<dtype> dtype_from_name(std::string_view name) noexcept {
    for (int v : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 17, 18, 19, 22, 23}) {
        if (dtype_name(static_cast<dtype>(v)) == name) {
            return static_cast<dtype>(v);
        }
    }
    return std::nullopt;
}

/// Bytes per element in tensor_content (0 for string, which has no fixed size).
[[nodiscard]] constexpr std::size_t dtype_size(dtype d) noexcept {
    switch (d) {
    case dtype::int8: case dtype::uint8: case dtype::boolean: return 1;
    case dtype::int16: case dtype::uint16: case dtype::float16: case dtype::bfloat16: return 2;
    case dtype::int32: case dtype::uint32: case dtype::float32: return 4;
    case dtype::int64: case dtype::uint64: case dtype::float64: case dtype::complex64: return 8;
    case dtype::complex128: return 16;
    case dtype::string: return 0;
    }
    return 0;
}

/// True for float16, bfloat16, float32 and float64.
[[nodiscard]] constexpr bool is_floating(dtype d) noexcept {
    return d == dtype::float16 || d == dtype::bfloat16 || d == dtype::float32 || d == dtype::float64;
}
/// True for the signed and unsigned integer types (not bool).
[[nodiscard]] constexpr bool is_integer(dtype d) noexcept {
    switch (d) {
    case dtype::int8: case dtype::int16: case dtype::int32: case dtype::int64:
    case dtype::uint8: case dtype::uint16: case dtype::uint32: case dtype::uint64:
        return true;
    default:
        return false;
    }
}
/// True for complex64 and complex128.
[[nodiscard]] constexpr bool is_complex(dtype d) noexcept { return d == dtype::complex64 || d == dtype::complex128; }

/// True for the element types of float16 and bfloat16.
template <class T>
inline constexpr bool is_half_element_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
/// True for the element types of complex64 and complex128.
template <class T>
inline constexpr bool is_complex_element_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

/// A real element of a numeric dtype as a double: float16 and bfloat16 widened,
/// bool as 0 or 1. The one such conversion of the library and its tools; complex
/// elements have none (their callers take a part or the magnitude).
template <class T>
[[nodiscard]] constexpr double as_double(const T& x) noexcept {
    static_assert(has_dtype_v<T> && !is_complex_element_v<T> && !std::is_same_v<T, std::string>,
                  "as_double: a real element type (float16..float64, bfloat16, integers, bool)");
    if constexpr (is_half_element_v<T>) {
        return static_cast<double>(x.value());
    } else {
        return static_cast<double>(x);
    }
}

} // namespace tdbg
