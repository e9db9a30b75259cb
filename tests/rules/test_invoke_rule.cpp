// invoke_rule's semantics: the steps visited, skips by exception kind, the end
// of a run, raise_eval_cond, actions, parallel evaluation, declared tensors,
// live runs.

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "json_support.hpp"
#include "loss_rules.hpp"
#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::rules::rule_params;
using tdbg::test::f32;
using tdbg::test::loss_above;
using tdbg::test::range;
using tdbg::test::scalar;

// The same condition, declared free of state so that steps run in parallel.
class parallel_loss_above : public tdbg::rules::rule<parallel_loss_above> {
public:
    static constexpr bool parallel_steps = true;
    parallel_loss_above(tdbg::trial base, const rule_params& params)
        : rule(std::move(base), params), threshold_(params.get("threshold", 0.5)) {}
    bool invoke_at_step(std::int64_t step) const {
        ++calls;
        return tdbg::rules::scalar_of(value("loss", step)) > threshold_;
    }
    mutable std::atomic<int> calls{0};
    parallel_loss_above(const parallel_loss_above& other) : rule(other), threshold_(other.threshold_) {}

private:
    double threshold_;
};

// At step `at`, asks for a stop and fails as a read that the stop cancelled would.
class cancelled_at : public tdbg::rules::rule<cancelled_at> {
public:
    static constexpr std::string_view rule_name = "CancelledAt";
    cancelled_at(tdbg::trial base, std::int64_t at, bool& stop)
        : rule(std::move(base), rule_params()), at_(at), stop_(&stop) {}
    bool invoke_at_step(std::int64_t step) {
        if (step == at_) {
            *stop_ = true;
            throw tdbg::storage_error("request cancelled");
        }
        return false;
    }

private:
    std::int64_t at_;
    bool* stop_;
};

// A run with a 0-d "loss" of value step / 10 at steps 0..9 (TRAIN), ended.
void write_loss_run(const tdbg::test::rule_run& run, std::int64_t steps = 10, std::int64_t first = 0) {
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = first; s < first + steps; ++s) {
        run.step(s, {{"loss", scalar(static_cast<float>(s) / 10.0F), {}}});
    }
    run.end();
}


} // namespace

