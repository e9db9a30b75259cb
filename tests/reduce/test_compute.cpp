// compute_reductions / compute_reduction / parse_reduction_list: every
// reduction on every numeric dtype against naive long double loops, numpy's
// result dtypes, NaN/inf/empty/0-d inputs.

#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "reference.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/reduction_value.hpp"

using namespace tdbg;
using tdbg::test::all_18;
using tdbg::test::check_result;
using tdbg::test::make_tensor;
using tdbg::test::random_values;
using tdbg::test::reference;

namespace {

// Every reduction of v, computed together and one at a time, against the reference.
template <class T>
void check_all(const std::vector<T>& v) {
    const tensor_value value = make_tensor(v);
    const auto which = all_18();
    const std::vector<tensor_value> together = compute_reductions(value, which);
    REQUIRE(together.size() == which.size());
    // What the hook's save_tensor<T> computes: T's kernels alone, the same results.
    const std::vector<tensor_value> typed = compute_reductions_of<T>(value, which);
    REQUIRE(typed.size() == which.size());
    // What the hook encodes its records from: the same elements, appended after what was there.
    std::vector<reduction_value> values{reduction_value::of(std::int8_t{-3})};
    compute_reduction_values_of<T>(value, which, {}, values);
    REQUIRE(values.size() == which.size() + 1);
    CHECK(values.front().type() == dtype::int8);
    std::vector<reduction_value> dynamic;
    compute_reduction_values(value, which, {}, dynamic);
    REQUIRE(dynamic.size() == which.size());
    for (std::size_t i = 0; i < which.size(); ++i) {
        INFO(dtype_name(dtype_v<T>) << " n=" << v.size() << " " << reduction_name(which[i]));
        const auto want = reference(v, which[i]);
        REQUIRE_FALSE(want.throws);
        check_result(together[i], want);
        const tensor_value alone = compute_reduction(value, which[i]);
        CHECK(alone.bytes() == together[i].bytes());
        CHECK(typed[i].type() == together[i].type());
        CHECK(typed[i].bytes() == together[i].bytes());
        CHECK(values[i + 1].type() == together[i].type());
        CHECK(values[i + 1].bytes() == together[i].bytes());
        CHECK(dynamic[i].type() == together[i].type());
        CHECK(dynamic[i].bytes() == together[i].bytes());
        const tensor_value back = values[i + 1].to_tensor();
        CHECK(back.dimension() == 0);
        CHECK(back.bytes() == together[i].bytes());
    }
}

template <class T>
void check_sizes() {
    // One block with a tail, several blocks, and (for some types) several chunks.
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{2 * 3072 + 5}}) {
        check_all(random_values<T>(n, static_cast<std::uint32_t>(n)));
    }
}

} // namespace

TEST_CASE("every reduction of floating-point tensors matches long double loops") {
    check_sizes<float>();
    check_sizes<double>();
    check_sizes<float16>();
    check_sizes<bfloat16>();
}

TEST_CASE("every reduction of integer tensors matches numpy's integer semantics") {
    check_sizes<std::int8_t>();
    check_sizes<std::int16_t>();
    check_sizes<std::int32_t>();
    check_sizes<std::int64_t>();
    check_sizes<std::uint8_t>();
    check_sizes<std::uint16_t>();
    check_sizes<std::uint32_t>();
    check_sizes<std::uint64_t>();
}

TEST_CASE("every reduction of bool and complex tensors matches numpy") {
    check_sizes<bool>();
    check_sizes<std::complex<float>>();
    check_sizes<std::complex<double>>();
}

TEST_CASE("tensors larger than one chunk reduce like small ones") {
    // 200003 elements: two chunks of the parallel split, many blocks.
    check_all(random_values<float>(200003, 11));
    check_all(random_values<std::int32_t>(200003, 12));
}

