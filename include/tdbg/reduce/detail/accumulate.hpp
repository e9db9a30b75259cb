#pragma once
/// \file
/// From a typed run of elements and a kernel key to merged statistics: the
/// block loop, the choice between the SSE2 and AVX2 builds of the kernels at
/// run time, and the split across threads.

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/reduce/detail/complex_kernel.hpp"
#include "tdbg/reduce/detail/integer_kernel.hpp"
#include "tdbg/reduce/detail/needs.hpp"
#include "tdbg/reduce/detail/parallel.hpp"
#include "tdbg/reduce/detail/real_kernel.hpp"
#include "tdbg/reduce/detail/real_stats.hpp"

namespace tdbg::detail {

template <class T>
inline constexpr bool is_half_v = is_half_element_v<T>;
template <class T>
inline constexpr bool is_real_v = std::is_same_v<T, float> || std::is_same_v<T, double> || is_half_v<T>;
template <class T>
inline constexpr bool is_complex_v = is_complex_element_v<T>;

/// The statistics type of element type T.
template <class T>
using stats_t = std::conditional_t<is_real_v<T>, real_stats,
                                   std::conditional_t<is_complex_v<T>, complex_stats<T>, integer_stats<T>>>;

/// Which accumulators a kernel computes. Real input: `a` = real needs.
/// Integer input: `a` = integer needs, `b` = real needs of x, `c` = real needs
/// of numpy.absolute(x). Complex input: `a` = 1 for the complex accumulators,
/// `c` = real needs of |z|. Only `a` selects a template instantiation; `b`
/// and `c` pick among a few presets at run time.
struct kernel_key {
    unsigned a = 0;
    unsigned b = 0;
    unsigned c = 0;
    friend constexpr bool operator==(kernel_key x, kernel_key y) noexcept {
        return x.a == y.a && x.b == y.b && x.c == y.c;
    }
};

/// True when `have` computes every accumulator `need` asks for.
[[nodiscard]] constexpr bool covers(kernel_key have, kernel_key need) noexcept {
    return (need.a & ~have.a) == 0 && (need.b & ~have.b) == 0 && (need.c & ~have.c) == 0;
}

/// The key for the reductions [first, last) on element type T.
template <class T, class It>
[[nodiscard]] constexpr kernel_key key_for(It first, It last) noexcept {
    kernel_key key;
    for (; first != last; ++first) {
        const reduction r = *first;
        if constexpr (is_real_v<T>) {
            key.a |= real_needs(r);
        } else if constexpr (is_complex_v<T>) {
            const complex_needs n = complex_needs_of(r);
            key.a |= n.complex ? 1U : 0U;
            key.c |= n.abs_real;
        } else {
            // Unsigned and bool: numpy.absolute is the identity, so the abs_ forms are the plain ones.
            const reduction plain = std::is_signed_v<T> ? r : reduction{r.kind, false};
            const integer_needs n = integer_needs_of(plain);
            key.a |= n.integer;
            key.b |= n.real;
            key.c |= n.abs_real;
        }
    }
    if constexpr (is_real_v<T>) {
        key.a = real_closure(key.a, !std::is_same_v<T, float> && !is_half_v<T>);
    } else if constexpr (is_complex_v<T>) {
        key.c = key.c == 0 ? 0U : complex_abs_preset;
    } else {
        key.b = integer_real_preset(key.b);
        key.c = integer_real_preset(key.c);
    }
    return key;
}

/// The integer accumulators of type T, all of them.
template <class T>
inline constexpr unsigned
    all_integer_needs = need_int_min_max | need_int_sum | need_int_prod |
                        (std::is_signed_v<T> ? need_int_abs_min_max | need_int_abs_sum | need_int_abs_prod : 0U);

/// The values of `kernel_key::a` a run-time set of reductions can use on
/// element type T (each is instantiated once), cheapest first.
template <class T>
[[nodiscard]] constexpr auto preset_keys() noexcept {
    if constexpr (is_real_v<T>) {
        constexpr bool is_double = !std::is_same_v<T, float> && !is_half_v<T>;
        std::array<unsigned, real_preset_count> keys{};
        for (std::size_t i = 0; i < real_preset_count; ++i) {
            keys[i] = real_closure(real_presets[i], is_double);
        }
        return keys;
    } else if constexpr (is_complex_v<T>) {
        return std::array<unsigned, 1>{1U}; // the complex accumulators cost little next to |z|
    } else {
        return std::array<unsigned, 1>{all_integer_needs<T>}; // integer accumulators are cheap
    }
}

/// The cheapest preset key that covers `key`.
template <class T>
[[nodiscard]] constexpr kernel_key preset_key(kernel_key key) noexcept {
    constexpr auto keys = preset_keys<T>();
    for (const unsigned a : keys) {
        if ((key.a & ~a) == 0) {
            return {a, key.b, key.c};
        }
    }
    return {keys.back(), key.b, key.c};
}

/// The `a` of a kernel key that is only known at run time: one of preset_keys<T>().
inline constexpr unsigned runtime_preset = ~0U;

/// The real kernel for a preset key chosen at run time: a branch per block
/// into the kernel instantiated for that preset.
template <class T, std::size_t... I>
[[nodiscard]] real_stats real_block_preset(const T* p, std::size_t n, unsigned a, simd_level level,
                                           std::index_sequence<I...> /*presets*/) noexcept {
    constexpr auto keys = preset_keys<T>();
    real_stats out;
    const bool found = ((a == keys[I] ? (out = real_block<keys[I]>(p, n, level), true) : false) || ...);
    (void)found; // preset_key returns one of the keys
    return out;
}

/// The statistics of one block of 1 <= n <= block_size elements for `key`, whose
/// `a` is A (a compile-time set) or any preset (A = runtime_preset).
template <class T, unsigned A>
[[nodiscard]] stats_t<T> block_of(const T* p, std::size_t n, kernel_key key, simd_level level) noexcept {
    if constexpr (is_half_v<T>) {
        // Half precision goes through the float kernel, whose keys it shares.
        return converted_block<float>(
            p, n, [](const T& x) { return x.value(); },
            [&](const float* values, std::size_t m) { return block_of<float, A>(values, m, key, level); });
    } else if constexpr (is_real_v<T>) {
        if constexpr (A == runtime_preset) {
            return real_block_preset(p, n, key.a, level, std::make_index_sequence<preset_keys<T>().size()>{});
        } else {
            return real_block<A>(p, n, level);
        }
    } else if constexpr (is_complex_v<T>) {
        constexpr bool complex = A != 0; // the only preset (and runtime_preset, nonzero too) computes them
        return complex_block<complex>(p, n, level, key.c != 0);
    } else {
        return integer_block<A == runtime_preset ? preset_keys<T>()[0] : A>(p, n, level, key.b, key.c);
    }
}

/// The statistics of a run on this thread, block after block, with the
/// kernel build simd_setting() picks.
template <class T, unsigned A>
[[nodiscard]] stats_t<T> run(const T* p, std::size_t n, kernel_key key) noexcept {
    const simd_level level = simd_setting().load(std::memory_order_relaxed);
    stats_t<T> total;
    for (std::size_t begin = 0; begin < n; begin += block_size) {
        total.merge(block_of<T, A>(p + begin, std::min(block_size, n - begin), key, level));
    }
    return total;
}

/// The statistics of n elements for `key` (whose `a` is A, or any preset with
/// A = runtime_preset), on up to `max_threads` threads (0: all cores) when n is large.
template <class T, unsigned A>
[[nodiscard]] stats_t<T> accumulate(const T* p, std::size_t n, kernel_key key, unsigned max_threads) {
    return accumulate_chunks<T, stats_t<T>>(p, n, key, thread_count(n, max_threads), &run<T, A>);
}

/// The statistics for a preset key (see preset_key), as run-time sets compute them:
/// one instantiation per element type, the preset picked per block.
template <class T>
[[nodiscard]] stats_t<T> accumulate_runtime(kernel_key preset, const T* p, std::size_t n, unsigned max_threads) {
    return accumulate<T, runtime_preset>(p, n, preset, max_threads);
}

} // namespace tdbg::detail
