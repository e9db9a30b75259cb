// tdbg::rules::watcher: rules evaluated on a background thread while a hook
// writes the run, here in memory (memory_storage): a trainer that stops itself
// when a rule fires, and a unit test that trains and asserts that none did.
// Nothing here sleeps: every wait is for a condition (wait_for_step, finish).

#include <catch2/catch.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mlp_model.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/watch.hpp"
#include "tdbg/storage/memory_storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace watch_test {

std::vector<std::int64_t> steps_from(std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> out;
    for (std::int64_t s = first; s <= last; ++s) {
        out.push_back(s);
    }
    return out;
}

tdbg::hook_options every_step() {
    tdbg::hook_options options;
    options.include_collections = {"weights", "gradients", "losses"};
    options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    options.stop_check_interval = std::chrono::milliseconds(0); // a look for the stop marker at every step
    return options;
}

tdbg::rules::watch_options quick() {
    tdbg::rules::watch_options options;
    options.poll_interval = std::chrono::milliseconds(5);
    options.logger = tdbg::rules::rule_logger::silent();
    return options;
}

// Saves a gradient whose mean |value| is `magnitude`.
void save_gradient(tdbg::hook& h, float magnitude) {
    const std::vector<float> g{magnitude, -magnitude, magnitude, -magnitude};
    h.save_tensor("gradient/fc.weight", g.data(), {2, 2});
    h.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(1.0F));
}

// Fails as a rule may: a tensor missing at step 1 (skipped, as smdebug does), an error at step 3.
class fails_at_step_3 : public tdbg::rules::rule<fails_at_step_3> {
public:
    static constexpr std::string_view rule_name = "FailsAtStep3";
    explicit fails_at_step_3(tdbg::trial base) : rule(std::move(base)) {}
    [[nodiscard]] tdbg::rules::verdict invoke_at_step(std::int64_t step) const {
        if (step == 1) {
            throw tdbg::tensor_unavailable_for_step("gradient/fc.weight is not at step 1", "gradient/fc.weight", step,
                                                    tdbg::mode::global, false);
        }
        if (step == 3) {
            throw std::runtime_error("FailsAtStep3 failed at step 3");
        }
        return false;
    }
};

} // namespace watch_test

TEST_CASE("a unit test trains twenty steps in memory and requires that no rule fired") {
    std::mt19937 rng(7);
    const mlp_example::dataset data = mlp_example::make_dataset(rng);
    mlp_example::mlp model = mlp_example::init_model(rng);

    const tdbg::memory_storage run("mlp");
    tdbg::rules::watcher watcher(run,
                                 {tdbg::rules::watch_rule("VanishingGradient", {{"threshold", "1e-7"}}),
                                  tdbg::rules::watch_rule("ExplodingTensor")},
                                 watch_test::quick());
    tdbg::hook hook(run, watch_test::every_step());
    hook.set_mode(tdbg::mode::train);
    for (int step = 0; step < 20; ++step) {
        hook.begin_step();
        REQUIRE_FALSE(hook.should_stop());
        const mlp_example::dataset batch = mlp_example::make_batch(data, 0, mlp_example::points, step);
        hook.save_tensor("MLP_fc1.weight", model.w1);
        const mlp_example::forward_pass f = mlp_example::forward(model, batch.x, batch.labels);
        hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(f.loss));
        const mlp_example::gradients g = mlp_example::backward(model, batch.x, batch.labels, f);
        hook.save_tensor("gradient/MLP_fc1.weight", g.w1);
        hook.save_tensor("gradient/MLP_fc2.weight", g.w2);
        model.w1 -= mlp_example::learning_rate * g.w1;
        model.w2 -= mlp_example::learning_rate * g.w2;
    }
    hook.close();

    const std::vector<tdbg::rules::evaluation_result> results = watcher.finish();
    REQUIRE(results.size() == 2);
    for (const auto& r : results) {
        INFO(tdbg::rules::to_text(r));
        CHECK(r.status() == tdbg::rules::evaluation_status::no_issues_found);
        CHECK(r.not_triggered_steps == watch_test::steps_from(0, 19));
        CHECK(r.end == tdbg::rules::evaluation_end::no_more_data);
    }
    CHECK(results[0].rule == "VanishingGradient");
    CHECK(results[1].rule == "ExplodingTensor");
    REQUIRE_FALSE(watcher.triggered());
    CHECK(watcher.done());
    CHECK_FALSE(run.exists(std::string(tdbg::format::stop_marker_key)));
}

