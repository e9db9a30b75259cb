// rule_params: string parameters as SageMaker passes them, read with typed
// getters; errors name the parameter and the expected form; values below a
// declared minimum are refused (and so are the built-in rules' negative thresholds).

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "json_support.hpp"
#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::rules::rule_params;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const tdbg::config_error& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("rule_params reads numbers, booleans, lists, pairs and modes spelled as Python spells them") {
    const rule_params p{{"threshold", " 1e-7 "},
                        {"num_steps", "3"},
                        {"steps_float", "10.0"},
                        {"only_nan", "True"},
                        {"off", "false"},
                        {"collection_names", "['weights', \"biases\"]"},
                        {"token_values", "3, 0"},
                        {"threshold_tanh", "(-9.4999, 9.4999)"},
                        {"mode", "modes.EVAL"},
                        {"max_threshold", "None"},
                        {"inf", "inf"}};
    CHECK(p.get("threshold", 0.0) == 1e-7);
    CHECK(p.get<std::int64_t>("num_steps", 0) == 3);
    CHECK(p.get<std::int64_t>("steps_float", 0) == 10);
    CHECK(p.get("only_nan", false));
    CHECK_FALSE(p.get("off", true));
    CHECK(p.get<std::vector<std::string>>("collection_names", {}) == std::vector<std::string>{"weights", "biases"});
    CHECK(p.get<std::vector<double>>("token_values", {}) == std::vector<double>{3.0, 0.0});
    CHECK(p.get("threshold_tanh", tdbg::rules::number_pair{}) == tdbg::rules::number_pair{-9.4999, 9.4999});
    CHECK(p.get_optional<tdbg::mode>("mode") == tdbg::mode::eval);
    CHECK_FALSE(p.get_optional<double>("max_threshold").has_value());
    CHECK(std::isinf(p.get("inf", 0.0)));
    CHECK(p.get("absent", 42.5) == 42.5);
    CHECK(p.unknown().empty());
}

TEST_CASE("rule_params errors name the parameter, the value and the expected form") {
    rule_params p{{"threshold", "abc"}, {"num_steps", "3.5"}, {"flag", "maybe"}, {"mode", "TRAINING"}};
    p.set_context("VanishingGradient");
    const std::string threshold = error_of([&] { (void)p.get("threshold", 1.0); });
    CHECK(threshold.find("rule VanishingGradient") != std::string::npos);
    CHECK(threshold.find("'threshold' = 'abc'") != std::string::npos);
    CHECK(threshold.find("a number") != std::string::npos);
    CHECK(error_of([&] { (void)p.get<std::int64_t>("num_steps", 1); }).find("an integer") != std::string::npos);
    CHECK(error_of([&] { (void)p.get("flag", true); }).find("True or False") != std::string::npos);
    CHECK(error_of([&] { (void)p.get_optional<tdbg::mode>("mode"); }).find("TRAIN, EVAL, PREDICT or GLOBAL") !=
          std::string::npos);
    CHECK(error_of([&] { (void)p.get_required<double>("missing"); }).find("'missing' is required") != std::string::npos);
    CHECK(error_of([&] { (void)p.get<std::uint8_t>("num_steps", 1); }).find("an integer") != std::string::npos);
}

TEST_CASE("rule_params refuses NaN wherever a number is read: a NaN threshold would never trigger") {
    rule_params p{{"threshold", "nan"}, {"upper", " NaN "}, {"pair", "(nan, 1)"}, {"list", "1, nan"}, {"inf", "-inf"}};
    p.set_context("VanishingGradient");
    const std::string threshold = error_of([&] { (void)p.get("threshold", 1.0); });
    CHECK(threshold.find("'threshold' = 'nan'") != std::string::npos);
    CHECK(threshold.find("(not NaN)") != std::string::npos);
    CHECK(error_of([&] { (void)p.get("upper", 1.0F); }).find("'upper' = ' NaN '") != std::string::npos);
    CHECK(error_of([&] { (void)p.get("pair", tdbg::rules::number_pair{}); }).find("a pair of numbers") !=
          std::string::npos);
    CHECK(error_of([&] { (void)p.get<std::vector<double>>("list", {}); }).find("list of numbers") != std::string::npos);
    CHECK(p.get("inf", 0.0) == -HUGE_VAL); // infinities compare, and are kept
}

