#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "support.hpp"
#include "tdbg/hook/json_config.hpp"

using namespace tdbg;

namespace {
const tdbg::collection* find(const hook_options& o, const std::string& name) {
    for (const auto& c : o.collections) {
        if (c.name() == name) {
            return &c;
        }
    }
    return nullptr;
}
} // namespace

TEST_CASE("json config: SageMaker's keys with smdebug's meaning") {
    const auto o = parse_hook_config(R"({
      "S3OutputPath": "s3://bucket/prefix",
      "LocalPath": "/tmp/run",
      "HookParameters": {
        "save_interval": "100", "train.save_interval": 10, "save_steps": "1, 2,3", "start_step": "1",
        "eval.end_step": "50", "include_regex": "regexe1,regex2", "reductions": "min,abs_l2_norm",
        "save_all": "false", "include_workers": "all", "export_tensorboard": true, "tensorboard_dir": "tb"
      },
      "CollectionConfigurations": [
        {"CollectionName": "weights"},
        {"CollectionName": "relu", "CollectionParameters": {
            "include_regex": "relu*", "exclude_regex": "grad", "reductions": "max", "save_raw_tensor": "True",
            "eval.save_interval": "1", "start_step": "4", "save_histogram": "false"}}
      ]})",
                                   "test.json");
    CHECK(o.out_dir == "/tmp/run");
    CHECK(o.s3_output_path == "s3://bucket/prefix");
    const auto train = *o.save_config.get(mode::train);
    CHECK(train.save_interval == 10); // the mode key wins over the plain one
    CHECK(train.save_steps == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(train.start_step == 1);
    CHECK_FALSE(train.end_step);
    const auto eval = *o.save_config.get(mode::eval);
    CHECK(eval.save_interval == 100);
    REQUIRE(eval.end_step);
    CHECK(*eval.end_step == 50);
    REQUIRE(o.reduction_config);
    CHECK(o.reduction_config->to_string() == "min,abs_l2_norm");
    CHECK_FALSE(o.reduction_config->save_raw_tensor); // smdebug: reductions without save_raw_tensor drop raw
    CHECK(o.include_regex == std::vector<std::string>{"regexe1", "regex2"});
    CHECK(o.include_workers == workers_to_save::all);
    CHECK(o.export_tensorboard);
    CHECK(o.tensorboard_dir == "tb");

    const auto* relu = find(o, "relu");
    REQUIRE(relu != nullptr);
    CHECK(relu->include_regex() == std::vector<std::string>{"relu*"});
    CHECK(relu->exclude_regex() == std::vector<std::string>{"grad"});
    CHECK_FALSE(relu->save_histogram());
    REQUIRE(relu->reduction_config());
    CHECK(relu->reduction_config()->save_raw_tensor);
    REQUIRE(relu->save_config());
    // Key by key over the hook's keys: the collection's start_step, the hook's intervals.
    const auto relu_train = *relu->save_config()->get(mode::train);
    CHECK(relu_train.save_interval == 10);
    CHECK(relu_train.start_step == 4);
    CHECK(relu_train.save_steps == std::vector<std::uint64_t>{1, 2, 3});
    const auto relu_eval = *relu->save_config()->get(mode::eval);
    CHECK(relu_eval.save_interval == 1);
    CHECK(*relu_eval.end_step == 50);
    const auto* weights = find(o, "weights");
    REQUIRE(weights != nullptr);
    CHECK(weights->include_regex().empty());
    CHECK_FALSE(weights->reduction_config());
}

TEST_CASE("json config: defaults when keys are absent") {
    const auto o = parse_hook_config(R"({"HookParameters": null})");
    CHECK(o.out_dir == "/opt/ml/output/tensors");
    for (mode m : all_modes) {
        REQUIRE(o.save_config.get(m));
        CHECK(o.save_config.get(m)->save_interval == 500);
    }
    CHECK_FALSE(o.reduction_config);
    CHECK(o.collections.empty());
    CHECK(o.include_workers == workers_to_save::one);
    // save_shape without reductions is honoured and keeps raw tensors.
    const auto shape = parse_hook_config(R"({"HookParameters": {"save_shape": true}})");
    REQUIRE(shape.reduction_config);
    CHECK(shape.reduction_config->save_shape);
    CHECK(shape.reduction_config->save_raw_tensor);
}

