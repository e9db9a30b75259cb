// Actions: the log message, and "stop training", which writes the stop marker
// that a tdbg hook's should_stop() reads.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::test::f32;

// Gradients whose mean |value| is 10^-step, for steps 0..9.
void write_shrinking_gradients(const tdbg::test::rule_run& run) {
    run.collections({{"gradients", "^gradient/"}});
    float scale = 1.0F;
    for (std::int64_t s = 0; s < 10; ++s) {
        run.step(s, {{"gradient/w", f32({scale, -scale, scale, -scale}), {}}});
        scale /= 10.0F;
    }
    run.end();
}

} // namespace

TEST_CASE("the stop-training action writes the stop marker once: rule, first step met, reason") {
    tdbg::test::temp_dir dir("actions_stop");
    tdbg::test::rule_run run(dir.path());
    write_shrinking_gradients(run);
    const auto trial = tdbg::create_trial(dir.path().string());
    tdbg::rules::vanishing_gradient r(trial, {{"threshold", "5e-4"}});
    tdbg::rules::log_capture log;
    r.set_logger(log.logger());
    r.actions().add(tdbg::rules::stop_training_action(trial.storage()));

    const std::string marker = (dir.path() / std::string(tdbg::format::stop_marker_key)).string();
    REQUIRE_FALSE(std::filesystem::exists(marker));
    const auto result = tdbg::rules::invoke_rule(r);
    CHECK(result.triggered_steps == std::vector<std::int64_t>{4, 5, 6, 7, 8, 9}); // 1e-4 < 5e-4 from step 4
    REQUIRE(std::filesystem::exists(marker));

    const std::string text = trial.storage().read(std::string(tdbg::format::stop_marker_key));
    const auto j = nlohmann::json::parse(text);
    CHECK(j.at("rule") == "VanishingGradient");
    CHECK(j.at("step") == 4); // the first trigger; later ones do not rewrite it
    CHECK(j.at("reason").get<std::string>().find("mean |gradient/w|") != std::string::npos);
    const auto request = tdbg::parse_stop_marker(text);
    CHECK(request.rule == "VanishingGradient");
    CHECK(request.step == std::optional<std::int64_t>(4));
    CHECK(log.contains("asked training to stop", tdbg::rules::log_level::warning));
    CHECK(log.contains("condition met at step 9", tdbg::rules::log_level::warning)); // the log message, at every step met
}

TEST_CASE("smdebug's action_str parameter configures the actions") {
    tdbg::test::temp_dir dir("actions_str");
    tdbg::test::rule_run run(dir.path());
    write_shrinking_gradients(run);
    const auto trial = tdbg::create_trial(dir.path().string());
    tdbg::rules::log_capture log;
    auto r = tdbg::rules::registry::create(
        "VanishingGradient", trial,
        {{"threshold", "5e-7"},
         {"action_str", R"([{"name": "StopTraining", "training_job_prefix": "job-1"}, {"name": "email", "endpoint": "a@b.c"}])"}},
        {}, log.logger());
    CHECK(r.actions().size() == 1); // StopTraining; email needs AWS and is only logged
    CHECK(log.contains("'email' needs AWS SNS", tdbg::rules::log_level::warning));
    const auto result = r.evaluate();
    CHECK(result.params.count("action_str") == 0); // reserved: not a parameter of the rule
    const auto request = tdbg::parse_stop_marker(trial.storage().read(std::string(tdbg::format::stop_marker_key)));
    CHECK(request.step == std::optional<std::int64_t>(7));

    CHECK_THROWS_AS(tdbg::rules::registry::create("VanishingGradient", trial, {{"action_str", "{not json"}}),
                    tdbg::config_error);
    CHECK_THROWS_AS(tdbg::rules::registry::create("VanishingGradient", trial, {{"action_str", R"({"name": "reboot"})"}}),
                    tdbg::config_error);
}

TEST_CASE("a rule following a live run stops the training of a tdbg hook") {
    tdbg::test::temp_dir dir("actions_live");
    tdbg::hook_options options;
    options.out_dir = dir.path().string();
    tdbg::save_config_mode every_step;
    every_step.save_interval = 1;
    options.save_config = tdbg::save_config(every_step);
    options.include_collections = {"gradients"};
    options.stop_check_interval = std::chrono::milliseconds(0);

    std::atomic<std::int64_t> stopped_at{-1};
    std::atomic<bool> started{false};
    std::atomic<bool> gave_up{false};
    std::thread training([&] {
        tdbg::hook hook(options);
        float scale = 1.0F;
        // Steps of >= 5 ms until the hook sees the marker, or for at most five minutes: room
        // for a rule on the slowest (sanitized, loaded) machine to react.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
        for (std::int64_t step = 0;; ++step) {
            if (std::chrono::steady_clock::now() >= deadline) {
                gave_up = true;
                break;
            }
            hook.begin_step();
            if (hook.should_stop()) {
                stopped_at = step;
                REQUIRE(hook.stop_request().has_value());
                CHECK(hook.stop_request()->rule == "VanishingGradient");
                break;
            }
            hook.save_tensor("gradient/fc.weight", f32({scale, scale, -scale}));
            scale = std::max(scale / 10.0F, 1e-30F);
            if (step == 0) {
                hook.flush();
                started = true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        hook.close();
    });
    while (!started) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    tdbg::trial_options fast;
    fast.poll_interval = std::chrono::milliseconds(10);
    fast.collection_wait = std::chrono::milliseconds(5000);
    const auto trial = tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast);
    tdbg::rules::vanishing_gradient r(trial, {{"threshold", "5e-8"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    r.actions().add(tdbg::rules::stop_training_action(trial.storage()));
    const auto result = tdbg::rules::invoke_rule(r, 0); // follows the run until the hook closes it
    training.join();

    REQUIRE_FALSE(result.triggered_steps.empty());
    CHECK(result.triggered_steps.front() == 8); // 1e-8 < 5e-8
    CHECK(result.end == tdbg::rules::evaluation_end::no_more_data);
    CHECK(stopped_at > 8); // the hook saw the marker at a begin_step after step 8 was published
    CHECK_FALSE(gave_up);  // and training stopped because of it, not at the deadline
    const auto request = tdbg::parse_stop_marker(trial.storage().read(std::string(tdbg::format::stop_marker_key)));
    CHECK(request.step == std::optional<std::int64_t>(8));
}
