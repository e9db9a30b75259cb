// The kernel's builds (portable scalar, SSE2, AVX2) compute the same bits,
// including for NaN, infinities, zeros and subnormals.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "reference.hpp"
#include "support.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/detail/real_kernel.hpp"

using namespace tdbg::detail;
using tdbg::test::random_values;

namespace {

// Equal bits, except that any NaN matches any NaN (the payload of a NaN
// depends on operand order, which compilers may swap).
bool same_bits(const real_stats& a, const real_stats& b) {
    const auto same = [](double x, double y) {
        return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
    };
    return a.count == b.count && same(a.min, b.min) && same(a.max, b.max) && same(a.abs_min, b.abs_min) &&
           same(a.sum, b.sum) && same(a.mean, b.mean) && same(a.m2, b.m2) && same(a.abs_sum, b.abs_sum) &&
           same(a.abs_mean, b.abs_mean) && same(a.abs_m2, b.abs_m2) && same(a.sum_sq, b.sum_sq) &&
           same(a.prod, b.prod) && same(a.prod_exp, b.prod_exp);
}

// The builds compared with the portable scalar one.
enum class build { sse2, avx2 };

template <build Build, unsigned Needs, class T>
void check_builds(const std::vector<T>& data) {
    for (std::size_t n = 1; n <= data.size(); n = n * 3 + 1) {
        INFO("needs " << Needs << " n=" << n);
        const real_stats portable = block_stats<Needs, scalar_lanes>(data.data(), n);
        CHECK(portable.count == n);
#if TDBG_REDUCE_X86
        if constexpr (Build == build::sse2) {
            CHECK(same_bits(portable, block_stats<Needs, sse2_lanes>(data.data(), n)));
        } else {
            CHECK(same_bits(portable, block_avx2<Needs>(data.data(), n)));
        }
#endif
    }
}

template <class T>
std::vector<T> awkward_values() {
    auto v = random_values<T>(block_size, 21);
    const T inf = std::numeric_limits<T>::infinity();
    v[5] = 0;
    v[17] = -inf;
    v[300] = std::numeric_limits<T>::denorm_min();
    v[301] = -std::numeric_limits<T>::max();
    v[1000] = std::numeric_limits<T>::quiet_NaN();
    v[2000] = inf;
    return v;
}

template <build Build, unsigned Needs>
void check_needs() {
    check_builds<Build, Needs>(random_values<float>(block_size, 1));
    check_builds<Build, Needs>(random_values<double>(block_size, 2));
    check_builds<Build, Needs>(awkward_values<float>());
    check_builds<Build, Needs>(awkward_values<double>());
}

template <build Build>
void check_every_need() {
    check_needs<Build, need_all_real>();
    check_needs<Build, need_sum | need_m2>();
    check_needs<Build, need_min_max | need_abs_sum>();
    check_needs<Build, need_prod>();
    check_needs<Build, real_closure(need_prod, true)>();
    check_needs<Build, need_abs_min | need_abs_sum | need_abs_m2 | need_sum_sq>();
}

} // namespace

TEST_CASE("the SSE2 build of the kernel agrees bit for bit with the portable scalar one") {
#if !TDBG_REDUCE_X86
    TDBG_SKIP("not an x86 CPU: the kernel has no SSE2 build here");
#endif
    check_every_need<build::sse2>();
}

TEST_CASE("the AVX2 build of the kernel agrees bit for bit with the portable scalar one") {
    if (best_simd_level() != simd_level::avx2) {
        TDBG_SKIP("this CPU has no AVX2: the kernel's AVX2 build cannot run here");
    }
    check_every_need<build::avx2>();
}

TEST_CASE("compute_reductions gives the same bytes whichever build runs") {
    const auto which = tdbg::test::all_18();
    const auto data = random_values<float>(100000, 3);
    const auto halves = random_values<tdbg::float16>(10000, 4);
    const auto ints = random_values<std::int32_t>(10000, 5);
    const auto run_all = [&] {
        std::vector<tdbg::tensor_value> out =
            tdbg::compute_reductions(tdbg::tensor_value(std::vector<float>(data)), which);
        for (auto& v : tdbg::compute_reductions(tdbg::tensor_value(std::vector<tdbg::float16>(halves)), which)) {
            out.push_back(v);
        }
        for (auto& v : tdbg::compute_reductions(tdbg::tensor_value(std::vector<std::int32_t>(ints)), which)) {
            out.push_back(v);
        }
        return out;
    };
    const simd_level best = simd_setting().load();
    const auto fast = run_all();
#if TDBG_REDUCE_X86
    simd_setting() = simd_level::sse2;
#endif
    const auto baseline = run_all();
    simd_setting() = best;
    REQUIRE(fast.size() == baseline.size());
    for (std::size_t i = 0; i < fast.size(); ++i) {
        CHECK(fast[i].bytes() == baseline[i].bytes());
    }
}
