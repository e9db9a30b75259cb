// The built-in rules the fixtures do not cover, on small runs written here:
// each one triggers where its documented condition holds and not elsewhere.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/rules/builtin/stalled_training_rule.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::test::f32;
using tdbg::test::matrix;
using tdbg::test::scalar;
using tdbg::test::step_tensor;
using steps = std::vector<std::int64_t>;

tdbg::rules::evaluation_result evaluate(const tdbg::test::temp_dir& dir, const std::string& rule,
                                        std::map<std::string, std::string> params = {},
                                        std::vector<tdbg::trial> others = {}) {
    auto r = tdbg::rules::registry::create(rule, tdbg::create_trial(dir.path().string()),
                                           tdbg::rules::rule_params(std::move(params)), std::move(others),
                                           tdbg::rules::rule_logger::silent());
    auto result = r.evaluate();
    INFO(result.error);
    REQUIRE(result.error.empty());
    return result;
}

} // namespace

TEST_CASE("ExplodingTensor, AllZero, UnchangedTensor and WeightUpdateRatio judge each worker's value on its own") {
    tdbg::test::temp_dir dir("per_worker");
    tdbg::test::rule_run run(dir.path());
    for (const char* worker : {"worker_0", "worker_1"}) {
        run.collections({{"all", ".*"}, {"weights", "^w$"}}, worker, 2);
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const step_tensor only_mean{"w", std::nullopt, {{mean, scalar(1.0F)}}}; // no value at this step
    run.step(0, {{"w", f32({1, 2}), {}}}, tdbg::mode::train, std::nullopt, "worker_0");
    run.step(0, {{"w", f32({1, 2}), {}}}, tdbg::mode::train, std::nullopt, "worker_1");
    run.step(1, {{"w", f32({1, 2}), {}}}, tdbg::mode::train, std::nullopt, "worker_0");
    run.step(1, {{"w", f32({nan, 0}), {}}}, tdbg::mode::train, std::nullopt, "worker_1");
    run.step(2, {only_mean}, tdbg::mode::train, std::nullopt, "worker_0");
    run.step(2, {{"w", f32({0, 0}), {}}}, tdbg::mode::train, std::nullopt, "worker_1");
    run.step(3, {only_mean}, tdbg::mode::train, std::nullopt, "worker_0");
    run.step(3, {only_mean}, tdbg::mode::train, std::nullopt, "worker_1");
    run.end();
    const auto evaluate_logged = [&](const std::string& rule, std::map<std::string, std::string> params,
                                     const tdbg::rules::log_capture& log) {
        auto r = tdbg::rules::registry::create(rule, tdbg::create_trial(dir.path().string()),
                                               tdbg::rules::rule_params(std::move(params)), {}, log.logger());
        auto result = r.evaluate();
        INFO(result.error);
        REQUIRE(result.error.empty());
        return result;
    };
    using tdbg::rules::log_level;
    {
        // worker_1's NaN at step 1; at step 2 worker_0 saved no value and worker_1's is finite; at
        // step 3 both saved a mean of 1 only, which says every element is finite.
        tdbg::rules::log_capture log;
        const auto result = evaluate_logged("ExplodingTensor", {}, log);
        CHECK(result.triggered_steps == steps{1});
        CHECK(result.not_triggered_steps == steps{0, 2, 3});
        CHECK(result.skipped_steps.empty());
        CHECK(log.contains("condition met at step 1 (w (worker_1) holds a NaN or an infinity)", log_level::warning));
    }
    {
        tdbg::rules::log_capture log;
        const auto result = evaluate_logged("AllZero", {{"collection_names", "all"}}, log);
        CHECK(result.triggered_steps == steps{2}); // worker_1 only; worker_0 has no value there
        // Step 3: a stored mean of 1 says neither worker's value is all zeros (the default 100%).
        CHECK(result.not_triggered_steps == steps{0, 1, 3});
        CHECK(result.skipped_steps.empty());
        CHECK(log.contains("condition met at step 2 (w (worker_1) is 100% zeros, at least 100%)", log_level::warning));
    }
    {
        // A worker missing one of the steps is not judged: at step 2 worker_1 alone (changed), at
        // step 3 neither has both values.
        tdbg::rules::log_capture log;
        const auto result = evaluate_logged("UnchangedTensor", {{"collection_names", "all"}, {"num_steps", "2"}}, log);
        CHECK(result.triggered_steps == steps{1});
        CHECK(result.not_triggered_steps == steps{2});
        CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{0, 3});
        CHECK(log.contains("condition met at step 1 (w (worker_0) unchanged over steps 0..1)", log_level::warning));
    }
    {
        // worker_0 did not move from step 0 to 1 (ratio 0 < small_threshold); at step 2 only
        // worker_1 has both values (a NaN ratio is out of neither bound).
        tdbg::rules::log_capture log;
        const auto result = evaluate_logged("WeightUpdateRatio", {}, log);
        CHECK(result.triggered_steps == steps{1});
        CHECK(result.not_triggered_steps == steps{2});
        CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{0, 3});
        CHECK(log.contains("condition met at step 1 (update ratio of w (worker_0) = 0 < 1e-08)", log_level::warning));
    }
}