TEST_CASE("rule_params reports unknown parameters and what every getter resolved") {
    rule_params p{{"threshold", "0.001"}, {"tensor_regex", ".*"}, {"typo", "1"}};
    p.set_context("AllZero");
    (void)p.get("threshold", 100.0);
    (void)p.get_optional<std::vector<std::string>>("tensor_regex");
    (void)p.get_optional<std::vector<std::string>>("collection_names");
    (void)p.get("only_nan", false);
    CHECK(p.unknown() == std::vector<std::string>{"typo"});
    const std::string e = error_of([&] { p.check_unknown(); });
    CHECK(e.find("unknown parameter 'typo'") != std::string::npos);
    CHECK(e.find("collection_names, only_nan, tensor_regex, threshold") != std::string::npos);

    const nlohmann::json expected = {{"threshold", 0.001},
                                     {"tensor_regex", ".*"}, // lists are reported as given, as smdebug's rules do
                                     {"collection_names", nullptr},
                                     {"only_nan", false}};
    CHECK(tdbg::test::to_nlohmann(p.resolved()) == expected);

    // Copies share the record (a rule's base sees what the derived constructor read); clone() does not.
    const rule_params copy = p;
    (void)copy.get("typo", 0.0);
    CHECK(p.unknown().empty());
    const rule_params fresh = p.clone();
    CHECK(fresh.unknown().size() == 3);
    CHECK(fresh.context() == "AllZero");
}

TEST_CASE("rule_params refuses a value below the minimum a getter declares, naming the parameter") {
    using tdbg::rules::at_least;
    using tdbg::rules::non_negative;
    using tdbg::rules::positive;
    rule_params p{{"negative", "-1e-9"},  {"zero", "0"},         {"minus_zero", "-0.0"}, {"minus_inf", "-inf"},
                  {"inf", "inf"},         {"count", "0"},        {"list", "50, -1"},     {"good_list", "0, 50"},
                  {"optional", " -2 "},   {"none", "None"},      {"required", "-3"}};
    p.set_context("VanishingGradient");
    CHECK(error_of([&] { (void)p.get("negative", 1.0, non_negative); }) ==
          "rule VanishingGradient: parameter 'negative' = '-1e-9' must be at least 0");
    CHECK(p.get("zero", 1.0, non_negative) == 0.0);
    CHECK(p.get("minus_zero", 1.0, non_negative) == 0.0); // -0.0 == 0
    CHECK(error_of([&] { (void)p.get("minus_inf", 1.0, non_negative); }).find("'minus_inf' = '-inf' must be at least 0") !=
          std::string::npos);
    CHECK(std::isinf(p.get("inf", 1.0F, non_negative)));
    CHECK(error_of([&] { (void)p.get("zero", 1.0, positive); }) ==
          "rule VanishingGradient: parameter 'zero' = '0' must be more than 0");
    CHECK(error_of([&] { (void)p.get<std::int64_t>("count", 10, at_least(1)); }) ==
          "rule VanishingGradient: parameter 'count' = '0' must be at least 1");
    CHECK(p.get<std::int64_t>("count", 10, non_negative) == 0);
    CHECK(error_of([&] { (void)p.get<std::vector<double>>("list", {}, non_negative); }) ==
          "rule VanishingGradient: parameter 'list' = '50, -1' must be at least 0");
    CHECK(p.get<std::vector<double>>("good_list", {}, non_negative) == std::vector<double>{0.0, 50.0});
    CHECK(error_of([&] { (void)p.get_optional<double>("optional", non_negative); }).find("'optional' = ' -2 '") !=
          std::string::npos);
    CHECK_FALSE(p.get_optional<double>("none", non_negative).has_value());
    CHECK(error_of([&] { (void)p.get_required<std::int64_t>("required", at_least(2)); }).find("must be at least 2") !=
          std::string::npos);
    CHECK(p.get("absent", 0.5, positive) == 0.5); // the rule's own default is not the user's mistake
    // What a refused value would have been is not reported as resolved.
    CHECK(p.resolved().find("negative") == nullptr);
}

namespace {

// A small finished run for building rules: a loss over five steps.
void write_params_run(const tdbg::test::rule_run& run) {
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 5; ++s) {
        run.step(s, {{"loss", tdbg::test::scalar(static_cast<float>(5 - s)), {}}});
    }
    run.end();
}

// One bounded parameter of a built-in rule: the value refused, the message's end, and
// the smallest value accepted; `others` are parameters the rule needs besides.
struct bounded_param {
    const char* rule;
    const char* param;
    const char* refused;
    const char* minimum;
    const char* accepted;
    std::map<std::string, std::string> others;
};

} // namespace