TEST_CASE("json config: unknown keys are listed, not ignored") {
    CHECK_THROWS_WITH(parse_hook_config(R"({"LocalPath": "/x", "Hookparameters": {}})", "c.json"),
                      Catch::Contains("c.json") && Catch::Contains("'Hookparameters'"));
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"save_intervall": "2", "reduction": "max"}})"),
                      Catch::Contains("'HookParameters.save_intervall'") &&
                          Catch::Contains("'HookParameters.reduction'"));
    // A bad mode prefix is an unknown key.
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"training.save_interval": "2"}})"),
                      Catch::Contains("training.save_interval"));
    CHECK_THROWS_WITH(parse_hook_config(
                          R"({"CollectionConfigurations": [{"CollectionName": "weights", "CollectionParameters": {"include": "x"}}]})"),
                      Catch::Contains("CollectionConfigurations[0].CollectionParameters.include"));
}

TEST_CASE("json config: bad values name the key and the expected form") {
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"save_interval": "ten"}})"),
                      Catch::Contains("HookParameters.save_interval") && Catch::Contains("positive integer") &&
                          Catch::Contains("\"ten\""));
    CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"save_interval": 0}})"), config_error);
    CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"start_step": -1}})"), config_error);
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"train.save_steps": "1,x"}})"),
                      Catch::Contains("HookParameters.train.save_steps"));
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"save_all": "yes"}})"),
                      Catch::Contains("HookParameters.save_all") && Catch::Contains("true or false"));
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"include_workers": "some"}})"),
                      Catch::Contains("\"one\" or \"all\""));
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"reductions": "min,median"}})"),
                      Catch::Contains("HookParameters.reductions") && Catch::Contains("median"));
    CHECK_THROWS_WITH(parse_hook_config(R"({"HookParameters": {"include_regex": "ok,bad[("}})"),
                      Catch::Contains("HookParameters.include_regex") && Catch::Contains("bad[("));
    CHECK_THROWS_WITH(parse_hook_config(R"({"CollectionConfigurations": [{"CollectionParameters": {}}]})"),
                      Catch::Contains("CollectionName"));
    CHECK_THROWS_WITH(parse_hook_config(R"({"CollectionConfigurations": [{"CollectionName": "mine"}]})"),
                      Catch::Contains("'mine'") && Catch::Contains("include_regex"));
    CHECK_THROWS_WITH(parse_hook_config(R"({"LocalPath": 3})"), Catch::Contains("LocalPath") && Catch::Contains("string"));
    CHECK_THROWS_WITH(parse_hook_config("{\"LocalPath\": "), Catch::Contains("not valid JSON"));
    CHECK_THROWS_AS(parse_hook_config("[1, 2]"), config_error);
}

TEST_CASE("json config: found through SMDEBUG_CONFIG_FILE_PATH") {
    tdbg::test::temp_dir dir("json_env");
    const auto file = dir.path() / "hook.json";
    std::ofstream(file) << R"({"LocalPath": "/tmp/from_env", "HookParameters": {"save_interval": "3"}})";
    ::setenv(hook_config_env, file.c_str(), 1);
    const auto o = hook_config_from_environment();
    REQUIRE(o);
    CHECK(o->out_dir == "/tmp/from_env");
    CHECK(o->save_config.get(mode::predict)->save_interval == 3);
    ::setenv(hook_config_env, (dir.path() / "missing.json").c_str(), 1);
    CHECK_THROWS_WITH(hook_config_from_environment(), Catch::Contains("missing.json"));
    ::unsetenv(hook_config_env);
    CHECK_THROWS_AS(load_hook_config(dir.path() / "missing.json"), config_error);
}