TEST_CASE("ExplodingTensor and AllZero decide tensors saved as reductions only by their stored reductions") {
    tdbg::test::temp_dir dir("reductions_only_rules");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const auto red = [](tdbg::reduction_kind k, bool abs = false) { return tdbg::reduction{k, abs}; };
    using k = tdbg::reduction_kind;
    // A hook saving the gradients as min, max and mean only: a NaN at step 3, zeros at step 5.
    {
        tdbg::hook_options o;
        o.out_dir = (dir.path() / "hook").string();
        o.include_collections = {"gradients"};
        o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
        o.reduction_config = tdbg::reduction_config::parse("min,max,mean");
        tdbg::hook h(o);
        for (int step = 0; step < 7; ++step) {
            h.begin_step();
            std::vector<float> g{0.5F, -0.25F, 1.0F};
            if (step == 3) {
                g[1] = nan;
            }
            if (step == 5) {
                g = {0.0F, 0.0F, 0.0F};
            }
            h.save_tensor("gradient/fc.weight", g.data(), {g.size()});
        }
        h.close();
    }
    const auto hook_run = tdbg::create_trial((dir.path() / "hook").string());
    REQUIRE_FALSE(hook_run.tensor("gradient/fc.weight").summary().has_value);
    const auto evaluate = [](const tdbg::trial& t, const std::string& rule, std::map<std::string, std::string> params) {
        auto r = tdbg::rules::registry::create(rule, t, tdbg::rules::rule_params(std::move(params)), {},
                                               tdbg::rules::rule_logger::silent());
        auto result = r.evaluate();
        INFO(result.error);
        REQUIRE(result.error.empty());
        return result;
    };
    {
        const auto result = evaluate(hook_run, "ExplodingTensor", {{"collection_names", "gradients"}});
        CHECK(result.triggered_steps == steps{3});
        CHECK(result.not_triggered_steps == steps{0, 1, 2, 4, 5, 6});
        CHECK(result.skipped_steps.empty());
        CHECK(tdbg::rules::describe_coverage(result) ==
              "evaluated 7 of 7 steps; 1 of 1 selected tensor saved as reductions only, decided by their stored "
              "reductions where they can be");
        REQUIRE(result.trigger_reasons.count(3) == 1);
        CHECK(result.trigger_reasons.at(3) ==
              "gradient/fc.weight (worker_0) holds a NaN (its stored max is nan), saved as reductions only");
    }
    {
        const auto result = evaluate(hook_run, "AllZero", {{"collection_names", "gradients"}});
        CHECK(result.triggered_steps == steps{5});
        CHECK(result.not_triggered_steps == steps{0, 1, 2, 3, 4, 6});
        // Below 100%, "not all zeros" says nothing: only steps with a decision count.
        const auto half = evaluate(hook_run, "AllZero", {{"collection_names", "gradients"}, {"threshold", "50"}});
        CHECK(half.triggered_steps == steps{5});
        CHECK(half.skipped_steps.at("TensorUnavailableForStep") == steps{0, 1, 2, 3, 4, 6});
    }

    {
        // A rule that reads values says it did not evaluate them, and why.
        const auto result = evaluate(hook_run, "UnchangedTensor", {{"collection_names", "gradients"}});
        CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
        CHECK_THAT(tdbg::rules::describe_coverage(result),
                   Catch::EndsWith("; 1 of 1 selected tensor saved as reductions only, which UnchangedTensor reads "
                                   "as values: not evaluated"));
        CHECK_THAT(result.nothing_evaluated_reason, Catch::Contains("which UnchangedTensor reads as values"));
    }

    // Each reduction decides what it can, and no more.
    tdbg::test::rule_run run(dir.path() / "made");
    run.collections({{"all", ".*"}});
    const auto only = [](std::vector<std::pair<tdbg::reduction, float>> stored) {
        step_tensor t{"t", std::nullopt, {}};
        for (const auto& [r, x] : stored) {
            t.reductions.emplace_back(r, scalar(x));
        }
        return t;
    };
    run.step(0, {only({{red(k::min, true), 0.5F}})});                          // decides nothing for NaN
    run.step(1, {only({{red(k::min), -inf}, {red(k::max), 2.0F}})});            // an infinity
    run.step(2, {only({{red(k::mean), nan}})});                                 // a NaN or an infinity
    run.step(3, {only({{red(k::l2), 3.0F}})});                                  // every element finite
    run.step(4, {only({{red(k::min), 0.0F}, {red(k::max), 0.0F}})});             // all zeros, finite
    run.step(5, {only({{red(k::variance), 1.0F}})});                            // finite; zeros unknown
    run.step(6, {only({{red(k::max, true), nan}})});                            // a NaN; not all zeros
    run.end();
    const auto made = tdbg::create_trial((dir.path() / "made").string());
    {
        const auto result = evaluate(made, "ExplodingTensor", {});
        CHECK(result.triggered_steps == steps{1, 2, 6});
        CHECK(result.not_triggered_steps == steps{3, 4, 5});
        CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{0});
        CHECK(result.trigger_reasons.at(1) == "t (worker_0) holds an infinity (its stored min is -inf), saved as reductions only");
    }
    {
        const auto result = evaluate(made, "ExplodingTensor", {{"only_nan", "True"}});
        CHECK(result.triggered_steps == steps{6});
        CHECK(result.not_triggered_steps == steps{0, 1, 3, 4, 5}); // a finite max (step 1): no NaN
        CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{2}); // a NaN mean: NaN, or inf - inf?
    }
    {
        const auto result = evaluate(made, "AllZero", {{"collection_names", "all"}});
        CHECK(result.triggered_steps == steps{4});
        // abs_min 0.5: no zeros; -inf, 3 and NaN are not 0 (a NaN mean comes of elements that are
        // not 0). A variance: unknown.
        CHECK(result.not_triggered_steps == steps{0, 1, 2, 3, 6});
        CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{5});
    }
}

