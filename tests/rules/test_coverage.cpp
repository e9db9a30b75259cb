// Nothing checked is no pass: NothingEvaluated and why, the coverage line, the
// reasons of triggered steps (JSON, JUnit, the Catch2 matchers), the registry's
// refusal of a name that shadows a built-in rule, and LossNotDecreasing on a NaN loss.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/integrations/catch2.hpp"
#include "tdbg/rules/builtin/dead_relu.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/junit.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::test::f32;

// Steps 0..2 of a run with a ReLU layer saved as "layer1/relu_out" (not DeadRelu's
// default ".*relu_output"), gradients in the "gradients" collection, and a loss saved
// only as a reduction (no value).
tdbg::trial coverage_run(const tdbg::test::temp_dir& dir) {
    tdbg::test::rule_run run(dir.path());
    run.collections({{"gradients", "^gradient/"}, {"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(s, {{"layer1/relu_out", f32({0.0F, 1.0F, 2.0F, 0.0F}, {2, 2}), {}},
                     {"gradient/fc.weight", f32({0.5F, -0.5F}), {}},
                     {"loss", std::nullopt, {{tdbg::reduction{tdbg::reduction_kind::variance, false}, f32({1.0F})}}}});
    }
    run.end();
    return tdbg::create_trial(dir.path().string());
}

tdbg::rules::evaluation_result evaluate_by_name(const tdbg::trial& t, const std::string& rule,
                                                const tdbg::rules::rule_params& params,
                                                const tdbg::rules::invoke_options& options = {}) {
    auto r = tdbg::rules::registry::create(rule, t, params, {}, tdbg::rules::rule_logger::silent());
    return r.evaluate(options);
}

} // namespace

