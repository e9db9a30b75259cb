// The 20 built-in rules as AWS publishes them ("List of Debugger built-in
// rules"): a DebugRuleConfigurations document written with AWS's parameter
// names and defaults runs unchanged; every default is AWS's; and each name or
// default tdbg changed to AWS's behaves as AWS describes, the older names
// still taken.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"
#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_configurations.hpp"
#include "tdbg/trial/trial.hpp"

// Named, so that in a unity build its helpers never meet another test file's.
namespace aws_rule_parameters_test {
namespace {

using tdbg::test::f32;
using tdbg::test::matrix;
using tdbg::test::scalar;
using tdbg::test::step_tensor;
using steps = std::vector<std::int64_t>;

constexpr std::int64_t train_steps = 20; // global steps 0-19 are TRAIN, 20-23 EVAL
constexpr std::int64_t all_steps = 24;

// 21 values from -scale to scale: a healthy gradient for scale 1.
tdbg::tensor_value spread(float scale) {
    std::vector<float> v;
    for (int i = 0; i <= 20; ++i) {
        v.push_back(scale * (static_cast<float>(i) / 10.0F - 1.0F));
    }
    return f32(v);
}

// A run every built-in rule has something to read in, with one planted issue per rule
// (the step each is planted at is what the first test expects). `differ`: the run
// SimilarAcrossRuns compares with, the same but for the loss at step 9.
void write_run(const tdbg::test::rule_run& run, bool differ) {
    run.collections({{"gradients", "^gradient/"},
                     {"weights", "^weights/"},
                     {"losses", "^loss$"},
                     {"labels", "^labels$"},
                     {"predictions", "^predictions$"},
                     {"feature_importance", "^feature_importance/"},
                     {"all", ".*"}});
    const double t0 = 1700000000.0;
    for (std::int64_t s = 0; s < all_steps; ++s) {
        const double wall_time = t0 + static_cast<double>(s) + (s >= 16 ? 2000.0 : 0.0); // StalledTrainingRule: 16
        const float x = static_cast<float>(s);
        if (s >= train_steps) {
            run.step(s, {{"loss", scalar(1.6F), {}}}, tdbg::mode::eval, s - train_steps, "worker_0", wall_time);
            continue;
        }
        // Loss: 2.0 down by 0.1 a step to 1.0 at step 10, then flat; the EVAL loss is 1.6.
        float loss = s <= 10 ? 2.0F - 0.1F * x : 1.0F;
        if (differ && s == 9) {
            loss += 0.5F; // SimilarAcrossRuns: 9
        }
        const float w = s == 12 ? 100.0F : 1.0F; // WeightUpdateRatio: 12 (and 13 comes back, a ratio of 0.99)
        std::vector<step_tensor> t{
            {"loss", scalar(loss), {}},
            {"gradient/w", spread(s == 19 ? 1e-9F : 1.0F), {}}, // VanishingGradient: 19
            {"weights/w", f32({w * (1 + 0.01F * x), w * (2 + 0.01F * x), w * (3 + 0.01F * x), w * (4 + 0.01F * x)}), {}},
            {"mask", s == 7 ? f32({0, 0, 0, 0}) : f32({1, s == 8 ? std::numeric_limits<float>::infinity() : 0.0F, 1, 0}),
             {}}, // AllZero: 7, ExplodingTensor: 8
            {"layer_relu_output", matrix(8, 4, [&](auto, auto c) { return s == 3 && c > 0 ? 0.0F : 1.0F; }), {}}, // DeadRelu: 3
            {"l1_tanh_input", matrix(4, 2, [&](auto, auto) { return s == 5 ? 12.0F : 2.0F; }), {}}, // SaturatedActivation: 5
            {"gate_sigmoid_input", matrix(4, 2, [&](auto, auto) { return s == 6 ? -30.0F : 0.5F; }), {}}, // and 6
            {"a_relu_input", f32({-1, 1, -1, 1}), {}}, // PoorWeightInitialization: 2 (variances 1 and 400)
            {"b_relu_input", s == 2 ? f32({-20, 20, -20, 20}) : f32({-2, 2, -2, 2}), {}},
        };
        if (s < 6) {
            // 100 samples a step, 95 of class 0: ClassImbalance from 500 samples on (4, 5). At 5, 20
            // class-0 samples are predicted as 1: Confusion (column 1 is 5 of 25 on the diagonal).
            std::vector<float> labels;
            std::vector<float> predictions;
            for (int i = 0; i < 100; ++i) {
                labels.push_back(i < 95 ? 0.0F : 1.0F);
                predictions.push_back(i < 95 && !(s == 5 && i < 20) ? 0.0F : 1.0F);
            }
            t.push_back({"labels", f32(labels), {}});
            t.push_back({"predictions", f32(predictions), {}});
            // 100 images x 3 channels x 2 x 2, channel 1 off by 0.5: CheckInputImages from 500 images on (4, 5).
            std::vector<float> images;
            for (int b = 0; b < 100; ++b) {
                for (int c = 0; c < 3; ++c) {
                    for (int p = 0; p < 4; ++p) {
                        images.push_back((c == 1 ? 0.5F : 0.0F) + (p % 2 == 0 ? 1.0F : -1.0F));
                    }
                }
            }
            t.push_back({"net_hybridsequential0_input_0", f32(images, {100, 3, 2, 2}), {}});
        }
        if (s < 3) {
            // 20 tokens, 30%, 60% and 25% of them padding (0): NLPSequenceRatio: 1.
            const int zeros = s == 1 ? 12 : (s == 0 ? 6 : 5);
            std::vector<float> tokens;
            for (int i = 0; i < 20; ++i) {
                tokens.push_back(i < zeros ? 0.0F : 7.0F);
            }
            t.push_back({"model_embedding0_input_0", f32(tokens, {2, 10}), {}});
        }
        if (s < 2) {
            // FeatureImportanceOverweight: the top 3 of 5 hold 0.6, then 0.9 (1).
            const std::vector<float> importance = s == 0 ? std::vector<float>{10, 10, 10, 10, 10}
                                                         : std::vector<float>{50, 30, 10, 5, 5};
            for (std::size_t i = 0; i < importance.size(); ++i) {
                t.push_back({"feature_importance/weight/f" + std::to_string(i), scalar(importance[i]), {}});
            }
            // TreeDepth: node ids 0-6 are 2 deep (0), 0-30 are 4 deep.
            std::vector<float> ids;
            for (int i = 0; i < (s == 0 ? 7 : 31); ++i) {
                ids.push_back(static_cast<float>(i));
            }
            t.push_back({"trees/Node", f32(ids), {}});
        }
        run.step(s, t, tdbg::mode::train, s, "worker_0", wall_time);
    }
    run.end();
}

// Every built-in rule, each parameter AWS documents given its documented default. Where a parameter
// has no default and the rule needs it (a selection of tensors, the other run), the value of AWS's
// example. @OTHER@ is the other run's location.
constexpr const char* aws_configurations = R"json({"DebugRuleConfigurations": [
  {"RuleConfigurationName": "VanishingGradient", "RuleEvaluatorImage": "503895931360.dkr.ecr.us-east-1.amazonaws.com/sagemaker-debugger-rules:latest",
   "InstanceType": "ml.t3.medium", "VolumeSizeInGB": 0,
   "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "0.0000001"}},
  {"RuleConfigurationName": "ExplodingTensor",
   "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "collection_names": "None", "tensor_regex": "None", "only_nan": "False"}},
  {"RuleConfigurationName": "PoorWeightInitialization",
   "RuleParameters": {"rule_to_invoke": "PoorWeightInitialization", "activation_inputs_regex": ".*relu_input",
                      "threshold": "10.0", "distribution_range": "0.001", "patience": "5", "steps": "10"}},
  {"RuleConfigurationName": "SaturatedActivation",
   "RuleParameters": {"rule_to_invoke": "SaturatedActivation", "collection_names": "None",
                      "tensor_regex": ".*tanh_input|.*sigmoid_input", "threshold_tanh_min": "-9.4999",
                      "threshold_tanh_max": "9.4999", "threshold_sigmoid_min": "-23", "threshold_sigmoid_max": "16.99999",
                      "threshold_inactivity": "1.0", "threshold_layer": "50.0"}},
  {"RuleConfigurationName": "DeadRelu",
   "RuleParameters": {"rule_to_invoke": "DeadRelu", "tensor_regex": ".*relu_output", "threshold_inactivity": "1.0",
                      "threshold_layer": "50.0"}},
  {"RuleConfigurationName": "WeightUpdateRatio",
   "RuleParameters": {"rule_to_invoke": "WeightUpdateRatio", "num_steps": "None", "large_threshold": "10.0",
                      "small_threshold": "0.00000001", "epsilon": "0.000000001"}},
  {"RuleConfigurationName": "AllZero",
   "RuleParameters": {"rule_to_invoke": "AllZero", "collection_names": "None", "tensor_regex": ".*", "threshold": "100"}},
  {"RuleConfigurationName": "ClassImbalance",
   "RuleParameters": {"rule_to_invoke": "ClassImbalance", "threshold_imbalance": "10", "threshold_misprediction": "0.7",
                      "samples": "500", "argmax": "False", "labels_regex": ".*labels", "predictions_regex": ".*predictions"}},
  {"RuleConfigurationName": "LossNotDecreasing",
   "RuleParameters": {"rule_to_invoke": "LossNotDecreasing", "collection_names": "None", "tensor_regex": "None",
                      "use_losses_collection": "True", "num_steps": "10", "diff_percent": "0.1",
                      "increase_threshold_percent": "5", "mode": "GLOBAL"}},
  {"RuleConfigurationName": "Overfit",
   "RuleParameters": {"rule_to_invoke": "Overfit", "tensor_regex": "None", "start_step": "0", "patience": "1",
                      "ratio_threshold": "0.1"}},
  {"RuleConfigurationName": "Overtraining",
   "RuleParameters": {"rule_to_invoke": "Overtraining", "patience_train": "5", "patience_validation": "10", "delta": "0.01"}},
  {"RuleConfigurationName": "SimilarAcrossRuns",
   "RuleParameters": {"rule_to_invoke": "SimilarAcrossRuns", "other_trials": "@OTHER@", "collection_names": "None",
                      "tensor_regex": "None"}},
  {"RuleConfigurationName": "StalledTrainingRule",
   "RuleParameters": {"rule_to_invoke": "StalledTrainingRule", "threshold": "1800", "stop_training_on_fire": "False"}},
  {"RuleConfigurationName": "TensorVariance",
   "RuleParameters": {"rule_to_invoke": "TensorVariance", "collection_names": "weights", "tensor_regex": "None",
                      "max_threshold": "None", "min_threshold": "None"}},
  {"RuleConfigurationName": "UnchangedTensor",
   "RuleParameters": {"rule_to_invoke": "UnchangedTensor", "collection_names": "losses", "tensor_regex": "",
                      "num_steps": "3", "rtol": "1e-05", "atol": "1e-08", "equal_nan": "False"}},
  {"RuleConfigurationName": "CheckInputImages",
   "RuleParameters": {"rule_to_invoke": "CheckInputImages", "threshold_mean": "0.2", "threshold_samples": "500",
                      "regex": ".*hybridsequential0_input_0", "channel": "1"}},
  {"RuleConfigurationName": "NLPSequenceRatio",
   "RuleParameters": {"rule_to_invoke": "NLPSequenceRatio", "tensor_regex": ".*embedding0_input_0", "token_values": "0",
                      "token_thresholds_percent": "50"}},
  {"RuleConfigurationName": "Confusion",
   "RuleParameters": {"rule_to_invoke": "Confusion", "category_no": "None", "labels": "labels", "predictions": "predictions",
                      "labels_collection": "labels", "predictions_collection": "predictions", "min_diag": "0.9",
                      "max_off_diag": "0.1"}},
  {"RuleConfigurationName": "FeatureImportanceOverweight",
   "RuleParameters": {"rule_to_invoke": "FeatureImportanceOverweight", "threshold": "0.8", "nfeatures": "3",
                      "tensor_regex": ".*feature_importance/weight"}},
  {"RuleConfigurationName": "TreeDepth",
   "RuleParameters": {"rule_to_invoke": "TreeDepth", "depth": "4"}}
]})json";

std::string with_other(std::string text, const std::string& other) {
    const std::string placeholder = "@OTHER@";
    text.replace(text.find(placeholder), placeholder.size(), other);
    return text;
}

tdbg::rules::evaluation_result evaluate(const tdbg::test::temp_dir& dir, const std::string& rule,
                                        std::map<std::string, std::string> params = {}) {
    auto r = tdbg::rules::registry::create(rule, tdbg::create_trial(dir.path().string()),
                                           tdbg::rules::rule_params(std::move(params)), {},
                                           tdbg::rules::rule_logger::silent());
    auto result = r.evaluate();
    INFO(result.error);
    REQUIRE(result.error.empty());
    return result;
}

// The message of the config_error `f` throws ("" when it throws none).
template <class F>
std::string config_error_of(F&& f) {
    try {
        f();
    } catch (const tdbg::config_error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("AWS's DebugRuleConfigurations for all 20 built-in rules, with AWS's names and defaults, run unchanged") {
    tdbg::test::temp_dir base_dir("aws_base");
    tdbg::test::temp_dir other_dir("aws_other");
    write_run(tdbg::test::rule_run(base_dir.path()), false);
    write_run(tdbg::test::rule_run(other_dir.path()), true);
    const auto configurations =
        tdbg::rules::parse_rule_configurations(with_other(aws_configurations, other_dir.path().string()), "aws.json");
    REQUIRE(configurations.size() == 20);

    // What each finds in the run: the steps write_run planted its issue at.
    const std::map<std::string, steps> triggered{
        {"VanishingGradient", {19}},
        {"ExplodingTensor", {8}},
        {"PoorWeightInitialization", {2}},
        {"SaturatedActivation", {5, 6}},
        {"DeadRelu", {3}},
        {"WeightUpdateRatio", {12}},
        {"AllZero", {7}},
        {"ClassImbalance", {4, 5}},
        {"LossNotDecreasing", {20}},         // mode GLOBAL: the EVAL loss 1.6 at 20 against 1.0 at 10
        {"Overfit", {20, 21, 22, 23}},       // EVAL 1.6 against a TRAIN mean of 1.275
        {"Overtraining", {15, 16, 17, 18, 19}}, // the TRAIN loss stays at 1.0 from step 10
        {"SimilarAcrossRuns", {9}},
        {"StalledTrainingRule", {16}},
        {"TensorVariance", {}}, // no threshold by default: nothing to find
        {"UnchangedTensor", {12, 13, 14, 15, 16, 17, 18, 19, 22, 23}},
        {"CheckInputImages", {4, 5}},
        {"NLPSequenceRatio", {1}},
        {"Confusion", {5}},
        {"FeatureImportanceOverweight", {1}},
        {"TreeDepth", {0}},
    };
    REQUIRE(triggered.size() == 20);
    const auto base = tdbg::create_trial(base_dir.path().string());
    std::set<std::string> ran;
    for (const auto& config : configurations) {
        INFO(config.configuration_name);
        CHECK(config.configuration_name == config.rule_to_invoke);
        ran.insert(config.rule_to_invoke);
        tdbg::rules::any_rule rule = [&] {
            try {
                return tdbg::rules::registry::create(config, base, {}, tdbg::rules::rule_logger::silent());
            } catch (const tdbg::config_error& e) {
                FAIL("config_error: " << e.what());
                throw;
            }
        }();
        auto result = rule.evaluate();
        INFO(result.error);
        REQUIRE(result.error.empty());
        CHECK(result.configuration_name == config.configuration_name);
        CHECK(result.triggered_steps == triggered.at(config.rule_to_invoke));
        CHECK(result.status() == (triggered.at(config.rule_to_invoke).empty() ? tdbg::rules::evaluation_status::no_issues_found
                                                                              : tdbg::rules::evaluation_status::issues_found));
        // Every step was looked at: met, not met, or skipped for a reason smdebug names.
        std::size_t looked_at = result.triggered_steps.size() + result.not_triggered_steps.size();
        for (const auto& [reason, skipped] : result.skipped_steps) {
            looked_at += skipped.size();
        }
        CHECK(looked_at == static_cast<std::size_t>(all_steps));
        // Each parameter given is one the rule took, and resolved as given.
        const auto resolved = tdbg::test::to_nlohmann(result.resolved_params);
        for (const auto& [key, value] : config.parameters) {
            INFO(key << " = " << value);
            CHECK(resolved.contains(key));
        }
    }
    CHECK(ran.size() == 20); // every built-in rule, once
}

TEST_CASE("every built-in rule's parameter defaults are AWS's published ones") {
    tdbg::test::temp_dir dir("aws_defaults");
    write_run(tdbg::test::rule_run(dir.path()), false);
    const auto trial = tdbg::create_trial(dir.path().string());
    const std::string other = dir.path().string();
    using nlohmann::json;
    struct expectation {
        std::map<std::string, std::string> needed; // what the rule cannot do without (AWS: required, or one of two)
        json defaults;                             // every parameter the rule takes, as resolved
    };
    const std::map<std::string, expectation> rules{
        {"VanishingGradient", {{}, {{"threshold", 1e-07}}}},
        {"ExplodingTensor", {{}, {{"collection_names", nullptr}, {"tensor_regex", nullptr}, {"only_nan", false}}}},
        {"PoorWeightInitialization",
         {{},
          {{"activation_inputs_regex", json::array({".*relu_input"})},
           {"threshold", 10.0},
           {"distribution_range", 0.001},
           {"patience", 5},
           {"steps", 10}}}},
        {"SaturatedActivation",
         {{},
          {{"collection_names", nullptr},
           {"tensor_regex", nullptr}, // given neither list, the rule reads ".*tanh_input|.*sigmoid_input"
           {"threshold_tanh_min", -9.4999},
           {"threshold_tanh_max", 9.4999},
           {"threshold_sigmoid_min", -23.0},
           {"threshold_sigmoid_max", 16.99999},
           {"threshold_inactivity", 1.0},
           {"threshold_layer", 50.0}}}},
        {"DeadRelu", {{}, {{"tensor_regex", json::array({".*relu_output"})}, {"threshold_inactivity", 1.0}, {"threshold_layer", 50.0}}}},
        {"WeightUpdateRatio",
         {{}, {{"num_steps", nullptr}, {"large_threshold", 10.0}, {"small_threshold", 1e-08}, {"epsilon", 1e-09}}}},
        {"AllZero",
         {{{"tensor_regex", ".*"}}, {{"collection_names", nullptr}, {"tensor_regex", ".*"}, {"threshold", 100.0}}}},
        {"ClassImbalance",
         {{},
          {{"threshold_imbalance", 10.0},
           {"threshold_misprediction", 0.7},
           {"samples", 500},
           {"argmax", false},
           {"labels_regex", ".*labels"},
           {"predictions_regex", ".*predictions"}}}},
        {"LossNotDecreasing",
         {{},
          {{"collection_names", nullptr},
           {"tensor_regex", nullptr},
           {"use_losses_collection", true},
           {"num_steps", 10},
           {"diff_percent", 0.1},
           {"increase_threshold_percent", 5.0},
           {"mode", "GLOBAL"}}}},
        {"Overfit", {{}, {{"tensor_regex", nullptr}, {"start_step", 0}, {"patience", 1}, {"ratio_threshold", 0.1}}}},
        {"Overtraining", {{}, {{"patience_train", 5}, {"patience_validation", 10}, {"delta", 0.01}}}},
        {"SimilarAcrossRuns",
         {{{"other_trials", other}}, {{"other_trials", other}, {"collection_names", nullptr}, {"tensor_regex", nullptr}}}},
        {"StalledTrainingRule",
         {{}, {{"threshold", 1800}, {"stop_training_on_fire", false}, {"training_job_name_prefix", nullptr}}}},
        {"TensorVariance",
         {{{"collection_names", "weights"}},
          {{"collection_names", "weights"}, {"tensor_regex", nullptr}, {"max_threshold", nullptr}, {"min_threshold", nullptr}}}},
        {"UnchangedTensor",
         {{{"collection_names", "losses"}},
          {{"collection_names", "losses"},
           {"tensor_regex", nullptr},
           {"num_steps", 3},
           {"rtol", 1e-05},
           {"atol", 1e-08},
           {"equal_nan", false}}}},
        {"CheckInputImages",
         {{},
          {{"threshold_mean", 0.2},
           {"threshold_samples", 500},
           {"regex", ".*hybridsequential0_input_0"},
           {"channel", 1}}}},
        {"NLPSequenceRatio",
         {{},
          {{"tensor_regex", json::array({".*embedding0_input_0"})},
           {"token_values", json::array({0.0})},
           {"token_thresholds_percent", json::array({50.0})}}}},
        {"Confusion",
         {{},
          {{"category_no", nullptr},
           {"labels", "labels"},
           {"predictions", "predictions"},
           {"labels_collection", "labels"},
           {"predictions_collection", "predictions"},
           {"min_diag", 0.9},
           {"max_off_diag", 0.1}}}},
        {"FeatureImportanceOverweight",
         {{}, {{"threshold", 0.8}, {"nfeatures", 3}, {"tensor_regex", ".*feature_importance/weight"}}}},
        {"TreeDepth", {{}, {{"depth", 4.0}}}},
    };
    REQUIRE(rules.size() == 20);
    for (const auto& [name, want] : rules) {
        INFO(name);
        auto rule = tdbg::rules::registry::create(name, trial, tdbg::rules::rule_params(want.needed), {},
                                                  tdbg::rules::rule_logger::silent());
        CHECK(tdbg::test::to_nlohmann(rule.params().resolved()) == want.defaults);
    }
}

TEST_CASE("SaturatedActivation takes AWS's threshold_tanh_min/_max and threshold_sigmoid_min/_max, and the older pairs") {
    tdbg::test::temp_dir dir("aws_saturated");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    run.step(0, {{"l1_tanh_input", matrix(4, 2, [](auto, auto) { return 2.0F; }), {}}});
    run.step(1, {{"l1_tanh_input", matrix(4, 2, [](auto, auto) { return 12.0F; }), {}}});
    run.step(2, {{"gate_sigmoid_input", matrix(4, 2, [](auto, auto) { return -30.0F; }), {}}});
    run.step(3, {{"gate_sigmoid_input", matrix(4, 2, [](auto, auto) { return 10.0F; }), {}}});
    run.end();
    CHECK(evaluate(dir, "SaturatedActivation").triggered_steps == steps{1, 2});
    // AWS's names: inputs inside (-1, 1) for tanh, (-40, 5) for sigmoid count as active.
    auto result = evaluate(dir, "SaturatedActivation",
                           {{"threshold_tanh_min", "-1"}, {"threshold_tanh_max", "1"},
                            {"threshold_sigmoid_min", "-40"}, {"threshold_sigmoid_max", "5"}});
    CHECK(result.triggered_steps == steps{0, 1, 3});
    CHECK(result.resolved_params.at("threshold_tanh_min") == tdbg::format::json_value(-1.0));
    CHECK(result.resolved_params.at("threshold_sigmoid_max") == tdbg::format::json_value(5.0));
    // The same with the pairs AWS documented until 2020, which stay tdbg's too.
    result = evaluate(dir, "SaturatedActivation", {{"threshold_tanh", "(-1, 1)"}, {"threshold_sigmoid", "(-40, 5)"}});
    CHECK(result.triggered_steps == steps{0, 1, 3});
    CHECK(result.resolved_params.find("threshold_tanh_min") == nullptr);
    // One bound alone: the other keeps its default (sigmoid's max 16.99999 leaves 10 active).
    CHECK(evaluate(dir, "SaturatedActivation", {{"threshold_sigmoid_min", "-40"}}).triggered_steps == steps{1});
    CHECK(evaluate(dir, "SaturatedActivation", {{"threshold_tanh_max", "1"}}).triggered_steps == steps{0, 1, 2});

    const auto trial = tdbg::create_trial(dir.path().string());
    auto create = [&](std::map<std::string, std::string> params) {
        return config_error_of([&] {
            (void)tdbg::rules::registry::create("SaturatedActivation", trial, tdbg::rules::rule_params(std::move(params)),
                                                {}, tdbg::rules::rule_logger::silent());
        });
    };
    CHECK(create({{"threshold_tanh", "(-1, 1)"}, {"threshold_tanh_max", "2"}}) ==
          "rule SaturatedActivation: give threshold_tanh_min and threshold_tanh_max, or the pair threshold_tanh, not both");
    CHECK(create({{"threshold_sigmoid_min", "20"}}) ==
          "rule SaturatedActivation: parameter 'threshold_sigmoid_min' = 20 must be less than "
          "'threshold_sigmoid_max' = 16.99999");
    CHECK(create({{"threshold_tanh", "(1, -1)"}}) ==
          "rule SaturatedActivation: parameter 'threshold_tanh' = (1, -1): the minimum must be less than the maximum");
    // A misspelt name is refused, and the message lists AWS's names and the older pairs.
    const std::string typo = create({{"threshold_tanh_mn", "-1"}});
    CHECK(typo.find("unknown parameter 'threshold_tanh_mn'") != std::string::npos);
    for (const char* name : {"threshold_tanh_min", "threshold_tanh_max", "threshold_sigmoid_min", "threshold_sigmoid_max",
                             "threshold_tanh", "threshold_sigmoid"}) {
        CHECK(typo.find(name) != std::string::npos);
    }
}

TEST_CASE("SimilarAcrossRuns takes AWS's other_trials, and other_trial as before") {
    tdbg::test::temp_dir base_dir("aws_similar_base");
    tdbg::test::temp_dir other_dir("aws_similar_other");
    write_run(tdbg::test::rule_run(base_dir.path()), false);
    write_run(tdbg::test::rule_run(other_dir.path()), true);
    const std::string other = other_dir.path().string();
    auto result = evaluate(base_dir, "SimilarAcrossRuns", {{"other_trials", other}});
    CHECK(result.triggered_steps == steps{9});
    CHECK(result.resolved_params.at("other_trials") == tdbg::format::json_value(other));
    result = evaluate(base_dir, "SimilarAcrossRuns", {{"other_trial", other}});
    CHECK(result.triggered_steps == steps{9});
    CHECK(result.resolved_params.at("other_trial") == tdbg::format::json_value(other)); // reported by the name given
    CHECK(result.resolved_params.find("other_trials") == nullptr);

    const auto trial = tdbg::create_trial(base_dir.path().string());
    auto create = [&](std::map<std::string, std::string> params) {
        return config_error_of([&] {
            (void)tdbg::rules::registry::create("SimilarAcrossRuns", trial, tdbg::rules::rule_params(std::move(params)),
                                                {}, tdbg::rules::rule_logger::silent());
        });
    };
    CHECK(create({}) == "rule SimilarAcrossRuns: parameter 'other_trials' (the run to compare with) is required");
    CHECK(create({{"other_trials", other}, {"other_trial", other}}) ==
          "rule SimilarAcrossRuns: give other_trials or other_trial (its older name), not both");
}

TEST_CASE("LossNotDecreasing: AWS's diff_percent 0.1, increase_threshold_percent 5 and mode GLOBAL") {
    SECTION("diff_percent 0.1: a loss that fell by less than 0.1 percent has not decreased") {
        tdbg::test::temp_dir dir("aws_loss_diff");
        tdbg::test::rule_run run(dir.path());
        run.collections({{"losses", "^loss$"}});
        for (std::int64_t s = 0; s <= 20; ++s) {
            // 1.0, then 0.9995 from step 10 (0.05 % lower), then 0.5 from step 20.
            run.step(s, {{"loss", scalar(s < 10 ? 1.0F : (s < 20 ? 0.9995F : 0.5F)), {}}});
        }
        run.end();
        auto result = evaluate(dir, "LossNotDecreasing");
        CHECK(result.triggered_steps == steps{10}); // checks at 10 (against 0) and 20 (against 10)
        CHECK(result.resolved_params.at("diff_percent") == tdbg::format::json_value(0.1));
        // With the reference's 0 (only lower), the same fall is a decrease.
        CHECK(evaluate(dir, "LossNotDecreasing", {{"diff_percent", "0"}}).triggered_steps.empty());
    }
    SECTION("increase_threshold_percent 5: a loss that rose and has not come back within 5 percent of its lowest") {
        tdbg::test::temp_dir dir("aws_loss_increase");
        tdbg::test::rule_run run(dir.path());
        run.collections({{"losses", "^loss$"}});
        // Checked every 4 steps (against 4 steps earlier): 2.0 at 0, 1.0 at 4, 3.0 at 8, 1.2 at 12, 1.04 at 16.
        const std::vector<float> at_checks{2.0F, 1.0F, 3.0F, 1.2F, 1.04F};
        for (std::int64_t s = 0; s <= 16; ++s) {
            run.step(s, {{"loss", scalar(at_checks[static_cast<std::size_t>(s / 4)]), {}}});
        }
        run.end();
        // 8: went up (not decreasing). 12: lower than at 8, but 20 % above the lowest, 1.0.
        // 16: lower again, 4 % above the lowest: within 5 %.
        auto result = evaluate(dir, "LossNotDecreasing", {{"num_steps", "4"}});
        CHECK(result.triggered_steps == steps{8, 12});
        CHECK(evaluate(dir, "LossNotDecreasing", {{"num_steps", "4"}, {"increase_threshold_percent", "3"}}).triggered_steps ==
              steps{8, 12, 16});
        CHECK(evaluate(dir, "LossNotDecreasing", {{"num_steps", "4"}, {"increase_threshold_percent", "25"}}).triggered_steps ==
              steps{8});
        // "None" turns the check off, as the reference rules have it.
        result = evaluate(dir, "LossNotDecreasing", {{"num_steps", "4"}, {"increase_threshold_percent", "None"}});
        CHECK(result.triggered_steps == steps{8});
        CHECK(result.resolved_params.at("increase_threshold_percent").is_null());
    }
    SECTION("mode GLOBAL: the global steps of every mode; mode None looks for EVAL, then TRAIN, then GLOBAL") {
        tdbg::test::temp_dir dir("aws_loss_mode");
        write_run(tdbg::test::rule_run(dir.path()), false);
        // GLOBAL: checks at 10 (1.0 against 2.0) and 20 (the EVAL loss 1.6 against 1.0).
        CHECK(evaluate(dir, "LossNotDecreasing").triggered_steps == steps{20});
        CHECK(evaluate(dir, "LossNotDecreasing", {{"mode", "GLOBAL"}}).triggered_steps == steps{20});
        // None: EVAL has losses, 4 mode steps: never num_steps apart. With num_steps 2, EVAL mode
        // step 2 (global 22) is checked against 0: flat, not decreasing.
        CHECK(evaluate(dir, "LossNotDecreasing", {{"mode", "None"}}).triggered_steps.empty());
        CHECK(evaluate(dir, "LossNotDecreasing", {{"mode", "None"}, {"num_steps", "2"}}).triggered_steps == steps{22});
        // TRAIN, every 5 steps: 1.5 at 5, 1.0 at 10, still 1.0 at 15.
        CHECK(evaluate(dir, "LossNotDecreasing", {{"mode", "TRAIN"}, {"num_steps", "5"}}).triggered_steps == steps{15});
    }
}

TEST_CASE("Overtraining: AWS's delta 0.01 counts a smaller improvement as a new optimum") {
    tdbg::test::temp_dir dir("aws_overtraining");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 8; ++s) {
        run.step(s, {{"loss", scalar(2.0F - 0.06F * static_cast<float>(s)), {}}}); // 0.06 better every step
    }
    run.end();
    auto result = evaluate(dir, "Overtraining");
    CHECK(result.triggered_steps.empty()); // every step a new optimum by more than 0.01
    CHECK(result.resolved_params.at("delta") == tdbg::format::json_value(0.01));
    // With 0.1, tdbg's default before, 0.06 is no improvement: only every other step is a new
    // optimum (2.0, then 1.88 at 2, 1.76 at 4 ...), never 5 in a row, but each odd step is one without.
    CHECK(evaluate(dir, "Overtraining", {{"delta", "0.1"}}).triggered_steps.empty());
    CHECK(evaluate(dir, "Overtraining", {{"delta", "0.1"}, {"patience_train", "1"}}).triggered_steps == steps{1, 3, 5, 7});
}

} // namespace aws_rule_parameters_test
