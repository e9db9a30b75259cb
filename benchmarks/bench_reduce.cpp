// The fused one-pass reductions against a plain sum loop and against the same
// 18 reductions computed one by one with xtensor's reducers, on the same
// float32 data, in one run. Prints ratios; build it Release (see README.md).
//
//   bench_reduce [max_elements]     (default 64M = 67108864)

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnorm.hpp>

#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/reduction_set.hpp"

namespace {

volatile double sink = 0; // keeps results alive

// Times several functions in interleaved rounds and keeps each one's best:
// on a shared machine the load changes during a run, and interleaving exposes
// every function to the same conditions. Returns seconds per call.
std::vector<double> time_interleaved(const std::vector<std::function<void()>>& fs, double budget_seconds) {
    using clock = std::chrono::steady_clock;
    const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
    std::vector<int> calls(fs.size(), 1);
    for (std::size_t i = 0; i < fs.size(); ++i) {
        // Enough calls for about 5 ms per timing.
        while (true) {
            const auto t0 = clock::now();
            for (int c = 0; c < calls[i]; ++c) {
                fs[i]();
            }
            if (seconds(clock::now() - t0) > 0.005 || calls[i] > (1 << 22)) {
                break;
            }
            calls[i] *= 2;
        }
    }
    std::vector<double> best(fs.size(), 1e300);
    const auto start = clock::now();
    for (int round = 0; round < 3 || (round < 15 && seconds(clock::now() - start) < budget_seconds); ++round) {
        for (std::size_t i = 0; i < fs.size(); ++i) {
            const auto t0 = clock::now();
            for (int c = 0; c < calls[i]; ++c) {
                fs[i]();
            }
            best[i] = std::min(best[i], seconds(clock::now() - t0) / calls[i]);
        }
    }
    return best;
}

double first_value(const tdbg::tensor_value& v) { return static_cast<double>(v.data_as<float>()[0]); }

// The 18 reductions one by one with xtensor (abs forms through xt::abs).
template <class A>
double xtensor_18(const A& a) {
    const auto b = xt::abs(a);
    double s = 0;
    s += xt::amin(a)();
    s += xt::amax(a)();
    s += xt::mean(a)();
    s += xt::stddev(a)();
    s += xt::variance(a)();
    s += xt::sum(a)();
    s += xt::prod(a)();
    s += xt::norm_l1(a)();
    s += xt::norm_l2(a)();
    s += xt::amin(b)();
    s += xt::amax(b)();
    s += xt::mean(b)();
    s += xt::stddev(b)();
    s += xt::variance(b)();
    s += xt::sum(b)();
    s += xt::prod(b)();
    s += xt::norm_l1(b)();
    s += xt::norm_l2(b)();
    return s;
}

const char* simd_name(tdbg::detail::simd_level l) {
    switch (l) {
    case tdbg::detail::simd_level::avx2: return "AVX2";
    case tdbg::detail::simd_level::sse2: return "SSE2";
    case tdbg::detail::simd_level::portable: return "portable";
    }
    return "?";
}

} // namespace

int main(int argc, char** argv) {
    const std::size_t max_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{1} << 26;
    namespace reduce = tdbg::reduce;
    namespace detail = tdbg::detail;
    using all = reduce::all_reductions;

    std::vector<float> data(max_n);
    std::mt19937 gen(42);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    for (float& x : data) {
        x = normal(gen);
    }

    const auto best = detail::best_simd_level();
    std::printf("tdbg bench_reduce: float32 N(0,1) data; kernel build %s (run-time choice), %u hardware threads\n",
                simd_name(best), std::thread::hardware_concurrency());
    std::printf(
        "ratios are times relative to the plain loop sum = std::accumulate(begin, end, 0.0) of the same data\n\n");
    std::printf("%10s %11s %7s | %8s %8s %8s %8s | %9s %9s\n", "elements", "sum ms", "GB/s", "fused18", "1 thread",
                "SSE2 1T", "sum-only", "xtensor18", "xt/fused");

    reduce::options one_thread;
    one_thread.max_threads = 1;
    const auto fused = [&](const tdbg::tensor_value& value, const reduce::options& opts, detail::simd_level level) {
        detail::simd_setting() = level;
        sink = first_value(all::compute(value, opts)[0]);
        detail::simd_setting() = best;
    };
    for (std::size_t n = 1024; n <= max_n; n *= 4) {
        const auto value = tdbg::tensor_value::borrow(data.data(), {n});
        const auto adapted = xt::adapt(data.data(), n, xt::no_ownership(), std::vector<std::size_t>{n});
        const auto end = data.begin() + static_cast<std::ptrdiff_t>(n);
        const std::vector<std::function<void()>> variants{
            [&] { sink = std::accumulate(data.begin(), end, 0.0); },
            [&] { fused(value, reduce::options{}, best); },
            [&] { fused(value, one_thread, best); },
            [&] { fused(value, one_thread, detail::simd_level::sse2); },
            [&] { sink = first_value(reduce::reduction_set<reduce::sum>::compute(value, one_thread)[0]); },
            [&] { sink = xtensor_18(adapted); },
        };
        const auto t = time_interleaved(variants, n >= (std::size_t{1} << 24) ? 20.0 : 3.0);
        std::printf("%10zu %11.4f %7.2f | %7.2fx %7.2fx %7.2fx %7.2fx | %8.2fx %8.1fx\n", n, t[0] * 1e3,
                    static_cast<double>(n * sizeof(float)) / t[0] / 1e9, t[1] / t[0], t[2] / t[0], t[3] / t[0],
                    t[4] / t[0], t[5] / t[0], t[5] / t[1]);
    }

    // Where threads start to pay: the library's chunking forced onto 1 and 2 threads.
    std::printf("\nthreads (fused 18, forced): elements, 1 thread us, 2 threads us, ratio; library threshold %zu\n",
                detail::parallel_threshold);
    constexpr detail::kernel_key key = all::key<float>;
    for (std::size_t n = 2 * detail::chunk_size; n <= std::min(max_n, 32 * detail::chunk_size); n *= 2) {
        const auto run = [&](unsigned threads) {
            return [&, threads] {
                sink = detail::accumulate_chunks<float, detail::real_stats>(data.data(), n, key, threads,
                                                                            &detail::run<float, key.a>)
                           .sum;
            };
        };
        const auto t = time_interleaved({run(1), run(2)}, 3.0);
        std::printf("%10zu %11.1f %11.1f %7.2f\n", n, t[0] * 1e6, t[1] * 1e6, t[1] / t[0]);
    }
    return 0;
}
