// tdbg::cuda's arithmetic on the host, where no GPU is needed: the kernel's pass replayed in its
// own order (host_stats: per-thread shifted sums, warp and block trees, the last block's merge
// of the partials), finished with tdbg::cuda::finish, against tdbg::compute_reductions for the
// four floating dtypes; the merge against real_stats::merge; the 16-bit conversions against
// tdbg::float16 and tdbg::bfloat16 for every bit pattern.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_support.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/cuda/detail/stats_ops.hpp"
#include "tdbg/cuda/reduce.hpp"
#include "tdbg/reduce/detail/real_stats.hpp"

using namespace tdbg;
using tdbg::cuda::tensor_stats;
using tdbg::test::check_against_cpu;
using tdbg::test::make_data;
using tdbg::test::specials;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Every field of a tensor_stats and a real_stats holds the same bits.
void check_same(const tensor_stats& a, const tdbg::detail::real_stats& b) {
    CHECK(a.count == b.count);
    CHECK(same_bits(a.min, b.min));
    CHECK(same_bits(a.max, b.max));
    CHECK(same_bits(a.abs_min, b.abs_min));
    CHECK(same_bits(a.sum, b.sum));
    CHECK(same_bits(a.mean, b.mean));
    CHECK(same_bits(a.m2, b.m2));
    CHECK(same_bits(a.abs_sum, b.abs_sum));
    CHECK(same_bits(a.abs_mean, b.abs_mean));
    CHECK(same_bits(a.abs_m2, b.abs_m2));
    CHECK(same_bits(a.sum_sq, b.sum_sq));
    CHECK(same_bits(a.prod, b.prod));
    CHECK(same_bits(a.prod_exp, b.prod_exp));
}

/// The kernel's statistics of v, replayed on the host, against compute_reductions of v.
template <class T>
tensor_stats check_data(const std::vector<T>& v, const std::string& what) {
    INFO(dtype_name(dtype_v<T>) << " " << what << ", n=" << v.size());
    const tensor_stats stats = cuda::host_stats(v.data(), dtype_v<T>, v.size());
    CHECK(stats.count == v.size());
    check_against_cpu(stats, tensor_value(v));
    return stats;
}

template <class T>
void check_dtype() {
    std::uint32_t seed = 1;
    // One thread's share, a partial group, chunk edges, several chunks and partials.
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4099}, std::size_t{65536},
                                std::size_t{65537}, std::size_t{100000}, std::size_t{200003}}) {
        check_data(make_data<T>(n, ++seed), "normal(0, 1)");
    }
    // Offset data: the shifted sums keep the variance's digits.
    check_data(make_data<T>(100000, ++seed, 1e4, 1), "1e4 + normal(0, 1)");
    check_data(make_data<T>(70000, ++seed, -3e3, 0.5), "-3e3 + normal(0, 0.5)");
    // A product that stays in range (values near 1).
    check_data(make_data<T>(5000, ++seed, 1, 0.01), "1 + normal(0, 0.01)");

    for (const std::size_t n : {std::size_t{1000}, std::size_t{100000}}) {
        const tensor_stats with_nan = check_data(make_data<T>(n, ++seed, 0, 1, specials::nan), "with a NaN");
        CHECK(std::isnan(with_nan.abs_sum)); // how finish knows a NaN was seen
        CHECK(std::isfinite(with_nan.min));  // min and max skip it
        CHECK(std::isfinite(with_nan.max));
        const tensor_stats with_inf = check_data(make_data<T>(n, ++seed, 0, 1, specials::pos_inf), "with +inf");
        CHECK(with_inf.max == inf);
        CHECK(std::isinf(with_inf.prod));
        const tensor_stats both = check_data(make_data<T>(n, ++seed, 0, 1, specials::both_inf), "with +inf and -inf");
        CHECK(both.min == -inf);
        CHECK(std::isnan(both.sum));
        CHECK(std::isinf(both.prod));
        const tensor_stats zeros = check_data(make_data<T>(n, ++seed, 0, 1, specials::zeros), "with zeros");
        CHECK(zeros.abs_min == 0);
        CHECK(zeros.prod == 0);
    }
    check_data(std::vector<T>{}, "empty");
}

/// numpy's std and variance with ddof 1, in long double: two passes over v.
template <class T>
long double unbiased_variance(const std::vector<T>& v, bool abs) {
    long double sum = 0;
    for (const T& x : v) {
        const long double y = as_double(x);
        sum += abs ? std::fabs(y) : y;
    }
    const long double mean = sum / static_cast<long double>(v.size());
    long double m2 = 0;
    for (const T& x : v) {
        const long double y = as_double(x);
        const long double d = (abs ? std::fabs(y) : y) - mean;
        m2 += d * d;
    }
    return m2 / static_cast<long double>(v.size() - 1);
}