TEST_CASE("a rule whose tensor_regex matches nothing is NothingEvaluated, with a did-you-mean naming the real tensor") {
    tdbg::test::temp_dir dir("coverage_regex");
    const auto t = coverage_run(dir);
    const auto result = evaluate_by_name(t, "DeadRelu", {});
    CHECK(result.evaluated_steps() == 0);
    CHECK(result.triggered_steps.empty());
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(tdbg::rules::status_name(result.status()) == "NothingEvaluated");
    CHECK(result.nothing_evaluated_reason ==
          "tensor_regex '.*relu_output' matches none of the run's 3 tensors (did you mean 'layer1/relu_out'?); "
          "every step was skipped (evaluated 0 of 3 steps; 3 skipped: 3 TensorUnavailableForStep)");
    CHECK_THAT(tdbg::rules::to_text(result), Catch::Contains("DeadRelu: NothingEvaluated") &&
                                                 Catch::Contains("nothing evaluated: tensor_regex '.*relu_output'"));

    // The regex fixed, the rule evaluates every step: NoIssuesFound (half the units are dead, not more).
    const auto fixed = evaluate_by_name(t, "DeadRelu", {{"tensor_regex", "relu_out"}});
    CHECK(fixed.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(fixed.not_triggered_steps == std::vector<std::int64_t>{0, 1, 2});
    CHECK(fixed.nothing_evaluated_reason.empty());
    CHECK(tdbg::rules::describe_coverage(fixed) == "evaluated 3 of 3 steps");
}

TEST_CASE("a typo in collection_names is NothingEvaluated, naming the nearest collection") {
    tdbg::test::temp_dir dir("coverage_collection");
    const auto t = coverage_run(dir);
    const auto result = evaluate_by_name(t, "AllZero", {{"collection_names", "gradiens"}});
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK_THAT(result.nothing_evaluated_reason,
               Catch::StartsWith("collection 'gradiens' is not in the run (did you mean 'gradients'?)"));
    // Nothing near: the run's collections are listed instead.
    const auto far = evaluate_by_name(t, "AllZero", {{"collection_names", "activations_of_everything"}});
    CHECK_THAT(far.nothing_evaluated_reason,
               Catch::StartsWith("collection 'activations_of_everything' is not in the run (the run's collections: "
                                 "'gradients', 'losses')"));
}

TEST_CASE("tensors selected but no step evaluable: NothingEvaluated names them and counts the skips") {
    tdbg::test::temp_dir dir("coverage_skipped");
    const auto t = coverage_run(dir);
    // "loss" has only a stored variance, which cannot say whether it is all zeros: AllZero needs its
    // value (or a reduction that decides) at every step.
    const auto result = evaluate_by_name(t, "AllZero", {{"tensor_regex", "^loss$"}});
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(result.nothing_evaluated_reason ==
          "it selects 1 tensor: 'loss'; every step was skipped (evaluated 0 of 3 steps; 3 skipped: 3 "
          "TensorUnavailableForStep; 1 of 1 selected tensor saved as reductions only, decided by their stored "
          "reductions where they can be)");
    // The JSON keeps smdebug's fields as they were and adds status, coverage and the reason.
    const auto j = tdbg::rules::to_json(result);
    CHECK(j.at("status").as_string() == "NothingEvaluated");
    CHECK(j.at("nothing_evaluated_reason").as_string() == result.nothing_evaluated_reason);
    CHECK(j.at("coverage").at("evaluated").as_int64() == 0);
    CHECK(j.at("coverage").at("skipped").as_int64() == 3);
    CHECK(j.at("coverage").at("text").as_string() ==
          "evaluated 0 of 3 steps; 3 skipped: 3 TensorUnavailableForStep; 1 of 1 selected tensor saved as reductions "
          "only, decided by their stored reductions where they can be");
    CHECK(j.at("skipped_steps").at("TensorUnavailableForStep").size() == 3);
}

TEST_CASE("a range without any step of the run is NothingEvaluated, saying so") {
    tdbg::test::temp_dir dir("coverage_range");
    const auto t = coverage_run(dir);
    tdbg::rules::invoke_options options;
    options.start_step = 100;
    options.end_step = 110;
    const auto result = evaluate_by_name(t, "VanishingGradient", {}, options);
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(result.nothing_evaluated_reason ==
          "the run '" + t.name() + "' has no step in steps 100 to 109; it selects 1 tensor: 'gradient/fc.weight'");
    CHECK(tdbg::rules::describe_coverage(result) == "evaluated 0 of 0 steps");
}

TEST_CASE("triggered steps carry their reasons: in the result, the JSON, JUnit and the matchers") {
    tdbg::test::temp_dir dir("coverage_reasons");
    const auto t = coverage_run(dir);
    const auto result = evaluate_by_name(t, "VanishingGradient", {{"threshold", "0.9"}});
    REQUIRE(result.triggered_steps == std::vector<std::int64_t>{0, 1, 2});
    REQUIRE(result.trigger_reasons.size() == 3);
    CHECK(result.trigger_reasons.at(1) == "mean |gradient/fc.weight| = 0.5 < 0.9");
    CHECK(tdbg::rules::trigger_reason_lines(result, 2) ==
          std::vector<std::string>{"step 0: mean |gradient/fc.weight| = 0.5 < 0.9",
                                   "step 1: mean |gradient/fc.weight| = 0.5 < 0.9", "... and 1 more"});
    const auto j = tdbg::rules::to_json(result);
    REQUIRE(j.at("trigger_reasons").size() == 3);
    CHECK(j.at("trigger_reasons").at(2).at("step").as_int64() == 2);
    CHECK(j.at("trigger_reasons").at(2).at("reason").as_string() == "mean |gradient/fc.weight| = 0.5 < 0.9");

    const auto empty = evaluate_by_name(t, "DeadRelu", {});
    const std::string xml = tdbg::rules::to_junit_xml({result, empty}, "run");
    CHECK_THAT(xml, Catch::Contains(R"(tests="2" failures="1" errors="1")"));
    CHECK_THAT(xml, Catch::Contains(R"(<failure type="IssuesFound" message="VanishingGradient triggered at steps 0-2: )"
                                    R"(step 0: mean |gradient/fc.weight| = 0.5 &lt; 0.9; step 1: )"));
    CHECK_THAT(xml, Catch::Contains(R"(<error type="NothingEvaluated" message="DeadRelu evaluated no step: )"
                                    R"(tensor_regex &#39;.*relu_output&#39; matches none)"));

    // Matchers: reasons in the message; NothingEvaluated fails even no_issues, saying why.
    auto issues = tdbg::no_issues("VanishingGradient", {{"threshold", "0.9"}});
    CHECK_FALSE(issues.match(t));
    CHECK_THAT(issues.describe(), Catch::Contains("triggered at steps [0, 1, 2]; step 0: mean |gradient/fc.weight| = "
                                                  "0.5 < 0.9; step 1:"));
    auto nothing = tdbg::no_issues<tdbg::rules::dead_relu>();
    CHECK_FALSE(nothing.match(t));
    CHECK_THAT(nothing.describe(),
               Catch::Contains("(NothingEvaluated: tensor_regex '.*relu_output' matches none of the run's 3 tensors "
                               "(did you mean 'layer1/relu_out'?)"));
    CHECK_FALSE(tdbg::triggers_at<tdbg::rules::dead_relu>({}).match(t)); // no steps met, but none checked either
    // Catch2 prints the trial by its name and path, not "{?}".
    CHECK(Catch::Detail::stringify(t) == "trial '" + t.name() + "' at " + t.path());
    CHECK_THAT(Catch::Detail::stringify(t), Catch::Contains(dir.path().filename().string()));
}