TEST_CASE("invoke_rule visits the steps from start_step up to end_step, exclusive") {
    tdbg::test::temp_dir dir("invoke_range");
    tdbg::test::rule_run run(dir.path());
    write_loss_run(run);
    loss_above r(tdbg::create_trial(dir.path().string()), {{"threshold", "0.45"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    const auto result = tdbg::rules::invoke_rule(r, 2, 7);
    CHECK(r.visited == range(2, 6));
    CHECK(result.triggered_steps == range(5, 6)); // 0.5 and 0.6 > 0.45
    CHECK(result.not_triggered_steps == range(2, 4));
    CHECK(result.skipped_steps.empty());
    CHECK(result.end == tdbg::rules::evaluation_end::end_step);
    CHECK(result.status() == tdbg::rules::evaluation_status::issues_found);
    CHECK(result.rule == "LossAbove");
}

TEST_CASE("invoke_rule ends at the end of a finished run (no_more_data) and starts at its first step by default") {
    tdbg::test::temp_dir dir("invoke_end");
    tdbg::test::rule_run run(dir.path());
    write_loss_run(run, 4, 5); // steps 5..8
    loss_above r(tdbg::create_trial(dir.path().string()), {{"threshold", "10"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::invoke_options options; // no start_step: the run's first step
    const auto result = tdbg::rules::invoke_rule(r, options);
    CHECK(r.visited == range(5, 8));
    CHECK(result.first_step == 5);
    CHECK(result.next_step == 9);
    CHECK(result.end == tdbg::rules::evaluation_end::no_more_data);
    CHECK(result.status() == tdbg::rules::evaluation_status::no_issues_found);

    // smdebug's default start_step is 0: the steps before the run's first are not saved.
    loss_above from_zero(tdbg::create_trial(dir.path().string()), {{"threshold", "10"}});
    from_zero.set_logger(tdbg::rules::rule_logger::silent());
    const auto zero = tdbg::rules::invoke_rule(from_zero);
    CHECK(zero.skipped_steps.at("StepUnavailable") == range(0, 4));
    CHECK(zero.not_triggered_steps == range(5, 8));
}

TEST_CASE("invoke_rule skips steps by the smdebug exception that says why") {
    tdbg::test::temp_dir dir("invoke_skips");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    run.step(0, {{"loss", scalar(0.9F), {}}});
    // step 1 not saved at all
    run.step(2, {{"other", scalar(1.0F), {}}}); // saved, but without "loss"
    run.step(3, {{"loss", std::nullopt, {{tdbg::reduction{tdbg::reduction_kind::mean, false}, scalar(0.3F)}}}});
    run.step(4, {{"loss", scalar(0.1F), {}}});
    run.end();

    loss_above r(tdbg::create_trial(dir.path().string()), {});
    r.set_logger(tdbg::rules::rule_logger::silent());
    const auto result = tdbg::rules::invoke_rule(r, 0, 5);
    CHECK(result.triggered_steps == std::vector<std::int64_t>{0});
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{4});
    CHECK(result.skipped_steps.at("StepUnavailable") == std::vector<std::int64_t>{1});
    // step 2: no "loss"; step 3: only a reduction of it, no value
    CHECK(result.skipped_steps.at("TensorUnavailableForStep") == std::vector<std::int64_t>{2, 3});
    CHECK(r.visited == std::vector<std::int64_t>{0, 2, 3, 4}); // invoke_at_step ran, then threw

    // A tensor the run never saved: TensorUnavailable.
    loss_above missing(tdbg::create_trial(dir.path().string()), {{"tensor", "never_saved"}});
    missing.set_logger(tdbg::rules::rule_logger::silent());
    const auto none = tdbg::rules::invoke_rule(missing, 0, 5);
    CHECK(none.skipped_steps.at("TensorUnavailable") == std::vector<std::int64_t>{0, 2, 3, 4});
    // Nothing was evaluated: no pass (NothingEvaluated), and it says why.
    CHECK(none.status() == tdbg::rules::evaluation_status::nothing_evaluated);
    CHECK(none.nothing_evaluated_reason ==
          "every step was skipped (evaluated 0 of 4 steps; 4 skipped: 4 TensorUnavailable)");

    // Coverage: step 1 is not in the run (never saved), so it is neither evaluated nor skipped;
    // smdebug's record still lists it under StepUnavailable.
    CHECK(result.unsaved_steps == std::vector<std::int64_t>{1});
    CHECK(tdbg::rules::describe_coverage(result) == "evaluated 2 of 4 steps; 2 skipped: 2 TensorUnavailableForStep");
    CHECK(result.status() == tdbg::rules::evaluation_status::issues_found);
}

namespace {

// Met at every step from `at` on, and asks (smdebug's end_of_rule) not to be evaluated again.
class ends_itself : public tdbg::rules::rule<ends_itself> {
public:
    static constexpr std::string_view rule_name = "EndsItself";
    static constexpr bool parallel_steps = true;
    ends_itself(tdbg::trial base, const rule_params& params) : rule(std::move(base), params), at_(params.get("at", 3)) {}
    ends_itself(const ends_itself& other) : rule(other), at_(other.at_) {}
    bool invoke_at_step(std::int64_t step) const {
        ++calls;
        if (step >= at_) {
            throw tdbg::rule_evaluation_condition_met(std::string(rule_name), step, true);
        }
        return false;
    }
    mutable std::atomic<int> calls{0};

private:
    std::int64_t at_;
};

} // namespace

TEST_CASE("a rule that throws rule_evaluation_condition_met with end_of_rule is met there and evaluated no further") {
    tdbg::test::temp_dir dir("invoke_end_of_rule");
    tdbg::test::rule_run run(dir.path());
    write_loss_run(run);
    for (const std::size_t threads : {std::size_t{1}, std::size_t{4}}) {
        INFO("threads " << threads);
        ends_itself r(tdbg::create_trial(dir.path().string()), {{"at", "3"}});
        r.set_logger(tdbg::rules::rule_logger::silent());
        tdbg::rules::invoke_options options;
        options.threads = threads;
        const auto result = tdbg::rules::invoke_rule(r, options);
        CHECK(result.triggered_steps == std::vector<std::int64_t>{3});
        CHECK(result.not_triggered_steps == range(0, 2));
        CHECK(result.end == tdbg::rules::evaluation_end::end_of_rule);
        CHECK(result.next_step == 4);
        CHECK(result.status() == tdbg::rules::evaluation_status::issues_found);
        CHECK(tdbg::test::to_nlohmann(tdbg::rules::to_json(result)).at("end") == "end_of_rule");
    }
    // With raise_eval_cond the exception reaches the caller, end_of_rule kept.
    ends_itself raising(tdbg::create_trial(dir.path().string()), {{"at", "5"}});
    raising.set_logger(tdbg::rules::rule_logger::silent());
    try {
        (void)tdbg::rules::invoke_rule(raising, 0, std::nullopt, true);
        FAIL("no exception");
    } catch (const tdbg::rule_evaluation_condition_met& e) {
        CHECK(e.step() == 5);
        CHECK(e.rule_name() == "EndsItself");
        CHECK(e.end_of_rule());
    }
}

TEST_CASE("raise_eval_cond throws rule_evaluation_condition_met at the first step met, after its actions") {
    tdbg::test::temp_dir dir("invoke_raise");
    tdbg::test::rule_run run(dir.path());
    write_loss_run(run);
    loss_above r(tdbg::create_trial(dir.path().string()), {{"threshold", "0.25"}});
    tdbg::rules::log_capture log;
    r.set_logger(log.logger());
    std::vector<std::int64_t> action_steps;
    r.actions().add([&](const tdbg::rules::trigger& t, const tdbg::rules::rule_logger&) { action_steps.push_back(t.step); });
    try {
        (void)tdbg::rules::invoke_rule(r, 0, std::nullopt, true);
        FAIL("no exception");
    } catch (const tdbg::rule_evaluation_condition_met& e) {
        CHECK(e.step() == 3);
        CHECK(e.rule() == "LossAbove");
    }
    CHECK(r.visited == range(0, 3)); // nothing after the first step met
    CHECK(action_steps == std::vector<std::int64_t>{3});
    CHECK(log.contains("condition met at step 3", tdbg::rules::log_level::warning));

    // Without raise_eval_cond every step is evaluated and the actions run at each step met.
    loss_above all(tdbg::create_trial(dir.path().string()), {{"threshold", "0.25"}});
    all.set_logger(tdbg::rules::rule_logger::silent());
    std::vector<std::int64_t> every;
    all.actions().add([&](const tdbg::rules::trigger& t, const tdbg::rules::rule_logger&) { every.push_back(t.step); });
    const auto result = tdbg::rules::invoke_rule(all);
    CHECK(result.triggered_steps == range(3, 9));
    CHECK(every == range(3, 9));
}

TEST_CASE("a rule declaring parallel_steps gives the sequential outcomes, reported in step order") {
    tdbg::test::temp_dir dir("invoke_parallel");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 200; ++s) {
        if (s % 7 == 3) {
            continue; // not saved
        }
        run.step(s, {{"loss", scalar(static_cast<float>((s * 37) % 100) / 100.0F), {}}});
    }
    run.end();
    STATIC_REQUIRE(tdbg::rules::parallel_steps_v<parallel_loss_above>);
    STATIC_REQUIRE_FALSE(tdbg::rules::parallel_steps_v<loss_above>);

    parallel_loss_above p(tdbg::create_trial(dir.path().string()), {{"threshold", "0.5"}});
    loss_above s(tdbg::create_trial(dir.path().string()), {{"threshold", "0.5"}});
    p.set_logger(tdbg::rules::rule_logger::silent());
    s.set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::invoke_options options;
    options.start_step = 0;
    options.threads = 4;
    std::vector<std::int64_t> reported;
    options.on_step = [&](std::int64_t step, tdbg::rules::step_outcome) { reported.push_back(step); };
    const auto parallel = tdbg::rules::invoke_rule(p, options);
    options.on_step = nullptr;
    const auto sequential = tdbg::rules::invoke_rule(s, options);

    CHECK(parallel.triggered_steps == sequential.triggered_steps);
    CHECK(parallel.not_triggered_steps == sequential.not_triggered_steps);
    CHECK(parallel.skipped_steps == sequential.skipped_steps);
    CHECK(reported == range(0, 198)); // 199 was not saved and the run ended before it
    CHECK(p.calls.load() == 200 - 29); // every saved step once
    std::vector<std::int64_t> expected_met;
    for (std::int64_t step = 0; step < 200; ++step) {
        if (step % 7 != 3 && (step * 37) % 100 > 50) {
            expected_met.push_back(step);
        }
    }
    CHECK(parallel.triggered_steps == expected_met);
}

namespace {

// Declares "loss" (optional) and "needed" (required) at each step; records what it was served.
class declaring_rule : public tdbg::rules::rule<declaring_rule> {
public:
    declaring_rule(tdbg::trial base, const rule_params& params) : rule(std::move(base), params) {}
    [[nodiscard]] std::vector<tdbg::rules::tensor_request> required_tensors(std::int64_t step) const {
        return {tdbg::rules::value_request("loss", step, true), tdbg::rules::value_request("needed", step),
                tdbg::rules::reduction_request("needed", step, mean_of)};
    }
    bool invoke_at_step(std::int64_t step, const tdbg::rules::step_inputs& inputs) {
        in_declared_order[step] = inputs.size() == 3 && inputs[0].request == required_tensors(step)[0] &&
                                  inputs[2].request == required_tensors(step)[2];
        const auto& loss = inputs[0].value;
        served[step] = loss ? tdbg::rules::scalar_of(*loss) : -1.0;
        if (!loss) {
            try {
                std::rethrow_exception(inputs.error(0)); // why it is missing
            } catch (const tdbg::tensor_unavailable_for_step& e) {
                missing_at[step] = e.step();
            }
        }
        means[step] = tdbg::rules::scalar_of(*inputs[2].value);
        return false;
    }
    std::map<std::int64_t, double> served;
    std::map<std::int64_t, double> means;
    std::map<std::int64_t, bool> in_declared_order;
    std::map<std::int64_t, std::int64_t> missing_at; // the step of the exception a missing optional input kept

private:
    static constexpr tdbg::reduction mean_of{tdbg::reduction_kind::mean, false};
};

} // namespace

TEST_CASE("declared tensors are fetched before invoke_at_step, a missing optional one keeps why, a missing required one skips the step") {
    tdbg::test::temp_dir dir("invoke_declared");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    run.step(0, {{"loss", scalar(0.5F), {}}, {"needed", f32({1, 2, 3}), {}}});
    run.step(1, {{"needed", f32({4, 6}), {}}});         // optional "loss" missing: served as absent
    run.step(2, {{"loss", scalar(0.25F), {}}});          // required "needed" missing: skipped
    run.end();
    declaring_rule r(tdbg::create_trial(dir.path().string()), {});
    r.set_logger(tdbg::rules::rule_logger::silent());
    const auto result = tdbg::rules::invoke_rule(r);
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0, 1});
    CHECK(result.skipped_steps.at("TensorUnavailableForStep") == std::vector<std::int64_t>{2});
    CHECK(r.served == std::map<std::int64_t, double>{{0, 0.5}, {1, -1.0}});
    CHECK(r.missing_at == std::map<std::int64_t, std::int64_t>{{1, 1}}); // tensor_unavailable_for_step, kept
    CHECK(r.means == std::map<std::int64_t, double>{{0, 2.0}, {1, 5.0}}); // computed from the values
    CHECK(r.in_declared_order == std::map<std::int64_t, bool>{{0, true}, {1, true}});
}

namespace {

// Asks for "needed" at each step through a handle of "other": what it is served shows which was read.
class handle_rule : public tdbg::rules::rule<handle_rule> {
public:
    handle_rule(tdbg::trial base, const rule_params& params)
        : rule(std::move(base), params), other_(std::make_shared<const tdbg::tensor>(base_trial().tensor("other"))) {}
    [[nodiscard]] std::vector<tdbg::rules::tensor_request> required_tensors(std::int64_t step) const {
        auto request = tdbg::rules::value_request("needed", step);
        request.handle = other_;
        return {request};
    }
    bool invoke_at_step(std::int64_t step, const tdbg::rules::step_inputs& inputs) {
        served[step] = tdbg::rules::scalar_of(*inputs[0].value);
        same_request[step] = inputs[0].request == tdbg::rules::value_request("needed", step);
        return false;
    }
    std::map<std::int64_t, double> served;
    std::map<std::int64_t, bool> same_request;

private:
    std::shared_ptr<const tdbg::tensor> other_;
};

} // namespace

TEST_CASE("a request carrying a tensor's handle is read through it, and asks what the same request without one asks") {
    tdbg::test::temp_dir dir("invoke_handle");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    run.step(0, {{"needed", scalar(1.0F), {}}, {"other", scalar(7.0F), {}}});
    run.step(1, {{"needed", scalar(2.0F), {}}, {"other", scalar(8.0F), {}}});
    run.end();
    handle_rule r(tdbg::create_trial(dir.path().string()), {});
    r.set_logger(tdbg::rules::rule_logger::silent());
    const auto result = tdbg::rules::invoke_rule(r);
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0, 1});
    CHECK(r.served == std::map<std::int64_t, double>{{0, 7.0}, {1, 8.0}});
    CHECK(r.same_request == std::map<std::int64_t, bool>{{0, true}, {1, true}});

    // The built-in rules that read a selection pass its handles: each names the tensor asked for.
    tdbg::test::temp_dir grads("invoke_handle_gradients");
    tdbg::test::rule_run g(grads.path());
    g.collections({{"gradients", "^grad/"}});
    g.step(0, {{"grad/a", f32({1, 2}), {}}, {"grad/b", f32({3, 4}), {}}, {"loss", scalar(1.0F), {}}});
    g.end();
    const tdbg::rules::vanishing_gradient vanishing(tdbg::create_trial(grads.path().string()));
    const auto requests = vanishing.required_tensors(0);
    REQUIRE(requests.size() == 2);
    for (const auto& request : requests) {
        REQUIRE(request.handle != nullptr);
        CHECK(request.handle->name() == request.name);
    }
    CHECK(requests[0].name == "grad/a");
    CHECK(requests[1].name == "grad/b");
}