TEST_CASE("DeadRelu: more than threshold_layer percent of a layer's units inactive") {
    tdbg::test::temp_dir dir("dead_relu");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    const auto weights = f32({-1, 1, -1, 1});
    // 8 samples x 4 units. Step 0: every unit fires; step 1: units 1-3 never fire (75% dead);
    // step 2: units 2-3 never (50%, not more than 50); step 3: unit 0 fires in 1 sample of 8 (12.5% > 1%: alive).
    run.step(0, {{"layer1_relu_output", matrix(8, 4, [](auto, auto) { return 1.0F; }), {}}, {"fc.weight", weights, {}}});
    run.step(1, {{"layer1_relu_output", matrix(8, 4, [](auto, auto c) { return c == 0 ? 2.0F : 0.0F; }), {}}});
    run.step(2, {{"layer1_relu_output", matrix(8, 4, [](auto, auto c) { return c < 2 ? 2.0F : 0.0F; }), {}}});
    run.step(3, {{"layer1_relu_output", matrix(8, 4, [](auto r, auto c) { return c == 0 && r == 5 ? 1.0F : 0.0F; }), {}}});
    run.end();
    auto result = evaluate(dir, "DeadRelu");
    CHECK(result.triggered_steps == steps{1, 3}); // step 3: units 1-3 dead (75%)
    CHECK(result.not_triggered_steps == steps{0, 2});
    // A stricter inactivity threshold: unit 0 firing in 12.5% of samples counts as dead at 20%.
    result = evaluate(dir, "DeadRelu", {{"threshold_inactivity", "20"}, {"threshold_layer", "90"}});
    CHECK(result.triggered_steps == steps{3});
    // Weights are not ReLU outputs unless asked for: half of these are negative.
    result = evaluate(dir, "DeadRelu", {{"tensor_regex", "fc.weight"}, {"threshold_layer", "40"}});
    CHECK(result.triggered_steps == steps{0});
    CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{1, 2, 3});
}

