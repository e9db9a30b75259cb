// The Catch2 matchers of tdbg/integrations/catch2.hpp: rules as assertions in
// a user's unit tests, for built-in rules, users' own classes and names.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/integrations/catch2.hpp"
#include "tdbg/rules/builtin/all_zero.hpp"
#include "tdbg/rules/builtin/exploding_tensor.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::test::f32;

// A user's rule: met when a weight's largest |value| exceeds `limit`.
class large_weight : public tdbg::rules::rule<large_weight> {
public:
    static constexpr std::string_view rule_name = "LargeWeight";
    large_weight(tdbg::trial base, const tdbg::rules::rule_params& params)
        : rule(std::move(base), params), limit_(params.get("limit", 10.0)) {}
    bool invoke_at_step(std::int64_t step) const {
        const auto v = value("fc.weight", step);
        double largest = 0;
        tdbg::rules::for_each_real(v, [&](double x) { largest = std::max(largest, std::abs(x)); });
        return largest > limit_;
    }

private:
    double limit_;
};

// Gradients 10^-step at steps 0..9, weights growing 3x per step.
tdbg::trial training_run(const tdbg::test::temp_dir& dir) {
    tdbg::test::rule_run run(dir.path());
    run.collections({{"gradients", "^gradient/"}, {"weights", "weight$"}});
    float g = 1.0F;
    float w = 1.0F;
    for (std::int64_t s = 0; s < 10; ++s) {
        run.step(s, {{"gradient/fc.weight", f32({g, -g}), {}}, {"fc.weight", f32({w, -w}), {}}});
        g /= 10.0F;
        w *= 3.0F;
    }
    run.end();
    return tdbg::create_trial(dir.path().string());
}

} // namespace

TEST_CASE("REQUIRE_THAT(trial, tdbg::no_issues<Rule>(params)) with built-in rules and users' classes") {
    tdbg::test::temp_dir dir("catch2_pass");
    const auto trial = training_run(dir);
    REQUIRE_THAT(trial, tdbg::no_issues<tdbg::rules::vanishing_gradient>({{"threshold", "5e-10"}}));
    REQUIRE_THAT(trial, tdbg::no_issues<tdbg::rules::exploding_tensor>());
    CHECK_THAT(trial, tdbg::issues_found<tdbg::rules::vanishing_gradient>({{"threshold", "5e-4"}}));
    CHECK_THAT(trial, tdbg::triggers_at<tdbg::rules::vanishing_gradient>({4, 5, 6, 7, 8, 9}, {{"threshold", "5e-4"}}));
    CHECK_THAT(trial, tdbg::no_issues<large_weight>({{"limit", "20000"}})); // 3^9 = 19683
    CHECK_THAT(trial, tdbg::triggers_at<large_weight>({3, 4, 5, 6, 7, 8, 9}, {{"limit", "20"}}));
    CHECK_THAT(trial, tdbg::no_issues("AllZero", {{"tensor_regex", ".*"}})); // by registered name
    CHECK_THAT(trial, !tdbg::no_issues<large_weight>());                    // Catch2's operators compose
}

TEST_CASE("a failing rule matcher describes the rule, its parameters and the steps met") {
    tdbg::test::temp_dir dir("catch2_fail");
    const auto trial = training_run(dir);
    auto matcher = tdbg::no_issues<tdbg::rules::vanishing_gradient>({{"threshold", "5e-7"}});
    CHECK(matcher.describe() == "has no issues found by VanishingGradient {threshold=5e-7}"); // before matching
    CHECK_FALSE(matcher.match(trial));
    CHECK(matcher.describe() ==
          "has no issues found by VanishingGradient {threshold=5e-7} (IssuesFound: triggered at steps [7, 8, 9]; "
          "step 7: mean |gradient/fc.weight| = 1e-07 < 5e-07; step 8: mean |gradient/fc.weight| = 1e-08 < 5e-07; "
          "step 9: mean |gradient/fc.weight| = 1e-09 < 5e-07; 10 steps evaluated)");

    auto exact = tdbg::triggers_at<large_weight>({5}, {{"limit", "20"}});
    CHECK_FALSE(exact.match(trial));
    CHECK_THAT(exact.describe(), Catch::Contains("has issues found at steps [5] by LargeWeight") &&
                                     Catch::Contains("triggered at steps [3, 4, 5, 6, 7, 8, 9]"));

    auto bad = tdbg::no_issues<tdbg::rules::vanishing_gradient>({{"threshold", "tiny"}});
    CHECK_FALSE(bad.match(trial)); // a rule that cannot be built fails, with the reason
    CHECK_THAT(bad.describe(), Catch::Contains("(Error: rule VanishingGradient: parameter 'threshold' = 'tiny' is not a number"));
    auto unknown = tdbg::no_issues("NoSuchRule");
    CHECK_FALSE(unknown.match(trial));
    CHECK_THAT(unknown.describe(), Catch::Contains("unknown rule 'NoSuchRule'"));
}