TEST_CASE("built-in rules refuse negative thresholds, percentages, tolerances and counts, naming the parameter") {
    tdbg::test::temp_dir dir("rule_params_bounds");
    const tdbg::test::rule_run run(dir.path());
    write_params_run(run);
    const auto trial = tdbg::create_trial(dir.path().string());
    const std::map<std::string, std::string> regex{{"tensor_regex", "loss"}};
    const std::vector<bounded_param> bounded{
        {"AllZero", "threshold", "-1", "at least 0", "0", regex},
        {"CheckInputImages", "threshold_mean", "-0.2", "at least 0", "0", {}},
        {"CheckInputImages", "threshold_samples", "-1", "at least 0", "0", {}},
        {"ClassImbalance", "threshold_imbalance", "-10", "at least 0", "0", {}},
        {"ClassImbalance", "threshold_misprediction", "-0.7", "at least 0", "0", {}},
        {"ClassImbalance", "samples", "-500", "at least 0", "0", {}},
        {"Confusion", "min_diag", "-0.9", "at least 0", "0", {}},
        {"Confusion", "max_off_diag", "-0.1", "at least 0", "0", {}},
        {"DeadRelu", "threshold_inactivity", "-1", "at least 0", "0", {}},
        {"DeadRelu", "threshold_layer", "-50", "at least 0", "0", {}},
        {"FeatureImportanceOverweight", "threshold", "-0.8", "at least 0", "0", {}},
        {"FeatureImportanceOverweight", "nfeatures", "0", "at least 1", "1", {}},
        {"LossNotDecreasing", "diff_percent", "-5", "at least 0", "0", {}},
        {"LossNotDecreasing", "increase_threshold_percent", "-5", "at least 0", "0", {}},
        {"LossNotDecreasing", "num_steps", "0", "at least 1", "1", {}},
        {"NLPSequenceRatio", "token_thresholds_percent", "50, -1", "at least 0", "0, 0", {{"token_values", "0, 1"}}},
        {"Overfit", "start_step", "-1", "at least 0", "0", {}},
        {"Overfit", "patience", "0", "at least 1", "1", {}},
        {"Overtraining", "delta", "-0.1", "at least 0", "0", {}},
        {"Overtraining", "patience_train", "0", "at least 1", "1", {}},
        {"Overtraining", "patience_validation", "-10", "at least 1", "1", {}},
        {"PoorWeightInitialization", "threshold", "-10", "at least 0", "0", {}},
        {"PoorWeightInitialization", "distribution_range", "-0.001", "at least 0", "0", {}},
        {"PoorWeightInitialization", "patience", "0", "at least 1", "1", {}},
        {"PoorWeightInitialization", "steps", "0", "at least 1", "1", {}},
        {"SaturatedActivation", "threshold_inactivity", "-1", "at least 0", "0", {}},
        {"SaturatedActivation", "threshold_layer", "-50", "at least 0", "0", {}},
        {"StalledTrainingRule", "threshold", "-1800", "at least 0", "0", {}},
        {"TensorVariance", "max_threshold", "-1", "at least 0", "0", regex},
        {"TensorVariance", "min_threshold", "-1e-9", "at least 0", "0", regex},
        {"TreeDepth", "depth", "-4", "at least 0", "0", {}},
        {"UnchangedTensor", "rtol", "-1e-5", "at least 0", "0", regex},
        {"UnchangedTensor", "atol", "-1e-8", "at least 0", "0", regex},
        {"UnchangedTensor", "num_steps", "1", "at least 2", "2", regex},
        {"VanishingGradient", "threshold", "-1e-7", "at least 0", "0", {}},
        {"WeightUpdateRatio", "large_threshold", "-10", "at least 0", "0", {}},
        {"WeightUpdateRatio", "small_threshold", "-1e-8", "at least 0", "0", {}},
        {"WeightUpdateRatio", "epsilon", "0", "more than 0", "1e-12", {}},
        {"WeightUpdateRatio", "num_steps", "0", "at least 1", "1", {}},
    };
    for (const bounded_param& b : bounded) {
        INFO(b.rule << " " << b.param << " = " << b.refused);
        auto params = b.others;
        params[b.param] = b.refused;
        const std::string message = error_of([&] {
            (void)tdbg::rules::registry::create(b.rule, trial, rule_params(params), {},
                                                tdbg::rules::rule_logger::silent());
        });
        CHECK(message == fmt::format("rule {}: parameter '{}' = '{}' must be {}", b.rule, b.param, b.refused, b.minimum));
        params[b.param] = b.accepted;
        auto accepted = tdbg::rules::registry::create(b.rule, trial, rule_params(params), {},
                                                      tdbg::rules::rule_logger::silent());
        CHECK(accepted.params().resolved().find(b.param) != nullptr);
    }
    // Parameters that may be negative stay so: a ratio threshold, a pair of bounds, token values.
    CHECK_NOTHROW(tdbg::rules::registry::create("Overfit", trial, {{"ratio_threshold", "-0.5"}}, {},
                                                tdbg::rules::rule_logger::silent()));
    CHECK_NOTHROW(tdbg::rules::registry::create("SaturatedActivation", trial, {{"threshold_tanh", "(-9, 9)"}}, {},
                                                tdbg::rules::rule_logger::silent()));
    CHECK_NOTHROW(tdbg::rules::registry::create("SaturatedActivation", trial, {{"threshold_sigmoid_min", "-23"}}, {},
                                                tdbg::rules::rule_logger::silent()));
    CHECK_NOTHROW(tdbg::rules::registry::create("NLPSequenceRatio", trial, {{"token_values", "-1"}}, {},
                                                tdbg::rules::rule_logger::silent()));
}
