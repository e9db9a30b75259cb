// The registry (rules built by name from string parameters, users' own rules
// too) and SageMaker's DebugRuleConfigurations JSON.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_configurations.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::rules::rule_params;
using tdbg::test::scalar;

// A user's rule: met when "loss" is above `limit`.
class loss_limit : public tdbg::rules::rule<loss_limit> {
public:
    loss_limit(tdbg::trial base, const rule_params& params) : rule(std::move(base), params), limit_(params.get("limit", 1.0)) {}
    bool invoke_at_step(std::int64_t step) const { return tdbg::rules::scalar_of(value("loss", step)) > limit_; }

private:
    double limit_;
};

// Registered at start-up, without a macro.
const tdbg::rules::registrar<loss_limit> loss_limit_registration{"LossLimit"};

// A rule comparing runs: met when the two runs' "loss" differ at the step.
class loss_differs : public tdbg::rules::rule<loss_differs> {
public:
    loss_differs(tdbg::trial base, std::vector<tdbg::trial> others, const rule_params& params)
        : rule(std::move(base), std::move(others), params) {}
    bool invoke_at_step(std::int64_t step) const {
        return tdbg::rules::scalar_of(value("loss", step)) !=
               tdbg::rules::scalar_of(other_trials().at(0).tensor("loss").value(step));
    }
};

void write_run(const tdbg::test::rule_run& run, float scale) {
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 5; ++s) {
        run.step(s, {{"loss", scalar(scale * static_cast<float>(s)), {}}});
    }
    run.end();
}

} // namespace

TEST_CASE("the registry builds the built-in rules by their SageMaker names") {
    const auto names = tdbg::rules::registry::names();
    for (const char* builtin :
         {"VanishingGradient", "ExplodingTensor", "AllZero", "TensorVariance", "UnchangedTensor", "LossNotDecreasing",
          "Overfit", "Overtraining", "WeightUpdateRatio", "DeadRelu", "SaturatedActivation", "PoorWeightInitialization",
          "SimilarAcrossRuns", "ClassImbalance", "Confusion", "CheckInputImages", "NLPSequenceRatio",
          "StalledTrainingRule", "TreeDepth", "FeatureImportanceOverweight"}) {
        INFO(builtin);
        CHECK(std::find(names.begin(), names.end(), builtin) != names.end());
    }
    CHECK(tdbg::rules::registry::compares_runs("SimilarAcrossRuns"));
    CHECK_FALSE(tdbg::rules::registry::compares_runs("VanishingGradient"));
    tdbg::test::temp_dir dir("registry_builtin");
    tdbg::test::rule_run run(dir.path());
    write_run(run, 1.0F);
    const auto trial = tdbg::create_trial(dir.path().string());
    auto r = tdbg::rules::registry::create("loss_not_decreasing", trial, {{"num_steps", "2"}}, {},
                                           tdbg::rules::rule_logger::silent());
    CHECK(r.name() == "LossNotDecreasing"); // found ignoring case and '_'
    CHECK(r.get<tdbg::rules::loss_not_decreasing>() != nullptr);
    const auto result = r.evaluate();
    // loss 0, 1, 2, 3, 4 goes up: checked at mode steps 2 (against 0) and 4 (against 2)
    CHECK(result.triggered_steps == std::vector<std::int64_t>{2, 4});
    CHECK(result.resolved_params.at("num_steps") == 2);
}

