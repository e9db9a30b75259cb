// reduction_set: policies composed at compile time give the same bits as the
// same reductions chosen at run time.

#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "reference.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/reduction_set.hpp"

namespace reduce = tdbg::reduce;
using tdbg::reduction;
using tdbg::reduction_kind;
using tdbg::tensor_value;
using tdbg::test::make_tensor;
using tdbg::test::random_values;

namespace {

// The compile-time set's results equal compute_reductions' byte for byte.
template <class Set, class T>
void check_same_as_runtime(const std::vector<T>& data) {
    const tensor_value value = make_tensor(data);
    const auto fixed = Set::compute(value);
    const std::vector<reduction> which(Set::reductions.begin(), Set::reductions.end());
    const auto dynamic = tdbg::compute_reductions(value, which);
    REQUIRE(dynamic.size() == Set::size);
    for (std::size_t i = 0; i < Set::size; ++i) {
        INFO(tdbg::dtype_name(tdbg::dtype_v<T>) << " n=" << data.size() << " " << tdbg::reduction_name(which[i]));
        CHECK(fixed[i].type() == dynamic[i].type());
        CHECK(fixed[i].bytes() == dynamic[i].bytes());
        const auto want = tdbg::test::reference(data, which[i]);
        tdbg::test::check_result(fixed[i], want);
    }
}

template <class Set>
void check_set_on_every_dtype() {
    for (const std::size_t n : {std::size_t{3}, std::size_t{5000}}) {
        const auto seed = static_cast<std::uint32_t>(n);
        check_same_as_runtime<Set>(random_values<float>(n, seed));
        check_same_as_runtime<Set>(random_values<double>(n, seed));
        check_same_as_runtime<Set>(random_values<tdbg::float16>(n, seed));
        check_same_as_runtime<Set>(random_values<std::int16_t>(n, seed));
        check_same_as_runtime<Set>(random_values<std::uint32_t>(n, seed));
        check_same_as_runtime<Set>(random_values<bool>(n, seed));
        check_same_as_runtime<Set>(random_values<std::complex<double>>(n, seed));
    }
}

} // namespace

TEST_CASE("policies name their reductions") {
    CHECK(reduce::min::value == reduction{reduction_kind::min, false});
    CHECK(reduce::stddev::value == reduction{reduction_kind::std, false});
    CHECK(reduce::abs_l2::value == reduction{reduction_kind::l2, true});
    CHECK(reduce::abs_variance::value == reduction{reduction_kind::variance, true});
    CHECK(tdbg::reduction_name(reduce::abs_prod::value) == "abs_prod");
    STATIC_REQUIRE(reduce::is_policy_v<reduce::mean>);
    STATIC_REQUIRE(reduce::is_policy_v<reduce::abs_l1>);
    STATIC_REQUIRE_FALSE(reduce::is_policy_v<int>);
    STATIC_REQUIRE_FALSE(reduce::is_policy_v<reduction>);
}

TEST_CASE("reduction_set lists its reductions and finds its policies") {
    using set = reduce::reduction_set<reduce::max, reduce::abs_mean, reduce::l2>;
    STATIC_REQUIRE(set::size == 3);
    STATIC_REQUIRE(set::index_of<reduce::abs_mean> == 1);
    STATIC_REQUIRE(set::index_of<reduce::l2> == 2);
    CHECK(set::reductions[0] == reduction{reduction_kind::max, false});
    const auto results = set::compute(tensor_value(std::vector<float>{3, -4}));
    CHECK(set::get<reduce::max>(results).data_as<float>()[0] == 3.0F);
    CHECK(set::get<reduce::abs_mean>(results).data_as<float>()[0] == 3.5F);
    CHECK(set::get<reduce::l2>(results).data_as<float>()[0] == 5.0F);
    STATIC_REQUIRE(reduce::all_reductions::size == 18);
    for (std::size_t i = 0; i < 18; ++i) {
        CHECK(reduce::all_reductions::reductions[i] == tdbg::test::all_18()[i]);
    }
}

TEST_CASE("a compile-time set equals the run-time set, bit for bit") {
    check_set_on_every_dtype<reduce::all_reductions>();
    check_set_on_every_dtype<reduce::reduction_set<reduce::mean>>();
    check_set_on_every_dtype<reduce::reduction_set<reduce::min, reduce::max>>();
    check_set_on_every_dtype<reduce::reduction_set<reduce::abs_min, reduce::l1>>();
    check_set_on_every_dtype<reduce::reduction_set<reduce::prod, reduce::variance, reduce::abs_stddev>>();
    check_set_on_every_dtype<reduce::reduction_set<reduce::abs_l2, reduce::abs_sum>>();
}

TEST_CASE("reduction_set accumulates typed data without a tensor_value") {
    using set = reduce::reduction_set<reduce::sum, reduce::mean>;
    const std::vector<double> data{1, 2, 3, 4};
    const auto partial = set::accumulate(data.data(), data.size());
    CHECK(partial.count() == 4);
    const auto results = set::results(partial);
    CHECK(results[0].data_as<double>()[0] == 10.0);
    CHECK(results[1].data_as<double>()[0] == 2.5);
    CHECK_THROWS_AS(set::accumulate(static_cast<const double*>(nullptr), 3), tdbg::error);
    const auto none = set::accumulate(static_cast<const double*>(nullptr), 0);
    CHECK(set::results(none)[0].data_as<double>()[0] == 0.0);
}

TEST_CASE("string tensors make a reduction_set throw") {
    const tensor_value s(std::vector<std::string>{"x"});
    CHECK_THROWS_AS(reduce::reduction_set<reduce::min>::compute(s), tdbg::dtype_mismatch);
}