TEST_CASE("registering a rule under a built-in rule's name in other case is refused") {
    const auto refused = [](const std::string& name) {
        try {
            tdbg::rules::registry::add<tdbg::rules::dead_relu>(name);
        } catch (const tdbg::config_error& e) {
            return std::string(e.what());
        }
        tdbg::rules::registry::remove(name);
        return std::string("accepted");
    };
    CHECK(refused("deadrelu") ==
          "registry: 'deadrelu' differs from the built-in rule 'DeadRelu' only by case, '_' or '-'; register it as "
          "'DeadRelu' to replace the built-in rule, or choose another name");
    CHECK_THAT(refused("vanishing_gradient"), Catch::Contains("the built-in rule 'VanishingGradient'"));
    CHECK(refused("MyDeadRelu") == "accepted"); // another name is no shadow
    CHECK(tdbg::rules::registry::lookup("deadrelu") == std::optional<std::string>("DeadRelu")); // still the built-in
}

TEST_CASE("LossNotDecreasing: a NaN loss is not decreasing") {
    tdbg::test::temp_dir dir("coverage_nan_loss");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> losses{1.0F, 0.5F, nan, 0.25F, 0.125F};
    for (std::size_t s = 0; s < losses.size(); ++s) {
        run.step(static_cast<std::int64_t>(s), {{"loss", tdbg::test::scalar(losses[s]), {}}});
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const auto result = evaluate_by_name(t, "LossNotDecreasing", {{"num_steps", "1"}, {"mode", "GLOBAL"}});
    // 2: NaN after 0.5; 3: 0.25 after NaN (not lower than a NaN); 4: 0.125 after 0.25, lower.
    CHECK(result.triggered_steps == std::vector<std::int64_t>{2, 3});
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0, 1, 4});
    CHECK(result.trigger_reasons.at(2) ==
          "loss went from 0.5 at global step 1 to nan at global step 2: a NaN loss is not decreasing");
    CHECK(result.trigger_reasons.at(3) ==
          "loss went from nan at global step 2 to 0.25 at global step 3: a NaN loss is not decreasing");
}

TEST_CASE("LossNotDecreasing: its reasons name the steps of the mode it reads, or global steps") {
    tdbg::test::temp_dir dir("coverage_loss_steps");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    // TRAIN at global steps 0-3, then EVAL (its steps 0-2) at global steps 4-6, its loss flat.
    for (std::int64_t s = 0; s < 4; ++s) {
        run.step(s, {{"loss", tdbg::test::scalar(1.0F / static_cast<float>(s + 1)), {}}}, tdbg::mode::train);
    }
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(4 + s, {{"loss", tdbg::test::scalar(0.5F), {}}}, tdbg::mode::eval, s);
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const auto eval = evaluate_by_name(t, "LossNotDecreasing", {{"num_steps", "1"}, {"mode", "EVAL"}});
    REQUIRE_FALSE(eval.trigger_reasons.empty());
    CHECK(eval.trigger_reasons.begin()->second == "loss went from 0.5 at EVAL step 0 to 0.5 at EVAL step 1");
}

