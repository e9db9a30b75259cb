#pragma once
/// \file
/// Partial reduction results that merge: reduce chunks of a tensor apart (on
/// other threads, or as data streams in) and combine them afterwards. Moments
/// merge with Chan's formula, so a merged variance is as accurate as a
/// one-shot one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/options.hpp"
#include "tdbg/reduce/detail/accumulate.hpp"
#include "tdbg/reduce/detail/finish.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg {

namespace detail {

/// See tdbg::reduce::partial.
template <class T>
class partial_result {
public:
    using element_type = T;

    partial_result() = default;
    partial_result(stats_t<T> stats, kernel_key key) : stats_(stats), key_(key) {}

    /// The number of elements reduced so far.
    [[nodiscard]] std::uint64_t count() const noexcept { return stats_.count; }

    /// Adds the partial results of the elements that follow these. Keeps the
    /// reductions both partials can give.
    void merge(const partial_result& other) noexcept {
        if (other.count() == 0) {
            return;
        }
        if (count() == 0) {
            *this = other;
            return;
        }
        stats_.merge(other.stats_);
        key_ = {key_.a & other.key_.a, key_.b & other.key_.b, key_.c & other.key_.c};
    }

    /// True when `result(r)` can be computed from what was accumulated.
    [[nodiscard]] bool has(reduction r) const noexcept { return covers(key_, key_for<T>(&r, &r + 1)); }

    /// Reduction r of all the elements: a 0-d tensor of numpy's result dtype. std and variance
    /// divide by count - `ddof` (0: numpy's default; 1: torch's unbiased default).
    [[nodiscard]] tensor_value result(reduction r, unsigned ddof = 0) const { return value(r, ddof).to_tensor(); }

    /// result(r, ddof) as a reduction_value: the same element, no allocation.
    [[nodiscard]] reduction_value value(reduction r, unsigned ddof = 0) const {
        if (!has(r)) {
            throw error(fmt::format("reduction {} was not among the reductions this partial result accumulated",
                                    reduction_name(r)));
        }
        return finish<T>(stats_, r, ddof);
    }

    /// The accumulators (for tests and other kernels of this library).
    [[nodiscard]] const stats_t<T>& stats() const noexcept { return stats_; }

private:
    stats_t<T> stats_{};
    kernel_key key_{};
};

} // namespace detail

namespace reduce {

/// Mergeable partial results of reductions over elements of type T: `merge`,
/// `count`, `has(reduction)` and `result(reduction)`.
template <class T>
using partial = detail::partial_result<T>;

/// Accumulates `data[0..n)` for the reductions `which` (run-time set; see reduction_set for compile-time ones).
template <class T>
[[nodiscard]] partial<T> accumulate(const T* data, ::std::size_t n, const ::std::vector<reduction>& which,
                                    const options& opts = {}) {
    if (data == nullptr && n != 0) {
        throw error(fmt::format("tdbg::reduce::accumulate: null data for {} elements", n));
    }
    const detail::kernel_key key = detail::preset_key<T>(detail::key_for<T>(which.begin(), which.end()));
    return {detail::accumulate_runtime<T>(key, data, n, opts.max_threads), key};
}

} // namespace reduce
} // namespace tdbg
