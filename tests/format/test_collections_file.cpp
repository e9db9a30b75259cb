#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/layout.hpp"

using namespace tdbg;
using namespace tdbg::format;
namespace fs = std::filesystem;

namespace {

using tdbg::test::read_file;

collection_spec sample_collection() {
    collection_spec c;
    c.name = "grads";
    c.include_regex = {"^grad/", "x\\d+"};
    c.tensor_names = {"grad/b", "grad/a", "grad/b"};
    // Given out of smdebug's order: plain, norms, abs, abs norms.
    c.reduction_config.save_raw_tensor = false;
    c.reduction_config.reductions = {{reduction_kind::l2, true},
                                     {reduction_kind::mean, true},
                                     {reduction_kind::l1, false},
                                     {reduction_kind::max, false}};
    c.reduction_config.save_shape = true;
    save_config_mode train;
    train.save_interval = 5;
    train.save_steps = {1, 3};
    train.start_step = 2;
    train.end_step = 40;
    c.save_config.set(mode::train, train);
    c.save_config.set(mode::eval, save_config_mode{});
    c.save_histogram = false;
    return c;
}

} // namespace

TEST_CASE("collections_file: to_json writes smdebug's keys, order and spellings") {
    collections_file file;
    file.collections = {sample_collection()};
    file.num_workers = 4;
    const std::string expected =
        R"({"collections": {"grads": {"name": "grads", "include_regex": ["^grad/", "x\\d+"], )"
        R"("tensor_names": ["grad/a", "grad/b"], )"
        R"("reduction_config": {"save_raw_tensor": false, "reductions": "max,l1_norm,abs_mean,abs_l2_norm", "save_shape": true}, )"
        R"("save_config": {"TRAIN": {"save_interval": 5, "save_steps": [1, 3], "start_step": 2, "end_step": 40}, )"
        R"("EVAL": {"save_interval": 500, "save_steps": [], "start_step": 0, "end_step": null}, )"
        R"("PREDICT": null, "GLOBAL": null}, "save_histogram": false}}, "_meta": {"num_workers": 4}})";
    CHECK(to_json(file) == expected);

    // Parsing gives the normalised collection back (names sorted and unique, reductions grouped).
    const collections_file back = parse_collections_file(expected, "c.json");
    REQUIRE(back.collections.size() == 1);
    const collection_spec& c = back.collections[0];
    CHECK(c.tensor_names == std::vector<std::string>{"grad/a", "grad/b"});
    CHECK(c.reduction_config.reductions == std::vector<reduction>{{reduction_kind::max, false},
                                                                  {reduction_kind::l1, false},
                                                                  {reduction_kind::mean, true},
                                                                  {reduction_kind::l2, true}});
    CHECK(c.save_config == sample_collection().save_config);
    CHECK(back.num_workers == 4);
    CHECK(to_json(back) == expected);
}

TEST_CASE("collections_file: exclude_regex is written only when set, and read back") {
    // smdebug's Collection.from_dict reads only the keys it knows, so an extra key is harmless to Python.
    collections_file file;
    file.collections = {sample_collection()};
    CHECK_THAT(to_json(file), !Catch::Contains("exclude_regex"));
    file.collections[0].exclude_regex = {"^grad/skip"};
    const std::string json = to_json(file);
    CHECK_THAT(json, Catch::Contains(R"("include_regex": ["^grad/", "x\\d+"], "exclude_regex": ["^grad/skip"], )"));
    CHECK(parse_collections_file(json, "c.json").collections[0].exclude_regex ==
          std::vector<std::string>{"^grad/skip"});
}

TEST_CASE("collections_file: null configs and smdebug's defaults for missing keys") {
    const collections_file file = parse_collections_file(
        R"({"collections": {"c": {"name": "c", "reduction_config": null, "save_config": null},
                            "d": {"name": "d", "reduction_config": {"reductions": " mean , abs_l1_norm,"},
                                  "save_config": {"TRAIN": {"save_interval": 3}, "EVAL": null}}},
            "_meta": {"num_workers": 2}})",
        "c.json");
    REQUIRE(file.collections.size() == 2);
    const collection_spec& c = file.collections[0];
    CHECK(c.reduction_config == collection_reduction_config{});
    CHECK(c.save_config == save_config{});
    CHECK(c.save_histogram);
    const collection_spec& d = file.collections[1];
    CHECK_FALSE(d.reduction_config.save_raw_tensor); // ReductionConfig.from_dict defaults it to False
    CHECK(d.reduction_config.reductions ==
          std::vector<reduction>{{reduction_kind::mean, false}, {reduction_kind::l1, true}});
    REQUIRE(d.save_config.get(mode::train));
    CHECK(d.save_config.get(mode::train)->save_interval == 3);
    CHECK_FALSE(d.save_config.get(mode::eval));
    CHECK(file.num_workers == 2);
}

TEST_CASE("collections_file: errors name the file and the key") {
    const std::string name = "collections/000000000/worker_0_collections.json";
    CHECK_THROWS_WITH(parse_collections_file(R"({"_meta": {"num_workers": 1}})", name),
                      name + " at byte 0: collections file: key 'collections' is missing");
    CHECK_THROWS_WITH(
        parse_collections_file(R"({"collections": {"w": {"reduction_config": {"reductions": "mean,median"}}}})", name),
        Catch::Contains(name) && Catch::Contains("'collections.w.reduction_config.reductions'") &&
            Catch::Contains("'median'"));
    CHECK_THROWS_WITH(
        parse_collections_file(R"({"collections": {"w": {"save_config": {"TRAIN": {"save_interval": "5"}}}}})", name),
        Catch::Contains("'collections.w.save_config.TRAIN.save_interval'"));
    CHECK_THROWS_WITH(parse_collections_file(R"({"collections": {"w": {"save_config": {"TRAINING": null}}}})", name),
                      Catch::Contains("'collections.w.save_config.TRAINING'"));
    CHECK_THROWS_WITH(parse_collections_file(R"({"collections": {"w": {"include_regex": ["a", 3]}}})", name),
                      Catch::Contains("'collections.w.include_regex[1]'"));
    CHECK_THROWS_WITH(parse_collections_file(R"({"collections": {}, "_meta": {"num_workers": 0}})", name),
                      Catch::Contains("'_meta.num_workers'"));
    CHECK_THROWS_WITH(parse_collections_file("{\"collections\": {}", name),
                      Catch::StartsWith(name + " at byte ") && Catch::Contains("not valid JSON"));
    collections_file twice;
    twice.collections = {sample_collection(), sample_collection()};
    CHECK_THROWS_AS(to_json(twice), error);
}

TEST_CASE("collections_file: every fixture collection file round-trips byte for byte") {
    const auto fixtures = test::fixtures_dir();
    int files = 0;
    for (const char* run : test::fixture_runs) {
        const fs::path root = fixtures / run;
        for (const auto& entry : fs::directory_iterator(root / "collections" / "000000000")) {
            const std::string key = fs::relative(entry.path(), root).generic_string();
            const auto worker = parse_collections_file_key(key);
            REQUIRE(worker);
            CHECK(collections_file_key(*worker) == key);
            const std::string text = read_file(entry.path());
            const collections_file parsed = parse_collections_file(text, key);
            CHECK(to_json(parsed) == text);
            CHECK_FALSE(parsed.collections.empty());
            ++files;
        }
    }
    CHECK(files == 4);
}