TEST_CASE("invoke_rule waits for the steps of a live run, or gives up after step_timeout") {
    tdbg::test::temp_dir dir("invoke_live");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    run.step(0, {{"loss", scalar(0.0F), {}}});
    tdbg::trial_options fast;
    fast.poll_interval = std::chrono::milliseconds(20);

    SECTION("waits, then ends with the run") {
        std::thread writer([&] {
            for (std::int64_t s = 1; s < 6; ++s) {
                std::this_thread::sleep_for(std::chrono::milliseconds(40));
                run.step(s, {{"loss", scalar(static_cast<float>(s) / 10.0F), {}}});
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            run.end();
        });
        loss_above r(tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast), {{"threshold", "0.25"}});
        r.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = tdbg::rules::invoke_rule(r);
        writer.join();
        CHECK(result.triggered_steps == range(3, 5));
        CHECK(result.not_triggered_steps == range(0, 2));
        CHECK(result.end == tdbg::rules::evaluation_end::no_more_data);
    }
    SECTION("step_timeout: throws step_not_yet_available, or skips the late step when asked") {
        loss_above r(tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast), {});
        r.set_logger(tdbg::rules::rule_logger::silent());
        tdbg::rules::invoke_options options;
        options.start_step = 0;
        options.end_step = 3;
        options.step_timeout = std::chrono::milliseconds(50);
        CHECK_THROWS_AS(tdbg::rules::invoke_rule(r, options), tdbg::step_not_yet_available);
        options.skip_late_steps = true;
        loss_above again(tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast), {});
        again.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = tdbg::rules::invoke_rule(again, options);
        CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0});
        CHECK(result.skipped_steps.at("StepNotYetAvailable") == std::vector<std::int64_t>{1, 2});
    }
}

