#pragma once
/// \file
/// What a set of reductions needs the kernels to accumulate, as bit masks.
/// A compile-time set passes its exact mask as a template argument; a set
/// chosen at run time is rounded up to one of a few preset masks, so both run
/// the very same kernel instantiations and get the same bits.

#include <cstdint>
#include <vector>

#include "tdbg/core/reduction.hpp"

namespace tdbg::detail {

/// Accumulators of the real kernel (a block of real values in double lanes).
enum real_need : unsigned {
    need_min_max = 1U << 0U, ///< min and max
    need_abs_min = 1U << 1U, ///< min of |x|
    need_sum = 1U << 2U, ///< shifted Σx: sum, mean
    need_m2 = 1U << 3U, ///< shifted Σx²: variance, std (with need_sum)
    need_abs_sum = 1U << 4U, ///< shifted Σ|x|: l1, abs sum, abs mean; its NaN says "a NaN was seen"
    need_abs_m2 = 1U << 5U, ///< shifted Σ|x|²: abs variance (with need_abs_sum)
    need_sum_sq = 1U << 6U, ///< Σx²: l2
    need_prod = 1U << 7U, ///< running product with a separate exponent
    need_all_real = 0xFFU,
};

/// Adds what the requested accumulators depend on. `Double` is true for
/// float64 input, whose product finds zeros, infinities and NaNs from the
/// min/max accumulators (see real_kernel.hpp).
[[nodiscard]] constexpr unsigned real_closure(unsigned needs, bool is_double) noexcept {
    if ((needs & need_m2) != 0) {
        needs |= need_sum;
    }
    if ((needs & need_abs_m2) != 0) {
        needs |= need_abs_sum;
    }
    if ((needs & (need_min_max | need_abs_min)) != 0) {
        needs |= need_abs_sum; // the NaN witness
    }
    if (is_double && (needs & need_prod) != 0) {
        needs |= need_min_max | need_abs_min | need_abs_sum;
    }
    return needs;
}

/// What one reduction needs from the real kernel when the abs_ forms are the
/// absolute values of the same real data (floating-point input).
[[nodiscard]] constexpr unsigned real_needs(reduction r) noexcept {
    switch (r.kind) {
    case reduction_kind::min: return r.abs ? need_abs_min : need_min_max;
    case reduction_kind::max: return need_min_max;
    case reduction_kind::mean:
    case reduction_kind::sum: return r.abs ? need_abs_sum : need_sum;
    case reduction_kind::std:
    case reduction_kind::variance: return r.abs ? need_abs_m2 : need_m2;
    case reduction_kind::prod: return need_prod;
    case reduction_kind::l1: return need_abs_sum;
    case reduction_kind::l2: return need_sum_sq;
    }
    return need_all_real;
}

/// What one reduction needs from the real kernel run as a plain family over
/// derived real values (|z| of complex input): every reduction of the abs_
/// family is the plain one of those values; norms are over the same values.
[[nodiscard]] constexpr unsigned plain_needs(reduction_kind k) noexcept {
    switch (k) {
    case reduction_kind::min:
    case reduction_kind::max: return need_min_max;
    case reduction_kind::mean:
    case reduction_kind::sum:
    case reduction_kind::l1: return need_abs_sum; // the values are >= 0: Σ|y| = Σy
    case reduction_kind::std:
    case reduction_kind::variance: return need_m2;
    case reduction_kind::prod: return need_prod;
    case reduction_kind::l2: return need_sum_sq;
    }
    return need_all_real;
}

/// The presets a run-time set is rounded up to, cheapest first. Few on
/// purpose: each is one more instantiation of the kernel per input type and
/// instruction set, and compile time adds up.
inline constexpr unsigned real_presets[] = {
    need_sum | need_m2, // mean, sum, variance, std
    need_min_max | need_abs_sum, // min, max, abs_max, l1, abs_sum, abs_mean
    need_abs_sum | need_sum_sq, // l1, l2, abs_sum, abs_mean
    need_abs_sum | need_abs_m2, // abs_mean, abs_variance, abs_std
    need_min_max | need_sum | need_m2 | need_abs_sum | need_sum_sq, // the usual statistics
    need_all_real, // with prod, abs_min, abs moments
};
inline constexpr std::size_t real_preset_count = sizeof(real_presets) / sizeof(real_presets[0]);

/// The presets of the real kernel over integers converted to float64: the
/// moments (mean, std, variance), or those with the norms.
inline constexpr unsigned integer_moments_preset = real_presets[0];
inline constexpr unsigned integer_all_preset = real_presets[4];

/// Rounds real needs of integer input up to 0, integer_moments_preset or integer_all_preset.
[[nodiscard]] constexpr unsigned integer_real_preset(unsigned needs) noexcept {
    if (needs == 0) {
        return 0;
    }
    return (needs & ~integer_moments_preset) == 0 ? integer_moments_preset : integer_all_preset;
}

/// Integer-domain accumulators (exact, in the input type or 64 bits).
enum integer_need : unsigned {
    need_int_min_max = 1U << 0U,
    need_int_sum = 1U << 1U,
    need_int_prod = 1U << 2U,
    need_int_abs_min_max = 1U << 3U,
    need_int_abs_sum = 1U << 4U,
    need_int_abs_prod = 1U << 5U,
};

/// The needs of integer and bool input: integer-domain accumulators, the real
/// kernel over x as float64 (mean, std, variance, norms, as numpy converts) and
/// over numpy.absolute(x) as float64 (the abs_ moments).
struct integer_needs {
    unsigned integer = 0;
    unsigned real = 0;
    unsigned abs_real = 0;
};

[[nodiscard]] constexpr integer_needs integer_needs_of(reduction r) noexcept {
    integer_needs n;
    switch (r.kind) {
    case reduction_kind::min:
    case reduction_kind::max: n.integer = r.abs ? need_int_abs_min_max : need_int_min_max; break;
    case reduction_kind::sum: n.integer = r.abs ? need_int_abs_sum : need_int_sum; break;
    case reduction_kind::prod: n.integer = r.abs ? need_int_abs_prod : need_int_prod; break;
    case reduction_kind::mean: (r.abs ? n.abs_real : n.real) = need_sum; break;
    case reduction_kind::std:
    case reduction_kind::variance: (r.abs ? n.abs_real : n.real) = need_sum | need_m2; break;
    case reduction_kind::l1: n.real = need_abs_sum; break;
    case reduction_kind::l2: n.real = need_sum_sq; break;
    }
    return n;
}

/// The needs of complex input: complex-domain accumulators and the real
/// kernel over |z| (the abs_ family and the norms).
struct complex_needs {
    bool complex = false;
    unsigned abs_real = 0;
};

[[nodiscard]] constexpr complex_needs complex_needs_of(reduction r) noexcept {
    complex_needs n;
    if (r.abs || is_norm(r.kind)) {
        n.abs_real = plain_needs(r.kind);
    } else {
        n.complex = true;
    }
    return n;
}

} // namespace tdbg::detail
