#pragma once
/// \file
/// Mergeable statistics of a run of real values, accumulated in double: the one type of them,
/// which the CPU kernels accumulate and tdbg::cuda's kernel leaves per tensor
/// (tdbg::cuda::tensor_stats). Its merge compiles for the host and, under nvcc, for the device,
/// giving the same bits on both.

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>

#include "tdbg/reduce/detail/float_bits.hpp"

namespace tdbg::detail {

/// Elements per block: each block is one kernel call with its own shift and
/// lane sums. A multiple of 12 (4 lanes x 3 products between renormalisations).
inline constexpr std::size_t block_size = 3072;

/// |x|² of a real number (chan_merge's difference of means).
[[nodiscard]] TDBG_CUDA_HD inline double squared_magnitude(double x) noexcept { return x * x; }

/// |z|² of a complex number (chan_merge's difference of means; host only).
template <class T>
[[nodiscard]] double squared_magnitude(const std::complex<T>& z) noexcept {
    return std::norm(z);
}

/// Chan et al.'s update: merges (mean_b, m2_b) of n_b values into (mean, m2) of n_a, where m2
/// is Σ|x - mean|². The one merge of means and M2s: real ones (real_stats, on the host and
/// the device) and complex ones (complex_stats, complex_kernel.hpp).
template <class Mean>
TDBG_CUDA_HD void chan_merge(Mean& mean, double& m2, double n_a, const Mean& mean_b, double m2_b, double n_b) noexcept {
    const double n = n_a + n_b;
    const Mean delta = mean_b - mean;
    mean += delta * (n_b / n);
    m2 += m2_b + squared_magnitude(delta) * (n_a * (n_b / n));
}

/// Moves the binary exponent of a finite non-zero p into e (p in [0.5, 1)), as std::frexp does.
TDBG_CUDA_HD inline void normalise_product(double& p, double& e) noexcept {
    if (p != 0 && is_finite(p)) {
        int exponent = 0;
        p = split_exponent(p, exponent);
        e += exponent;
    }
}

/// The value p * 2^e, saturating to 0 or inf like a product computed in a wide enough type.
[[nodiscard]] inline double product_value(double p, double e) noexcept {
    if (p == 0 || !std::isfinite(p)) {
        return p;
    }
    constexpr double limit = 4096; // beyond every double exponent: ldexp saturates
    const double clamped = e > limit ? limit : (e < -limit ? -limit : e);
    return std::ldexp(p, static_cast<int>(clamped));
}

/// The frame of every merge of statistics (real_stats, complex_stats, integer_stats): `a` takes
/// `o`, those of the values that follow, whole when it holds none, and stays as it is when `o`
/// holds none; else `merge_fields(n_a, n_b)` merges the other fields, given both counts as
/// doubles, and the counts are added.
template <class Stats, class MergeFields>
TDBG_CUDA_HD void merge_counted(Stats& a, const Stats& o, MergeFields&& merge_fields) noexcept {
    if (o.count == 0) {
        return;
    }
    if (a.count == 0) {
        a = o;
        return;
    }
    merge_fields(static_cast<double>(a.count), static_cast<double>(o.count));
    a.count += o.count;
}

/// What the real kernel accumulates over a run of values. Fields the
/// requested reductions do not need keep their initial values. A default-constructed value is
/// the statistics of no values (count 0), which is what an empty tensor gives.
struct real_stats {
    std::uint64_t count = 0;
    double min = HUGE_VAL; ///< NaN values are skipped
    double max = -HUGE_VAL;
    double abs_min = HUGE_VAL;
    double sum = 0; ///< Σx
    double mean = 0; ///< mean of x (Chan), for m2
    double m2 = 0; ///< Σ(x - mean)²
    double abs_sum = 0; ///< Σ|x|; NaN exactly when a NaN was seen
    double abs_mean = 0; ///< mean of |x| (Chan), for abs_m2
    double abs_m2 = 0; ///< Σ(|x| - abs_mean)²
    double sum_sq = 0; ///< Σx²
    double prod = 1; ///< product = prod * 2^prod_exp
    double prod_exp = 0;

    /// True when a NaN was among the values (needs the abs_sum accumulator).
    [[nodiscard]] bool saw_nan() const noexcept { return std::isnan(abs_sum); }

    /// Adds the statistics of the values that follow these.
    TDBG_CUDA_HD void merge(const real_stats& o) noexcept {
        merge_counted(*this, o, [&](double n_a, double n_b) {
            min = o.min < min ? o.min : min;
            max = o.max > max ? o.max : max;
            abs_min = o.abs_min < abs_min ? o.abs_min : abs_min;
            sum += o.sum;
            abs_sum += o.abs_sum;
            sum_sq += o.sum_sq;
            chan_merge(mean, m2, n_a, o.mean, o.m2, n_b);
            chan_merge(abs_mean, abs_m2, n_a, o.abs_mean, o.abs_m2, n_b);
            prod *= o.prod;
            prod_exp += o.prod_exp;
            normalise_product(prod, prod_exp);
        });
    }
};

/// The statistics of a's values followed by b's (real_stats::merge).
[[nodiscard]] TDBG_CUDA_HD inline real_stats merged(real_stats a, const real_stats& b) noexcept {
    a.merge(b);
    return a;
}

} // namespace tdbg::detail