TEST_CASE("an unknown parameter is an error, and other exceptions end the evaluation (Error status via evaluate)") {
    tdbg::test::temp_dir dir("invoke_errors");
    tdbg::test::rule_run run(dir.path());
    tdbg::test::write_run_failing_after(run, {0.1F});
    const auto trial = tdbg::create_trial(dir.path().string());

    loss_above typo(trial, {{"treshold", "0.1"}});
    try {
        (void)tdbg::rules::invoke_rule(typo);
        FAIL("no exception");
    } catch (const tdbg::config_error& e) {
        const std::string what = e.what();
        CHECK(what.find("unknown parameter 'treshold'") != std::string::npos);
        CHECK(what.find("threshold") != std::string::npos); // the known ones are listed
    }
    CHECK_THROWS_AS(loss_above(trial, {{"threshold", "high"}}), tdbg::config_error);

    tdbg::rules::any_rule r = loss_above(trial, {});
    r.set_logger(tdbg::rules::rule_logger::silent());
    CHECK_THROWS_AS(r.invoke(), tdbg::dtype_mismatch);
    const auto result = r.evaluate();
    CHECK(result.status() == tdbg::rules::evaluation_status::error);
    CHECK(result.error.find("2 elements") != std::string::npos);
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0}); // what was found before is kept
}

