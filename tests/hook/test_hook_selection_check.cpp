// A selection that can never save is reported once (hook_options::selection_check), and
// hook::create_from_environment()'s "no configuration" cannot be dereferenced by accident.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "support.hpp"
#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/xtensor.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/json_config.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::count_of;
using tdbg::test::temp_dir;

namespace {

// Options writing to `dir` at every step, the hook's log kept in `log`.
hook_options checked_options(const std::filesystem::path& dir, std::vector<std::string>& log) {
    hook_options o;
    o.out_dir = (dir / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.log = [&log](std::string_view line) { log.emplace_back(line); };
    return o;
}

// How many lines of `log` hold every one of `parts`.
std::size_t lines_with(const std::vector<std::string>& log, const std::vector<std::string>& parts) {
    std::size_t n = 0;
    for (const std::string& line : log) {
        bool all = true;
        for (const std::string& p : parts) {
            all = all && count_of(line, p) > 0;
        }
        n += all ? 1 : 0;
    }
    return n;
}

// One step of a small trainer: a weight, a gradient and a loss, each selected by its builtin collection.
void trainer_step(hook& h, float value) {
    h.begin_step();
    h.save_tensor("MLP_fc1.weight", xt::xarray<float>{value, value + 1});
    h.save_tensor("gradient/MLP_fc1.weight", xt::xarray<float>{value / 2, value / 4});
    h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(value));
}

} // namespace

TEST_CASE("nearest_name: edit distance with adjacent swaps, and the nearest name within a third of the length rounded up") {
    using detail::edit_distance;
    using detail::nearest_name;
    CHECK(edit_distance("gradient", "gradients") == 1);
    CHECK(edit_distance("wieghts", "weights") == 1); // a swap is one edit
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("kitten", "sitting") == 3);
    const std::vector<std::string> names{"all", "default", "weights", "biases", "gradients", "losses"};
    CHECK(nearest_name("gradient", names) == std::optional<std::string>("gradients"));
    CHECK(nearest_name("loss", names) == std::optional<std::string>("losses"));
    CHECK(nearest_name("relu_activations", names) == std::nullopt); // nothing near
    CHECK(nearest_name("weights", names) == std::nullopt);          // known: no suggestion
    CHECK(nearest_name("bias", names, 1) == std::nullopt);          // 2 edits, 1 allowed
    CHECK(detail::misspelling_distance("lr") == 1);
    CHECK(detail::misspelling_distance("gradient") == 3);
}

TEST_CASE("selection check: a misspelt include_collections name warns once, saying the nearest name") {
    const temp_dir dir("selcheck_typo");
    std::vector<std::string> log;
    hook_options o = checked_options(dir.path(), log);
    o.include_collections = {"weights", "gradient", "losses"};
    hook h(o);
    trainer_step(h, 1.0F);
    CHECK(log.empty()); // the first step is not over yet
    trainer_step(h, 2.0F); // ends step 0
    REQUIRE(log.size() == 1);
    CHECK(lines_with(log, {"'gradient'", "did you mean 'gradients'?"}) == 1);
    for (int step = 2; step < 6; ++step) {
        trainer_step(h, static_cast<float>(step));
    }
    h.close();
    CHECK(log.size() == 1); // once, not at every step; the regexes of weights and losses selected tensors
    CHECK_FALSE(h.is_collection_included("gradients"));
}

