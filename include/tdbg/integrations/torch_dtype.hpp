#pragma once
/// \file
/// tdbg's dtypes and torch's scalar types, each way (libtorch integration).

#include <optional>

#include <c10/core/ScalarType.h>

#include "tdbg/core/dtype.hpp"

namespace tdbg {

/// tdbg's dtype for a torch scalar type; nullopt for those tdbg has no dtype for (quantized, complex half).
[[nodiscard]] inline std::optional<dtype> dtype_from_torch(c10::ScalarType type) noexcept {
    switch (type) {
    case c10::ScalarType::Float: return dtype::float32;
    case c10::ScalarType::Double: return dtype::float64;
    case c10::ScalarType::Half: return dtype::float16;
    case c10::ScalarType::BFloat16: return dtype::bfloat16;
    case c10::ScalarType::Char: return dtype::int8;
    case c10::ScalarType::Short: return dtype::int16;
    case c10::ScalarType::Int: return dtype::int32;
    case c10::ScalarType::Long: return dtype::int64;
    case c10::ScalarType::Byte: return dtype::uint8;
    case c10::ScalarType::Bool: return dtype::boolean;
    case c10::ScalarType::ComplexFloat: return dtype::complex64;
    case c10::ScalarType::ComplexDouble: return dtype::complex128;
    default: return std::nullopt;
    }
}

/// torch's scalar type for a tdbg dtype; nullopt for those torch has none for (uint16, uint32, uint64, string).
[[nodiscard]] inline std::optional<c10::ScalarType> torch_scalar_type(dtype type) noexcept {
    switch (type) {
    case dtype::float32: return c10::ScalarType::Float;
    case dtype::float64: return c10::ScalarType::Double;
    case dtype::float16: return c10::ScalarType::Half;
    case dtype::bfloat16: return c10::ScalarType::BFloat16;
    case dtype::int8: return c10::ScalarType::Char;
    case dtype::int16: return c10::ScalarType::Short;
    case dtype::int32: return c10::ScalarType::Int;
    case dtype::int64: return c10::ScalarType::Long;
    case dtype::uint8: return c10::ScalarType::Byte;
    case dtype::boolean: return c10::ScalarType::Bool;
    case dtype::complex64: return c10::ScalarType::ComplexFloat;
    case dtype::complex128: return c10::ScalarType::ComplexDouble;
    case dtype::uint16:
    case dtype::uint32:
    case dtype::uint64:
    case dtype::string: return std::nullopt;
    }
    return std::nullopt;
}

} // namespace tdbg