TEST_CASE("SaturatedActivation: tanh and sigmoid inputs outside their thresholds") {
    tdbg::test::temp_dir dir("saturated");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    run.step(0, {{"l1_tanh_input", matrix(4, 2, [](auto, auto) { return 2.0F; }), {}}});
    run.step(1, {{"l1_tanh_input", matrix(4, 2, [](auto, auto) { return 12.0F; }), {}}});
    run.step(2, {{"gate_sigmoid_input", matrix(4, 2, [](auto, auto) { return -30.0F; }), {}}});
    run.step(3, {{"gate_sigmoid_input", matrix(4, 2, [](auto, auto) { return 10.0F; }), {}}});
    run.end();
    auto result = evaluate(dir, "SaturatedActivation");
    CHECK(result.triggered_steps == steps{1, 2});
    CHECK(result.not_triggered_steps == steps{0, 3});
    result = evaluate(dir, "SaturatedActivation", {{"threshold_tanh", "(-1, 1)"}, {"threshold_sigmoid", "(-40, 5)"}});
    CHECK(result.triggered_steps == steps{0, 1, 3});
    CHECK(result.resolved_params.at("threshold_tanh") == tdbg::format::json_value::array({-1.0, 1.0}));
}

TEST_CASE("PoorWeightInitialization: activation variance ratio, narrow gradients, stalled loss, first steps only") {
    tdbg::test::temp_dir dir("poor_init");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"gradients", "^gradient/"}, {"losses", "^loss$"}, {"all", ".*"}});
    auto spread = [](float scale) {
        std::vector<float> v;
        for (int i = 0; i <= 20; ++i) {
            v.push_back(scale * (static_cast<float>(i) / 10.0F - 1.0F)); // p95 - p5 = 1.8 * scale
        }
        return f32(v);
    };
    for (std::int64_t s = 0; s < 12; ++s) {
        if (s == 9) {
            run.step(s, {{"other", scalar(1.0F), {}}}); // nothing the rule reads
            continue;
        }
        const float b = (s == 0 || s == 11) ? 20.0F : 2.0F; // variance ratio 400 (bad) or 4
        const float loss = 1.0F - 0.05F * static_cast<float>(s == 8 ? 3 : s); // step 8: back to step 3's loss
        run.step(s, {{"a_relu_input", f32({-1, 1, -1, 1}), {}},
                     {"b_relu_input", f32({-b, b, -b, b}), {}},
                     {"gradient/w", spread(s == 3 ? 1e-5F : 1.0F), {}},
                     {"loss", scalar(loss), {}}});
    }
    run.end();
    auto result = evaluate(dir, "PoorWeightInitialization");
    // 0: variances 1 and 400; 3: p95 - p5 of the gradient is 1.8e-5; 8: the loss is back at step 3's value;
    // 11 is bad again but past the first 10 steps.
    CHECK(result.triggered_steps == steps{0, 3, 8});
    CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{9});
    CHECK(result.not_triggered_steps == steps{1, 2, 4, 5, 6, 7, 10, 11});
    result = evaluate(dir, "PoorWeightInitialization", {{"threshold", "500"}, {"distribution_range", "1e-6"}, {"patience", "6"}});
    CHECK(result.triggered_steps.empty());
}

TEST_CASE("SimilarAcrossRuns: met where a tensor differs from the other run") {
    tdbg::test::temp_dir base_dir("similar_base");
    tdbg::test::temp_dir other_dir("similar_other");
    tdbg::test::rule_run base(base_dir.path());
    tdbg::test::rule_run other(other_dir.path());
    base.collections({{"all", ".*"}});
    other.collections({{"all", ".*"}});
    for (std::int64_t s = 0; s < 5; ++s) {
        const float x = static_cast<float>(s);
        base.step(s, {{"w", f32({x, x + 1}), {}}, {"only_here", scalar(x), {}}});
        if (s != 4) {
            other.step(s, {{"w", f32({x, s == 3 ? x + 1.001F : x + 1}), {}}});
        }
    }
    base.end();
    other.end();
    auto result = evaluate(base_dir, "SimilarAcrossRuns", {{"other_trial", other_dir.path().string()}});
    CHECK(result.triggered_steps == steps{3});
    CHECK(result.not_triggered_steps == steps{0, 1, 2});
    CHECK(result.skipped_steps.at("StepUnavailable") == steps{4}); // the other run ended at 3
    result = evaluate(base_dir, "SimilarAcrossRuns", {{"tensor_regex", "only_here"}},
                      {tdbg::create_trial(other_dir.path().string())});
    CHECK(result.triggered_steps.empty()); // nothing to compare: the other run has no "only_here"
    CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{0, 1, 2, 3});
}