TEST_CASE("result dtypes follow numpy's promotions") {
    const auto dtype_of = [](const tensor_value& v, const char* r) {
        return compute_reduction(v, *parse_reduction(r)).type();
    };
    const tensor_value f32(std::vector<float>{1, 2});
    CHECK(dtype_of(f32, "mean") == dtype::float32);
    CHECK(dtype_of(f32, "prod") == dtype::float32);
    const tensor_value i8(std::vector<std::int8_t>{1, 2});
    CHECK(dtype_of(i8, "min") == dtype::int8);
    CHECK(dtype_of(i8, "sum") == dtype::int64);
    CHECK(dtype_of(i8, "abs_prod") == dtype::int64);
    CHECK(dtype_of(i8, "mean") == dtype::float64);
    CHECK(dtype_of(i8, "l1") == dtype::float64);
    const tensor_value u16(std::vector<std::uint16_t>{1, 2});
    CHECK(dtype_of(u16, "sum") == dtype::uint64);
    CHECK(dtype_of(u16, "abs_max") == dtype::uint16);
    const tensor_value b(std::vector<bool>{true, false});
    CHECK(dtype_of(b, "max") == dtype::boolean);
    CHECK(dtype_of(b, "sum") == dtype::int64);
    CHECK(dtype_of(b, "std") == dtype::float64);
    const tensor_value h(std::vector<float16>{float16(1.0F)});
    CHECK(dtype_of(h, "variance") == dtype::float16);
    const tensor_value c(std::vector<std::complex<float>>{{1, 2}});
    CHECK(dtype_of(c, "mean") == dtype::complex64);
    CHECK(dtype_of(c, "std") == dtype::float32);
    CHECK(dtype_of(c, "abs_max") == dtype::float32);
    CHECK(dtype_of(c, "l2") == dtype::float32);
}

TEST_CASE("NaN and infinities propagate as in numpy") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const auto value_of = [](const tensor_value& v, const char* r) {
        return static_cast<double>(tdbg::test::scalar_value(compute_reduction(v, *parse_reduction(r))).first);
    };
    SECTION("a NaN makes every reduction NaN") {
        const tensor_value v(std::vector<float>{1, nan, -3});
        for (const reduction r : all_18()) {
            INFO(reduction_name(r));
            CHECK(std::isnan(tdbg::test::scalar_value(compute_reduction(v, r)).first));
        }
    }
    SECTION("a NaN in a later block still wins min and max") {
        std::vector<double> data(10000, 1.0);
        data[9000] = std::numeric_limits<double>::quiet_NaN();
        const tensor_value v(std::move(data));
        CHECK(std::isnan(value_of(v, "min")));
        CHECK(std::isnan(value_of(v, "abs_max")));
        CHECK(std::isnan(value_of(v, "abs_min")));
    }
    SECTION("one infinity") {
        const tensor_value v(std::vector<float>{1, inf, -3});
        CHECK(value_of(v, "min") == -3);
        CHECK(value_of(v, "max") == inf);
        CHECK(value_of(v, "mean") == inf);
        CHECK(std::isnan(value_of(v, "std")));
        CHECK(std::isnan(value_of(v, "variance")));
        CHECK(value_of(v, "sum") == inf);
        CHECK(value_of(v, "prod") == -inf);
        CHECK(value_of(v, "l1") == inf);
        CHECK(value_of(v, "l2") == inf);
        CHECK(value_of(v, "abs_min") == 1);
        CHECK(value_of(v, "abs_max") == inf);
        CHECK(value_of(v, "abs_prod") == inf);
        CHECK(std::isnan(value_of(v, "abs_variance")));
    }
    SECTION("inf - inf") {
        const tensor_value v(std::vector<double>{inf, -inf});
        CHECK(std::isnan(value_of(v, "sum")));
        CHECK(std::isnan(value_of(v, "mean")));
        CHECK(value_of(v, "abs_mean") == inf);
        CHECK(value_of(v, "prod") == -inf);
        CHECK(value_of(v, "min") == -inf);
    }
    SECTION("zero times infinity") {
        const tensor_value v(std::vector<double>{0.0, 2.0, inf});
        CHECK(std::isnan(value_of(v, "prod")));
        const tensor_value w(std::vector<float>{0.0F, 2.0F, inf});
        CHECK(std::isnan(value_of(w, "prod")));
    }
    SECTION("float16 infinity") {
        const tensor_value v(std::vector<float16>{float16(1.0F), float16(inf)});
        CHECK(value_of(v, "max") == inf);
        CHECK(std::isnan(value_of(v, "std")));
    }
    SECTION("complex with a NaN part: numpy's min and max return the first NaN element") {
        const tensor_value v(std::vector<std::complex<double>>{{1, 1}, {0, nan}, {3, 0}, {nan, 0}});
        const tensor_value mn = compute_reduction(v, reduction{reduction_kind::min, false});
        const auto z = mn.data_as<std::complex<double>>()[0];
        CHECK(z.real() == 0);
        CHECK(std::isnan(z.imag()));
        CHECK(std::isnan(value_of(v, "abs_max")));
    }
}