template <class T>
void check_ddof() {
    INFO(dtype_name(dtype_v<T>));
    const std::vector<T> v = make_data<T>(3001, 77, 5, 2);
    const tensor_stats stats = cuda::host_stats(v.data(), dtype_v<T>, v.size());
    const std::vector<reduction> which{{reduction_kind::variance, false},
                                       {reduction_kind::std, false},
                                       {reduction_kind::variance, true},
                                       {reduction_kind::std, true}};
    const std::vector<tensor_value> got = cuda::finish(stats, dtype_v<T>, which, 1);
    REQUIRE(got.size() == which.size());
    for (std::size_t i = 0; i < which.size(); ++i) {
        INFO(reduction_name(which[i]));
        const long double var = unbiased_variance(v, which[i].abs);
        const long double want = which[i].kind == reduction_kind::variance ? var : std::sqrt(var);
        const tensor_value expected = tdbg::detail::floating_value<T>(static_cast<double>(want)).to_tensor();
        tdbg::test::check_close(got[i], expected, which[i], 0);
    }
    if constexpr (std::is_same_v<T, double>) {
        // ddof 1 and ddof 0 differ by the factor n / (n - 1).
        const double biased = tdbg::test::scalar_of(cuda::finish(stats, dtype_v<T>, {which[0]})[0]);
        const double unbiased = tdbg::test::scalar_of(got[0]);
        CHECK(unbiased / biased == Approx(3001.0 / 3000.0).epsilon(1e-12));
    }
    // One value with ddof 1: NaN, as numpy and torch give.
    const std::vector<T> one = make_data<T>(1, 5);
    const tensor_stats one_stats = cuda::host_stats(one.data(), dtype_v<T>, 1);
    for (const tensor_value& r : cuda::finish(one_stats, dtype_v<T>, which, 1)) {
        CHECK(std::isnan(tdbg::test::scalar_of(r)));
    }
}

/// Random statistics: of a short random run (through host_stats), sometimes of none.
tensor_stats random_stats(std::mt19937& rng) {
    std::uniform_int_distribution<int> size(0, 40);
    std::normal_distribution<double> noise(0, 1);
    std::vector<double> v(static_cast<std::size_t>(size(rng)));
    const double offset = noise(rng) * 100;
    for (double& x : v) {
        x = offset + noise(rng);
    }
    return cuda::host_stats(v.data(), dtype::float64, v.size());
}

} // namespace

TEST_CASE("tdbg::cuda host replay: every reduction of float32 data matches compute_reductions") {
    check_dtype<float>();
}

TEST_CASE("tdbg::cuda host replay: every reduction of float64 data matches compute_reductions") {
    check_dtype<double>();
}

TEST_CASE("tdbg::cuda host replay: every reduction of float16 data matches compute_reductions") {
    check_dtype<float16>();
}

TEST_CASE("tdbg::cuda host replay: every reduction of bfloat16 data matches compute_reductions") {
    check_dtype<bfloat16>();
}

TEST_CASE("tdbg::cuda finish with ddof 1 gives the unbiased std and variance") {
    check_ddof<float>();
    check_ddof<double>();
    check_ddof<float16>();
    check_ddof<bfloat16>();
}

TEST_CASE("tdbg::cuda empty statistics finish as an empty tensor's reductions") {
    const tensor_stats empty = cuda::host_stats(nullptr, dtype::float32, 0);
    CHECK(empty.count == 0);
    CHECK(empty.min == inf);
    CHECK(empty.max == -inf);
    CHECK(empty.prod == 1);
    const auto values = cuda::finish(empty, dtype::float32,
                                     {{reduction_kind::sum}, {reduction_kind::prod}, {reduction_kind::l2}, {reduction_kind::mean}});
    REQUIRE(values.size() == 4);
    CHECK(tdbg::test::scalar_of(values[0]) == 0);
    CHECK(tdbg::test::scalar_of(values[1]) == 1);
    CHECK(tdbg::test::scalar_of(values[2]) == 0);
    CHECK(std::isnan(tdbg::test::scalar_of(values[3])));
    CHECK_THROWS_AS(cuda::finish(empty, dtype::float32, {{reduction_kind::max}}), error);
}

TEST_CASE("tdbg::cuda reduces the floating dtypes only") {
    CHECK(cuda::reducible(dtype::float16));
    CHECK(cuda::reducible(dtype::bfloat16));
    CHECK(cuda::reducible(dtype::float32));
    CHECK(cuda::reducible(dtype::float64));
    CHECK_FALSE(cuda::reducible(dtype::int32));
    CHECK_FALSE(cuda::reducible(dtype::boolean));
    CHECK_FALSE(cuda::reducible(dtype::complex64));
    const std::vector<std::int32_t> ints{1, 2, 3};
    CHECK_THROWS_AS(cuda::host_stats(ints.data(), dtype::int32, ints.size()), error);
    CHECK_THROWS_AS(cuda::finish(tensor_stats{}, dtype::int32, {{reduction_kind::sum}}), error);
}

