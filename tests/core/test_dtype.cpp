#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"

using namespace tdbg;

TEST_CASE("dtype numbers are TensorFlow's DataType numbers") {
    CHECK(static_cast<int>(dtype::float32) == 1);
    CHECK(static_cast<int>(dtype::float16) == 19);
    CHECK(static_cast<int>(dtype::bfloat16) == 14);
    CHECK(static_cast<int>(dtype::uint64) == 23);
    CHECK(dtype_v<float> == dtype::float32);
    CHECK(dtype_v<std::int8_t> == dtype::int8);
    CHECK(dtype_v<bool> == dtype::boolean);
    CHECK(dtype_v<std::complex<double>> == dtype::complex128);
    CHECK_FALSE(dtype_from_int(11).has_value());
    CHECK(dtype_from_int(22) == dtype::uint32);
}

TEST_CASE("dtype names round-trip and sizes match the C++ types") {
    for (int v : {1, 2, 3, 4, 5, 6, 8, 9, 10, 14, 17, 18, 19, 22, 23}) {
        const auto d = static_cast<dtype>(v);
        CHECK(dtype_from_name(dtype_name(d)) == d);
        const std::size_t cpp_size = visit_dtype(d, [](auto tag) { return sizeof(typename decltype(tag)::type); });
        CHECK(dtype_size(d) == cpp_size);
    }
    CHECK(dtype_name(dtype::boolean) == "bool");
    CHECK_FALSE(dtype_from_name("float128").has_value());
}

TEST_CASE("float16 converts like numpy, rounding to nearest even") {
    CHECK(float16(1.0F).bits == 0x3C00);
    CHECK(float16(-2.0F).bits == 0xC000);
    CHECK(float16(65504.0F).bits == 0x7BFF);
    CHECK(float16(65520.0F).bits == 0x7C00); // rounds up to inf
    CHECK(float16(std::numeric_limits<float>::infinity()).bits == 0x7C00);
    CHECK(std::isnan(float16(std::nanf("")).value()));
    CHECK(float16(5.960464477539063e-08F).bits == 0x0001); // smallest subnormal
    CHECK(float16(2.98023223876953125e-08F).bits == 0x0000); // exactly half of it: ties to even
    CHECK(float16(1.0009765625F).bits == 0x3C01);
    CHECK(float16(1.00048828125F).bits == 0x3C00); // halfway between 0x3C00 and 0x3C01: even
    CHECK(float16::to_float(0x3555) == Approx(0.333251953125F));
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float f = float16::to_float(bits);
        if (!std::isnan(f)) {
            REQUIRE(float16(f).bits == bits);
        }
    }
}

TEST_CASE("bfloat16 keeps the upper half of a float") {
    CHECK(bfloat16(1.0F).bits == 0x3F80);
    CHECK(bfloat16(-3.0F).value() == -3.0F);
    CHECK(bfloat16::from_bits(0x4049).value() == Approx(3.140625F));
    CHECK(std::isnan(bfloat16(std::nanf("")).value()));
}

TEST_CASE("modes parse in smdebug's spellings") {
    CHECK(parse_mode("TRAIN") == mode::train);
    CHECK(parse_mode("eval") == mode::eval);
    CHECK(parse_mode("ModeKeys.PREDICT") == mode::predict);
    CHECK(mode_name(mode::global) == "GLOBAL");
    CHECK_THROWS_AS(parse_mode("TEST"), config_error);
    CHECK(mode_from_int(2) == mode::eval);
    CHECK_FALSE(mode_from_int(5).has_value());
}

TEST_CASE("reductions parse every spelling smdebug writes") {
    CHECK(parse_reduction("l2_norm") == reduction{reduction_kind::l2, false});
    CHECK(parse_reduction("abs_l1_norm") == reduction{reduction_kind::l1, true});
    CHECK(parse_reduction("abs_mean") == reduction{reduction_kind::mean, true});
    CHECK(parse_reduction("variance") == reduction{reduction_kind::variance, false});
    CHECK_FALSE(parse_reduction("mean_norm").has_value());
    CHECK_FALSE(parse_reduction("median").has_value());
    CHECK(reduction_config_name({reduction_kind::l2, true}) == "abs_l2_norm");
    CHECK(reduction_name({reduction_kind::l2, true}) == "abs_l2");
}