TEST_CASE("an empty tensor gives numpy's values, and min/max of it throw") {
    const auto check_empty = [](const tensor_value& v) {
        for (const reduction r : all_18()) {
            INFO(dtype_name(v.type()) << " " << reduction_name(r));
            if (r.kind == reduction_kind::min || r.kind == reduction_kind::max) {
                CHECK_THROWS_AS(compute_reduction(v, r), tdbg::error);
                continue;
            }
            const auto got = tdbg::test::scalar_value(compute_reduction(v, r)).first;
            switch (r.kind) {
            case reduction_kind::sum:
            case reduction_kind::l1:
            case reduction_kind::l2: CHECK(got == 0); break;
            case reduction_kind::prod: CHECK(got == 1); break;
            default: CHECK(std::isnan(got)); break;
            }
        }
    };
    check_empty(tensor_value(std::vector<float>{}));
    check_empty(tensor_value(std::vector<double>{}, {0, 3}));
    check_empty(tensor_value(std::vector<std::int32_t>{}));
    check_empty(tensor_value(std::vector<bool>{}));
    check_empty(tensor_value(std::vector<float16>{}));
    check_empty(tensor_value(std::vector<std::complex<float>>{}));
    try {
        (void)compute_reduction(tensor_value(std::vector<float>{}), reduction{reduction_kind::max, false});
        FAIL("max of an empty tensor did not throw");
    } catch (const tdbg::error& e) {
        CHECK_THAT(e.what(), Catch::Contains("max") && Catch::Contains("empty"));
    }
}

TEST_CASE("a 0-d tensor reduces like its one element") {
    const tensor_value v = tensor_value::scalar(-2.5F);
    const auto value_of = [&](const char* r) {
        const tensor_value out = compute_reduction(v, *parse_reduction(r));
        CHECK(out.shape().empty());
        return static_cast<double>(tdbg::test::scalar_value(out).first);
    };
    CHECK(value_of("min") == -2.5);
    CHECK(value_of("max") == -2.5);
    CHECK(value_of("mean") == -2.5);
    CHECK(value_of("std") == 0);
    CHECK(value_of("prod") == -2.5);
    CHECK(value_of("l1") == 2.5); // numpy.linalg.norm raises on 0-d input; Σ|x| is defined
    CHECK(value_of("l2") == 2.5);
    CHECK(value_of("abs_min") == 2.5);
    const tensor_value i = tensor_value::scalar(std::int64_t{-7});
    CHECK(tdbg::test::scalar_value(compute_reduction(i, *parse_reduction("abs_sum"))).first == 7);
}

TEST_CASE("l1 and l2 are element-wise over all elements, whatever the rank") {
    // A 2x2 matrix: the matrix 1-norm (max column sum) would be 6, the spectral norm ~5.465.
    const tensor_value m(std::vector<double>{1, -2, 3, 4}, {2, 2});
    CHECK(tdbg::test::scalar_value(compute_reduction(m, *parse_reduction("l1"))).first == 10);
    CHECK(tdbg::test::scalar_value(compute_reduction(m, *parse_reduction("l2_norm"))).first ==
          Approx(std::sqrt(30.0)).epsilon(1e-15));
    const tensor_value t(std::vector<float>(24, -0.5F), {2, 3, 4});
    CHECK(tdbg::test::scalar_value(compute_reduction(t, *parse_reduction("abs_l1_norm"))).first == 12);
}

