// write_golden_document, the library's "smdebug-golden/1" document: a fixture run's
// reading against what Python smdebug's reader returned for it (the golden files), and
// the document of part of a run (golden_filter).

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/reduce/compute.hpp"
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

TEST_CASE("a value read in pieces: the same document, bit for bit, its layout from the record's head, its CRC checked") {
    tdbg::test::temp_dir root("golden_pieces");
    const std::filesystem::path dir = root.path() / "run";
    tdbg::test::run_writer run(dir);
    run.footer = tdbg::format::footer_kind::payload_crc;
    run.collections("worker_0", 1);
    const std::size_t piece = tdbg::running_reductions::piece_elements;
    // Offset data (a large mean, small spread): any change in the order of accumulation shows.
    std::vector<float> big(3 * piece + 17);
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = 1.0e6F + static_cast<float>((i * 7919) % 1000) * 0.001F - (i % 3 == 0 ? 0.5F : 0.0F);
    }
    std::vector<std::int32_t> ints(piece + 5);
    for (std::size_t i = 0; i < ints.size(); ++i) {
        ints[i] = static_cast<std::int32_t>(i % 977) - 400;
    }
    const auto big_value = tdbg::tensor_value::from_bytes(
        tdbg::dtype::float32, {3, big.size() / 3},
        std::string_view(reinterpret_cast<const char*>(big.data()), (big.size() / 3) * 3 * sizeof(float)));
    const auto int_value = tdbg::tensor_value::from_bytes(
        tdbg::dtype::int32, {ints.size()}, std::string_view(reinterpret_cast<const char*>(ints.data()), ints.size() * 4));
    for (std::int64_t step = 0; step < 2; ++step) {
        run.step(step, "worker_0", tdbg::mode::train, step,
                 {{"big", big_value, {{tdbg::reduction{tdbg::reduction_kind::mean, false}, tdbg::tensor_value::scalar(1.5F)}}, std::nullopt},
                  {"ints", int_value, {}, std::nullopt},
                  {"small", tdbg::test::iota_value(1.0F, 4), {}, std::nullopt}});
    }
    run.end();

    tdbg::golden_filter in_pieces;
    in_pieces.max_whole_value_bytes = 0;
    const std::string whole_text = golden_text_of(dir);
    CHECK(golden_text_of(dir, in_pieces) == whole_text);
    const nlohmann::json doc = nlohmann::json::parse(whole_text);
    const auto& entry = doc["tensors"]["big"]["entries"][0];
    CHECK(entry["size"] == big_value.size());
    CHECK(entry["reductions"]["mean"]["source"] == "stored");
    CHECK(entry["reductions"]["variance"]["source"] == "computed");

    const auto trial = tdbg::create_trial(dir.string());
    const auto t = trial.tensor("big");
    const tdbg::value_layout layout = t.layout(1);
    CHECK(layout.type == tdbg::dtype::float32);
    CHECK(layout.shape == big_value.shape());
    CHECK(t.shape(1) == big_value.shape());
    std::string pieces;
    std::size_t calls = 0;
    const auto read = t.read_value_in_pieces(1, tdbg::mode::global, std::nullopt, 100000, [&](const tdbg::tensor_value& p) {
        CHECK(p.size() <= 100000);
        pieces += std::string(p.bytes());
        ++calls;
    });
    CHECK(read.shape == big_value.shape());
    CHECK(calls == (big_value.size() + 99999) / 100000);
    CHECK(pieces == big_value.bytes());
    const auto small = trial.tensor("small").layout(0); // read whole (a small record)
    CHECK(small.shape == tdbg::tensor_value::shape_type{4});

    // A byte of the elements changed: the CRC, checked as the pieces go past, says so.
    const std::string index_key = tdbg::format::index_file_key(1, "worker_0");
    const auto index = tdbg::format::parse_index_file(tdbg::test::read_file(dir / index_key), index_key);
    const std::filesystem::path events = dir / index.event_file_name;
    std::string bytes = tdbg::test::read_file(events);
    for (const auto& where : index.tensor_payload) {
        if (where.tensorname == "big") {
            bytes[where.start_idx + where.length / 2] ^= 0x01;
        }
    }
    tdbg::test::write_file(events, bytes);
    const auto damaged = tdbg::create_trial(dir.string()).tensor("big");
    CHECK(damaged.layout(1).shape == big_value.shape()); // the head is whole
    CHECK_THROWS_AS(damaged.read_value_in_pieces(1, tdbg::mode::global, std::nullopt, piece, [](const tdbg::tensor_value&) {}),
                    tdbg::format_error);
    CHECK_THROWS_AS(golden_text_of(dir, in_pieces), tdbg::format_error);
}
