#pragma once
// Access to the fixture runs and their golden files (what Python smdebug's
// reader returned for them) for the trial tests.

#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "golden_checker.hpp"
#include "support.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg::test {

/// The fixture run `run` (tests/fixtures/smdebug/<run>).
inline std::filesystem::path fixture_run(const std::string& run) { return fixtures_dir() / run; }

/// The golden file of `run`, parsed.
inline nlohmann::json load_golden(const std::string& run) {
    const auto dir = fixtures_dir();
    std::ifstream in(dir / (run + ".golden.json"), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return nlohmann::json::parse(buffer.str());
}

/// Element `i` of a numeric tensor as a double.
inline double element(const tensor_value& value, std::size_t i) {
    return visit_dtype(value.type(), [&](auto tag) -> double {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::complex<float>> ||
                      std::is_same_v<T, std::complex<double>>) {
            return std::nan("");
        } else if constexpr (std::is_same_v<T, tdbg::float16> || std::is_same_v<T, tdbg::bfloat16>) {
            return static_cast<double>(value.data_as<T>()[i].value());
        } else if constexpr (std::is_same_v<T, bool>) {
            return value.bytes()[i] != 0 ? 1.0 : 0.0;
        } else {
            return static_cast<double>(value.data_as<T>()[i]);
        }
    });
}

/// True when `a` and `b` agree within `rtol` relative to `scale` (NaNs agree; infinities must be equal).
inline bool close(double a, double b, double rtol, double scale) {
    if (std::isnan(a) || std::isnan(b)) {
        return std::isnan(a) && std::isnan(b);
    }
    if (std::isinf(a) || std::isinf(b)) {
        return a == b;
    }
    return std::fabs(a - b) <= rtol * std::max({std::fabs(a), std::fabs(b), scale}) + 1e-300;
}

/// The relative tolerance for results of dtype `name` computed in another order than numpy's.
inline double tolerance_for(const std::string& dtype_name) {
    if (dtype_name == "float16") {
        return 4e-3;
    }
    if (dtype_name == "float32") {
        return 2e-5;
    }
    return 1e-9;
}

} // namespace tdbg::test
