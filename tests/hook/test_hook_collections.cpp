#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <xtensor/xarray.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::temp_dir;

namespace {

// The pytorch_mlp fixture's hook: TRAIN every 5th step, EVAL every 2nd, the
// PyTorch hook's collections plus relu activations reduced to statistics.
hook_options pytorch_mlp_options(const std::filesystem::path& out) {
    hook_options o;
    o.out_dir = out.string();
    o.save_config = save_config();
    o.save_config.set(mode::train, save_config_mode{5, {}, 0, std::nullopt});
    o.save_config.set(mode::eval, save_config_mode{2, {}, 0, std::nullopt});
    o.include_collections = {"weights", "biases", "gradients", "losses", "relu_activations"};
    collection gradients("gradients");
    reduction_config g = reduction_config::parse("min,max,mean,std,variance,l2_norm,abs_mean", true);
    gradients.set_reduction_config(g);
    collection relu("relu_activations");
    relu.include("^act_output_");
    relu.set_reduction_config(reduction_config::parse("mean,max,std,variance,l2_norm,abs_l1_norm", false, true));
    o.collections = {gradients, relu};
    return o;
}

// One step in the PyTorch hook's order: parameters at the forward pre-hook,
// module outputs, the loss, then gradients as backward produces them.
void pytorch_step(hook& h, std::size_t batch) {
    h.begin_step();
    h.save_tensor("MLP_fc1.weight", xt::xarray<float>(xt::ones<float>({16, 8})));
    h.save_tensor("MLP_fc1.bias", xt::xarray<float>(xt::zeros<float>({16})));
    h.save_tensor("MLP_fc2.weight", xt::xarray<float>(xt::ones<float>({3, 16})));
    h.save_tensor("MLP_fc2.bias", xt::xarray<float>(xt::zeros<float>({3})));
    h.save_tensor("act_output_0", xt::xarray<float>(xt::ones<float>({batch, std::size_t{16}})));
    h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(1.0F));
    h.save_tensor("gradient/MLP_fc2.bias", xt::xarray<float>(xt::ones<float>({3})));
    h.save_tensor("gradient/MLP_fc2.weight", xt::xarray<float>(xt::ones<float>({3, 16})));
    h.save_tensor("gradient/MLP_fc1.bias", xt::xarray<float>(xt::ones<float>({16})));
    h.save_tensor("gradient/MLP_fc1.weight", xt::xarray<float>(xt::ones<float>({16, 8})));
}

} // namespace

TEST_CASE("a PyTorch-like run saves what smdebug's PyTorch hook saved (pytorch_mlp fixture)") {
    const auto fixtures = tdbg::test::fixtures_dir();
    const auto fixture = fixtures / "pytorch_mlp";
    temp_dir dir("hook_pytorch");
    const auto out = dir.path() / "run";
    {
        hook h(pytorch_mlp_options(out));
        h.set_mode(mode::train);
        for (int i = 0; i < 40; ++i) {
            pytorch_step(h, 32);
        }
        h.set_mode(mode::eval);
        for (int i = 0; i < 10; ++i) {
            pytorch_step(h, 16);
        }
        h.close();
    }
    const auto ours = read_indexes(out);
    const auto theirs = read_indexes(fixture);
    REQUIRE(ours.size() == theirs.size());
    for (const auto& [key, index] : theirs) {
        INFO("step " << key.first);
        REQUIRE(ours.count(key) == 1);
        const auto& mine = ours.at(key);
        CHECK(mine.mode == index.mode);
        CHECK(mine.mode_step == index.mode_step);
        CHECK(mine.event_file_name == index.event_file_name);
        CHECK(tdbg::test::names_of(mine) == tdbg::test::names_of(index));
        CHECK(mine.shape_payload == index.shape_payload);
    }

    // The collections file: each collection's JSON text as smdebug wrote it.
    using ojson = nlohmann::ordered_json;
    const auto mine = ojson::parse(tdbg::test::read_file(out / "collections/000000000/worker_0_collections.json"));
    const auto want = ojson::parse(tdbg::test::read_file(fixture / "collections/000000000/worker_0_collections.json"));
    CHECK(mine.begin().key() == "collections");
    CHECK(mine["_meta"].dump() == want["_meta"].dump());
    REQUIRE(mine["collections"].size() == want["collections"].size());
    for (const auto& [name, c] : want["collections"].items()) {
        INFO("collection " << name);
        REQUIRE(mine["collections"].contains(name));
        CHECK(mine["collections"][name].dump() == c.dump());
    }
}

