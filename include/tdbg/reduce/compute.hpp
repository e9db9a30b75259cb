#pragma once
/// \file
/// Reductions chosen at run time (smdebug's configuration strings), computed
/// in one fused pass with the same kernels as reduction_set.
///
/// Results are 0-d tensors of numpy's result dtype:
///
/// | input            | min, max (+abs_) | sum, prod (+abs_) | mean, std, variance (+abs_) | l1, l2 |
/// |------------------|------------------|-------------------|-----------------------------|--------|
/// | float16/32/64, bfloat16 | input dtype | input dtype      | input dtype                 | input dtype |
/// | int8..int64      | input dtype      | int64             | float64                     | float64 |
/// | uint8..uint64    | input dtype      | uint64            | float64                     | float64 |
/// | bool             | bool             | int64             | float64                     | float64 |
/// | complex64/128    | complex (abs_: float32/64) | complex (abs_: real) | mean complex; std, variance, abs_ real |
/// real |
///
/// Accuracy: every value is accumulated in double (float16/bfloat16/float32 too)
/// and rounded once to the result dtype; the mean and variance use shifted
/// block sums merged with Chan's formula, so offset data (1e8 + noise) keeps its
/// variance. numpy accumulates float16/float32 in their own precision, so it
/// can differ in the last digits or overflow where tdbg does not. The product
/// keeps a separate exponent: it is the true product rounded to the dtype
/// (inf or 0 only when that is out of range), where numpy can overflow midway.
/// Integer sums and products wrap around in 64 bits like numpy's.
///
/// NaN and ±inf propagate as in numpy: min/max of data with a NaN are NaN,
/// inf - inf in a sum or variance gives NaN, any inf makes std/variance NaN.
/// An empty tensor gives numpy's values (sum 0, prod 1, l1/l2 0, mean/std/
/// variance NaN) and min/max of it throw tdbg::error (numpy raises). abs_ forms
/// are numpy's: numpy.absolute(int8(-128)) stays -128. l1/l2 are element-wise
/// over all elements, never matrix norms. Strings throw dtype_mismatch.

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/partial.hpp"

namespace tdbg {

/// Parses a comma-separated list such as "min,max,abs_mean,l2_norm" (items
/// trimmed of spaces; any spelling parse_reduction accepts). An empty string
/// gives an empty list; an unknown or empty item throws config_error naming it.
[[nodiscard]] inline std::vector<reduction> parse_reduction_list(std::string_view text) {
    std::vector<reduction> out;
    const auto trim = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
            s.remove_prefix(1);
        }
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
            s.remove_suffix(1);
        }
        return s;
    };
    if (trim(text).empty()) {
        return out;
    }
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item = trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        const auto r = parse_reduction(item);
        if (!r) {
            throw config_error("unknown reduction \"" + std::string(item) + "\" in \"" + std::string(text) +
                               "\": expected min, max, mean, std, variance, sum, prod, l1, l2 (norms also as "
                               "l1_norm, l2_norm), each optionally with the prefix abs_");
        }
        out.push_back(*r);
        if (comma == std::string_view::npos) {
            return out;
        }
        start = comma + 1;
    }
}

/// Every reduction in `which` over `value`, in that order, from one pass over
/// the data: 0-d tensors of numpy's result dtypes (see the table above).
[[nodiscard]] inline std::vector<tensor_value>
compute_reductions(const tensor_value& value, const std::vector<reduction>& which, const reduce::options& opts) {
    std::vector<tensor_value> out;
    if (which.empty()) {
        return out;
    }
    out.reserve(which.size());
    visit_dtype(value.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            throw dtype_mismatch("reduction " + reduction_name(which.front()) +
                                 " needs a numeric tensor, found a str tensor");
        } else {
            const auto partial = reduce::accumulate(value.data_as<T>(), value.size(), which, opts);
            for (const reduction r : which) {
                out.push_back(partial.result(r));
            }
        }
    });
    return out;
}

/// compute_reductions with the default options (threads for large tensors).
[[nodiscard]] inline std::vector<tensor_value> compute_reductions(const tensor_value& value,
                                                                  const std::vector<reduction>& which) {
    return compute_reductions(value, which, reduce::options{});
}

/// One reduction of `value`: a 0-d tensor of numpy's result dtype.
[[nodiscard]] inline tensor_value compute_reduction(const tensor_value& value, reduction r) {
    return std::move(compute_reductions(value, std::vector<reduction>{r}).front());
}

} // namespace tdbg
