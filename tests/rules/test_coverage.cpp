// Nothing checked is no pass: NothingEvaluated and why, the coverage line, the
// reasons of triggered steps (JSON, JUnit, the Catch2 matchers), the registry's
// refusal of a name that shadows a built-in rule, LossNotDecreasing on a NaN loss, and the
// rules that compare steps (a window, a pair, a patience) and compared none.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loss_rules.hpp"
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

// A rule that compares steps with each other (a window of steps, a pair of steps, a patience)
// and compared none cannot say there is no issue, though it looked at every step (smdebug records
// them not triggered, and says NoIssuesFound): NothingEvaluated, its coverage counting the steps of
// its mode and what it compared.

namespace {

// TRAIN at global steps 0-29 (loss 2.0 - 0.05 s), then 3 EVAL steps at global steps 30-32 (their
// steps 0-2, loss 1.2, 1.1, 1.0): a trainer's per-batch loss and a short evaluation.
tdbg::trial train_then_short_eval(const tdbg::test::temp_dir& dir) {
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 30; ++s) {
        run.step(s, {{"loss", tdbg::test::scalar(2.0F - 0.05F * static_cast<float>(s)), {}}}, tdbg::mode::train);
    }
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(30 + s, {{"loss", tdbg::test::scalar(1.2F - 0.1F * static_cast<float>(s)), {}}}, tdbg::mode::eval, s);
    }
    run.end();
    return tdbg::create_trial(dir.path().string());
}

} // namespace

