// tdbg::diff_runs (tdbg/diff/diff.hpp): where two runs part, over small runs
// written with the format layer.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diff_runs.hpp"
#include "support.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::diff_run_spec;
using tdbg::test::temp_dir;
using tdbg::test::write_diff_run;

namespace {

tdbg::trial written(const temp_dir& dir, const std::string& name, const diff_run_spec& spec) {
    const auto path = dir.path() / name;
    write_diff_run(path, spec);
    return tdbg::create_trial(path.string());
}

} // namespace

TEST_CASE("diff: identical runs agree and say what was compared") {
    temp_dir dir("diff_same");
    const auto a = written(dir, "a", {});
    const auto b = written(dir, "b", {});
    const auto r = tdbg::diff_runs(a, b);
    CHECK(r.agree());
    CHECK(r.first_divergence() == nullptr);
    CHECK(r.divergences.empty());
    CHECK(r.only_in_a.empty());
    CHECK(r.only_in_b.empty());
    CHECK(r.tensors_compared == 4);
    CHECK(r.steps_compared == 10);
    // Weight, bias, loss; the gradient has reductions only (mean and max), compared as they are.
    CHECK(r.values_compared == 10 * (6 + 3 + 1) + 10 * 2);
    CHECK(r.reductions_compared == 10 * 2);
    CHECK(r.reduction_only_steps == 10);
    CHECK_FALSE(r.reductions_only());
    CHECK(r.skipped == 0);
    CHECK(r.nothing_compared.empty());
}

TEST_CASE("diff: a perturbation from step 7 on is found with its step, tensor, index and differences") {
    temp_dir dir("diff_perturbed");
    const auto a = written(dir, "a", {});
    diff_run_spec perturbed;
    perturbed.perturb_from = 7;
    const auto b = written(dir, "b", perturbed);
    const auto r = tdbg::diff_runs(a, b);
    REQUIRE_FALSE(r.agree());
    REQUIRE(r.divergences.size() == 1);
    const tdbg::diff_divergence& d = *r.first_divergence();
    CHECK(d.tensor == "MLP_fc1.weight");
    CHECK(d.tensor_b == "MLP_fc1.weight");
    CHECK(d.step == 7);
    CHECK(d.step_mode == tdbg::mode::train);
    CHECK(d.mode_step == 7);
    CHECK(d.worker == "worker_0");
    REQUIRE(d.flat_index.has_value());
    CHECK(*d.flat_index == 5);
    CHECK(d.index == std::vector<std::size_t>{1, 2});
    const double a_value = tdbg::test::weight_at(7, 5);
    const double b_value = static_cast<double>(tdbg::test::weight_at(7, 5) + 0.5F);
    CHECK(d.max_abs_diff == Approx(b_value - a_value).epsilon(1e-12));
    CHECK(d.max_rel_diff == Approx((b_value - a_value) / a_value).epsilon(1e-12));
    CHECK(d.mismatched == 1);
    CHECK(d.diverging_steps == 3); // steps 7, 8 and 9
    CHECK(d.reason == "1 of 6 values differ");
}

TEST_CASE("diff: divergences are ordered by the step where each tensor first parts") {
    temp_dir dir("diff_order");
    diff_run_spec late;
    late.perturb_from = 7;
    late.nan_at = 3;
    const auto a = written(dir, "a", {});
    const auto b = written(dir, "b", late);
    const auto r = tdbg::diff_runs(a, b);
    REQUIRE(r.divergences.size() == 2);
    CHECK(r.divergences[0].tensor == "MLP_fc2.bias");
    CHECK(r.divergences[0].step == 3);
    CHECK(r.divergences[0].index == std::vector<std::size_t>{1});
    CHECK(std::isinf(r.divergences[0].max_abs_diff)); // a NaN against a number
    CHECK(r.divergences[0].diverging_steps == 1);
    CHECK(r.divergences[1].tensor == "MLP_fc1.weight");
    CHECK(r.divergences[1].step == 7);
}

TEST_CASE("diff: NaN equals NaN where both runs hold it") {
    temp_dir dir("diff_nan");
    diff_run_spec nan;
    nan.nan_at = 4;
    const auto a = written(dir, "a", nan);
    const auto b = written(dir, "b", nan);
    CHECK(tdbg::diff_runs(a, b).agree());
}

