// reduce::partial: chunks reduced apart and merged (Chan's formula) give the
// one-shot results; the thread count never changes a bit.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "reference.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/detail/parallel.hpp"
#include "tdbg/reduce/partial.hpp"
#include "tdbg/reduce/reduction_set.hpp"

namespace reduce = tdbg::reduce;
using tdbg::reduction;
using tdbg::reduction_kind;
using tdbg::tensor_value;
using tdbg::test::all_18;
using tdbg::test::random_values;

namespace {

// Splits data at `cuts`, reduces each piece, merges in order, and compares with the reference.
template <class T>
void check_merged(const std::vector<T>& data, const std::vector<std::size_t>& cuts) {
    const auto which = all_18();
    // A plain array (std::vector<bool> has no data()).
    const auto array = std::make_unique<T[]>(data.size());
    std::copy(data.begin(), data.end(), array.get());
    reduce::partial<T> merged;
    std::size_t begin = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        const std::size_t end = i < cuts.size() ? cuts[i] : data.size();
        merged.merge(reduce::accumulate(array.get() + begin, end - begin, which));
        begin = end;
    }
    CHECK(merged.count() == data.size());
    const auto one_shot = reduce::accumulate(array.get(), data.size(), which);
    for (const reduction r : which) {
        INFO(tdbg::dtype_name(tdbg::dtype_v<T>) << " " << tdbg::reduction_name(r));
        const tensor_value got = merged.result(r);
        tdbg::test::check_result(got, tdbg::test::reference(data, r));
        // Merged and one-shot differ at most in rounding.
        tdbg::test::check_result(got, tdbg::test::expected{one_shot.result(r).type(), false,
                                                           tdbg::test::scalar_value(one_shot.result(r)).first,
                                                           tdbg::test::scalar_value(one_shot.result(r)).second});
    }
}

} // namespace

TEST_CASE("merged chunks equal one pass over all the data") {
    const auto f = random_values<float>(20000, 1);
    check_merged(f, {1, 2, 3071, 3072, 9000, 19999});
    const auto d = random_values<double>(10000, 2);
    check_merged(d, {5000});
    check_merged(random_values<std::int16_t>(7000, 3), {100, 6500});
    check_merged(random_values<std::complex<float>>(5000, 4), {2500, 2501});
    check_merged(random_values<bool>(4000, 5), {7});
}

TEST_CASE("merging keeps the variance of offset data (Chan's formula)") {
    // Two chunks with different means and tiny spread around 1e6.
    std::vector<double> data;
    for (int i = 0; i < 5000; ++i) {
        data.push_back(1e6 + 1e-4 * static_cast<double>(i % 7));
    }
    for (int i = 0; i < 5000; ++i) {
        data.push_back(1e6 + 1.0 + 1e-4 * static_cast<double>(i % 11));
    }
    using set = reduce::reduction_set<reduce::variance, reduce::mean>;
    auto left = set::accumulate(data.data(), 5000);
    left.merge(set::accumulate(data.data() + 5000, 5000));
    const auto want = tdbg::test::reference(data, reduction{reduction_kind::variance, false}).re;
    const double got = set::results(left)[0].data_as<double>()[0];
    CHECK(got == Approx(static_cast<double>(want)).epsilon(1e-9));
}

TEST_CASE("a partial result knows what it accumulated") {
    const std::vector<float> data{1, 2, 3};
    const auto p = reduce::accumulate(data.data(), data.size(), {reduction{reduction_kind::mean, false}});
    CHECK(p.has(reduction{reduction_kind::mean, false}));
    CHECK(p.has(reduction{reduction_kind::sum, false}));
    CHECK_FALSE(p.has(reduction{reduction_kind::min, true}));
    CHECK_THROWS_AS(p.result(reduction{reduction_kind::prod, false}), tdbg::error);
    // Merging with a partial of other reductions keeps only what both have.
    auto q = reduce::accumulate(data.data(), data.size(),
                                {reduction{reduction_kind::mean, false}, reduction{reduction_kind::prod, false}});
    CHECK(q.has(reduction{reduction_kind::prod, false}));
    q.merge(p);
    CHECK(q.has(reduction{reduction_kind::mean, false}));
    CHECK_FALSE(q.has(reduction{reduction_kind::prod, false}));
    CHECK(q.result(reduction{reduction_kind::mean, false}).data_as<float>()[0] == 2.0F);
    // An empty partial merges as nothing.
    reduce::partial<float> empty;
    empty.merge(p);
    CHECK(empty.count() == 3);
    CHECK(empty.result(reduction{reduction_kind::mean, false}).data_as<float>()[0] == 2.0F);
}

TEST_CASE("results do not depend on the number of threads") {
    // Just past the parallel split (eight whole chunks and a partial one).
    const auto data = random_values<float>(tdbg::detail::parallel_threshold + tdbg::detail::chunk_size / 3, 9);
    const tensor_value value = tensor_value::borrow(data.data(), {data.size()});
    reduce::options one;
    one.max_threads = 1;
    reduce::options many;
    many.max_threads = 8;
    const auto a = tdbg::compute_reductions(value, all_18(), one);
    const auto b = tdbg::compute_reductions(value, all_18(), many);
    const auto c = reduce::all_reductions::compute(value, many);
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(tdbg::reduction_name(all_18()[i]));
        CHECK(a[i].bytes() == b[i].bytes());
        CHECK(a[i].bytes() == c[i].bytes());
        tdbg::test::check_result(a[i], tdbg::test::reference(data, all_18()[i]));
    }
}
