#pragma once
// Shared by tdbg::cuda's tests: test data of each floating dtype, and the comparison of the
// kernel's reductions (finished on the host) with compute_reductions'.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reduce/reference.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/cuda/reduce.hpp"
#include "tdbg/reduce/compute.hpp"

namespace tdbg::test {

/// A double as an element of T (rounded once).
template <class T>
T element(double v) {
    if constexpr (std::is_same_v<T, double>) {
        return v;
    } else if constexpr (std::is_same_v<T, float>) {
        return static_cast<float>(v);
    } else {
        return T(static_cast<float>(v));
    }
}

/// What a data set holds besides its random values.
enum class specials { none, nan, pos_inf, both_inf, zeros };

/// n values of T: normal(offset, scale) noise, with the specials at fixed places.
template <class T>
std::vector<T> make_data(std::size_t n, std::uint32_t seed, double offset = 0, double scale = 1,
                         specials extra = specials::none) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, scale);
    std::vector<T> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        v.push_back(element<T>(offset + noise(rng)));
    }
    const double inf = std::numeric_limits<double>::infinity();
    if (!v.empty()) {
        switch (extra) {
        case specials::none: break;
        case specials::nan: v[n / 2] = element<T>(std::numeric_limits<double>::quiet_NaN()); break;
        case specials::pos_inf: v[n / 3] = element<T>(inf); break;
        case specials::both_inf:
            v[n / 3] = element<T>(inf);
            v[n - 1] = element<T>(-inf);
            break;
        case specials::zeros:
            v[0] = element<T>(0.0);
            v[n / 2] = element<T>(-0.0);
            break;
        }
    }
    return v;
}

/// The one value of a 0-d floating tensor, as a double.
inline double scalar_of(const tensor_value& t) {
    REQUIRE(t.size() == 1);
    switch (t.type()) {
    case dtype::float32: return *t.data_as<float>();
    case dtype::float64: return *t.data_as<double>();
    case dtype::float16: return t.data_as<float16>()->value();
    case dtype::bfloat16: return t.data_as<bfloat16>()->value();
    default: FAIL("not a floating dtype: " << dtype_name(t.type())); return 0;
    }
}

/// The bits of a 0-d float32/float16/bfloat16 tensor's value mapped to integers whose order is
/// the values' order (adjacent representable values differ by 1; -0 and +0 meet at 0).
inline std::int64_t ordered_bits(const tensor_value& t) {
    std::uint64_t bits = 0;
    std::uint64_t sign_bit = 0;
    if (t.type() == dtype::float32) {
        std::uint32_t b = 0;
        std::memcpy(&b, t.data_as<float>(), sizeof b);
        bits = b;
        sign_bit = 1ULL << 31U;
    } else {
        std::uint16_t b = 0;
        std::memcpy(&b, t.bytes().data(), sizeof b);
        bits = b;
        sign_bit = 1ULL << 15U;
    }
    const auto magnitude = static_cast<std::int64_t>(bits & (sign_bit - 1));
    return (bits & sign_bit) != 0 ? -magnitude : magnitude;
}

/// got (the kernel's statistics, finished) against want (compute_reductions) for reduction r:
/// the same dtype and shape; min and max exactly; float64 within 1e-12 relative (to `scale` when
/// that is larger: Σ|x| for a sum, mean|x| for a mean, where cancellation makes a relative
/// bound on the result meaningless); narrower dtypes equal or one representable value apart
/// (two doubles a few ulps apart can round to neighbours).
inline void check_close(const tensor_value& got, const tensor_value& want, reduction r, double scale) {
    INFO(reduction_name(r) << ": got " << scalar_of(got) << ", want " << scalar_of(want));
    REQUIRE(got.type() == want.type());
    REQUIRE(got.shape() == want.shape());
    const double g = scalar_of(got);
    const double w = scalar_of(want);
    if (std::isnan(w)) {
        CHECK(std::isnan(g));
        return;
    }
    if (r.kind == reduction_kind::min || r.kind == reduction_kind::max || std::isinf(w)) {
        CHECK(g == w);
        return;
    }
    if (got.type() == dtype::float64) {
        CHECK(std::fabs(g - w) <= 1e-12 * std::max(std::fabs(w), scale));
    } else {
        CHECK(std::llabs(ordered_bits(got) - ordered_bits(want)) <= 1);
    }
}

/// The scale check_close measures r's error against, from the exact statistics of the data.
inline double scale_of(reduction r, const cuda::tensor_stats& st) {
    if (r.kind == reduction_kind::sum) {
        return st.abs_sum;
    }
    if (r.kind == reduction_kind::mean && st.count > 0) {
        return st.abs_sum / static_cast<double>(st.count);
    }
    return 0;
}

/// Every reduction finished from `stats` against compute_reductions over `data`; for empty
/// data min and max throw in both.
inline void check_against_cpu(const cuda::tensor_stats& stats, const tensor_value& data) {
    std::vector<reduction> which;
    for (const reduction r : all_18()) {
        if (data.size() == 0 && (r.kind == reduction_kind::min || r.kind == reduction_kind::max)) {
            CHECK_THROWS_AS(cuda::finish(stats, data.type(), {r}), error);
            CHECK_THROWS_AS(compute_reductions(data, {r}), error);
        } else {
            which.push_back(r);
        }
    }
    const std::vector<tensor_value> got = cuda::finish(stats, data.type(), which);
    const std::vector<tensor_value> want = compute_reductions(data, which);
    REQUIRE(got.size() == which.size());
    REQUIRE(want.size() == which.size());
    for (std::size_t i = 0; i < which.size(); ++i) {
        check_close(got[i], want[i], which[i], scale_of(which[i], stats));
    }
}

} // namespace tdbg::test