TEST_CASE("users' own rule classes are registered and built by name") {
    tdbg::test::temp_dir dir("registry_custom");
    tdbg::test::rule_run run(dir.path());
    write_run(run, 1.0F); // loss = 0, 1, 2, 3, 4
    const auto trial = tdbg::create_trial(dir.path().string());

    REQUIRE(tdbg::rules::registry::contains("LossLimit")); // by the static registrar
    auto r = tdbg::rules::registry::create("LossLimit", trial, {{"limit", "2.5"}}, {}, tdbg::rules::rule_logger::silent());
    const auto result = r.evaluate();
    CHECK(result.rule == "LossLimit");
    CHECK(result.triggered_steps == std::vector<std::int64_t>{3, 4});
    CHECK(result.params == std::map<std::string, std::string>{{"limit", "2.5"}});

    tdbg::rules::registry::add<loss_differs>("LossDiffers");
    tdbg::test::temp_dir other_dir("registry_other");
    tdbg::test::rule_run other(other_dir.path());
    write_run(other, 1.0F);
    auto same = tdbg::rules::registry::create("LossDiffers", trial, {}, {tdbg::create_trial(other_dir.path().string())},
                                              tdbg::rules::rule_logger::silent());
    CHECK(same.evaluate().status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK_THROWS_AS(tdbg::rules::registry::create("LossLimit", trial, {}, {trial}), tdbg::config_error); // takes no other trial
    CHECK(tdbg::rules::registry::remove("LossDiffers"));
    CHECK_FALSE(tdbg::rules::registry::contains("LossDiffers"));
}

// Run alone (ctest runs each test case in a process of its own), this test registers before
// anything has looked a rule up, when the built-in rules are not in the table yet.
TEST_CASE("a rule registered under a built-in rule's name replaces it however early, and a removed one stays removed") {
    tdbg::test::temp_dir dir("registry_replace");
    tdbg::test::rule_run run(dir.path());
    write_run(run, 1.0F); // loss = 0, 1, 2, 3, 4

    tdbg::rules::registry::add<loss_limit>("VanishingGradient");
    const auto trial = tdbg::create_trial(dir.path().string());
    auto replaced = tdbg::rules::registry::create("vanishing_gradient", trial, {{"limit", "3.5"}}, {},
                                                  tdbg::rules::rule_logger::silent());
    CHECK(replaced.name() == "VanishingGradient");
    CHECK(replaced.get<loss_limit>() != nullptr);
    CHECK(replaced.get<tdbg::rules::vanishing_gradient>() == nullptr);
    CHECK(replaced.evaluate().triggered_steps == std::vector<std::int64_t>{4});
    const auto names = tdbg::rules::registry::names();
    CHECK(std::count(names.begin(), names.end(), "VanishingGradient") == 1);

    CHECK(tdbg::rules::registry::remove("ExplodingTensor"));
    CHECK_FALSE(tdbg::rules::registry::contains("ExplodingTensor"));
    CHECK_FALSE(tdbg::rules::registry::remove("ExplodingTensor"));
    CHECK_THROWS_WITH(tdbg::rules::registry::create("ExplodingTensor", trial),
                      Catch::Contains("unknown rule 'ExplodingTensor'"));

    // Put back as they were, for the test cases that share this process when run together.
    tdbg::rules::registry::add<tdbg::rules::vanishing_gradient>("VanishingGradient");
    tdbg::rules::registry::add<tdbg::rules::exploding_tensor>("ExplodingTensor");
    CHECK(tdbg::rules::registry::create("VanishingGradient", trial).get<tdbg::rules::vanishing_gradient>() != nullptr);
}

TEST_CASE("the registry rejects unknown rules and parameters with messages that say what is known") {
    tdbg::test::temp_dir dir("registry_errors");
    tdbg::test::rule_run run(dir.path());
    write_run(run, 1.0F);
    const auto trial = tdbg::create_trial(dir.path().string());
    try {
        (void)tdbg::rules::registry::create("VanishingGradients", trial);
        FAIL("no exception");
    } catch (const tdbg::config_error& e) {
        CHECK(std::string(e.what()).find("unknown rule 'VanishingGradients'") != std::string::npos);
        CHECK(std::string(e.what()).find("VanishingGradient,") != std::string::npos);
    }
    // Two letters swapped: the message names the rule that was meant, as describe() does.
    CHECK_THROWS_WITH(tdbg::rules::registry::create("VanishingGradeint", trial),
                      Catch::Contains("unknown rule 'VanishingGradeint' (did you mean 'VanishingGradient'?); "
                                      "registered rules: "));
    try {
        (void)tdbg::rules::registry::create("VanishingGradient", trial, {{"treshold", "1"}});
        FAIL("no exception");
    } catch (const tdbg::config_error& e) {
        CHECK(std::string(e.what()) ==
              "rule VanishingGradient: unknown parameter 'treshold'; this rule takes threshold");
    }
    CHECK_THROWS_AS(tdbg::rules::registry::create("VanishingGradient", trial, {{"threshold", "small"}}), tdbg::config_error);
    CHECK_THROWS_AS(tdbg::rules::registry::create("AllZero", trial), tdbg::config_error); // needs a selection
    CHECK_THROWS_AS(tdbg::rules::registry::create("SimilarAcrossRuns", trial), tdbg::config_error); // needs other_trials
}

TEST_CASE("DebugRuleConfigurations JSON: the array, a whole request, or one entry, other SageMaker keys tolerated") {
    const std::string config = R"([
      {"RuleConfigurationName": "VGRule", "InstanceType": "ml.t3.medium", "VolumeSizeInGB": 30,
       "RuleEvaluatorImage": "864354269164.dkr.ecr.us-east-1.amazonaws.com/sagemaker-debugger-rule-evaluator:latest",
       "LocalPath": "/opt/ml/processing/output/rule", "S3OutputPath": "s3://bucket/rules",
       "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "20.0"}},
      {"RuleParameters": {"rule_to_invoke": "LossNotDecreasing", "num_steps": 3, "use_losses_collection": true}}
    ])";
    const auto parsed = tdbg::rules::parse_rule_configurations(config);
    REQUIRE(parsed.size() == 2);
    CHECK(parsed[0].configuration_name == "VGRule");
    CHECK(parsed[0].rule_to_invoke == "VanishingGradient");
    CHECK(parsed[0].parameters == std::map<std::string, std::string>{{"threshold", "20.0"}});
    CHECK(parsed[1].configuration_name == "LossNotDecreasing"); // defaults to rule_to_invoke
    CHECK(parsed[1].parameters == std::map<std::string, std::string>{{"num_steps", "3"}, {"use_losses_collection", "true"}});

    const auto request = tdbg::rules::parse_rule_configurations(
        R"({"TrainingJobName": "x", "DebugRuleConfigurations": [{"RuleParameters": {"rule_to_invoke": "AllZero"}}]})");
    REQUIRE(request.size() == 1);
    CHECK(request[0].rule_to_invoke == "AllZero");
    CHECK(tdbg::rules::parse_rule_configurations(R"({"RuleParameters": {"rule_to_invoke": "Overfit"}})").at(0).rule_to_invoke ==
          "Overfit");

    tdbg::test::temp_dir dir("registry_config");
    tdbg::test::rule_run run(dir.path());
    write_run(run, 1.0F);
    const auto trial = tdbg::create_trial(dir.path().string());
    auto r = tdbg::rules::registry::create(parsed[1], trial, {}, tdbg::rules::rule_logger::silent());
    const auto result = r.evaluate();
    CHECK(result.configuration_name == "LossNotDecreasing");
    CHECK(result.resolved_params.at("num_steps") == 3);
    CHECK(result.resolved_params.at("use_losses_collection") == true);
}