TEST_CASE("ClassImbalance: class counts and mispredictions once enough samples were seen") {
    auto write = [](const tdbg::test::temp_dir& dir, int minority, bool mispredict) {
        tdbg::test::rule_run run(dir.path());
        run.collections({{"all", ".*"}});
        for (std::int64_t s = 0; s < 4; ++s) {
            std::vector<float> labels;
            for (int i = 0; i < 100; ++i) {
                labels.push_back(i < minority ? 1.0F : 0.0F);
            }
            // Scores for argmax: class 1 samples are predicted as 0 when mispredicting (every one of them).
            auto scores = matrix(100, 2, [&](std::size_t r, std::size_t c) {
                const bool is_one = static_cast<int>(r) < minority;
                const std::size_t predicted = is_one && !mispredict ? 1 : 0;
                return c == predicted ? 0.9F : 0.1F;
            });
            run.step(s, {{"batch_labels", f32(labels), {}}, {"batch_predictions", scores, {}}});
        }
        run.end();
    };
    tdbg::test::temp_dir imbalanced("imbalance_a");
    write(imbalanced, 5, false);
    auto result = evaluate(imbalanced, "ClassImbalance", {{"samples", "250"}, {"argmax", "True"}});
    CHECK(result.triggered_steps == steps{2, 3}); // 95 to 5 > 10, judged from 300 samples on
    CHECK(result.not_triggered_steps == steps{0, 1});

    tdbg::test::temp_dir mispredicted("imbalance_b");
    write(mispredicted, 50, true);
    result = evaluate(mispredicted, "ClassImbalance", {{"samples", "250"}, {"argmax", "True"}});
    CHECK(result.triggered_steps == steps{2, 3}); // class 1 always wrong: 1.0 > 0.7
    result = evaluate(mispredicted, "ClassImbalance", {{"samples", "250"}, {"argmax", "True"}, {"threshold_misprediction", "1"}});
    CHECK(result.triggered_steps.empty());

    tdbg::test::temp_dir good("imbalance_c");
    write(good, 50, false);
    CHECK(evaluate(good, "ClassImbalance", {{"samples", "100"}, {"argmax", "True"}}).triggered_steps.empty());
}

TEST_CASE("Confusion: too little on the diagonal or too much off it") {
    tdbg::test::temp_dir dir("confusion");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"labels", "^labels$"}, {"predictions", "^predictions$"}});
    std::vector<float> labels;
    std::vector<float> good;
    std::vector<float> bad;
    for (int i = 0; i < 30; ++i) {
        const float l = static_cast<float>(i % 3);
        labels.push_back(l);
        good.push_back(l);
        bad.push_back(i % 3 == 1 && i < 12 ? 0.0F : l); // 4 of the 10 class-1 samples predicted as 0
    }
    run.step(0, {{"labels", f32(labels), {}}, {"predictions", f32(good), {}}});
    run.step(1, {{"labels", f32(labels), {}}, {"predictions", f32(bad), {}}});
    run.end();
    auto result = evaluate(dir, "Confusion");
    // Step 1, column 0: 10 of class 0 and 4 of class 1: 10/14 < 0.9 on the diagonal.
    CHECK(result.triggered_steps == steps{1});
    CHECK(result.not_triggered_steps == steps{0});
    result = evaluate(dir, "Confusion", {{"min_diag", "0.7"}, {"max_off_diag", "0.3"}}); // 0.714 and 0.286 pass
    CHECK(result.triggered_steps.empty());
}

TEST_CASE("CheckInputImages: channel means away from 0, once threshold_samples images were seen") {
    auto write = [](const tdbg::test::temp_dir& dir, float channel1_offset) {
        tdbg::test::rule_run run(dir.path());
        run.collections({{"all", ".*"}});
        for (std::int64_t s = 0; s < 5; ++s) {
            std::vector<float> v; // 100 images x 3 channels x 2 x 2, alternating +-1 around each channel's offset
            for (int b = 0; b < 100; ++b) {
                for (int c = 0; c < 3; ++c) {
                    for (int p = 0; p < 4; ++p) {
                        v.push_back((c == 1 ? channel1_offset : 0.0F) + (p % 2 == 0 ? 1.0F : -1.0F));
                    }
                }
            }
            run.step(s, {{"net_hybridsequential0_input_0", f32(v, {100, 3, 2, 2}), {}}});
        }
        run.end();
    };
    tdbg::test::temp_dir off("images_off");
    write(off, 0.5F);
    auto result = evaluate(off, "CheckInputImages");
    CHECK(result.triggered_steps == steps{4}); // 500 images seen at step 4
    CHECK(result.not_triggered_steps == steps{0, 1, 2, 3});
    CHECK(evaluate(off, "CheckInputImages", {{"threshold_mean", "0.6"}}).triggered_steps.empty());
    result = evaluate(off, "CheckInputImages", {{"threshold_samples", "100"}, {"channel", "2"}});
    CHECK(result.triggered_steps.empty()); // dimension 2 is not the channel: both means over it are 0.5 / 3

    tdbg::test::temp_dir normalised("images_ok");
    write(normalised, 0.0F);
    CHECK(evaluate(normalised, "CheckInputImages", {{"threshold_samples", "100"}}).triggered_steps.empty());
}