TEST_CASE("edit distances and the nearest names behind did-you-mean") {
    using tdbg::detail::edit_distance;
    using tdbg::detail::equal_ignoring_case;
    using tdbg::detail::substring_edit_distance;
    CHECK(edit_distance("gradiens", "gradients") == 1);
    CHECK(edit_distance("Losses", "losses", equal_ignoring_case{}) == 0);
    CHECK(edit_distance("Losses", "losses") == 1);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(substring_edit_distance("relu_output", "layer1/relu_out") == 3);
    CHECK(substring_edit_distance("fc", "model/fc.weight") == 0);
    CHECK(substring_edit_distance("FC", "model/fc.weight", equal_ignoring_case{}) == 0);
    CHECK(tdbg::regex_literal(".*relu_output$") == "relu_output");
    CHECK(tdbg::regex_literal("^gradient\\/fc\\.weight\\d+") == "gradient/fc.weight");
    CHECK(tdbg::nearest_names("gradiens", {"losses", "gradients", "weights"}, false) ==
          std::vector<std::string>{"gradients"});
    CHECK(tdbg::nearest_names("xyz", {"losses", "gradients"}, false).empty());
    CHECK(tdbg::nearest_names("relu_out", {"layer1/relu_output", "layer1/weight"}, true) ==
          std::vector<std::string>{"layer1/relu_output"});
    CHECK(tdbg::nearest_names("relu_out", {"layer1/relu_output"}, false).empty());
    CHECK(tdbg::nearest_names("", {"losses"}, false).empty());
}

TEST_CASE("the nearest names are the nearest first, ties in the candidates' order, at most the limit") {
    const auto distance = [](std::string_view a, std::string_view b) { return tdbg::detail::edit_distance(a, b); };
    const std::vector<std::string> candidates{"ab", "abc", "b", "a", "xy", "c"};
    // Distances from "a": ab 1, abc 2, b 1, a 0, xy 2, c 1.
    CHECK(tdbg::detail::nearest_names("a", candidates, 3, 1, distance) == std::vector<std::string>{"a", "ab", "b"});
    CHECK(tdbg::detail::nearest_names("a", candidates, 10, 1, distance) ==
          std::vector<std::string>{"a", "ab", "b", "c"});
    CHECK(tdbg::detail::nearest_names("a", candidates, 10, 2, distance) ==
          std::vector<std::string>{"a", "ab", "b", "c", "abc", "xy"});
    CHECK(tdbg::detail::nearest_names("a", candidates, 1, 2, distance) == std::vector<std::string>{"a"});
    CHECK(tdbg::detail::nearest_names("a", candidates, 0, 2, distance).empty());
    CHECK(tdbg::detail::nearest_names("q", candidates, 3, 0, distance).empty());
}

TEST_CASE("the coverage line lists the skip reasons most skipped first, ties in the order of their names") {
    tdbg::rules::evaluation_result r;
    r.not_triggered_steps = {0};
    r.skipped_steps["Delta"] = tdbg::rules::step_set{1};
    r.skipped_steps["Bravo"] = tdbg::rules::step_set{2, 3};
    r.skipped_steps["Charlie"] = tdbg::rules::step_set{4, 5, 6};
    r.skipped_steps["Alpha"] = tdbg::rules::step_set{7};
    r.skipped_steps["Echo"] = tdbg::rules::step_set{8, 9};
    CHECK(tdbg::rules::describe_coverage(r) ==
          "evaluated 1 of 10 steps; 9 skipped: 3 Charlie, 2 Bravo, 2 Echo, 1 Alpha, 1 Delta");
}