TEST_CASE("products keep their exponent apart: no spurious overflow, underflow or NaN") {
    SECTION("float32: 1e30s then 1e-30s, spread over the lanes") {
        std::vector<float> data;
        for (int i = 0; i < 24; ++i) {
            data.push_back(1e30F);
        }
        for (int i = 0; i < 24; ++i) {
            data.push_back(1e-30F);
        }
        long double want = 1;
        for (const float x : data) {
            want *= x;
        }
        const auto got = tdbg::test::scalar_value(compute_reduction(tensor_value(std::vector<float>(data)),
                                                                    reduction{reduction_kind::prod, false}))
                             .first;
        CHECK(static_cast<double>(got) == Approx(static_cast<double>(want)).epsilon(1e-6));
    }
    SECTION("float64 near the top of the range") {
        const tensor_value v(std::vector<double>{1e300, 1e300, 1e-300, 1e-300, 3.0});
        const auto got = tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::prod, false})).first;
        CHECK(static_cast<double>(got) == Approx(3.0).epsilon(1e-12));
    }
    SECTION("float64 subnormals") {
        const double tiny = std::numeric_limits<double>::denorm_min() * 1024;
        const tensor_value v(std::vector<double>{tiny, 1e300, 4.0, 2.0});
        long double want = tiny;
        want = want * 1e300L * 8.0L;
        const auto got = tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::prod, false})).first;
        CHECK(static_cast<double>(got) == Approx(static_cast<double>(want)).epsilon(1e-12));
    }
    SECTION("overflow and underflow happen in the result dtype") {
        const tensor_value big(std::vector<float>(40, 10.0F));
        CHECK(tdbg::test::scalar_value(compute_reduction(big, reduction{reduction_kind::prod, false})).first ==
              std::numeric_limits<float>::infinity());
        const tensor_value small(std::vector<float>(50, -0.1F));
        const auto zero =
            tdbg::test::scalar_value(compute_reduction(small, reduction{reduction_kind::prod, false})).first;
        CHECK(zero == 0);
        const tensor_value half(std::vector<float16>(10, float16(10.0F)));
        CHECK(tdbg::test::scalar_value(compute_reduction(half, reduction{reduction_kind::sum, false})).first == 100);
        CHECK(std::isinf(
            tdbg::test::scalar_value(compute_reduction(half, reduction{reduction_kind::prod, false})).first));
    }
    SECTION("integer products and sums wrap like numpy's int64") {
        const tensor_value v(std::vector<std::int64_t>{std::int64_t{1} << 62, std::int64_t{1} << 62, 3});
        CHECK(tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::prod, false})).first == 0);
        CHECK(tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::sum, false})).first ==
              static_cast<long double>(std::numeric_limits<std::int64_t>::min() + 3));
    }
}

TEST_CASE("numpy.absolute keeps the most negative integer negative") {
    const tensor_value v(std::vector<std::int8_t>{-128, 5, 3});
    const auto value_of = [&](const char* r) {
        return tdbg::test::scalar_value(compute_reduction(v, *parse_reduction(r))).first;
    };
    CHECK(value_of("abs_min") == -128);
    CHECK(value_of("abs_max") == 5);
    CHECK(value_of("abs_sum") == -120);
    CHECK(value_of("abs_mean") == -40);
    CHECK(value_of("l1") == 136); // norms convert to float64 before taking |x|
    CHECK(value_of("abs_l1") == 136);
}

TEST_CASE("offset data keeps an accurate variance") {
    SECTION("float32: 1e8 plus a few units of its spacing") {
        // float32 spacing at 1e8 is 8: values 1e8 + 8k, variance 64 * var(k).
        std::vector<float> data;
        std::vector<long double> ks;
        for (int i = 0; i < 1000000; ++i) {
            const int k = static_cast<int>((static_cast<unsigned>(i) * 7919U) % 5U) - 2;
            data.push_back(1e8F + 8.0F * static_cast<float>(k));
            ks.push_back(k);
        }
        long double mean = 0;
        for (const long double k : ks) {
            mean += k;
        }
        mean /= static_cast<long double>(ks.size());
        long double m2 = 0;
        for (const long double k : ks) {
            m2 += (k - mean) * (k - mean);
        }
        const long double want = 64 * m2 / static_cast<long double>(ks.size());
        const tensor_value v(std::move(data));
        const auto got =
            tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::variance, false})).first;
        CHECK(static_cast<double>(got) == Approx(static_cast<double>(want)).epsilon(1e-6));
    }
    SECTION("float64: 1e9 plus noise of 1e-3") {
        const auto noise = random_values<double>(100000, 5);
        std::vector<double> data;
        for (const double n : noise) {
            data.push_back(1e9 + 1e-3 * n);
        }
        const auto want = reference(data, reduction{reduction_kind::std, false}).re;
        const tensor_value v(std::move(data));
        const auto got = tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::std, false})).first;
        CHECK(static_cast<double>(got) == Approx(static_cast<double>(want)).epsilon(1e-6));
        const auto abs_got = tdbg::test::scalar_value(compute_reduction(v, reduction{reduction_kind::std, true})).first;
        CHECK(static_cast<double>(abs_got) == Approx(static_cast<double>(want)).epsilon(1e-6));
    }
}