TEST_CASE("NLPSequenceRatio: a token's share of the input sequences above its threshold") {
    tdbg::test::temp_dir dir("nlp");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    auto sequence = [](int zeros, int threes) { // 20 tokens
        std::vector<float> v;
        for (int i = 0; i < 20; ++i) {
            v.push_back(i < zeros ? 0.0F : (i < zeros + threes ? 3.0F : 7.0F));
        }
        return f32(v, {2, 10});
    };
    run.step(0, {{"model_embedding0_input_0", sequence(6, 0), {}}});  // 30% padding
    run.step(1, {{"model_embedding0_input_0", sequence(12, 0), {}}}); // 60%
    run.step(2, {{"model_embedding0_input_0", sequence(2, 5), {}}});  // 25% token 3
    run.end();
    auto result = evaluate(dir, "NLPSequenceRatio");
    CHECK(result.triggered_steps == steps{1});
    result = evaluate(dir, "NLPSequenceRatio", {{"token_values", "0, 3"}, {"token_thresholds_percent", "90, 20"}});
    CHECK(result.triggered_steps == steps{2});
    CHECK_THROWS_AS(tdbg::rules::registry::create("NLPSequenceRatio", tdbg::create_trial(dir.path().string()),
                                                  {{"token_values", "0, 3, 5"}, {"token_thresholds_percent", "1, 2"}}),
                    tdbg::config_error);
}

TEST_CASE("StalledTrainingRule: more than threshold seconds between two steps") {
    tdbg::test::temp_dir dir("stalled");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    const double t0 = 1700000000.0;
    const std::vector<double> times{t0, t0 + 10, t0 + 20, t0 + 2020, t0 + 2030, t0 + 2040};
    for (std::int64_t s = 0; s < 6; ++s) {
        run.step(s, {{"loss", scalar(1.0F), {}}}, tdbg::mode::train, std::nullopt, "worker_0",
                 times[static_cast<std::size_t>(s)]);
    }
    run.end();
    auto result = evaluate(dir, "StalledTrainingRule");
    CHECK(result.triggered_steps == steps{3}); // 2000 s > 1800 s since step 2
    CHECK(result.not_triggered_steps == steps{0, 1, 2, 4, 5});
    CHECK(evaluate(dir, "StalledTrainingRule", {{"threshold", "3000"}}).triggered_steps.empty());
    CHECK_FALSE(std::filesystem::exists(dir.path() / std::string(tdbg::format::stop_marker_key)));
    result = evaluate(dir, "StalledTrainingRule", {{"stop_training_on_fire", "True"}, {"training_job_name_prefix", "job"}});
    CHECK(result.triggered_steps == steps{3});
    CHECK(std::filesystem::exists(dir.path() / std::string(tdbg::format::stop_marker_key)));
}