TEST_CASE("LossNotDecreasing over 3 EVAL steps fills no window of 10: NothingEvaluated, counting what it compared") {
    tdbg::test::temp_dir dir("compared_loss_eval");
    const auto t = train_then_short_eval(dir);
    const auto result = evaluate_by_name(t, "LossNotDecreasing", {{"mode", "EVAL"}});
    // smdebug's record is kept: every step looked at, none triggered.
    CHECK(result.not_triggered_steps == tdbg::test::range(0, 32));
    CHECK(result.triggered_steps.empty());
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    REQUIRE(result.comparisons);
    CHECK(result.comparisons->compared == 0);
    CHECK(tdbg::rules::describe_coverage(result) == "evaluated 33 of 33 steps; 3 EVAL steps, 0 windows of 10");
    CHECK_THAT(result.nothing_evaluated_reason, Catch::StartsWith("it compared nothing: 3 EVAL steps, 0 windows of 10"));
    CHECK_THAT(tdbg::rules::to_text(result), Catch::Contains("LossNotDecreasing: NothingEvaluated  [mode=EVAL]"));
    const auto j = tdbg::rules::to_json(result);
    CHECK(j.at("status").as_string() == "NothingEvaluated");
    CHECK(j.at("coverage").at("compared").as_int64() == 0);
    CHECK(j.at("coverage").at("text").as_string() == "evaluated 33 of 33 steps; 3 EVAL steps, 0 windows of 10");

    // A window the EVAL steps fill compares them: 1.2 -> 1.1 -> 1.0 goes down.
    const auto filled = evaluate_by_name(t, "LossNotDecreasing", {{"mode", "EVAL"}, {"num_steps", "1"}});
    CHECK(filled.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(tdbg::rules::describe_coverage(filled) == "evaluated 33 of 33 steps; 3 EVAL steps, 2 windows of 1");
    CHECK(tdbg::rules::to_json(filled).at("coverage").at("compared").as_int64() == 2);
    // TRAIN steps 10 and 20 are compared with 0 and 10.
    const auto train = evaluate_by_name(t, "LossNotDecreasing", {{"mode", "TRAIN"}});
    CHECK(train.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(tdbg::rules::describe_coverage(train) == "evaluated 33 of 33 steps; 30 TRAIN steps, 2 windows of 10");
}

TEST_CASE("LossNotDecreasing in GLOBAL mode compares TRAIN with EVAL losses as smdebug does, and notes the mix") {
    tdbg::test::temp_dir dir("compared_loss_global");
    const auto t = train_then_short_eval(dir);
    const auto result = evaluate_by_name(t, "LossNotDecreasing", {});
    // Global step 30 (EVAL, 1.2) against 20 (TRAIN, 1.0): met, as smdebug's GLOBAL series has it.
    CHECK(result.triggered_steps == std::vector<std::int64_t>{30});
    CHECK(result.status() == tdbg::rules::evaluation_status::issues_found);
    CHECK(result.trigger_reasons.at(30) == "loss went from 1 at global step 20 to 1.2 at global step 30");
    CHECK(tdbg::rules::describe_coverage(result) ==
          "evaluated 33 of 33 steps; 33 GLOBAL steps, 3 windows of 10; its GLOBAL series of 'loss' mixes TRAIN and "
          "EVAL steps (mode=TRAIN or mode=EVAL compares one)");
    // One mode's series has no such note.
    const auto train = evaluate_by_name(t, "LossNotDecreasing", {{"mode", "TRAIN"}});
    CHECK(tdbg::rules::describe_coverage(train).find("mixes") == std::string::npos);
}

TEST_CASE("the README's advice for a noisy loss: a smoothed loss alone needs use_losses_collection=False") {
    tdbg::test::temp_dir dir("compared_smoothed_loss");
    tdbg::test::rule_run run(dir.path());
    // Both in "losses", as record_loss saves them: the per-batch loss jumps every third step.
    run.collections({{"losses", "^(CrossEntropyLoss|smoothed_loss)_output_0$"}});
    for (std::int64_t s = 0; s < 40; ++s) {
        const float trend = 2.0F - 0.01F * static_cast<float>(s);
        run.step(s, {{"CrossEntropyLoss_output_0", tdbg::test::scalar(trend + (s % 3 == 0 ? 0.3F : 0.0F)), {}},
                     {"smoothed_loss_output_0", tdbg::test::scalar(trend), {}}});
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());
    // tensor_regex alone adds to the losses collection: the per-batch loss still fires (30 against 20).
    const auto regex_only = evaluate_by_name(t, "LossNotDecreasing", {{"tensor_regex", "smoothed_loss"}});
    CHECK(regex_only.triggered_steps == std::vector<std::int64_t>{30});
    CHECK_THAT(regex_only.trigger_reasons.at(30), Catch::StartsWith("CrossEntropyLoss_output_0 went from"));
    // As the README says: the smoothed loss alone goes down.
    const auto smoothed = evaluate_by_name(
        t, "LossNotDecreasing", {{"tensor_regex", "smoothed_loss"}, {"use_losses_collection", "False"}});
    CHECK(smoothed.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(tdbg::rules::describe_coverage(smoothed) == "evaluated 40 of 40 steps; 40 GLOBAL steps, 3 windows of 10");
}

TEST_CASE("UnchangedTensor with fewer saved steps than num_steps compares no window: NothingEvaluated, saying so") {
    tdbg::test::temp_dir dir("compared_unchanged");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"weights", "^w$"}});
    for (std::int64_t s = 0; s < 2; ++s) {
        run.step(s, {{"w", f32({1.0F, 2.0F}), {}}});
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const auto result = evaluate_by_name(t, "UnchangedTensor", {{"collection_names", "weights"}});
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(tdbg::rules::describe_coverage(result) ==
          "evaluated 0 of 2 steps; 2 skipped: 2 TensorUnavailableForStep; 0 windows of 3 saved steps");
    const auto two = evaluate_by_name(t, "UnchangedTensor", {{"collection_names", "weights"}, {"num_steps", "2"}});
    CHECK(two.triggered_steps == std::vector<std::int64_t>{1});
    CHECK(tdbg::rules::describe_coverage(two) ==
          "evaluated 1 of 2 steps; 1 skipped: 1 TensorUnavailableForStep; 1 window of 2 saved steps");
}

TEST_CASE("WeightUpdateRatio with one TRAIN step of weights compares no pair of steps: NothingEvaluated") {
    tdbg::test::temp_dir dir("compared_weight_update");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"weights", "^w$"}});
    run.step(0, {{"w", f32({1.0F, 2.0F}), {}}}, tdbg::mode::train);
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(1 + s, {{"w", f32({1.0F, 2.0F}), {}}}, tdbg::mode::eval, s);
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const auto result = evaluate_by_name(t, "WeightUpdateRatio", {});
    // The EVAL steps are looked at and not compared (smdebug: not triggered); step 0 has no step before.
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{1, 2, 3});
    CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(tdbg::rules::describe_coverage(result) ==
          "evaluated 3 of 4 steps; 1 skipped: 1 TensorUnavailableForStep; 1 TRAIN step, 0 pairs of steps");
    CHECK_THAT(result.nothing_evaluated_reason, Catch::StartsWith("it compared nothing: 1 TRAIN step, 0 pairs of steps"));

    tdbg::test::temp_dir dir2("compared_weight_update_two");
    tdbg::test::rule_run run2(dir2.path());
    run2.collections({{"weights", "^w$"}});
    run2.step(0, {{"w", f32({1.0F, 2.0F}), {}}});
    run2.step(1, {{"w", f32({1.1F, 2.0F}), {}}});
    run2.end();
    const auto two = evaluate_by_name(tdbg::create_trial(dir2.path().string()), "WeightUpdateRatio", {});
    CHECK(two.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(tdbg::rules::describe_coverage(two) ==
          "evaluated 1 of 2 steps; 1 skipped: 1 TensorUnavailableForStep; 2 TRAIN steps, 1 pair of steps");
}

