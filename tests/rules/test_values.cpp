// The numeric helpers rules use: numpy.allclose's semantics, numpy.percentile,
// zeros, non-finite values, norms.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/xtensor.hpp"
#include "tdbg/rules/values.hpp"

using tdbg::tensor_value;
using tdbg::rules::allclose;

namespace {
const float nan_f = std::numeric_limits<float>::quiet_NaN();
const float inf_f = std::numeric_limits<float>::infinity();
} // namespace

TEST_CASE("allclose follows numpy.allclose: tolerances, NaN, infinities, shapes, dtypes") {
    const tensor_value a(std::vector<float>{1.0F, 2.0F, 1000.0F});
    CHECK(allclose(a, tensor_value(std::vector<float>{1.0F, 2.0F, 1000.001F})));  // |d| <= 1e-8 + 1e-5 * 1000
    CHECK_FALSE(allclose(a, tensor_value(std::vector<float>{1.0F, 2.0001F, 1000.0F}))); // 1e-4 > 2e-5
    CHECK(allclose(a, tensor_value(std::vector<float>{1.0F, 2.0001F, 1000.0F}), 1e-4));
    CHECK(allclose(a, tensor_value(std::vector<float>{1.0F, 2.0001F, 1000.0F}), 0.0, 2e-4));

    const tensor_value with_nan(std::vector<float>{1.0F, nan_f});
    CHECK_FALSE(allclose(with_nan, with_nan));
    CHECK(allclose(with_nan, with_nan, 1e-5, 1e-8, true));
    const tensor_value with_inf(std::vector<float>{inf_f, -inf_f});
    CHECK(allclose(with_inf, with_inf));
    CHECK_FALSE(allclose(with_inf, tensor_value(std::vector<float>{inf_f, inf_f})));

    CHECK_FALSE(allclose(tensor_value(std::vector<float>{1, 2, 3, 4}, {2, 2}), tensor_value(std::vector<float>{1, 2, 3, 4})));
    CHECK(allclose(tensor_value(std::vector<std::int32_t>{1, 2}), tensor_value(std::vector<double>{1.0, 2.0000000001})));
    CHECK(allclose(tensor_value::scalar(0.5F), tensor_value::scalar(0.5F)));
    const tensor_value halves(std::vector<tdbg::float16>{tdbg::float16(1.0F), tdbg::float16(2.0F)});
    CHECK(allclose(halves, halves));
    CHECK_FALSE(allclose(halves, tensor_value(std::vector<tdbg::float16>{tdbg::float16(1.0F), tdbg::float16(2.5F)})));

    const tensor_value words = tdbg::to_tensor_value(xt::xarray<std::string>{"a", "b"});
    CHECK(allclose(words, tdbg::to_tensor_value(xt::xarray<std::string>{"a", "b"})));
    CHECK_FALSE(allclose(words, tdbg::to_tensor_value(xt::xarray<std::string>{"a", "c"})));
}

TEST_CASE("percentile, zeros, non-finite values, norms and scalars") {
    // numpy.percentile([1, 2, 3, 4], 95) == 3.85, ([1, 2, 3, 4], 5) == 1.15 (linear interpolation)
    CHECK(tdbg::rules::percentile({4, 1, 3, 2}, 95) == Approx(3.85));
    CHECK(tdbg::rules::percentile({4, 1, 3, 2}, 5) == Approx(1.15));
    CHECK(std::isnan(tdbg::rules::percentile({}, 50)));

    CHECK(tdbg::rules::count_zeros(tensor_value(std::vector<float>{0.0F, -0.0F, 1.0F, 0.5F})) == 2);
    CHECK(tdbg::rules::count_zeros(tensor_value(std::vector<bool>{false, true, false})) == 2);

    CHECK(tdbg::rules::has_non_finite(tensor_value(std::vector<float>{1.0F, inf_f})));
    CHECK_FALSE(tdbg::rules::has_non_finite(tensor_value(std::vector<float>{1.0F, inf_f}), true));
    CHECK(tdbg::rules::has_non_finite(tensor_value(std::vector<double>{std::nan("")}), true));
    CHECK_FALSE(tdbg::rules::has_non_finite(tensor_value(std::vector<std::int64_t>{1, 2})));

    CHECK(tdbg::rules::l2_norm(tensor_value(std::vector<float>{3, 4}, {1, 2})) == 5.0);
    CHECK(tdbg::rules::l2_distance(tensor_value(std::vector<float>{1, 1}), tensor_value(std::vector<float>{4, 5})) == 5.0);
    CHECK_THROWS_AS(tdbg::rules::l2_distance(tensor_value(std::vector<float>{1}), tensor_value(std::vector<float>{1, 2})),
                    tdbg::dtype_mismatch);

    CHECK(tdbg::rules::scalar_of(tensor_value::scalar(std::int64_t{7})) == 7.0);
    CHECK(tdbg::rules::scalar_of(tensor_value(std::vector<float>{2.5F})) == 2.5);
    CHECK_THROWS_AS(tdbg::rules::scalar_of(tensor_value(std::vector<float>{1, 2})), tdbg::dtype_mismatch);
    CHECK_THROWS_AS(tdbg::rules::scalar_of(tdbg::to_tensor_value(xt::xarray<std::string>{"x"})), tdbg::dtype_mismatch);
}
