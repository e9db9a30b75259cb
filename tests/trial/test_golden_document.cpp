// write_golden_document, the library's "smdebug-golden/1" document: a fixture run's
// reading against what Python smdebug's reader returned for it (the golden files), and
// the document of part of a run (golden_filter).

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/trial/golden.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

// The golden document of the run in `dir` (`filter`: of part of it).
std::string golden_text_of(const std::filesystem::path& dir, const tdbg::golden_filter& filter = {}) {
    std::ostringstream out;
    tdbg::write_golden_document(tdbg::create_trial(dir.string()), "tdbg test (C++)", out, filter);
    return out.str();
}

// Tensors "w" and "loss" at TRAIN steps 0-2 (global steps 0-2), "w" at EVAL step 0 (global 3).
void write_train_eval_run(const std::filesystem::path& dir) {
    const tdbg::test::run_writer run(dir);
    tdbg::format::collection_spec weights;
    weights.name = "weights";
    weights.include_regex = {"^w$"};
    run.collections("worker_0", 1, {weights});
    for (std::int64_t s = 0; s < 3; ++s) {
        const float x = static_cast<float>(s);
        run.step(s, "worker_0", tdbg::mode::train, s,
                 {{"w", tdbg::tensor_value::scalar(x + 0.5F), {}, std::nullopt},
                  {"loss", tdbg::tensor_value::scalar(10.0F - x), {}, std::nullopt}});
    }
    run.step(3, "worker_0", tdbg::mode::eval, 0, {{"w", tdbg::tensor_value::scalar(4.0F), {}, std::nullopt}});
    run.end();
}

} // namespace

TEST_CASE("write_golden_document: a fixture run's document matches Python's reading, or does better") {
    for (const std::string run : {"core_modes_workers", "vanishing_run"}) {
        INFO(run);
        const auto dir = tdbg::test::fixture_run(run);
        const std::string text = golden_text_of(dir);
        const auto c = tdbg::test::check_dump_text(
            dir, text, tdbg::test::read_file(tdbg::test::fixtures_dir() / (run + ".golden.json")));
        CHECK(c.computed_compared > 100);
        const nlohmann::json doc = nlohmann::json::parse(text);
        CHECK(doc["format"] == tdbg::golden_format);
        CHECK(doc["producer"] == "tdbg test (C++)");
    }
}

TEST_CASE("write_golden_document with a golden_filter: the tensors, mode and steps it keeps") {
    tdbg::test::temp_dir dir("golden_document_filter");
    write_train_eval_run(dir.path());

    tdbg::golden_filter train;
    train.tensor_regex = "^w$";
    train.only_mode = tdbg::mode::train;
    train.steps.begin = 1;
    CHECK_FALSE(train.keeps_everything());
    CHECK(train.keeps_step(tdbg::mode::train, 1, 1));
    CHECK_FALSE(train.keeps_step(tdbg::mode::train, 0, 0));
    CHECK_FALSE(train.keeps_step(tdbg::mode::eval, 1, 5));
    const nlohmann::json doc = nlohmann::json::parse(golden_text_of(dir.path(), train));
    CHECK(doc["tensor_names"] == nlohmann::json({"w"}));
    CHECK(doc["collections"]["weights"]["trial_tensor_names"] == nlohmann::json({"w"}));
    CHECK(doc["steps"]["TRAIN"] == nlohmann::json({1, 2}));
    CHECK(doc["steps"]["EVAL"] == nlohmann::json::array());
    CHECK(doc["steps"]["GLOBAL"] == nlohmann::json({1, 2}));
    CHECK(doc["global_step_to_mode"].size() == 2);
    CHECK(doc["global_step_to_mode"]["2"]["mode"] == "TRAIN");
    REQUIRE(doc["tensors"].size() == 1);
    const nlohmann::json& w = doc["tensors"]["w"];
    REQUIRE(w["entries"].size() == 2);
    CHECK(w["entries"][0]["step"] == 1);
    CHECK(w["entries"][1]["value"] == 2.5);
    CHECK(w["steps"]["EVAL"] == nlohmann::json::array());
    // The rest of the document is the run's.
    CHECK(doc["modes"] == nlohmann::json({"EVAL", "TRAIN"}));
    CHECK(doc["workers"] == nlohmann::json({"worker_0"}));

    // Global steps, every mode.
    tdbg::golden_filter late;
    late.steps.begin = 2;
    const nlohmann::json all = nlohmann::json::parse(golden_text_of(dir.path(), late));
    CHECK(all["tensor_names"] == nlohmann::json({"loss", "w"}));
    CHECK(all["steps"]["GLOBAL"] == nlohmann::json({2, 3}));
    CHECK(all["steps"]["EVAL"] == nlohmann::json({0}));
    CHECK(all["tensors"]["loss"]["entries"].size() == 1);
    CHECK(all["tensors"]["w"]["entries"].size() == 2);

    // A filter that keeps everything writes the whole run's document, byte for byte.
    tdbg::golden_filter everything;
    everything.only_mode = tdbg::mode::global;
    CHECK(everything.keeps_everything());
    const std::string whole = golden_text_of(dir.path());
    CHECK(golden_text_of(dir.path(), everything) == whole);
    CHECK(nlohmann::json::parse(whole)["steps"]["GLOBAL"] == nlohmann::json({0, 1, 2, 3}));
}
