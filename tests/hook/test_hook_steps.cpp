#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/open.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::read_tensor;
using tdbg::test::temp_dir;

namespace {
hook_options every_step(const temp_dir& dir) {
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    return o;
}
} // namespace

TEST_CASE("hook keeps global and mode steps as smdebug does") {
    temp_dir dir("hook_steps");
    hook h(every_step(dir));
    CHECK(h.global_step() == -1);
    // (mode, expected global step, expected mode step), worked out by hand from
    // smdebug's _increment_step: the global step always advances; a mode's own
    // counter starts at -1 and advances only in that mode; GLOBAL's counter
    // follows the global step.
    struct expected_step {
        mode m;
        std::int64_t global;
        std::int64_t mode_step;
    };
    const std::vector<expected_step> schedule{
        {mode::train, 0, 0}, {mode::train, 1, 1}, {mode::train, 2, 2}, {mode::eval, 3, 0},   {mode::eval, 4, 1},
        {mode::train, 5, 3}, {mode::train, 6, 4}, {mode::global, 7, 7}, {mode::global, 8, 8}, {mode::predict, 9, 0},
    };
    for (const auto& s : schedule) {
        if (h.current_mode() != s.m) {
            h.set_mode(s.m);
        }
        h.begin_step();
        CHECK(h.global_step() == s.global);
        CHECK(h.mode_step() == s.mode_step);
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(static_cast<float>(s.global)));
    }
    CHECK(h.mode_step(mode::train) == 4);
    CHECK(h.mode_step(mode::eval) == 1);
    h.close();

    const auto indexes = read_indexes(dir.path() / "run");
    REQUIRE(indexes.size() == schedule.size());
    for (const auto& s : schedule) {
        const auto& index = indexes.at({s.global, "worker_0"});
        CHECK(index.mode == s.m);
        CHECK(index.mode_step == s.mode_step);
        const auto ev = read_tensor(dir.path() / "run", index, "CrossEntropyLoss_output_0");
        CHECK(ev.step == s.global);
        CHECK(ev.mode == s.m);
        CHECK(ev.mode_step == s.mode_step);
        CHECK(ev.value.data_as<float>()[0] == static_cast<float>(s.global));
    }
    CHECK(std::filesystem::exists(dir.path() / "run" / "training_job_end.ts"));
}

TEST_CASE("hook numbers a name's outputs per step for every caller, from 0 at each step") {
    temp_dir dir("hook_output_numbers");
    hook h(every_step(dir));
    h.set_mode(mode::train);
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        // One sequence per prefix, whoever asks (each torch_hook of a GAN asks the same hook).
        CHECK(h.next_index_in_step("BCELoss_output_") == 0);
        CHECK(h.next_index_in_step("BCELoss_output_") == 1);
        CHECK(h.next_index_in_step("BCELoss_input_") == 0);
        CHECK(h.next_index_in_step("BCELoss_output_") == 2);
    }
    // A new mode's first step starts again from 0 too.
    h.set_mode(mode::eval);
    h.begin_step();
    CHECK(h.next_index_in_step("BCELoss_output_") == 0);
    h.close();
}

TEST_CASE("hook applies save configs per mode, gradients are not saved in EVAL or PREDICT") {
    temp_dir dir("hook_save_config");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config.set(mode::train, save_config_mode{2, {}, 0, std::nullopt});
    o.save_config.set(mode::eval, save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"gradients", "sparse"};
    collection sparse("sparse");
    sparse.include("^sparse/");
    save_config own;
    own.set(mode::train, save_config_mode{1000, {1, 3}, 2, 4});
    sparse.set_save_config(own);
    o.collections.push_back(sparse);
    hook h(o);
    const xt::xarray<float> g{1.0F, -2.0F};
    h.set_mode(mode::train);
    for (int i = 0; i < 5; ++i) {
        h.begin_step();
        CHECK(h.should_save_tensor("loss_output_0") == (i % 2 == 0));
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(1.0F));
        h.save_tensor("gradient/fc.weight", g);
        h.save_tensor("sparse/x", g);
    }
    h.set_mode(mode::eval);
    for (int i = 0; i < 3; ++i) {
        h.begin_step();
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(2.0F));
        h.save_tensor("gradient/fc.weight", g);
    }
    h.set_mode(mode::predict);
    h.begin_step();
    CHECK_FALSE(h.should_save_tensor("gradient/fc.weight"));
    h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(3.0F));
    h.save_tensor("gradient/fc.weight", g);
    h.close();

    const auto indexes = read_indexes(dir.path() / "run");
    std::map<std::string, std::vector<std::int64_t>> steps_of;
    for (const auto& [key, index] : indexes) {
        for (const auto& name : tdbg::test::names_of(index)) {
            steps_of[name].push_back(key.first);
        }
    }
    CHECK(steps_of["CrossEntropyLoss_output_0"] == std::vector<std::int64_t>{0, 2, 4, 5, 6, 7, 8});
    CHECK(steps_of["gradient/fc.weight"] == std::vector<std::int64_t>{0, 2, 4});
    // save_steps win whatever the range; the range bounds the interval (2 % 1000 != 0).
    CHECK(steps_of["sparse/x"] == std::vector<std::int64_t>{1, 3});
    CHECK(indexes.count({1, "worker_0"}) == 1);
}

