#pragma once
/// \file
/// Small numeric helpers rules use on tensor values: a value as a scalar or
/// as doubles, counts, non-finite checks, norms, percentiles, and numpy's
/// `allclose` with numpy's precision (float32 arrays compared in float32).

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg::rules {

/// True for the dtypes whose elements are real numbers (booleans included).
[[nodiscard]] constexpr bool is_real_valued(dtype d) noexcept { return d != dtype::string && !is_complex(d); }

/// Calls `f(const T* data, std::size_t n)` with the elements in their own type
/// (float16/bfloat16 as tdbg's half types, bool as bool). Throws dtype_mismatch for strings.
template <class F>
void visit_elements(const tensor_value& v, F&& f) {
    if (v.type() == dtype::string) {
        throw dtype_mismatch("expected numbers, got a string tensor");
    }
    visit_dtype(v.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, std::string>) {
            f(v.data_as<T>(), v.size());
        }
    });
}

namespace detail {
/// Throws dtype_mismatch unless `v` holds real numbers.
TDBG_DECL void require_real(const tensor_value& v);
} // namespace detail

/// Calls `f(double)` for every element of a real-valued tensor (bool as 0/1).
/// Throws dtype_mismatch for strings and complex numbers.
template <class F>
void for_each_real(const tensor_value& v, F&& f) {
    detail::require_real(v);
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        if constexpr (!is_complex_element_v<T>) {
            for (std::size_t i = 0; i < n; ++i) {
                f(as_double(data[i]));
            }
        }
    });
}

/// The elements of a real-valued tensor as doubles, C order.
[[nodiscard]] TDBG_DECL std::vector<double> to_doubles(const tensor_value& v);

/// The single element of `v` as a double (a 0-d or one-element tensor of a
/// real dtype). Throws dtype_mismatch otherwise.
[[nodiscard]] TDBG_DECL double scalar_of(const tensor_value& v);

/// The number of elements equal to zero (false for booleans; 0+0i for complex).
[[nodiscard]] TDBG_DECL std::size_t count_zeros(const tensor_value& v);

/// True when some element is NaN, or (unless `only_nan`) ±inf. Integers and booleans never are.
[[nodiscard]] TDBG_DECL bool has_non_finite(const tensor_value& v, bool only_nan = false);

/// The Euclidean norm of all elements (numpy.linalg.norm of the flattened value), in double.
[[nodiscard]] TDBG_DECL double l2_norm(const tensor_value& v);

/// The Euclidean norm of `a - b`, elementwise (same number of elements). Throws dtype_mismatch otherwise.
[[nodiscard]] TDBG_DECL double l2_distance(const tensor_value& a, const tensor_value& b);

/// numpy.percentile(values, q) with its default linear interpolation; NaN for no values.
[[nodiscard]] TDBG_DECL double percentile(std::vector<double> values, double q);

/// numpy.allclose(a, b, rtol, atol, equal_nan) for two values of the same
/// shape (a different shape or dtype kind is "not close"; strings compare
/// exactly). Precision follows numpy 1.x: float32 and float16 arrays (not 0-d)
/// compare in their own precision, everything else in double.
[[nodiscard]] TDBG_DECL bool allclose(const tensor_value& a, const tensor_value& b, double rtol = 1e-05,
                                      double atol = 1e-08, bool equal_nan = false);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/values.ipp"
#endif
