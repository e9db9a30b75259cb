// Rules as assertions in a unit test: a training loop writes a run with a
// tdbg hook, and Catch2 checks it with the built-in VanishingGradient and
// ExplodingTensor rules and with the custom rule of custom_rule.hpp.
// Works with Catch2 v2 (catch2/catch.hpp, this file provides main) and v3
// (link Catch2::Catch2WithMain).

#if __has_include(<catch2/catch.hpp>)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#else
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#endif

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "custom_rule.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/catch2.hpp"
#include "tdbg/rules/builtin/exploding_tensor.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

// A toy training loop: a gradient that halves at each of 20 steps.
std::filesystem::path train(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    tdbg::hook_options options;
    options.out_dir = dir.string();
    tdbg::save_config_mode every_step;
    every_step.save_interval = 1;
    options.save_config = tdbg::save_config(every_step);
    options.include_collections = {"gradients"};
    tdbg::hook hook(options);
    float g = 1.0F;
    for (int step = 0; step < 20; ++step) {
        hook.begin_step();
        hook.save_tensor("gradient/fc1.weight", tdbg::tensor_value(std::vector<float>{g, -g, 2 * g}));
        g /= 2.0F;
    }
    hook.close();
    return dir;
}

} // namespace

TEST_CASE("the training keeps its gradients healthy") {
    const auto run = train("tdbg_catch2_example");
    const auto trial = tdbg::create_trial(run.string());

    REQUIRE_THAT(trial, tdbg::no_issues<tdbg::rules::exploding_tensor>());
    // 2^-19 * 4/3 is about 2.5e-6: far from vanishing at SageMaker's default threshold.
    REQUIRE_THAT(trial, tdbg::no_issues<tdbg::rules::vanishing_gradient>({{"threshold", "1e-7"}}));
    // The custom rule: no gradient's mean |value| above 2.
    REQUIRE_THAT(trial, tdbg::no_issues<example::custom_gradient_rule>({{"threshold", "2.0"}}));
    // A stricter threshold finds the first steps (mean 4/3, 2/3, ...): the failure message would list them.
    CHECK_THAT(trial, tdbg::triggers_at<example::custom_gradient_rule>({0, 1}, {{"threshold", "0.5"}}));

    std::filesystem::remove_all(run);
}
