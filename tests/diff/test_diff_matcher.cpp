// tdbg::matches_run (tdbg/integrations/catch2_diff.hpp): REQUIRE_THAT over a run and a reference.

#include <catch2/catch.hpp>

#include <string>

#include "diff_runs.hpp"
#include "support.hpp"
#include "tdbg/integrations/catch2_diff.hpp"

using tdbg::test::diff_run_spec;
using tdbg::test::temp_dir;
using tdbg::test::write_diff_run;

TEST_CASE("matches_run: a run matches its reference, and a perturbed one does not") {
    temp_dir dir("diff_matcher");
    write_diff_run(dir.path() / "a", {});
    write_diff_run(dir.path() / "b", {});
    diff_run_spec perturbed;
    perturbed.perturb_from = 7;
    write_diff_run(dir.path() / "c", perturbed);
    const auto a = tdbg::create_trial((dir.path() / "a").string());
    const auto b = tdbg::create_trial((dir.path() / "b").string());
    const auto c = tdbg::create_trial((dir.path() / "c").string());

    REQUIRE_THAT(b, tdbg::matches_run(a));
    REQUIRE_THAT(b, tdbg::matches_run((dir.path() / "a").string()));
    REQUIRE_THAT(c, !tdbg::matches_run(a));

    const auto matcher = tdbg::matches_run(a);
    CHECK(matcher.describe() == "matches run " + a.path() + " within rtol 1e-05, atol 1e-08");
    CHECK_FALSE(matcher.match(c));
    CHECK(matcher.describe() == "matches run " + a.path() +
                                    " within rtol 1e-05, atol 1e-08 (parts at step 7 (TRAIN step 7, worker_0): "
                                    "tensor 'MLP_fc1.weight', element [1, 2], max abs diff 0.5, max rel diff 0.5: "
                                    "1 of 6 values differ; 1 tensors diverge)");
    REQUIRE(matcher.result().has_value());
    CHECK(matcher.result()->first_divergence()->step == 7);
    CHECK(matcher.match(b));
    CHECK(matcher.describe().find("(agrees: 4 tensors, 10 steps, 120 values compared)") != std::string::npos);

    // A match over nothing is no match.
    tdbg::diff_options eval_only;
    eval_only.only_mode = tdbg::mode::eval;
    const auto nothing = tdbg::matches_run(a, eval_only);
    CHECK_FALSE(nothing.match(b));
    CHECK(nothing.describe().find("(nothing compared: the 4 tensors in both runs (") != std::string::npos);

    tdbg::diff_options loose;
    loose.atol = 1.0;
    CHECK_THAT(c, tdbg::matches_run(a, loose));
}

TEST_CASE("matches_run: tensors of one run only, and errors, are described") {
    temp_dir dir("diff_matcher_missing");
    write_diff_run(dir.path() / "a", {});
    diff_run_spec extra;
    extra.extra_tensor = true;
    write_diff_run(dir.path() / "b", extra);
    const auto a = tdbg::create_trial((dir.path() / "a").string());
    const auto b = tdbg::create_trial((dir.path() / "b").string());
    const auto matcher = tdbg::matches_run(a);
    CHECK_FALSE(matcher.match(b));
    CHECK(matcher.describe().find("(only in the run matched: extra)") != std::string::npos);

    tdbg::diff_options bad;
    bad.tensor_regex = "(";
    const auto broken = tdbg::matches_run(a, bad);
    CHECK_FALSE(broken.match(b));
    CHECK(broken.describe().find("(error: ") != std::string::npos);
}