TEST_CASE("bad DebugRuleConfigurations are rejected with the entry and the problem") {
    auto message = [](const std::string& json) -> std::string {
        try {
            (void)tdbg::rules::parse_rule_configurations(json, "rules.json");
        } catch (const tdbg::config_error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    CHECK(message("[{").find("rules.json: not valid JSON") != std::string::npos);
    CHECK(message("[]").find("no rule configurations") != std::string::npos);
    CHECK(message("[42]").find("entry 0: a rule configuration must be a JSON object") != std::string::npos);
    CHECK(message(R"([{"RuleConfigurationName": "x"}])").find("rule_to_invoke is required") != std::string::npos);
    CHECK(message(R"([{"RuleParameters": {"threshold": "1"}}])").find("rule_to_invoke is required") != std::string::npos);
    CHECK(message(R"([{"RuleParameters": {"rule_to_invoke": "AllZero", "x": [1]}}])").find("RuleParameters.x must be a string") !=
          std::string::npos);
    CHECK(message(R"([{"RuleParameter": {"rule_to_invoke": "AllZero"}}])").find("unknown key 'RuleParameter'") !=
          std::string::npos);
    CHECK(message(R"([{"RuleParameters": {"rule_to_invoke": "A"}}, {"RuleParameters": {"rule_to_invoke": "A"}}])")
              .find("'A' is used twice") != std::string::npos);
    CHECK(message(R"({"DebugRuleConfigurations": {}})").find("must be an array") != std::string::npos);
    CHECK_THROWS_AS(tdbg::rules::load_rule_configurations("/nonexistent/rules.json"), tdbg::config_error);
}
