#include <catch2/catch.hpp>

#include "tdbg/hook/collection.hpp"

using namespace tdbg;

TEST_CASE("collection matches like Python's re.search, with exclude regexes") {
    collection c("weights");
    c.include("^(?!gradient).*weight");
    CHECK(c.contains("MLP_fc1.weight"));
    CHECK_FALSE(c.contains("gradient/MLP_fc1.weight"));
    CHECK_FALSE(c.contains("MLP_fc1.bias"));
    c.exclude("fc2");
    CHECK_FALSE(c.contains("MLP_fc2.weight"));
    CHECK(c.contains("MLP_fc1.weight"));
    // An explicit name is a member whatever the regexes say.
    c.add_tensor_name("MLP_fc2.weight");
    CHECK(c.contains("MLP_fc2.weight"));
    CHECK(c.include_regex() == std::vector<std::string>{"^(?!gradient).*weight"});
    CHECK(c.exclude_regex() == std::vector<std::string>{"fc2"});

    collection loss("losses");
    loss.include("[Ll]oss_(?!input).*output");
    CHECK(loss.contains("CrossEntropyLoss_output_0"));
    CHECK_FALSE(loss.contains("CrossEntropyLoss_input_0"));
    // search, not match: anywhere in the name.
    collection relu("relu");
    relu.include("relu");
    CHECK(relu.contains("layer1/relu_output_0"));
}

TEST_CASE("collection rejects a bad regex with its name and the regex") {
    collection c("acts");
    CHECK_THROWS_AS(c.include("relu[("), config_error);
    CHECK_THROWS_WITH(c.include("relu[("), Catch::Contains("acts") && Catch::Contains("relu[("));
    CHECK_THROWS_AS(collection(""), config_error);
}

TEST_CASE("collection merge appends regexes and replaces configs") {
    collection base("weights");
    base.include("weight");
    collection over("weights");
    over.include("kernel").exclude("bias").set_save_histogram(false);
    over.set_reduction_config(reduction_config::parse("max,abs_l2_norm"));
    base.merge(over);
    CHECK(base.include_regex() == std::vector<std::string>{"weight", "kernel"});
    CHECK(base.exclude_regex() == std::vector<std::string>{"bias"});
    CHECK_FALSE(base.save_histogram());
    REQUIRE(base.reduction_config());
    CHECK(base.reduction_config()->to_string() == "max,abs_l2_norm");
    CHECK_FALSE(base.save_config());

    CHECK(is_scalar_collection("losses"));
    CHECK(is_scalar_collection("metrics"));
    CHECK_FALSE(is_scalar_collection("weights"));
    CHECK(is_training_only_collection("gradients"));
    CHECK(is_builtin_collection("biases"));
    CHECK_FALSE(is_builtin_collection("relu"));
}
