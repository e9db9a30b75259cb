#pragma once
/// \file
/// `reduction_set<Policies...>`: reductions chosen at compile time, computed
/// together in one pass over the data. The kernel computes exactly the
/// accumulators the set needs (`if constexpr` on the policy list) and is the
/// same kernel run-time sets use (compute.hpp), so both give the same bits.
///
///     using stats = tdbg::reduce::reduction_set<tdbg::reduce::min, tdbg::reduce::max, tdbg::reduce::abs_l2>;
///     std::array<tdbg::tensor_value, 3> r = stats::compute(value);
///     double hi = stats::get<tdbg::reduce::max>(r).data_as<float>()[0];  // float32 input keeps float32

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/detail/accumulate.hpp"
#include "tdbg/reduce/partial.hpp"
#include "tdbg/reduce/policies.hpp"

namespace tdbg {
namespace detail {

/// The position of P in Ps... (the first one), or sizeof...(Ps).
template <class P, class... Ps>
constexpr std::size_t index_in() noexcept {
    constexpr bool same[] = {std::is_same_v<P, Ps>..., false};
    std::size_t i = 0;
    while (i < sizeof...(Ps) && !same[i]) {
        ++i;
    }
    return i;
}

/// See tdbg::reduce::reduction_set.
template <class... Policies>
struct reduction_set_impl {
    static_assert((reduce::is_policy_v<Policies> && ...),
                  "reduction_set: every argument must be a policy such as tdbg::reduce::mean or tdbg::reduce::abs_l2");

    /// The number of reductions.
    static constexpr std::size_t size = sizeof...(Policies);
    /// The reductions, in the order of the policies.
    static constexpr std::array<reduction, size> reductions{Policies::value...};
    /// The results of compute(), in the order of the policies.
    using results_type = std::array<tensor_value, size>;

    /// The accumulators the set needs on element type T.
    template <class T>
    static constexpr kernel_key key = key_for<T>(reductions.begin(), reductions.end());

    /// The position of policy P in the set.
    template <class P>
    static constexpr std::size_t index_of = index_in<P, Policies...>();

    /// The result of policy P among `results`.
    template <class P>
    [[nodiscard]] static const tensor_value& get(const results_type& results) noexcept {
        static_assert(index_of<P> < size, "reduction_set::get: the policy is not in the set");
        return results[index_of<P>];
    }

    /// Accumulates data[0..n) (mergeable: see tdbg::reduce::partial).
    template <class T>
    [[nodiscard]] static reduce::partial<T> accumulate(const T* data, std::size_t n, const reduce::options& opts = {}) {
        if (data == nullptr && n != 0) {
            throw error(fmt::format("reduction_set::accumulate: null data for {} elements", n));
        }
        constexpr kernel_key k = key<T>;
        return {detail::accumulate<T, k.a>(data, n, k, opts.max_threads), k};
    }

    /// The results of every reduction of the set from a partial result.
    template <class T>
    [[nodiscard]] static results_type results(const reduce::partial<T>& partial) {
        results_type out;
        for (std::size_t i = 0; i < size; ++i) {
            out[i] = partial.result(reductions[i]);
        }
        return out;
    }

    /// Every reduction of the set over `value`: 0-d tensors of numpy's result dtypes.
    [[nodiscard]] static results_type compute(const tensor_value& value, const reduce::options& opts = {}) {
        return visit_dtype(value.type(), [&](auto tag) -> results_type {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, std::string>) {
                throw dtype_mismatch("reductions need a numeric tensor, found a str tensor");
            } else {
                return results(accumulate(value.data_as<T>(), value.size(), opts));
            }
        });
    }
};

} // namespace detail

namespace reduce {

/// Reductions chosen at compile time (`Policies` from policies.hpp), computed
/// in one pass: `compute(value)`, `accumulate(data, n)` + `results(partial)`,
/// `get<Policy>(results)`, `reductions`, `size`.
template <class... Policies>
using reduction_set = detail::reduction_set_impl<Policies...>;

/// All 18 reductions: the nine kinds, plain then abs_.
using all_reductions = reduction_set<min, max, mean, stddev, variance, sum, prod, l1, l2, abs_min, abs_max, abs_mean,
                                     abs_stddev, abs_variance, abs_sum, abs_prod, abs_l1, abs_l2>;

} // namespace reduce
} // namespace tdbg