TEST_CASE("a watcher over a selection that matches nothing ends NothingEvaluated, saying why, never NoIssuesFound") {
    const tdbg::memory_storage run("typo");
    tdbg::rules::watcher watcher(run, {tdbg::rules::watch_rule("AllZero", {{"collection_names", "gradient"}})},
                                 watch_test::quick());
    tdbg::hook hook(run, watch_test::every_step());
    for (int step = 0; step < 3; ++step) {
        hook.begin_step();
        hook.save_tensor("gradient/fc.weight", tdbg::tensor_value::scalar(0.0F), {"gradients"});
    }
    hook.close();
    const std::vector<tdbg::rules::evaluation_result> results = watcher.finish();
    REQUIRE(results.size() == 1);
    INFO(tdbg::rules::to_text(results[0]));
    CHECK(results[0].status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(results[0].evaluated_steps() == 0);
    CHECK(results[0].nothing_evaluated_reason.find("did you mean 'gradients'?") != std::string::npos);
    CHECK_FALSE(watcher.triggered());
}

TEST_CASE("a rule that fires calls back and stops the hook at a begin_step soon after") {
    const tdbg::memory_storage run("vanishing");
    std::mutex mutex;
    std::vector<tdbg::rules::trigger> called;
    tdbg::rules::watch_options options = watch_test::quick();
    options.stop_training = true;
    options.on_trigger = [&](const tdbg::rules::trigger& t) {
        const std::lock_guard<std::mutex> lock(mutex);
        called.push_back(t);
    };
    tdbg::rules::watcher watcher(run, {tdbg::rules::watch_rule("VanishingGradient")}, options);
    tdbg::hook hook(run, watch_test::every_step());
    std::optional<std::int64_t> stopped_at;
    // Steps 0-5 saved, the rule seeing each before the next begins; then empty steps (nothing for
    // the rule) until the hook sees the marker: the hook's stop watch looks off the training
    // thread, asked at every begin_step, so it is seen a look's time later, within a number of
    // steps bounded here generously.
    for (int step = 0; step < 100000; ++step) {
        hook.begin_step();
        if (hook.should_stop()) {
            stopped_at = hook.global_step();
            break;
        }
        if (step <= 5) {
            watch_test::save_gradient(hook, step < 5 ? 1.0F : 1e-9F); // vanishes at step 5
            hook.end_step();
            REQUIRE(watcher.wait_for_step(step)); // the rule has seen this step before the next begins
        } else {
            std::this_thread::yield();
        }
    }
    if (!stopped_at) {
        for (const auto& r : watcher.results()) {
            UNSCOPED_INFO(tdbg::rules::to_text(r) << " error: " << r.error);
        }
    }
    REQUIRE(stopped_at);
    CHECK(*stopped_at >= 6);
    REQUIRE(hook.stop_request());
    CHECK(hook.stop_request()->rule == "VanishingGradient");
    CHECK(hook.stop_request()->step == 5);
    hook.close();

    const auto results = watcher.finish();
    REQUIRE(results.size() == 1);
    CHECK(results[0].status() == tdbg::rules::evaluation_status::issues_found);
    CHECK(results[0].triggered_steps == std::vector<std::int64_t>{5});
    CHECK(results[0].not_triggered_steps == watch_test::steps_from(0, 4));
    const auto triggers = watcher.triggers();
    REQUIRE(triggers.size() == 1);
    CHECK(triggers[0].rule == "VanishingGradient");
    CHECK(triggers[0].step == 5);
    const std::lock_guard<std::mutex> lock(mutex);
    REQUIRE(called.size() == 1);
    CHECK(called[0].step == 5);
}

TEST_CASE("a watcher records skipped steps and a rule's error as invoke_rule does, and goes on with the other rules") {
    const tdbg::memory_storage run("failing");
    tdbg::hook hook(run, watch_test::every_step());
    hook.begin_step();
    watch_test::save_gradient(hook, 1.0F);
    hook.end_step();
    hook.flush();
    const tdbg::trial trial = tdbg::open_trial(run, "failing");

    std::vector<tdbg::rules::any_rule> rules;
    rules.emplace_back(watch_test::fails_at_step_3(trial));
    rules.emplace_back(tdbg::rules::vanishing_gradient(trial));
    rules.back().set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::watcher watcher(std::move(rules), watch_test::quick());
    for (int step = 1; step < 6; ++step) {
        hook.begin_step();
        watch_test::save_gradient(hook, 1.0F);
    }
    hook.close();

    const auto results = watcher.finish();
    REQUIRE(results.size() == 2);
    CHECK(results[0].rule == "FailsAtStep3");
    CHECK(results[0].status() == tdbg::rules::evaluation_status::error);
    CHECK(results[0].error == "FailsAtStep3 failed at step 3");
    CHECK(results[0].not_triggered_steps == std::vector<std::int64_t>{0, 2});
    CHECK(results[0].skipped_steps.at(std::string(tdbg::rules::skip_reason::tensor_unavailable_for_step)) ==
          tdbg::rules::step_set{1});
    CHECK(results[1].status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(results[1].not_triggered_steps == watch_test::steps_from(0, 5));
}

TEST_CASE("stop ends a watch of a run still being written, its results marked interrupted") {
    const tdbg::memory_storage run("live");
    tdbg::rules::watcher watcher(run, {tdbg::rules::watch_rule("VanishingGradient")}, watch_test::quick());
    tdbg::hook hook(run, watch_test::every_step());
    for (int step = 0; step < 3; ++step) {
        hook.begin_step();
        watch_test::save_gradient(hook, 1.0F);
    }
    hook.end_step();
    REQUIRE(watcher.wait_for_step(2));
    CHECK_FALSE(watcher.done());
    CHECK_FALSE(watcher.wait_for_step(3, std::chrono::milliseconds(0))); // not written yet

    const auto results = watcher.stop();
    REQUIRE(results.size() == 1);
    CHECK(results[0].end == tdbg::rules::evaluation_end::interrupted);
    CHECK(results[0].status() == tdbg::rules::evaluation_status::stopped);
    CHECK(results[0].not_triggered_steps == watch_test::steps_from(0, 2));
    CHECK(results[0].first_step == 0);
    CHECK(results[0].next_step == 3);
    CHECK(watcher.done());
    CHECK(watcher.finish().size() == 1); // after stop, finish returns at once
}

TEST_CASE("a watcher waits for a run that has not started, and an unknown rule is an error from finish") {
    const tdbg::memory_storage run("late");
    tdbg::rules::watcher unknown(run, {tdbg::rules::watch_rule("NoSuchRule")}, watch_test::quick());
    tdbg::rules::watcher watcher(run, {tdbg::rules::watch_rule("VanishingGradient")}, watch_test::quick());
    CHECK(watcher.results().empty()); // nothing to open yet
    CHECK_FALSE(watcher.wait_for_step(0, std::chrono::milliseconds(0)));
    {
        tdbg::hook hook(run, watch_test::every_step());
        hook.begin_step();
        watch_test::save_gradient(hook, 1.0F);
    }
    const auto results = watcher.finish();
    REQUIRE(results.size() == 1);
    CHECK(results[0].not_triggered_steps == std::vector<std::int64_t>{0});
    CHECK_THROWS_WITH(unknown.finish(), Catch::Contains("NoSuchRule"));
}

TEST_CASE("a watcher needs a rule") {
    CHECK_THROWS_AS(tdbg::rules::watcher(tdbg::memory_storage("none"), {}), tdbg::usage_error);
    CHECK_THROWS_AS(tdbg::rules::watcher(std::vector<tdbg::rules::any_rule>{}), tdbg::usage_error);
}