TEST_CASE("snapshot: the steps a live run has written when the evaluation starts, none waited for") {
    tdbg::test::temp_dir dir("invoke_snapshot");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 4; ++s) {
        run.step(s, {{"loss", scalar(static_cast<float>(s) / 10.0F), {}}});
    }
    tdbg::trial_options fast;
    fast.poll_interval = std::chrono::milliseconds(20);
    tdbg::rules::invoke_options options;
    options.snapshot = true;

    // The run is live (no end marker): without snapshot this evaluation would wait for step 4.
    loss_above r(tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast), {{"threshold", "0.15"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    const auto result = tdbg::rules::invoke_rule(r, options);
    CHECK(result.triggered_steps == range(2, 3));
    CHECK(result.not_triggered_steps == range(0, 1));
    CHECK(result.end == tdbg::rules::evaluation_end::end_step);
    CHECK(result.next_step == 4);

    SECTION("a step missing inside the snapshot is skipped as not yet available") {
        run.step(6, {{"loss", scalar(0.9F), {}}}); // 4 and 5 never written
        options.start_step = 3;
        options.end_step = 7;
        loss_above again(tdbg::create_trial(dir.path().string(), std::nullopt, {}, fast), {{"threshold", "0.15"}});
        again.set_logger(tdbg::rules::rule_logger::silent());
        const auto later = tdbg::rules::invoke_rule(again, options);
        CHECK(later.triggered_steps == std::vector<std::int64_t>{3, 6});
        CHECK(later.end == tdbg::rules::evaluation_end::end_step);
    }
    SECTION("a run with no step yet: nothing evaluated, at once") {
        tdbg::test::temp_dir empty_dir("invoke_snapshot_empty");
        tdbg::test::rule_run empty(empty_dir.path());
        empty.collections({{"losses", "^loss$"}});
        loss_above none(tdbg::create_trial(empty_dir.path().string(), std::nullopt, {}, fast), {});
        none.set_logger(tdbg::rules::rule_logger::silent());
        const auto nothing = tdbg::rules::invoke_rule(none, options);
        CHECK(nothing.status() == tdbg::rules::evaluation_status::nothing_evaluated);
        CHECK(nothing.end == tdbg::rules::evaluation_end::no_more_data);
    }
}

TEST_CASE("evaluate_snapshot: each rule over the steps written, in turn, a rule's error its status and not the end") {
    tdbg::test::temp_dir dir("invoke_evaluate_snapshot");
    tdbg::test::rule_run live(dir.path() / "live");
    live.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 4; ++s) {
        live.step(s, {{"loss", scalar(static_cast<float>(s) / 10.0F), {}}});
    }
    tdbg::test::rule_run failing(dir.path() / "failing");
    tdbg::test::write_run_failing_after(failing, {0.5F, 0.1F}); // step 2's loss has 2 elements
    tdbg::trial_options fast;
    fast.poll_interval = std::chrono::milliseconds(20);
    const tdbg::trial live_trial = tdbg::create_trial((dir.path() / "live").string(), std::nullopt, {}, fast);

    std::vector<tdbg::rules::any_rule> rules;
    rules.emplace_back(loss_above(live_trial, {{"threshold", "0.15"}}));
    rules.emplace_back(loss_above(tdbg::create_trial((dir.path() / "failing").string()), {{"threshold", "0.3"}}));
    rules.emplace_back(loss_above(live_trial, {{"threshold", "0.25"}}));
    for (auto& r : rules) {
        r.set_logger(tdbg::rules::rule_logger::silent());
    }
    // The live run has no end marker: evaluated as a snapshot, no rule waits for its step 4.
    const auto results = tdbg::rules::evaluate_snapshot(rules);
    REQUIRE(results.size() == 3);
    CHECK(results[0].triggered_steps == range(2, 3));
    CHECK(results[0].not_triggered_steps == range(0, 1));
    CHECK(results[0].end == tdbg::rules::evaluation_end::end_step);
    CHECK(results[0].next_step == 4);
    CHECK(results[1].status() == tdbg::rules::evaluation_status::error);
    CHECK(results[1].error.find("2 elements") != std::string::npos);
    CHECK(results[1].triggered_steps == std::vector<std::int64_t>{0}); // what it found before is kept
    CHECK(results[2].triggered_steps == range(3, 3));
    CHECK(results[2].not_triggered_steps == range(0, 2));
}

