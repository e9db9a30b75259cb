#pragma once
/// \file
/// Whose conventions a stored reduction follows. smdebug's hooks disagree: its core hook (and
/// the TensorFlow, MXNet and XGBoost hooks) reduce with numpy, its PyTorch hook with torch
/// operations (smdebug/pytorch/utils.py get_reduction_of_data). The same tensor thus gives:
///
/// |                    | numpy (core hook)                  | pytorch (PyTorch hook)                    |
/// |--------------------|------------------------------------|-------------------------------------------|
/// | stored shape       | (1,)                               | () (a 0-d tensor)                         |
/// | std, variance      | population (ddof 0)                | unbiased (ddof 1; NaN for one element)    |
/// | integer sum, prod  | int64, uint64 for unsigned input   | int64                                     |
/// | integer and bool mean, std, variance, l1, l2 | float64  | none: torch refuses them, nothing is written |
/// | abs_ of bool       | as plain                           | none (torch has no abs of bool)           |
/// | complex min, max   | numpy's order                      | none (torch refuses them)                 |
///
/// Everything else (min, max, floating results in the input's dtype, complex results) agrees.
/// `tdbg::hook::save_tensor` writes numpy's; `tdbg::torch_hook` writes PyTorch's.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg {

/// Whose records a reduction follows (see the file comment).
enum class reduction_convention {
    numpy,   ///< smdebug's core hook: shape (1,), numpy's dtypes, population std and variance
    pytorch, ///< smdebug's PyTorch hook: 0-d, torch's dtypes, unbiased std and variance
};

/// The ddof of std and variance under `convention` (reduce::options::ddof).
[[nodiscard]] constexpr unsigned reduction_ddof(reduction_convention convention) noexcept {
    return convention == reduction_convention::pytorch ? 1U : 0U;
}

/// True when `convention` has reduction `r` of a tensor of `type` (false where torch refuses it).
[[nodiscard]] constexpr bool has_reduction(reduction_convention convention, dtype type, reduction r) noexcept {
    if (type == dtype::string) {
        return false;
    }
    if (convention == reduction_convention::numpy || is_floating(type)) {
        return true;
    }
    if (is_complex(type)) {
        return r.abs || (r.kind != reduction_kind::min && r.kind != reduction_kind::max);
    }
    // Integers and bool: torch has min, max, sum and prod only, and no abs of bool.
    const bool kind_ok = r.kind == reduction_kind::min || r.kind == reduction_kind::max ||
                         r.kind == reduction_kind::sum || r.kind == reduction_kind::prod;
    return kind_ok && !(r.abs && type == dtype::boolean);
}

/// The number of dimensions of a stored reduction under `convention`: 1, shape (1,), for numpy;
/// 0 for pytorch.
[[nodiscard]] constexpr std::size_t stored_reduction_rank(reduction_convention convention) noexcept {
    return convention == reduction_convention::numpy ? 1 : 0;
}

/// A reduction of a tensor of `input` type, as compute_reduction_values gives it (numpy's dtype,
/// with the convention's ddof), made the element `convention` stores: torch's int64 for an
/// unsigned sum or product under pytorch. Its shape is stored_reduction_rank's. nullopt where the
/// convention has no such reduction.
[[nodiscard]] inline std::optional<reduction_value> stored_reduction(reduction_convention convention, dtype input,
                                                                     reduction r, const reduction_value& result) {
    if (!has_reduction(convention, input, r)) {
        return std::nullopt;
    }
    if (convention == reduction_convention::pytorch && result.type() == dtype::uint64) {
        return result.retyped(dtype::int64); // the same bits
    }
    return result;
}

/// stored_reduction of a one-element tensor_value (compute_reductions' 0-d result): the tensor
/// `convention` stores, shape (1,) for numpy, 0-d for pytorch.
[[nodiscard]] inline std::optional<tensor_value> stored_reduction(reduction_convention convention, dtype input,
                                                                  reduction r, const tensor_value& result) {
    const std::optional<reduction_value> stored =
        stored_reduction(convention, input, r, reduction_value::from(result));
    if (!stored) {
        return std::nullopt;
    }
    return stored->to_tensor(tensor_value::shape_type(stored_reduction_rank(convention), 1));
}

} // namespace tdbg