TEST_CASE("tdbg::cuda 16-bit floats convert to double exactly, for every bit pattern") {
    for (std::uint32_t bits = 0; bits <= 0xFFFFU; ++bits) {
        const auto b = static_cast<std::uint16_t>(bits);
        INFO("bits 0x" << std::hex << bits);
        const double half = cuda::detail::float16_to_double(b);
        const double half_want = float16::from_bits(b).value();
        const double brain = cuda::detail::bfloat16_to_double(b);
        const double brain_want = bfloat16::from_bits(b).value();
        if (std::isnan(half_want)) {
            CHECK(std::isnan(half));
        } else {
            CHECK(same_bits(half, half_want)); // the sign of zero too
        }
        if (std::isnan(brain_want)) {
            CHECK(std::isnan(brain));
        } else {
            CHECK(same_bits(brain, brain_want));
        }
    }
}

// One statistics type and one merge for the host and the device: a second copy would have to
// be kept bit-identical by hand.
static_assert(std::is_same_v<tdbg::cuda::tensor_stats, tdbg::detail::real_stats>);

TEST_CASE("tdbg::cuda merges statistics in the kernel's order as the CPU path merges them, bit for bit") {
    std::mt19937 rng(2024);
    for (int i = 0; i < 2000; ++i) {
        const tensor_stats a = random_stats(rng);
        const tensor_stats b = random_stats(rng);
        tensor_stats want = a;
        want.merge(b);
        check_same(cuda::detail::merged(a, b), want);
        // Merging nothing changes nothing; merging into nothing gives the other side.
        check_same(cuda::detail::merged(a, tensor_stats{}), a);
        check_same(cuda::detail::merged(tensor_stats{}, b), b);
    }
}

TEST_CASE("tdbg::cuda splits exponents as std::frexp and normalises products as the CPU path") {
    const double denormal = std::numeric_limits<double>::denorm_min();
    for (const double v : {1.0, -1.0, 0.75, 3.0, -1e300, 1e-300, 5e-320, -denormal, denormal * 3, 0x1p-1022,
                           std::numeric_limits<double>::max()}) {
        INFO(v);
        int want_exponent = 0;
        const double want = std::frexp(v, &want_exponent);
        int exponent = 0;
        const double got = cuda::detail::split_exponent(v, exponent);
        CHECK(same_bits(got, want));
        CHECK(exponent == want_exponent);
    }
    for (const double p : {0.3, -7e200, 3e-310, 0.0, -0.0, inf, -inf, not_a_number}) {
        INFO(p);
        double got = p;
        double got_exp = 5;
        double want = p; // std::frexp's split where p is finite and not zero
        double want_exp = 5;
        if (p != 0 && std::isfinite(p)) {
            int e = 0;
            want = std::frexp(p, &e);
            want_exp += e;
        }
        cuda::detail::normalise_product(got, got_exp);
        CHECK(same_bits(got, want));
        CHECK(got_exp == want_exp);
    }
}

TEST_CASE("tdbg::cuda threads take every element of a chunk once") {
    using cuda::detail::block_threads;
    using cuda::detail::thread_pass;
    // One 2 among ones: exactly the thread that owns its index sees it, and the counts add up.
    constexpr unsigned length = cuda::detail::chunk_elements - 3; // full groups of 4, then a tail of 1
    std::vector<float> v(length, 1.0F);
    for (const unsigned j : {0U, 3U, 4U, 1023U, 1024U, 40000U, length - 6, length - 5, length - 1}) {
        INFO("element " << j);
        v[j] = 2.0F;
        const unsigned groups = length / 4;
        const unsigned owner = j / 4 < groups ? (j / 4) % block_threads : j - groups * 4;
        std::uint64_t total = 0;
        for (unsigned t = 0; t < block_threads; ++t) {
            const tensor_stats s = thread_pass<cuda::detail::float32_element>(v.data(), length, t, true);
            total += s.count;
            CHECK((s.max == 2.0) == (t == owner));
        }
        CHECK(total == length);
        v[j] = 1.0F;
    }
}

TEST_CASE("tdbg::cuda last blocks merge the partials in order, in runs of one per thread") {
    for (const unsigned chunks : {1U, 2U, 255U, 256U, 257U, 1000U, 70000U}) {
        INFO(chunks << " chunks");
        const unsigned per_thread = (chunks + cuda::detail::block_threads - 1) / cuda::detail::block_threads;
        unsigned next = 0;
        for (unsigned t = 0; t < cuda::detail::block_threads; ++t) {
            const cuda::detail::partial_range r = cuda::detail::partials_of(chunks, t);
            CHECK(r.begin == next);
            CHECK(r.end >= r.begin);
            CHECK(r.end - r.begin <= per_thread);
            next = r.end;
        }
        CHECK(next == chunks);
    }
}