TEST_CASE("record_errors: a rule's error ends its evaluation with status Error, and what it found before is kept") {
    tdbg::test::temp_dir dir("invoke_record_errors");
    tdbg::test::rule_run run(dir.path());
    tdbg::test::write_run_failing_after(run, {0.5F, 0.1F});
    const auto trial = tdbg::create_trial(dir.path().string());
    tdbg::rules::invoke_options options;
    options.record_errors = true;

    loss_above r(trial, {{"threshold", "0.3"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::rule_evaluation evaluation(r, options);
    const tdbg::rules::advance_result a = evaluation.advance();
    CHECK(a.state == tdbg::rules::evaluation_state::done);
    CHECK(evaluation.done());
    const auto& result = evaluation.result();
    CHECK(result.status() == tdbg::rules::evaluation_status::error);
    CHECK(result.error.find("2 elements") != std::string::npos);
    CHECK(result.triggered_steps == std::vector<std::int64_t>{0});
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{1});

    SECTION("an error once a stop was asked for is the stop's doing: interrupted, no error") {
        // A read the stop cancels (an S3 request): the stop comes while step 1 is read, and the
        // read fails because of it.
        bool stop = false;
        options.stop_requested = [&stop] { return stop; };
        cancelled_at cut_rule(trial, 1, stop);
        cut_rule.set_logger(tdbg::rules::rule_logger::silent());
        tdbg::rules::rule_evaluation cut(cut_rule, options);
        cut.run();
        CHECK(cut.result().error.empty());
        CHECK(cut.result().end == tdbg::rules::evaluation_end::interrupted);
        CHECK(cut.result().not_triggered_steps == std::vector<std::int64_t>{0});
    }
    SECTION("without it the error propagates, as from smdebug's invoke_rule") {
        options.record_errors = false;
        loss_above plain(trial, {{"threshold", "0.3"}});
        plain.set_logger(tdbg::rules::rule_logger::silent());
        CHECK_THROWS_AS(tdbg::rules::invoke_rule(plain, options), tdbg::dtype_mismatch);
    }
}

TEST_CASE("invoke_rule visits the steps a run has, however far apart, and records the steps between as one run") {
    tdbg::test::temp_dir dir("invoke_far_steps");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(s, {{"loss", scalar(0.1F), {}}});
    }
    constexpr std::int64_t far = 999'999'999'999; // the largest step an index file name can hold
    run.step(far, {{"loss", scalar(0.9F), {}}});
    run.end();

    loss_above r(tdbg::create_trial(dir.path().string()), {{"threshold", "0.5"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::invoke_options options;
    options.start_step = 0;
    std::vector<std::int64_t> reported;
    options.on_step = [&](std::int64_t step, tdbg::rules::step_outcome) { reported.push_back(step); };
    const auto result = tdbg::rules::invoke_rule(r, options);
    CHECK(r.visited == std::vector<std::int64_t>{0, 1, 2, far});
    CHECK(result.triggered_steps == std::vector<std::int64_t>{far});
    CHECK(result.not_triggered_steps == range(0, 2));
    using run_of = tdbg::rules::step_set::run;
    CHECK(result.skipped_steps.at("StepUnavailable").runs() == std::vector<run_of>{{3, far - 1}});
    CHECK(reported == std::vector<std::int64_t>{0, 1, 2, far - 1, far});
    CHECK(result.end == tdbg::rules::evaluation_end::no_more_data);
    CHECK(result.next_step == far + 1);

    // end_step cuts the run of unsaved steps short.
    loss_above bounded(tdbg::create_trial(dir.path().string()), {{"threshold", "0.5"}});
    bounded.set_logger(tdbg::rules::rule_logger::silent());
    const auto cut = tdbg::rules::invoke_rule(bounded, 1, 1000);
    CHECK(bounded.visited == range(1, 2));
    CHECK(cut.skipped_steps.at("StepUnavailable").runs() == std::vector<run_of>{{3, 999}});
    CHECK(cut.end == tdbg::rules::evaluation_end::end_step);
    CHECK(cut.next_step == 1000);

    // The same in parallel.
    parallel_loss_above p(tdbg::create_trial(dir.path().string()), {{"threshold", "0.5"}});
    p.set_logger(tdbg::rules::rule_logger::silent());
    options.on_step = nullptr;
    options.threads = 4;
    const auto parallel = tdbg::rules::invoke_rule(p, options);
    CHECK(parallel.skipped_steps == result.skipped_steps);
    CHECK(parallel.triggered_steps == result.triggered_steps);
    CHECK(p.calls.load() == 4);
}
