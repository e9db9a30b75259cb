#include <catch2/catch.hpp>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/reduction_config.hpp"

using namespace tdbg;

TEST_CASE("reduction_config parses smdebug's spelling into its four lists") {
    const auto config = reduction_config::parse("min, max,mean,     std,abs_variance,abs_sum,abs_l2_norm,l1_norm", true);
    CHECK(config.reductions ==
          std::vector<reduction_kind>{reduction_kind::min, reduction_kind::max, reduction_kind::mean, reduction_kind::std});
    CHECK(config.abs_reductions == std::vector<reduction_kind>{reduction_kind::variance, reduction_kind::sum});
    CHECK(config.norms == std::vector<reduction_kind>{reduction_kind::l1});
    CHECK(config.abs_norms == std::vector<reduction_kind>{reduction_kind::l2});
    CHECK(config.save_raw_tensor);
    CHECK_FALSE(config.save_shape);
    // smdebug's to_json_dict order: reductions, norms, abs_reductions, abs_norms.
    CHECK(config.to_string() == "min,max,mean,std,l1_norm,abs_variance,abs_sum,abs_l2_norm");
    const auto all = config.all();
    REQUIRE(all.size() == 8);
    CHECK(all[4] == reduction{reduction_kind::l1, false});
    CHECK(all[7] == reduction{reduction_kind::l2, true});
}

TEST_CASE("reduction_config rejects unknown reductions and misplaced norms") {
    CHECK_THROWS_AS(reduction_config::parse("min,median"), config_error);
    CHECK_THROWS_WITH(reduction_config::parse("min,median"), Catch::Contains("median"));
    reduction_config bad;
    bad.reductions = {reduction_kind::l2};
    CHECK_THROWS_AS(bad.validate(), config_error);
    reduction_config also_bad;
    also_bad.abs_norms = {reduction_kind::mean};
    CHECK_THROWS_WITH(also_bad.validate(), Catch::Contains("abs_norms"));
    // Repeats are kept once; empty items are ignored.
    const auto twice = reduction_config::parse("max,,max, ");
    CHECK(twice.reductions == std::vector<reduction_kind>{reduction_kind::max});
    CHECK(reduction_config::parse("").no_reductions());
    CHECK(reduction_config::raw_only().save_raw_tensor);
    CHECK(reduction_config::raw_only().to_string().empty());
}