TEST_CASE("Overfit and Overtraining that never fill their patience compare nothing: NothingEvaluated") {
    tdbg::test::temp_dir dir("compared_patience");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    // TRAIN steps 0-2 at 1.0, then EVAL steps 3-5 at 2.0: a validation loss far above, and flat.
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(s, {{"loss", tdbg::test::scalar(1.0F), {}}}, tdbg::mode::train);
    }
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(3 + s, {{"loss", tdbg::test::scalar(2.0F), {}}}, tdbg::mode::eval, s);
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());

    const auto overfit = evaluate_by_name(t, "Overfit", {{"patience", "5"}});
    CHECK(overfit.not_triggered_steps == tdbg::test::range(0, 5));
    CHECK(overfit.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(tdbg::rules::describe_coverage(overfit) ==
          "evaluated 6 of 6 steps; 3 EVAL steps, 3 ratios to a TRAIN mean (0 runs of patience 5)");
    const auto overfit3 = evaluate_by_name(t, "Overfit", {{"patience", "3"}});
    CHECK(overfit3.triggered_steps == std::vector<std::int64_t>{5});
    CHECK(tdbg::rules::describe_coverage(overfit3) ==
          "evaluated 6 of 6 steps; 3 EVAL steps, 3 ratios to a TRAIN mean (1 run of patience 3)");

    const auto overtraining = evaluate_by_name(t, "Overtraining", {});
    CHECK(overtraining.not_triggered_steps == tdbg::test::range(0, 5));
    CHECK(overtraining.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(tdbg::rules::describe_coverage(overtraining) ==
          "evaluated 6 of 6 steps; 3 TRAIN steps, 0 past patience_train 5; 3 EVAL steps, 0 past patience_validation 10");
    const auto short_patience = evaluate_by_name(t, "Overtraining", {{"patience_train", "2"}});
    CHECK(short_patience.triggered_steps == std::vector<std::int64_t>{2});
    CHECK(tdbg::rules::describe_coverage(short_patience) ==
          "evaluated 6 of 6 steps; 3 TRAIN steps, 1 past patience_train 2; 3 EVAL steps, 0 past patience_validation 10");
}

TEST_CASE("StalledTrainingRule over a single step compares no pair of steps: NothingEvaluated") {
    tdbg::test::temp_dir dir("compared_stalled");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    run.step(0, {{"loss", tdbg::test::scalar(1.0F), {}}});
    run.end();
    const auto one = evaluate_by_name(tdbg::create_trial(dir.path().string()), "StalledTrainingRule", {});
    CHECK(one.not_triggered_steps == std::vector<std::int64_t>{0});
    CHECK(one.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(tdbg::rules::describe_coverage(one) == "evaluated 1 of 1 step; 1 step with a time, 0 pairs of steps");

    tdbg::test::temp_dir dir2("compared_stalled_two");
    tdbg::test::rule_run run2(dir2.path());
    run2.collections({{"losses", "^loss$"}});
    run2.step(0, {{"loss", tdbg::test::scalar(1.0F), {}}});
    run2.step(1, {{"loss", tdbg::test::scalar(1.0F), {}}});
    run2.end();
    const auto two = evaluate_by_name(tdbg::create_trial(dir2.path().string()), "StalledTrainingRule", {});
    CHECK(two.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(tdbg::rules::describe_coverage(two) == "evaluated 2 of 2 steps; 2 steps with a time, 1 pair of steps");
}

TEST_CASE("ClassImbalance, CheckInputImages and PoorWeightInitialization that judged no step are NothingEvaluated") {
    tdbg::test::temp_dir dir("compared_thresholds");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"gradients", "^gradient/"}});
    // Steps 0-9 save neither labels nor images nor gradients; 10 and 11 save all three.
    for (std::int64_t s = 0; s < 10; ++s) {
        run.step(s, {{"other", f32({1.0F}), {}}});
    }
    for (std::int64_t s = 10; s < 12; ++s) {
        run.step(s, {{"labels", f32({0.0F, 1.0F, 0.0F, 1.0F}), {}},
                     {"predictions", f32({0.0F, 1.0F, 0.0F, 1.0F}), {}},
                     {"hybridsequential0_input_0", f32(std::vector<float>(6, 0.0F), {2, 3, 1, 1}), {}},
                     {"gradient/fc.weight", f32({-1.0F, 0.0F, 1.0F, 2.0F}), {}}});
    }
    run.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const auto coverage = [](const tdbg::rules::evaluation_result& r) { return tdbg::rules::describe_coverage(r); };

    // 8 labels, never the 500 it judges from; judged from 4, they are balanced and predicted right.
    const auto imbalance = evaluate_by_name(t, "ClassImbalance", {});
    CHECK(imbalance.not_triggered_steps == std::vector<std::int64_t>{10, 11});
    CHECK(imbalance.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(coverage(imbalance) ==
          "evaluated 2 of 12 steps; 10 skipped: 10 TensorUnavailableForStep; 8 labels counted, 0 steps judged (samples 500)");
    const auto judged = evaluate_by_name(t, "ClassImbalance", {{"samples", "4"}});
    CHECK(judged.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK_THAT(coverage(judged), Catch::EndsWith("8 labels counted, 2 steps judged (samples 4)"));

    // 4 images, never the 500 it judges from; from 2, their channel means are 0.
    const auto images = evaluate_by_name(t, "CheckInputImages", {});
    CHECK(images.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK_THAT(coverage(images), Catch::EndsWith("; 4 images seen, 0 steps judged (threshold_samples 500)"));
    const auto images2 = evaluate_by_name(t, "CheckInputImages", {{"threshold_samples", "2"}});
    CHECK(images2.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK_THAT(coverage(images2), Catch::EndsWith("; 4 images seen, 2 steps judged (threshold_samples 2)"));

    // Its first 10 steps have nothing to judge; the later ones are not judged (smdebug: not triggered).
    const auto init = evaluate_by_name(t, "PoorWeightInitialization", {});
    CHECK(init.not_triggered_steps == std::vector<std::int64_t>{10, 11});
    CHECK(init.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(coverage(init) == "evaluated 2 of 12 steps; 10 skipped: 10 TensorUnavailableForStep; 0 of the first 10 "
                            "steps judged");
    const auto init12 = evaluate_by_name(t, "PoorWeightInitialization", {{"steps", "12"}});
    CHECK(init12.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK_THAT(coverage(init12), Catch::EndsWith("; 2 of the first 12 steps judged"));
}