TEST_CASE("diff: tolerances decide what differs") {
    temp_dir dir("diff_tolerances");
    const auto a = written(dir, "a", {});
    diff_run_spec small;
    small.perturb_from = 0;
    small.delta = 1e-3F; // element 5 is 0.3 + 0.1 s: relative change at most 1e-3 / 0.3
    const auto b = written(dir, "b", small);
    CHECK_FALSE(tdbg::diff_runs(a, b).agree());

    tdbg::diff_options relative;
    relative.rtol = 4e-3;
    CHECK(tdbg::diff_runs(a, b, relative).agree());
    relative.rtol = 1.6e-3; // within tolerance once 1.6e-3 * (0.3 + 0.1 s) > 1e-3: from step 4 on
    const auto r = tdbg::diff_runs(a, b, relative);
    REQUIRE_FALSE(r.agree());
    CHECK(r.first_divergence()->step == 0);
    CHECK(r.first_divergence()->diverging_steps == 4);

    tdbg::diff_options absolute;
    absolute.atol = 2e-3;
    CHECK(tdbg::diff_runs(a, b, absolute).agree());
    absolute.atol = 5e-4;
    CHECK_FALSE(tdbg::diff_runs(a, b, absolute).agree());

    tdbg::diff_options negative;
    negative.rtol = -1;
    CHECK_THROWS_AS(tdbg::diff_runs(a, b, negative), tdbg::config_error);
}

TEST_CASE("diff: a tensor regex picks the tensors compared") {
    temp_dir dir("diff_regex");
    const auto a = written(dir, "a", {});
    diff_run_spec perturbed;
    perturbed.perturb_from = 7;
    const auto b = written(dir, "b", perturbed);
    tdbg::diff_options options;
    options.tensor_regex = "fc2|Loss";
    const auto r = tdbg::diff_runs(a, b, options);
    CHECK(r.agree());
    CHECK(r.tensors_compared == 2);
    options.tensor_regex = "^MLP_fc1";
    CHECK(tdbg::diff_runs(a, b, options).divergences.size() == 1);
    options.tensor_regex = "(";
    CHECK_THROWS_AS(tdbg::diff_runs(a, b, options), tdbg::config_error);
}

TEST_CASE("diff: names map by name and by prefix") {
    temp_dir dir("diff_map");
    const auto a = written(dir, "a", {});
    diff_run_spec renamed;
    renamed.prefix = "Net_";
    renamed.loss_name = "loss";
    const auto b = written(dir, "b", renamed);

    const auto unmapped = tdbg::diff_runs(a, b);
    CHECK_FALSE(unmapped.agree());
    CHECK(unmapped.divergences.empty());
    CHECK(unmapped.only_in_a == std::vector<std::string>{"CrossEntropyLoss_output_0", "MLP_fc1.weight", "MLP_fc2.bias",
                                                         "gradient/MLP_fc1.weight"});
    CHECK(unmapped.only_in_b ==
          std::vector<std::string>{"Net_fc1.weight", "Net_fc2.bias", "gradient/Net_fc1.weight", "loss"});

    tdbg::diff_options options;
    options.prefix_map = {{"MLP_", "Net_"}, {"gradient/MLP_", "gradient/Net_"}};
    options.name_map = {{"CrossEntropyLoss_output_0", "loss"}};
    CHECK(tdbg::diff_counterpart("MLP_fc2.bias", options) == "Net_fc2.bias");
    CHECK(tdbg::diff_counterpart("gradient/MLP_fc1.weight", options) == "gradient/Net_fc1.weight");
    CHECK(tdbg::diff_counterpart("CrossEntropyLoss_output_0", options) == "loss");
    CHECK(tdbg::diff_counterpart("other", options) == "other");
    const auto mapped = tdbg::diff_runs(a, b, options);
    CHECK(mapped.agree());
    CHECK(mapped.tensors_compared == 4);

    diff_run_spec renamed_perturbed = renamed;
    renamed_perturbed.perturb_from = 2;
    const auto c = written(dir, "c", renamed_perturbed);
    const auto r = tdbg::diff_runs(a, c, options);
    REQUIRE(r.divergences.size() == 1);
    CHECK(r.divergences[0].tensor == "MLP_fc1.weight");
    CHECK(r.divergences[0].tensor_b == "Net_fc1.weight");
    CHECK(r.divergences[0].step == 2);
}

