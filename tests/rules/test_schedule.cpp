// take_turns (rules/schedule.hpp): evaluations side by side on a few threads as a live run's
// steps come, a stop that ends them all, an error that is rethrown. Also built with
// ThreadSanitizer (tests/reliability: test_concurrency).

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "loss_rules.hpp"
#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/schedule.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::rules::rule_params;
using tdbg::test::f32;
using tdbg::test::loss_above;
using tdbg::test::range;
using tdbg::test::scalar;

} // namespace

TEST_CASE("take_turns: several evaluations side by side on a few threads, as a live run's steps come") {
    tdbg::test::temp_dir dir("schedule_live");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    run.step(0, {{"loss", scalar(0.0F), {}}});
    tdbg::trial_options fast;
    fast.poll_interval = std::chrono::milliseconds(5);
    const auto trial = tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast);
    std::vector<std::unique_ptr<loss_above>> rules;
    std::vector<std::unique_ptr<tdbg::rules::rule_evaluation>> evaluations;
    std::vector<tdbg::rules::rule_evaluation*> each;
    tdbg::rules::invoke_options options;
    options.record_errors = true;
    for (const char* threshold : {"0.15", "0.35", "0.55"}) {
        rules.push_back(std::make_unique<loss_above>(trial, rule_params{{"threshold", threshold}}));
        rules.back()->set_logger(tdbg::rules::rule_logger::silent());
        evaluations.push_back(std::make_unique<tdbg::rules::rule_evaluation>(*rules.back(), options));
        each.push_back(evaluations.back().get());
    }
    std::array<std::atomic<int>, 3> firsts{};
    std::array<std::atomic<int>, 3> ends{};
    tdbg::rules::schedule_options schedule;
    schedule.jobs = 2;
    schedule.poll_interval = std::chrono::milliseconds(5);
    schedule.on_turn = [&](std::size_t i, const tdbg::rules::turn& t) {
        firsts.at(i) += t.first ? 1 : 0;
        ends.at(i) += t.advanced.state == tdbg::rules::evaluation_state::done ? 1 : 0;
    };

    SECTION("every evaluation follows the run to its end") {
        std::thread writer([&] { // the evaluations wait for these steps, whenever they come
            for (std::int64_t s = 1; s < 8; ++s) {
                run.step(s, {{"loss", scalar(static_cast<float>(s) / 10.0F), {}}});
            }
            run.end();
        });
        const tdbg::rules::schedule_report report = tdbg::rules::take_turns(each, schedule);
        writer.join();
        CHECK(report.threads_missing == 0);
        CHECK(evaluations[0]->result().triggered_steps == range(2, 7));
        CHECK(evaluations[1]->result().triggered_steps == range(4, 7));
        CHECK(evaluations[2]->result().triggered_steps == range(6, 7));
        for (std::size_t i = 0; i < 3; ++i) {
            CHECK(evaluations[i]->result().end == tdbg::rules::evaluation_end::no_more_data);
            CHECK(firsts.at(i) == 1);
            CHECK(ends.at(i) == 1);
        }
    }
    SECTION("a stop while they wait for a step ends them all interrupted, with what they found") {
        run.step(1, {{"loss", scalar(0.4F), {}}}); // the run goes on no further
        schedule.wait = [](std::chrono::milliseconds) { return true; };
        (void)tdbg::rules::take_turns(each, schedule);
        for (std::size_t i = 0; i < 3; ++i) {
            CHECK(evaluations[i]->result().end == tdbg::rules::evaluation_end::interrupted);
            CHECK(evaluations[i]->result().next_step == 2);
            CHECK(ends.at(i) == 1);
        }
        CHECK(evaluations[0]->result().triggered_steps == std::vector<std::int64_t>{1});
        CHECK(evaluations[2]->result().not_triggered_steps == range(0, 1));
    }
}

TEST_CASE("take_turns rethrows what an evaluation without record_errors threw, once every other one has ended") {
    tdbg::test::temp_dir dir("schedule_error");
    tdbg::test::rule_run run(dir.path());
    tdbg::test::write_run_failing_after(run, {0.5F});
    const auto trial = tdbg::create_trial(dir.path().string());
    loss_above failing(trial, {{"threshold", "0.3"}});
    loss_above other(trial, {{"threshold", "0.3"}, {"tensor", "loss"}});
    failing.set_logger(tdbg::rules::rule_logger::silent());
    other.set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::invoke_options ends_at_1;
    ends_at_1.end_step = 1;
    tdbg::rules::rule_evaluation throws(failing, {});
    tdbg::rules::rule_evaluation fine(other, ends_at_1);
    const std::vector<tdbg::rules::rule_evaluation*> each{&throws, &fine};
    tdbg::rules::schedule_options schedule;
    schedule.jobs = 2;
    CHECK_THROWS_AS(tdbg::rules::take_turns(each, schedule), tdbg::dtype_mismatch);
    CHECK(throws.done());
    CHECK(fine.done());
    CHECK(fine.result().triggered_steps == std::vector<std::int64_t>{0});
}

