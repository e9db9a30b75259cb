#pragma once
/// \file
/// Complex input, as numpy reduces it: sum, mean and prod are complex; min
/// and max order lexicographically (real part, then imaginary part) and return
/// the first element with a NaN part if there is one; std and variance are the
/// real mean of |z - mean|²; the abs_ forms and the norms reduce |z| (real),
/// which goes through the real kernel. Accumulated in complex<double>.

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>

#include "tdbg/reduce/detail/needs.hpp"
#include "tdbg/reduce/detail/real_kernel.hpp"
#include "tdbg/reduce/detail/real_stats.hpp"

namespace tdbg::detail {

/// numpy's lexicographic order of complex numbers.
template <class C>
[[nodiscard]] bool complex_less(const C& a, const C& b) noexcept {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

/// numpy's complex multiplication: the textbook formula, no C99 Annex G recovery of infinities.
[[nodiscard]] inline std::complex<double> complex_mul(std::complex<double> a, std::complex<double> b) noexcept {
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

/// What the complex kernel accumulates over a run of values.
template <class C>
struct complex_stats {
    std::uint64_t count = 0;
    std::complex<double> sum{0, 0};
    std::complex<double> mean{0, 0}; ///< Chan, for m2
    double m2 = 0; ///< Σ|z - mean|²
    std::complex<double> prod{1, 0};
    C min{};
    C max{};
    bool saw_nan = false;
    C first_nan{}; ///< numpy's min and max of complex data return the first NaN
    real_stats abs; ///< of |z|

    /// Adds the statistics of the values that follow these.
    void merge(const complex_stats& o) noexcept {
        merge_counted(*this, o, [&](double n_a, double n_b) {
            sum += o.sum;
            chan_merge(mean, m2, n_a, o.mean, o.m2, n_b);
            prod = complex_mul(prod, o.prod);
            min = complex_less(o.min, min) ? o.min : min;
            max = complex_less(max, o.max) ? o.max : max;
            if (!saw_nan && o.saw_nan) {
                saw_nan = true;
                first_nan = o.first_nan;
            }
            abs.merge(o.abs);
        });
    }
};

/// The needs of the real kernel over |z|: one preset, everything.
inline constexpr unsigned complex_abs_preset = real_closure(need_all_real, true);

/// Statistics of n >= 1 complex values of a block (n <= block_size): the
/// complex accumulators when `Complex`, the real kernel over |z| when `with_abs`.
template <bool Complex, class C>
[[nodiscard]] complex_stats<C> complex_block(const C* p, std::size_t n, simd_level level, bool with_abs) noexcept {
    complex_stats<C> st;
    st.count = n;
    if constexpr (Complex) {
        const std::complex<double> first(p[0].real(), p[0].imag());
        const std::complex<double> k =
            std::isfinite(first.real()) && std::isfinite(first.imag()) ? first : std::complex<double>(0, 0);
        std::complex<double> s1(0, 0);
        double s2 = 0;
        std::complex<double> prod(1, 0);
        st.min = p[0];
        st.max = p[0];
        for (std::size_t i = 0; i < n; ++i) {
            const C z = p[i];
            const std::complex<double> x(z.real(), z.imag());
            const std::complex<double> d = x - k;
            s1 += d;
            s2 += d.real() * d.real() + d.imag() * d.imag();
            prod = complex_mul(prod, x);
            st.min = complex_less(z, st.min) ? z : st.min;
            st.max = complex_less(st.max, z) ? z : st.max;
            if (!st.saw_nan && (std::isnan(z.real()) || std::isnan(z.imag()))) {
                st.saw_nan = true;
                st.first_nan = z;
            }
        }
        const auto count = static_cast<double>(n);
        st.sum = count * k + s1;
        st.mean = k + s1 / count;
        const double m2 = s2 - std::norm(s1) / count;
        st.m2 = m2 < 0 ? 0.0 : m2;
        st.prod = prod;
    }
    if (with_abs) {
        st.abs = converted_block<double>(
            p, n, [](const C& z) { return std::abs(std::complex<double>(z.real(), z.imag())); },
            [&](const double* values, std::size_t m) { return real_block<complex_abs_preset>(values, m, level); });
    }
    return st;
}

} // namespace tdbg::detail