TEST_CASE("a name no collection selects is not saved, unless given a collection as smdebug's save_tensor does") {
    // hook::save_tensor(name, value) is what smdebug's framework hooks do with each
    // tensor they meet (_save_for_tensor): a name no saved collection selects is not
    // saved. smdebug's public save_tensor(name, value) puts the name in "default";
    // here that is save_tensor(name, value, {"default"}).
    temp_dir dir("hook_unselected");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"losses"};
    hook h(o);
    CHECK_FALSE(h.is_collection_included("default"));
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        const xt::xarray<float> v{1.0F, 2.0F};
        h.save_tensor("my_metric", v);
        h.save_tensor("my_custom", v, {"default"});
    }
    CHECK(h.is_collection_included("default"));
    h.close();
    const auto indexes = read_indexes(dir.path() / "run");
    REQUIRE(indexes.size() == 2);
    for (const auto& [where, index] : indexes) {
        CHECK(tdbg::test::names_of(index) == std::vector<std::string>{"my_custom"});
    }
    const auto file = nlohmann::json::parse(tdbg::test::read_file(dir.path() / "run/collections/000000000/worker_0_collections.json"));
    CHECK(file["collections"]["default"]["tensor_names"] == nlohmann::json::array({"my_custom"}));
    const auto t = tdbg::create_trial((dir.path() / "run").string());
    CHECK(t.tensor_names() == std::vector<std::string>{"my_custom"});
    CHECK(t.tensor("my_custom").steps() == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("exclude regexes, explicit collections and add_collection") {
    temp_dir dir("hook_exclude");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    collection acts("activations");
    acts.include("relu").exclude("^layer2/");
    o.collections.push_back(acts);
    hook h(o);
    collection extra("extra");
    extra.include("^probe$");
    h.add_collection(extra);
    // get_collection does not make a collection saved; weights is not included here.
    h.get_collection("weights");
    CHECK_FALSE(h.is_collection_included("weights"));
    CHECK(h.is_collection_included("extra"));
    h.begin_step();
    const xt::xarray<double> v{1.0, 2.0};
    h.save_tensor("layer1/relu_output_0", v);
    h.save_tensor("layer2/relu_output_0", v);
    h.save_tensor("probe", v);
    h.save_tensor("fc.weight", v);
    h.save_tensor("custom/thing", v, {"mine"}); // creates and saves "mine"
    CHECK(h.is_collection_included("mine"));
    h.close();
    const auto indexes = read_indexes(dir.path() / "run");
    REQUIRE(indexes.size() == 1);
    CHECK(tdbg::test::names_of(indexes.begin()->second) ==
          std::vector<std::string>{"layer1/relu_output_0", "probe", "custom/thing"});
    const auto file = nlohmann::json::parse(tdbg::test::read_file(dir.path() / "run/collections/000000000/worker_0_collections.json"));
    CHECK(file["collections"]["activations"]["exclude_regex"] == nlohmann::json::array({"^layer2/"}));
    CHECK(file["collections"]["activations"]["tensor_names"] == nlohmann::json::array({"layer1/relu_output_0"}));
    CHECK(file["collections"]["mine"]["tensor_names"] == nlohmann::json::array({"custom/thing"}));
    CHECK_FALSE(file["collections"]["default"].contains("exclude_regex"));
}

TEST_CASE("exclude regexes hold for the trial too: a tensor saved by another collection is not listed") {
    temp_dir dir("hook_exclude_trial");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    collection acts("activations");
    acts.include("relu").exclude("^layer2/");
    collection all_layer2("layer2");
    all_layer2.include("^layer2/");
    o.collections = {acts, all_layer2};
    {
        hook h(o);
        h.begin_step();
        const xt::xarray<double> v{1.0, 2.0};
        h.save_tensor("layer1/relu_output_0", v);
        h.save_tensor("layer2/relu_output_0", v); // saved, as a member of "layer2" only
    }
    const auto t = tdbg::create_trial((dir.path() / "run").string());
    CHECK(t.tensor_names() == std::vector<std::string>{"layer1/relu_output_0", "layer2/relu_output_0"});
    CHECK(t.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, std::string("activations")) ==
          std::vector<std::string>{"layer1/relu_output_0"});
    CHECK(t.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, std::string("layer2")) ==
          std::vector<std::string>{"layer2/relu_output_0"});
}

TEST_CASE("a hook built from a SageMaker JSON configuration") {
    temp_dir dir("hook_json");
    const auto config = dir.path() / "debughookconfig.json";
    std::ofstream(config) << R"({"LocalPath": ")" << (dir.path() / "run").string() << R"(",
      "HookParameters": {"save_interval": "2", "include_regex": "^custom/"},
      "CollectionConfigurations": [{"CollectionName": "weights"},
        {"CollectionName": "relu", "CollectionParameters": {"include_regex": "relu", "reductions": "max,abs_l1_norm", "save_shape": "true"}}]})";
    auto h = hook::create_from_json_file(config);
    h->begin_step();
    const xt::xarray<float> v{-1.0F, 3.0F};
    h->save_tensor("fc.weight", v);
    h->save_tensor("relu_out", v);
    h->save_tensor("custom/a", v);
    h->save_tensor("fc.bias", v); // biases not configured: not saved
    h->begin_step();
    h->save_tensor("fc.weight", v); // step 1 is not saved (interval 2)
    h->close();
    const auto indexes = read_indexes(dir.path() / "run");
    REQUIRE(indexes.size() == 1);
    const auto& index = indexes.at({0, "worker_0"});
    CHECK(tdbg::test::names_of(index) ==
          std::vector<std::string>{"fc.weight", "smdebug/reductions/max/relu_out",
                                   "smdebug/reductions/abs_l1/relu_out", "custom/a", "shape:relu_out"});
    const auto l1 = tdbg::test::read_tensor(dir.path() / "run", index, "smdebug/reductions/abs_l1/relu_out");
    CHECK(l1.value.shape() == tensor_value::shape_type{1});
    CHECK(l1.value.data_as<float>()[0] == 4.0F);
}
