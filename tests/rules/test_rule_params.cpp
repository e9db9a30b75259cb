// rule_params: string parameters as SageMaker passes them, read with typed
// getters; errors name the parameter and the expected form.

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/rule_params.hpp"

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
