// The trial's fast index-file reader agrees with the format layer's full
// parser on every file it accepts, and declines (so the full parser runs)
// everything it does not handle.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "golden.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/trial/detail/index_parser.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::test::read_file;

void check_same(const tdbg::detail::index_view& fast, const tdbg::format::index_file& full) {
    CHECK(fast.index_mode == full.mode);
    CHECK(fast.mode_step == full.mode_step);
    CHECK(fast.event_file_name == full.event_file_name);
    REQUIRE(fast.tensors.size() == full.tensor_payload.size());
    for (std::size_t i = 0; i < fast.tensors.size(); ++i) {
        CHECK(fast.tensors[i].name == full.tensor_payload[i].tensorname);
        CHECK(fast.tensors[i].start == full.tensor_payload[i].start_idx);
        CHECK(fast.tensors[i].length == full.tensor_payload[i].length);
    }
    REQUIRE(fast.shapes.size() == full.shape_payload.size());
    for (std::size_t i = 0; i < fast.shapes.size(); ++i) {
        CHECK(fast.shapes[i].name == full.shape_payload[i].tensorname);
        CHECK(fast.shapes[i].shape == full.shape_payload[i].shape);
    }
}

} // namespace

TEST_CASE("index parser: every fixture index file reads as the full parser reads it") {
    if (!tdbg::test::fixtures_dir()) {
        TDBG_SKIP("fixtures not found");
    }
    std::size_t files = 0;
    for (const std::string run : tdbg::test::fixture_runs) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(*tdbg::test::fixture_run(run) / "index")) {
            if (!entry.is_regular_file()) {
                continue;
            }
            INFO(entry.path());
            const std::string text = read_file(entry.path());
            tdbg::detail::index_view fast;
            REQUIRE(tdbg::detail::parse_index_fast(text, fast));
            check_same(fast, tdbg::format::parse_index_file(text, entry.path().string()));
            ++files;
        }
    }
    CHECK(files == 30 + 13 + 40);
}

TEST_CASE("index parser: other layouts and whitespace are read, what it does not handle is declined") {
    const std::string pretty = R"({
  "shape_payload": [ { "shape": [2, 3], "originalname": "a:0", "tensorname": "a" } ],
  "tensor_payload": [ { "length": 40, "tensorname": "b", "start_idx": 0 } ],
  "meta": { "event_file_name": "events/000000000001/000000000001_w.tfevents", "mode_step": -1, "mode": "EVAL" }
})";
    tdbg::detail::index_view v;
    REQUIRE(tdbg::detail::parse_index_fast(pretty, v));
    check_same(v, tdbg::format::parse_index_file(pretty, "pretty.json"));
    CHECK(v.mode_step == -1);

    const char* declined[] = {
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [], "shape_payload": [], "extra": 1})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "caf\u00e9", "start_idx": 0, "length": 1}]})",
        R"({"meta": {"mode": "train", "mode_step": 0}})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 1.5}})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 01}})",
        R"({"meta": {"mode": "TRAIN"}})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "x", "start_idx": 0, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "x", "start_idx": -1, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "x", "start_idx": 18446744073709551616, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}} trailing)",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0})",
        R"([])",
        "",
    };
    for (const char* text : declined) {
        INFO(text);
        tdbg::detail::index_view out;
        CHECK_FALSE(tdbg::detail::parse_index_fast(text, out));
    }
}

TEST_CASE("index parser: a run whose index the fast path declines is read through the full parser") {
    tdbg::test::temp_dir dir("escaped_index");
    tdbg::test::run_writer w(dir.path());
    w.collections("worker_0", 1);
    // The format layer writes non-ASCII names as \u escapes, as Python's json.dumps does.
    w.step(0, "worker_0", tdbg::mode::train, 0,
           {tdbg::test::saved_tensor{"caf\xc3\xa9/w\"q", tdbg::test::iota_value(3, 2), {}, {}}});
    w.end();
    const std::string text = read_file(dir.path() / "index" / "000000000" / "000000000000_worker_0.json");
    tdbg::detail::index_view v;
    CHECK_FALSE(tdbg::detail::parse_index_fast(text, v));
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.tensor_names() == std::vector<std::string>{"caf\xc3\xa9/w\"q"});
    CHECK(t.tensor("caf\xc3\xa9/w\"q").value(0).data_as<float>()[1] == 4.0F);
}

TEST_CASE("index parser: damaged files are declined or read as the full parser reads them, never misread") {
    tdbg::format::index_file index;
    index.mode = tdbg::mode::eval;
    index.mode_step = 12;
    index.event_file_name = "events/000000000012/000000000012_worker_0.tfevents";
    index.tensor_payload = {{"a/b", 0, 100}, {"smdebug/reductions/abs_mean/a/b", 100, 90}};
    index.shape_payload = {{"c", "c", {2, 3}}};
    const std::string good = tdbg::format::to_json(index);
    std::size_t accepted = 0;
    for (std::size_t i = 0; i < good.size(); ++i) {
        for (const char c : {'"', '\\', '{', '}', '[', ']', ',', ':', '9', '-', ' ', '\0', '\xff', 'x'}) {
            std::string damaged = good;
            damaged[i] = c;
            tdbg::detail::index_view fast;
            if (!tdbg::detail::parse_index_fast(damaged, fast)) {
                continue;
            }
            ++accepted;
            INFO("byte " << i << " set to " << static_cast<int>(c) << ": " << damaged);
            tdbg::format::index_file full;
            REQUIRE_NOTHROW(full = tdbg::format::parse_index_file(damaged, "damaged.json"));
            check_same(fast, full);
        }
    }
    CHECK(accepted > 0); // e.g. digits changed, names changed
}