TEST_CASE("StalledTrainingRule: a job that stops writing fires while its next step is waited for, by the clock") {
    tdbg::test::temp_dir dir("stalled_live");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (std::int64_t s = 0; s < 3; ++s) { // steps 0-2 a second apart, the last 100 s ago
        run.step(s, {{"loss", scalar(1.0F), {}}}, tdbg::mode::train, std::nullopt, "worker_0",
                 now - 102.0 + static_cast<double>(s));
    }
    tdbg::rules::stalled_training_rule r(tdbg::create_trial(dir.path().string()),
                                         {{"threshold", "60"}, {"stop_training_on_fire", "True"}});
    r.set_logger(tdbg::rules::rule_logger::silent());
    // One evaluation, advanced as the run grows: it waits for step 3 with the rule's state kept.
    tdbg::rules::rule_evaluation evaluation(r, tdbg::rules::invoke_options{});
    const tdbg::rules::advance_result first = evaluation.advance();
    CHECK(first.state == tdbg::rules::evaluation_state::waiting);
    CHECK(first.progressed);
    CHECK(first.waiting_for == std::optional<std::int64_t>(3));
    REQUIRE(evaluation.result().next_step == 3);
    CHECK(evaluation.result().triggered_steps.empty());
    // Nothing new: waiting still, no progress.
    const tdbg::rules::advance_result again = evaluation.advance();
    CHECK(again.state == tdbg::rules::evaluation_state::waiting);
    CHECK_FALSE(again.progressed);
    // Waiting for step 3: more than 60 s since step 2's time. Fires once, and stops training.
    CHECK(evaluation.check_while_waiting());
    CHECK_FALSE(evaluation.check_while_waiting());
    CHECK(evaluation.result().triggered_steps == steps{3});
    CHECK(std::filesystem::exists(dir.path() / std::string(tdbg::format::stop_marker_key)));
    // Step 3 comes after all: its own evaluation (also met) is not recorded a second time.
    run.step(3, {{"loss", scalar(1.0F), {}}}, tdbg::mode::train, std::nullopt, "worker_0", now);
    run.end();
    const tdbg::rules::advance_result last = evaluation.advance();
    CHECK(last.state == tdbg::rules::evaluation_state::done);
    CHECK(evaluation.result().triggered_steps == steps{3});
    CHECK(evaluation.result().not_triggered_steps == steps{0, 1, 2});
    CHECK(evaluation.result().first_step == 0);
    CHECK(evaluation.result().end == tdbg::rules::evaluation_end::no_more_data);

    // Under the threshold it does not fire while waiting.
    tdbg::rules::stalled_training_rule patient(tdbg::create_trial(dir.path().string()), {{"threshold", "100000"}});
    patient.set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::invoke_options from_three;
    from_three.start_step = 4;
    tdbg::rules::rule_evaluation calm(patient, from_three);
    CHECK(calm.advance().state == tdbg::rules::evaluation_state::done); // the run ended at step 3
    CHECK_FALSE(calm.check_while_waiting());
    CHECK(calm.result().triggered_steps.empty());
}

TEST_CASE("rule_evaluation: waits without blocking, gives up a late step, and ends interrupted when asked") {
    tdbg::test::temp_dir dir("evaluation_live");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"all", ".*"}});
    // Not started yet: the evaluation waits for the run's first step (none named).
    tdbg::rules::any_rule early =
        tdbg::rules::registry::create("LossNotDecreasing", tdbg::create_trial(dir.path().string()), {});
    early->set_logger(tdbg::rules::rule_logger::silent());
    tdbg::rules::rule_evaluation waiting_for_first(early.get(), tdbg::rules::invoke_options{});
    const tdbg::rules::advance_result none = waiting_for_first.advance();
    CHECK(none.state == tdbg::rules::evaluation_state::waiting);
    CHECK_FALSE(none.waiting_for);
    waiting_for_first.skip_waited_step(); // as invoke_rule with skip_late_steps when its timeout passes
    CHECK(waiting_for_first.done());
    CHECK(waiting_for_first.result().end == tdbg::rules::evaluation_end::no_more_data);

    for (std::int64_t s = 0; s < 2; ++s) {
        run.step(s, {{"loss", scalar(static_cast<float>(10 - s)), {}}}, tdbg::mode::train);
    }
    tdbg::rules::any_rule r = tdbg::rules::registry::create("LossNotDecreasing", tdbg::create_trial(dir.path().string()), {});
    r->set_logger(tdbg::rules::rule_logger::silent());
    bool stop = false;
    tdbg::rules::invoke_options options;
    options.stop_requested = [&stop] { return stop; };
    tdbg::rules::rule_evaluation evaluation(r.get(), options);
    CHECK(evaluation.advance().waiting_for == std::optional<std::int64_t>(2));
    evaluation.skip_waited_step(); // step 2 given up: recorded as not yet available
    CHECK(evaluation.result().skipped_steps.at("StepNotYetAvailable").size() == 1);
    CHECK(evaluation.result().next_step == 3);
    run.step(3, {{"loss", scalar(7.0F), {}}}, tdbg::mode::train);
    const tdbg::rules::advance_result later = evaluation.advance();
    CHECK(later.progressed);
    CHECK(later.waiting_for == std::optional<std::int64_t>(4));
    stop = true; // heard at the next advance, never by an exception
    CHECK(evaluation.advance().state == tdbg::rules::evaluation_state::done);
    CHECK(evaluation.result().end == tdbg::rules::evaluation_end::interrupted);
    CHECK(evaluation.result().next_step == 4);
    CHECK(evaluation.result().first_step == 0);
}