TEST_CASE("selection check, error policy: a config_error names the collection at the step end, and the run written stays readable") {
    const temp_dir dir("selcheck_error");
    std::vector<std::string> log;
    hook_options o = checked_options(dir.path(), log);
    o.include_collections = {"weights", "gradient"};
    o.selection_check = selection_check_policy::error;
    std::vector<std::int64_t> expected_steps;
    {
        hook h(o);
        trainer_step(h, 1.0F);
        SECTION("found when the next step begins") {
            const std::string what = tdbg::test::error_of([&] { h.begin_step(); });
            CHECK(count_of(what, "'gradient'") == 1);
            CHECK(count_of(what, "did you mean 'gradients'?") == 1);
            CHECK(h.global_step() == 0); // the call that threw began no step
            trainer_step(h, 2.0F);       // thrown once: training may go on
            h.close();
            expected_steps = {0, 1};
        }
        SECTION("found at close") {
            CHECK_THROWS_WITH(h.close(), Catch::Contains("did you mean 'gradients'?"));
            expected_steps = {0};
        }
    }
    CHECK(log.empty()); // thrown, not logged
    const trial t = create_trial((dir.path() / "run").string());
    CHECK(t.steps() == expected_steps);
    CHECK(t.loaded_all_steps()); // the end marker was written
    for (const std::int64_t step : expected_steps) {
        const float v = static_cast<float>(step + 1);
        const xt::xarray<float> w = t.tensor("MLP_fc1.weight").value(step).to_xarray<float>();
        CHECK((w == xt::xarray<float>{v, v + 1}));
    }
}

TEST_CASE("selection check: a collection save_tensor creates in the first step is no misspelling, one created later is") {
    const temp_dir dir("selcheck_created");
    std::vector<std::string> log;
    hook_options o = checked_options(dir.path(), log);
    o.include_collections = {"weights", "activations"};
    SECTION("created in the first step") {
        {
            hook h(o);
            for (int step = 0; step < 5; ++step) {
                h.begin_step();
                h.save_tensor("MLP_fc1.weight", xt::xarray<float>{1, 2});
                h.save_tensor("act_0", xt::xarray<float>{3, 4}, {"activations"});
            }
        }
        CHECK(log.empty());
        const trial t = create_trial((dir.path() / "run").string());
        CHECK((t.tensor("act_0").value(4).to_xarray<float>() == xt::xarray<float>{3, 4}));
    }
    SECTION("created in the second step") {
        hook h(o);
        h.begin_step();
        h.save_tensor("MLP_fc1.weight", xt::xarray<float>{1, 2});
        h.begin_step();
        REQUIRE(log.size() == 1);
        CHECK(lines_with(log, {"'activations'", "no collection has"}) == 1);
        CHECK(count_of(log[0], "did you mean") == 0); // nothing near "activations"
        CHECK(count_of(log[0], "'weights'") == 1);     // the collections are listed instead
        h.save_tensor("act_0", xt::xarray<float>{3, 4}, {"activations"});
        h.close();
        CHECK(log.size() == 1);
    }
}

TEST_CASE("selection check: an include regex that selects nothing warns once, after selection_check_steps steps that saved") {
    const temp_dir dir("selcheck_regex");
    std::vector<std::string> log;
    hook_options o = checked_options(dir.path(), log);
    collection relu("relu");
    relu.include("^rleu_"); // a typo: the tensors are relu_*
    collection late("late");
    late.include("^late_"); // selects a tensor in the third saving step only: in time
    collection empty("empty");
    o.collections = {relu, late, empty};
    o.include_collections = {"weights"};
    SECTION("warn") {
        hook h(o);
        auto step = [&](bool save, bool late_too) {
            h.begin_step();
            if (save) {
                h.save_tensor("MLP_fc1.weight", xt::xarray<float>{1, 2});
                h.save_tensor("relu_0", xt::xarray<float>{1, 2});
            }
            if (late_too) {
                CHECK(h.should_save_tensor("late_0")); // offered, not saved, counts as selected
            }
        };
        step(true, false);  // step 0: the first saving step
        step(false, false); // step 1 saves nothing: it does not count
        step(true, true);   // step 2: the second
        step(true, false);  // step 3: the third
        CHECK(log.empty());
        step(true, false); // ends step 3
        REQUIRE(log.size() == 2);
        CHECK(lines_with(log, {"include regex '^rleu_'", "collection 'relu'", "first 3 steps"}) == 1);
        CHECK(lines_with(log, {"collection 'empty'", "no include regex and no tensor name"}) == 1);
        CHECK(lines_with(log, {"late"}) == 0);
        CHECK(lines_with(log, {"weights"}) == 0);
        for (int more = 0; more < 4; ++more) {
            step(true, false);
        }
        h.close();
        CHECK(log.size() == 2);
    }
    SECTION("off") {
        o.selection_check = selection_check_policy::off;
        o.include_collections.emplace_back("gradient");
        hook h(o);
        for (int step = 0; step < 6; ++step) {
            h.begin_step();
            h.save_tensor("MLP_fc1.weight", xt::xarray<float>{1, 2});
        }
        h.close();
        CHECK(log.empty());
    }
}

