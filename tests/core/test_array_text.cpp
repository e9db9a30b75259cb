#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "tdbg/core/array_text.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"

using tdbg::array_text;
using tdbg::scalar_text;
using tdbg::tensor_value;

// Each expected text is what numpy 1.24's str() prints of the same array.
TEST_CASE("array_text: a tensor's values as numpy prints them, without the command line") {
    CHECK(array_text(tensor_value(std::vector<float>{0.1F, 1.0F, 2.5F})) == "[0.1 1.  2.5]");
    std::vector<std::int32_t> counting(2000);
    std::iota(counting.begin(), counting.end(), 0);
    CHECK(array_text(tensor_value(counting)) == "[   0    1    2 ... 1997 1998 1999]");
    CHECK(array_text(tensor_value::scalar(1e-5F)) == "1e-05");
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(array_text(tensor_value(std::vector<double>{1.5, -2, std::nan(""), inf}, {2, 2})) ==
          "[[ 1.5 -2. ]\n [ nan  inf]]");
    CHECK(array_text(tensor_value(std::vector<double>{1e-5, 1, 1e9})) == "[1.e-05 1.e+00 1.e+09]");
    CHECK(array_text(tensor_value(std::vector<bool>{true, false})) == "[ True False]");
    std::vector<std::int64_t> block(24);
    std::iota(block.begin(), block.end(), 0);
    CHECK(array_text(tensor_value(block, {2, 3, 4})) ==
          "[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]");
    CHECK(array_text(tensor_value(std::vector<std::complex<float>>{{1, 2}, {-0.5F, -1}})) == "[ 1. +2.j -0.5-1.j]");
    CHECK(array_text(tensor_value(std::vector<std::complex<double>>{{1, 2}, {-0.5, -1}, {3.25, 0}})) ==
          "[ 1.  +2.j -0.5 -1.j  3.25+0.j]");
    CHECK(array_text(tensor_value(std::vector<std::complex<double>>{{1e-5, 1}, {2, 3}})) == "[1.e-05+1.j 2.e+00+3.j]");
    CHECK(array_text(tensor_value(std::vector<std::complex<double>>{{std::nan(""), 1}, {std::nan(""), inf}})) ==
          "[nan +1.j nan+infj]");
    CHECK(array_text(tensor_value(std::vector<std::string>{"a", "bc"})) == "['a' 'bc']");
    CHECK(array_text(tensor_value(std::vector<float>{}, {0, 3})) == "[]");
}

TEST_CASE("scalar_text: one element as numpy prints a scalar, in its own type's digits") {
    CHECK(scalar_text(tensor_value::scalar(0.5)) == "0.5");
    CHECK(scalar_text(tensor_value::scalar(0.1F)) == "0.1");            // float32's 0.1, not 0.100000001
    CHECK(scalar_text(tensor_value::scalar(tdbg::float16(0.1F))) == "0.1"); // float16's own digits
    CHECK(scalar_text(tensor_value::scalar(std::int64_t{-3})) == "-3");
    CHECK(scalar_text(tensor_value::scalar(true)) == "True");
    CHECK(scalar_text(tensor_value::scalar(std::complex<float>(1, 2))) == "(1+2j)");
    CHECK(scalar_text(tensor_value::scalar(std::complex<double>(-0.5, -1.25))) == "(-0.5-1.25j)");
    CHECK(scalar_text(tensor_value::scalar(std::complex<float>(0, 2))) == "2j");
    CHECK(scalar_text(tensor_value(std::vector<float>{2.0F, 3.0F})) == "2.0"); // the first element
    CHECK(scalar_text(tensor_value(std::vector<float>{})) == "[]");
}