TEST_CASE("string tensors have no reductions") {
    const tensor_value s(std::vector<std::string>{"a", "b"});
    CHECK_THROWS_AS(compute_reduction(s, reduction{reduction_kind::mean, false}), tdbg::dtype_mismatch);
    CHECK_THROWS_AS(compute_reductions_of<std::string>(s, {reduction{reduction_kind::mean, false}}),
                    tdbg::dtype_mismatch);
    CHECK(compute_reductions(s, {}).empty());
    CHECK(compute_reductions_of<std::string>(s, {}).empty());
}

TEST_CASE("compute_reductions_of<T> refuses a tensor of another dtype, naming both") {
    const tensor_value d(std::vector<double>{1.0, 2.0});
    const std::string message =
        tdbg::test::error_of([&] { (void)compute_reductions_of<float>(d, {reduction{reduction_kind::mean, false}}); });
    CHECK(message == "compute_reductions_of<float32> given a float64 tensor");
}

TEST_CASE("parse_reduction_list reads smdebug's spellings") {
    const auto list = parse_reduction_list("min,max, mean ,l2_norm,abs_l1_norm,abs_variance,l1");
    const std::vector<reduction> want{{reduction_kind::min, false},  {reduction_kind::max, false},
                                      {reduction_kind::mean, false}, {reduction_kind::l2, false},
                                      {reduction_kind::l1, true},    {reduction_kind::variance, true},
                                      {reduction_kind::l1, false}};
    CHECK(list == want);
    CHECK(parse_reduction_list("").empty());
    CHECK(parse_reduction_list("  ").empty());
    try {
        (void)parse_reduction_list("min,median,max");
        FAIL("no exception");
    } catch (const tdbg::config_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("'median'") && Catch::Contains("'min,median,max'"));
    }
    // Empty items are skipped, as in reduction configs and collection files (one reader: split_list).
    CHECK(parse_reduction_list("min,,\tmax,") == std::vector<reduction>{{reduction_kind::min, false},
                                                                         {reduction_kind::max, false}});
    CHECK(tdbg::split_list(" a ,\tb\t,, c") == std::vector<std::string_view>{"a", "b", "c"});
    CHECK(tdbg::split_list(",").empty());
    CHECK_THROWS_AS(parse_reduction_list("mean_norm"), tdbg::config_error);
}

TEST_CASE("reduction_value holds one element of any numeric dtype, and refuses anything else") {
    const reduction_value f = reduction_value::of(2.5F);
    CHECK(f.type() == dtype::float32);
    CHECK(f.bytes().size() == 4);
    CHECK(*f.to_tensor().data_as<float>() == 2.5F);
    CHECK(f.to_tensor({1}).shape() == tensor_value::shape_type{1});

    const reduction_value b = reduction_value::of(true);
    CHECK(b.type() == dtype::boolean);
    CHECK(b.bytes() == std::string_view("\x01", 1));

    const std::complex<double> z(1.5, -2.0);
    const reduction_value c = reduction_value::of(z);
    CHECK(c.type() == dtype::complex128);
    CHECK(c.bytes().size() == 16);
    CHECK(*c.to_tensor().data_as<std::complex<double>>() == z);

    // From a one-element tensor of any shape: the same bytes.
    const tensor_value one(std::vector<std::int16_t>{-7}, {1, 1});
    const reduction_value from = reduction_value::from(one);
    CHECK(from.type() == dtype::int16);
    CHECK(from.bytes() == one.bytes());

    // Torch's int64 for an unsigned sum: the same bits; a size mismatch is refused.
    const reduction_value sum = reduction_value::of(std::uint64_t{1} << 63U);
    const reduction_value as_int = sum.retyped(dtype::int64);
    CHECK(as_int.type() == dtype::int64);
    CHECK(as_int.bytes() == sum.bytes());
    CHECK(tdbg::test::error_of([&] { (void)sum.retyped(dtype::int32); }) ==
          "cannot read a uint64 reduction as int32: their sizes differ");

    CHECK(tdbg::test::error_of([&] { (void)reduction_value::from(tensor_value(std::vector<float>{1, 2})); }) ==
          "a reduction's value is one numeric element; found a float32 tensor of 2 elements");
    CHECK(tdbg::test::error_of([&] {
              (void)reduction_value::from(tensor_value(std::vector<std::string>{"a"}));
          }) == "a reduction's value is one numeric element; found a str tensor of 1 elements");
}