TEST_CASE("diff: stored reductions are compared where neither run holds a raw value, asked or not") {
    temp_dir dir("diff_reductions");
    const auto a = written(dir, "a", {});
    diff_run_spec mean_moved;
    mean_moved.perturb_mean_from = 4;
    const auto b = written(dir, "b", mean_moved);

    tdbg::diff_options options;
    options.compare_reductions = true;
    const auto r = GENERATE(false, true) ? tdbg::diff_runs(a, b, options) : tdbg::diff_runs(a, b);
    REQUIRE(r.divergences.size() == 1);
    const auto& d = r.divergences[0];
    CHECK(d.tensor == "gradient/MLP_fc1.weight");
    CHECK(d.step == 4);
    REQUIRE(d.compared_reduction.has_value());
    CHECK(tdbg::reduction_name(*d.compared_reduction) == "mean");
    CHECK(d.max_abs_diff == Approx(1.0).epsilon(1e-6));
    CHECK(d.reason == "reduction mean differs");
    CHECK(d.diverging_steps == 6);
    CHECK(r.skipped == 0);
    CHECK(r.values_compared == 10 * (6 + 3 + 1) + 10 * 2);
    CHECK(r.reductions_compared == 10 * 2);
    CHECK(r.reduction_only_steps == 10);

    SECTION("a raw value against stored reductions: the reductions computed from it") {
        diff_run_spec raw;
        raw.gradient_raw = true; // values mean, mean, mean: the mean is the same, the max is 1 smaller
        const auto c = written(dir, "c", raw);
        const auto without = tdbg::diff_runs(c, a);
        REQUIRE(without.divergences.size() == 1);
        CHECK(without.divergences[0].reason.find("a value in run A only") == 0);
        const auto with = tdbg::diff_runs(c, a, options);
        REQUIRE(with.divergences.size() == 1);
        CHECK(with.divergences[0].step == 0);
        CHECK(tdbg::reduction_name(*with.divergences[0].compared_reduction) == "max");
    }
}

TEST_CASE("diff: tensors, steps and workers of one run only differ unless ignored") {
    temp_dir dir("diff_missing");
    const auto a = written(dir, "a", {});
    diff_run_spec extra;
    extra.extra_tensor = true;
    const auto b = written(dir, "b", extra);
    const auto r = tdbg::diff_runs(a, b);
    CHECK_FALSE(r.agree());
    CHECK(r.divergences.empty());
    CHECK(r.only_in_b == std::vector<std::string>{"extra"});
    tdbg::diff_options lenient;
    lenient.ignore_missing = true;
    const auto ignored = tdbg::diff_runs(a, b, lenient);
    CHECK(ignored.agree());
    CHECK(ignored.only_in_b == std::vector<std::string>{"extra"});

    diff_run_spec shorter;
    shorter.steps = 8;
    const auto c = written(dir, "c", shorter);
    const auto cut = tdbg::diff_runs(a, c);
    REQUIRE(cut.divergences.size() == 4);
    CHECK(cut.first_divergence()->step == 8);
    CHECK(cut.first_divergence()->reason == "only in run A at this step and worker");
    CHECK(cut.first_divergence()->diverging_steps == 2);
    CHECK(tdbg::diff_runs(a, c, lenient).agree());

    diff_run_spec two;
    two.two_workers = true;
    diff_run_spec dropped = two;
    dropped.drop_worker_at = 5;
    const auto w2 = written(dir, "w2", two);
    const auto w2_dropped = written(dir, "w2_dropped", dropped);
    const auto workers = tdbg::diff_runs(w2, w2_dropped);
    REQUIRE_FALSE(workers.agree());
    CHECK(workers.first_divergence()->step == 5);
    CHECK(workers.first_divergence()->worker == "worker_1");
}

TEST_CASE("diff: a dtype or shape mismatch is a divergence with its reason") {
    temp_dir dir("diff_dtype");
    const auto a = written(dir, "a", {});
    diff_run_spec doubles;
    doubles.loss_as_double = true;
    const auto b = written(dir, "b", doubles);
    const auto r = tdbg::diff_runs(a, b);
    REQUIRE(r.divergences.size() == 1);
    CHECK(r.divergences[0].tensor == "CrossEntropyLoss_output_0");
    CHECK(r.divergences[0].step == 0);
    CHECK(r.divergences[0].reason == "dtype float32 in run A, float64 in run B");
    CHECK_FALSE(r.divergences[0].flat_index.has_value());
    CHECK(r.divergences[0].diverging_steps == 10);
}

TEST_CASE("diff: a mode filter compares only that mode's steps") {
    temp_dir dir("diff_mode");
    const auto a = written(dir, "a", {});
    diff_run_spec perturbed;
    perturbed.perturb_from = 7;
    const auto b = written(dir, "b", perturbed);
    tdbg::diff_options eval_only;
    eval_only.only_mode = tdbg::mode::eval;
    const auto r = tdbg::diff_runs(a, b, eval_only);
    CHECK_FALSE(r.agree()); // nothing compared is no agreement
    CHECK(r.divergences.empty());
    CHECK(r.steps_compared == 0);
    CHECK(r.nothing_compared ==
          "the 4 tensors in both runs ('CrossEntropyLoss_output_0', 'MLP_fc1.weight', 'MLP_fc2.bias', "
          "'gradient/MLP_fc1.weight') have no step in common in mode EVAL");
    eval_only.only_mode = tdbg::mode::train;
    CHECK_FALSE(tdbg::diff_runs(a, b, eval_only).agree());
}