TEST_CASE("TreeDepth: trees shallower than depth") {
    tdbg::test::temp_dir dir("tree_depth");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"trees", "^trees/"}});
    auto ids = [](int count) {
        std::vector<float> v;
        for (int i = 0; i < count; ++i) {
            v.push_back(static_cast<float>(i));
        }
        return f32(v);
    };
    run.step(0, {{"trees/Node", ids(7), {}}, {"trees/Tree", ids(7), {}}});  // ids 0..6: depth 2
    run.step(1, {{"trees/Node", ids(31), {}}, {"trees/Tree", ids(7), {}}}); // ids 0..30: depth 4
    run.end();
    auto result = evaluate(dir, "TreeDepth");
    CHECK(result.triggered_steps == steps{0});
    CHECK(result.not_triggered_steps == steps{1});
    CHECK(evaluate(dir, "TreeDepth", {{"depth", "2"}}).triggered_steps.empty());
}

TEST_CASE("FeatureImportanceOverweight: the top nfeatures hold more than threshold of the importance") {
    tdbg::test::temp_dir dir("feature_importance");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"feature_importance", "^feature_importance/"}});
    auto features = [](std::vector<float> w) {
        std::vector<step_tensor> out;
        for (std::size_t i = 0; i < w.size(); ++i) {
            out.push_back({"feature_importance/weight/f" + std::to_string(i), scalar(w[i]), {}});
        }
        return out;
    };
    run.step(0, features({10, 10, 10, 10, 10})); // top 3: 0.6
    run.step(1, features({50, 30, 10, 5, 5}));   // top 3: 0.9
    run.step(2, features({50, 30, 20}));          // only 3 features: nothing to judge
    run.end();
    auto result = evaluate(dir, "FeatureImportanceOverweight");
    CHECK(result.triggered_steps == steps{1});
    CHECK(result.not_triggered_steps == steps{0});
    CHECK(result.skipped_steps.at("TensorUnavailableForStep") == steps{2});
    result = evaluate(dir, "FeatureImportanceOverweight", {{"nfeatures", "1"}, {"threshold", "0.15"}});
    CHECK(result.triggered_steps == steps{0, 1, 2}); // 0.2, 0.5 and 0.5 > 0.15
}

TEST_CASE("Overfit: validation loss above the training loss by more than ratio_threshold, patience times") {
    tdbg::test::temp_dir dir("overfit");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    std::int64_t step = 0;
    auto phase = [&](tdbg::mode m, std::int64_t count, float loss, std::int64_t& mode_step) {
        for (std::int64_t i = 0; i < count; ++i) {
            run.step(step++, {{"loss", scalar(loss), {}}}, m, mode_step++);
        }
    };
    std::int64_t train = 0;
    std::int64_t eval = 0;
    phase(tdbg::mode::train, 5, 1.0F, train); // 0-4
    phase(tdbg::mode::eval, 3, 1.05F, eval);  // 5-7: ratio 0.05
    phase(tdbg::mode::train, 3, 0.5F, train); // 8-10
    phase(tdbg::mode::eval, 3, 0.8F, eval);   // 11-13: ratio 0.6
    run.end();
    auto result = evaluate(dir, "Overfit");
    CHECK(result.triggered_steps == steps{11, 12, 13});
    CHECK(evaluate(dir, "Overfit", {{"patience", "2"}}).triggered_steps == steps{12, 13});
    CHECK(evaluate(dir, "Overfit", {{"ratio_threshold", "0.7"}}).triggered_steps.empty());
    CHECK(evaluate(dir, "Overfit", {{"ratio_threshold", "0.01"}}).triggered_steps == steps{5, 6, 7, 11, 12, 13});
    CHECK(evaluate(dir, "Overfit", {{"ratio_threshold", "0.01"}, {"start_step", "8"}}).triggered_steps == steps{11, 12, 13});
}

TEST_CASE("Overtraining: a loss without a new optimum for patience steps") {
    tdbg::test::temp_dir dir("overtraining");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    for (std::int64_t s = 0; s < 13; ++s) {
        const float loss = s < 5 ? 2.0F - 0.2F * static_cast<float>(s) : 1.2F; // improves by 0.2 up to step 4
        run.step(s, {{"loss", scalar(loss), {}}});
    }
    run.end();
    auto result = evaluate(dir, "Overtraining");
    CHECK(result.triggered_steps == steps{9, 10, 11, 12}); // the 5th step without an optimum is 9
    CHECK(evaluate(dir, "Overtraining", {{"patience_train", "8"}}).triggered_steps == steps{12});
    // With delta 0.5 only step 3 (1.4 < 2.0 - 0.5) is a new optimum after step 0: stalled from step 4 on.
    CHECK(evaluate(dir, "Overtraining", {{"delta", "0.5"}}).triggered_steps == steps{8, 9, 10, 11, 12});
}