TEST_CASE("selection check: weights or gradients that select nothing name the torch_hook call that offers them") {
    const temp_dir dir("selcheck_torch");
    std::vector<std::string> log;
    hook_options o = checked_options(dir.path(), log);
    o.include_collections = {"weights", "gradients", "losses"};
    hook h(o);
    // A libtorch trainer that starts its steps with hook.begin_step(): only its loss is offered.
    for (int step = 0; step < 4; ++step) {
        h.begin_step();
        h.save_tensor("CrossEntropyLoss_output_0", xt::xarray<float>{1});
    }
    h.close();
    CHECK(lines_with(log, {"collection 'weights'", "saves nothing (with tdbg::torch_hook, start each step with "
                                                   "torch_hook.begin_step()"}) == 1);
    CHECK(lines_with(log, {"collection 'gradients'", "call torch_hook.after_backward() after each backward pass"}) == 1);
    CHECK(lines_with(log, {"collection 'losses'"}) == 0);
}

TEST_CASE("create_from_environment: no configuration is a hook that throws when used, never a null dereference") {
    if (std::filesystem::exists(default_hook_config_path)) {
        TDBG_SKIP("this machine has a SageMaker hook configuration at " << default_hook_config_path);
    }
    const char* saved = std::getenv(hook_config_env);
    const std::optional<std::string> previous = saved != nullptr ? std::optional<std::string>(saved) : std::nullopt;
    ::unsetenv(hook_config_env);

    auto none = hook::create_from_environment();
    CHECK_FALSE(none);
    CHECK_FALSE(none.has_value());
    CHECK(none == nullptr);
    CHECK(none.get() == nullptr);
    const std::string what = tdbg::test::error_of([&] { none->begin_step(); });
    CHECK(count_of(what, "no hook configuration") == 1);
    CHECK(count_of(what, hook_config_env) == 1);
    CHECK(what == none.why_none());
    CHECK_THROWS_AS(*none, config_error);
    CHECK_THROWS_AS(none.value(), config_error);
    const std::unique_ptr<hook> as_pointer = hook::create_from_environment();
    CHECK(as_pointer == nullptr);

    const temp_dir dir("selcheck_env");
    const auto file = dir.path() / "hook.json";
    std::ofstream(file) << R"({"LocalPath": ")" << (dir.path() / "run").string()
                        << R"(", "HookParameters": {"save_interval": "1", "include_regex": "^MLP_"}})";
    ::setenv(hook_config_env, file.c_str(), 1);
    {
        auto configured = hook::create_from_environment();
        REQUIRE(configured);
        CHECK(configured != nullptr);
        CHECK(configured.why_none().empty());
        configured->begin_step();
        configured->save_tensor("MLP_fc1.weight", xt::xarray<float>{5, 6});
        std::unique_ptr<hook> owned = std::move(configured); // the unique_ptr it replaces
        REQUIRE(owned != nullptr);
        owned->close();
    }
    if (previous) {
        ::setenv(hook_config_env, previous->c_str(), 1);
    } else {
        ::unsetenv(hook_config_env);
    }
    const trial t = create_trial((dir.path() / "run").string());
    CHECK((t.tensor("MLP_fc1.weight").value(0).to_xarray<float>() == xt::xarray<float>{5, 6}));
}