TEST_CASE("diff: runs that hold gradients as reductions only are compared by those reductions") {
    temp_dir dir("diff_reductions_only");
    const auto a = written(dir, "a", {});
    const auto b = written(dir, "b", {});
    tdbg::diff_options gradients;
    gradients.tensor_regex = "gradient";
    const auto r = tdbg::diff_runs(a, b, gradients);
    CHECK(r.agree());
    CHECK(r.tensors_compared == 1);
    CHECK(r.steps_compared == 10);
    CHECK(r.values_compared == 10 * 2); // mean and max at each step
    CHECK(r.reductions_compared == 10 * 2);
    CHECK(r.reduction_only_steps == 10);
    CHECK(r.reductions_only());
    CHECK(r.nothing_compared.empty());

    diff_run_spec mean_moved;
    mean_moved.perturb_mean_from = 6;
    const auto c = written(dir, "c", mean_moved);
    const auto parted = tdbg::diff_runs(a, c, gradients);
    REQUIRE_FALSE(parted.agree());
    REQUIRE(parted.first_divergence() != nullptr);
    CHECK(parted.first_divergence()->step == 6);
    CHECK(parted.first_divergence()->reason == "reduction mean differs");
}

TEST_CASE("diff: a diff that compares nothing does not agree, and says why") {
    temp_dir dir("diff_nothing");
    const auto a = written(dir, "a", {});
    const auto b = written(dir, "b", {});
    tdbg::diff_options options;

    SECTION("a tensor regex that matches nothing names the nearest tensors") {
        options.tensor_regex = "gradinet/MLP_fc1.weight";
        const auto r = tdbg::diff_runs(a, b, options);
        CHECK_FALSE(r.agree());
        CHECK(r.tensors_compared == 0);
        CHECK(r.values_compared == 0);
        CHECK(r.nothing_compared == "the tensor regex 'gradinet/MLP_fc1.weight' matches none of the 4 tensors of "
                                    "run A; the nearest names: 'gradient/MLP_fc1.weight', 'MLP_fc1.weight', "
                                    "'MLP_fc2.bias'");
    }
    SECTION("no tensor of A is in B, missing tensors ignored") {
        diff_run_spec renamed;
        renamed.prefix = "Net_";
        renamed.loss_name = "loss";
        const auto c = written(dir, "c", renamed);
        options.ignore_missing = true;
        const auto r = tdbg::diff_runs(a, c, options);
        CHECK_FALSE(r.agree());
        CHECK(r.only_in_a.size() == 4);
        CHECK(r.nothing_compared.find("no tensor of run A is in run B (" + c.path() + " holds 4 tensors); in run A "
                                      "only: 'CrossEntropyLoss_output_0', ") == 0);
        // Not ignored, tensors of one run only are a difference found: no agreement, and no error.
        options.ignore_missing = false;
        const auto counted = tdbg::diff_runs(a, c, options);
        CHECK_FALSE(counted.agree());
        CHECK(counted.nothing_compared.empty());
    }
    SECTION("tensors in both runs whose steps hold no value and no stored reduction in both") {
        // A saves the gradient's mean, B its max: no raw value, and no reduction in common.
        for (const auto& [name, kind] : {std::pair{"mean_only", tdbg::reduction_kind::mean},
                                         std::pair{"max_only", tdbg::reduction_kind::max}}) {
            tdbg::test::run_writer w(dir.path() / name);
            w.collections("worker_0", 1);
            for (std::int64_t step = 0; step < 3; ++step) {
                w.step(step, "worker_0", tdbg::mode::train, step,
                       {{"gradient/w", std::nullopt, {{tdbg::reduction{kind, false}, tdbg::tensor_value::scalar(1.0F)}},
                         std::nullopt}});
            }
            w.end();
        }
        const auto mean_only = tdbg::create_trial((dir.path() / "mean_only").string());
        const auto max_only = tdbg::create_trial((dir.path() / "max_only").string());
        const auto r = tdbg::diff_runs(mean_only, max_only);
        CHECK_FALSE(r.agree());
        CHECK(r.tensors_compared == 1);
        CHECK(r.skipped == 3);
        CHECK(r.nothing_compared == "none of the 1 tensors in both runs ('gradient/w') holds a value in both runs at "
                                    "any step: no raw value saved in both, and no stored reduction saved in both");
        // The same reduction in both: compared.
        CHECK(tdbg::diff_runs(mean_only, mean_only).reductions_only());
    }
}