TEST_CASE("save_scalar writes scalar/<name> as float64 (1,) at every step it is called") {
    temp_dir dir("hook_scalar");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1000, {}, 0, std::nullopt});
    hook h(o);
    h.set_mode(mode::train);
    for (int i = 0; i < 4; ++i) {
        h.begin_step();
        CHECK_FALSE(h.is_saving_step() == (i != 0));
        h.save_scalar("lr", 0.1 / (i + 1));
    }
    h.close();
    const auto indexes = read_indexes(dir.path() / "run");
    REQUIRE(indexes.size() == 4);
    for (int i = 0; i < 4; ++i) {
        const auto& index = indexes.at({i, "worker_0"});
        const auto ev = read_tensor(dir.path() / "run", index, "scalar/lr");
        CHECK(ev.value.type() == dtype::float64);
        CHECK(ev.value.shape() == tensor_value::shape_type{1});
        CHECK(ev.value.data_as<double>()[0] == 0.1 / (i + 1));
        CHECK(ev.mode_step == i);
    }
}

TEST_CASE("hook refuses saves outside a step, after close, and a finished run") {
    temp_dir dir("hook_misuse");
    auto o = every_step(dir);
    {
        hook h(o);
        CHECK_THROWS_WITH(h.save_scalar("lr", 1.0), Catch::Contains("begin_step"));
        h.begin_step();
        CHECK_THROWS_AS(h.save_tensor("", tensor_value::scalar(1.0F)), invalid_name);
        CHECK_THROWS_AS(h.save_tensor("bad\xff", tensor_value::scalar(1.0F), {"default"}), invalid_name);
        // More dimensions than numpy (and so smdebug) or tdbg can read back: refused, the rest saved.
        const std::vector<float> one{1.0F};
        CHECK_THROWS_WITH(h.save_tensor("deep.weight", tensor_value::borrow(one.data(), std::vector<std::size_t>(65, 1)),
                                        {"losses"}),
                          "tdbg::hook: cannot save 'deep.weight': it has 65 dimensions, more than the 64 a tensor may "
                          "have");
        h.save_tensor("rank_64.weight", tensor_value::borrow(one.data(), std::vector<std::size_t>(64, 1)), {"losses"});
        h.end_step();
        CHECK_THROWS_WITH(h.save_scalar("lr", 1.0), Catch::Contains("no step is open"));
        h.close();
        CHECK_THROWS_AS(h.begin_step(), error);
        h.close(); // idempotent
    }
    const trial written = create_trial((dir.path() / "run").string());
    CHECK(written.tensor("rank_64.weight").value(0).shape().size() == 64);
    CHECK_FALSE(written.has_tensor("deep.weight"));
    // smdebug refuses to append to a run that has ended.
    CHECK_THROWS_WITH(hook(o), Catch::Contains("training_job_end.ts"));
    hook_options empty;
    CHECK_THROWS_AS(hook(empty), config_error);
}

TEST_CASE("a hook's out_dir and create_trial read a location alike: ~/ is the home directory for both") {
    temp_dir home("hook_location_home");
    // HOME for this test only (each test case runs in its own process), restored after.
    struct scoped_home {
        std::optional<std::string> saved;
        explicit scoped_home(const std::string& to) {
            if (const char* old = std::getenv("HOME")) {
                saved = old;
            }
            ::setenv("HOME", to.c_str(), 1);
        }
        ~scoped_home() { saved ? (void)::setenv("HOME", saved->c_str(), 1) : (void)::unsetenv("HOME"); }
        scoped_home(const scoped_home&) = delete;
        scoped_home& operator=(const scoped_home&) = delete;
    } scope(home.path().string());

    CHECK(resolve_location("~/runs/a").text == (home.path() / "runs/a").string());
    CHECK_FALSE(resolve_location("~/runs/a").url);
    CHECK(resolve_location("s3://bucket/~/a").text == "s3://bucket/~/a");
    CHECK(resolve_location("s3://bucket/~/a").url);
    CHECK(resolve_location("runs/~/a").text == "runs/~/a");

    hook_options o;
    o.out_dir = "~/runs/a";
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    {
        hook h(o);
        h.begin_step();
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(2.5F));
        h.close();
    }
    CHECK(std::filesystem::is_directory(home.path() / "runs" / "a" / "index"));
    const trial t = create_trial("~/runs/a");
    CHECK(t.name() == "a");
    CHECK(t.steps() == std::vector<std::int64_t>{0});
    CHECK(*t.tensor("CrossEntropyLoss_output_0").value(0).data_as<float>() == 2.5F);

    // What is not a run's directory is named as the user gave it, resolved, and said why.
    trial_options quick;
    quick.collection_wait = std::chrono::milliseconds(0);
    const std::string absent = tdbg::test::error_of([&] { (void)create_trial("~/runs/b", std::nullopt, {}, quick); });
    CHECK(absent.find((home.path() / "runs/b").string() + ": no such directory") != std::string::npos);
    std::ofstream(home.path() / "file") << "x";
    const std::string file = tdbg::test::error_of([&] { (void)create_trial("~/file", std::nullopt, {}, quick); });
    CHECK(file.find((home.path() / "file").string() + ": not a directory") != std::string::npos);
}
