// The one parser of index files (format/detail/index_parser.hpp, behind both
// the trial and format::parse_index_file) against an independent reading of
// the same text with nlohmann's parser and smdebug's schema: every fixture
// file, other layouts, escapes, and damaged files, which it must either read
// exactly as the independent reading does or refuse with a format_error.

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/trial/trial.hpp"
#include "trial/golden.hpp"
#include "trial/run_writer.hpp"

namespace {

using tdbg::test::read_file;

// The index file `text` as smdebug's reader takes it, through nlohmann's parser; nullopt
// when it is not JSON of the index schema (what tdbg must then refuse).
std::optional<tdbg::format::index_file> independent_reading(const std::string& text) {
    if (text.find('\0') != std::string::npos) {
        return std::nullopt; // JSON text holds no NUL byte (nlohmann's parser would stop there)
    }
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("meta") || !doc["meta"].is_object()) {
        return std::nullopt;
    }
    const auto& meta = doc["meta"];
    tdbg::format::index_file out;
    if (!meta.contains("mode") || !meta["mode"].is_string() || !meta.contains("mode_step") ||
        !meta["mode_step"].is_number_integer() ||
        (meta["mode_step"].is_number_unsigned() && meta["mode_step"].get<std::uint64_t>() > INT64_MAX)) {
        return std::nullopt;
    }
    const auto m = tdbg::try_parse_mode(meta["mode"].get<std::string>());
    if (!m) {
        return std::nullopt;
    }
    out.mode = *m;
    out.mode_step = meta["mode_step"].get<std::int64_t>();
    if (meta.contains("event_file_name")) {
        if (!meta["event_file_name"].is_string()) {
            return std::nullopt;
        }
        out.event_file_name = meta["event_file_name"].get<std::string>();
    }
    auto natural = [](const nlohmann::json& j) { return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0); };
    if (doc.contains("tensor_payload")) {
        if (!doc["tensor_payload"].is_array()) {
            return std::nullopt;
        }
        for (const auto& t : doc["tensor_payload"]) {
            if (!t.is_object() || !t.contains("tensorname") || !t["tensorname"].is_string() || !t.contains("start_idx") ||
                !natural(t["start_idx"]) || !t.contains("length") || !natural(t["length"])) {
                return std::nullopt;
            }
            out.tensor_payload.push_back(
                {t["tensorname"].get<std::string>(), t["start_idx"].get<std::uint64_t>(), t["length"].get<std::uint64_t>()});
        }
        if (!out.tensor_payload.empty() && out.event_file_name.empty()) {
            return std::nullopt;
        }
    }
    if (doc.contains("shape_payload")) {
        if (!doc["shape_payload"].is_array()) {
            return std::nullopt;
        }
        for (const auto& s : doc["shape_payload"]) {
            if (!s.is_object() || !s.contains("tensorname") || !s["tensorname"].is_string() || !s.contains("shape") ||
                !s["shape"].is_array() || (s.contains("originalname") && !s["originalname"].is_string())) {
                return std::nullopt;
            }
            tdbg::format::shape_entry entry;
            entry.tensorname = s["tensorname"].get<std::string>();
            entry.originalname = s.contains("originalname") ? s["originalname"].get<std::string>() : entry.tensorname;
            for (const auto& d : s["shape"]) {
                if (!natural(d) || (d.is_number_unsigned() && d.get<std::uint64_t>() > INT64_MAX)) {
                    return std::nullopt;
                }
                entry.shape.push_back(d.get<std::int64_t>());
            }
            out.shape_payload.push_back(std::move(entry));
        }
    }
    return out;
}

// tdbg's reading of `text`: the index, or nullopt after a format_error naming the file.
std::optional<tdbg::format::index_file> tdbg_reading(const std::string& text) {
    try {
        return tdbg::format::parse_index_file(text, "index.json");
    } catch (const tdbg::format_error& e) {
        CHECK(e.file() == "index.json");
        return std::nullopt;
    }
}

} // namespace

TEST_CASE("index parser: every fixture index file reads as the independent reading says") {
    std::size_t files = 0;
    for (const std::string run : tdbg::test::fixture_runs) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(tdbg::test::fixture_run(run) / "index")) {
            if (!entry.is_regular_file()) {
                continue;
            }
            INFO(entry.path());
            const std::string text = read_file(entry.path());
            const auto expected = independent_reading(text);
            REQUIRE(expected);
            CHECK(tdbg_reading(text) == expected);
            // And tdbg writes it back byte for byte as smdebug wrote it.
            CHECK(tdbg::format::to_json(*expected) == text);
            ++files;
        }
    }
    CHECK(files == 30 + 13 + 40);
}

TEST_CASE("index parser: keys in any order, any whitespace, unknown keys, escapes") {
    const std::string pretty = R"({
  "shape_payload": [ { "shape": [2, 3], "originalname": "a:0", "tensorname": "a", "extra": [1, {"x": null}] } ],
  "tensor_payload": [ { "length": 40, "tensorname": "caf\u00e9 \ud83d\ude00", "start_idx": 0 } ],
  "version": "2",
  "meta": { "event_file_name": "events/000000000001/000000000001_w.tfevents", "mode_step": -1, "mode": "EVAL" }
})";
    const auto read = tdbg_reading(pretty);
    REQUIRE(read);
    CHECK(read == independent_reading(pretty));
    CHECK(read->mode_step == -1);
    CHECK(read->tensor_payload.at(0).tensorname == "caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(read->shape_payload.at(0).originalname == "a:0");
    // smdebug's reader takes the tensor name where the original name is missing.
    const auto no_original = tdbg_reading(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "shape_payload": [{"tensorname": "s", "shape": []}]})");
    REQUIRE(no_original);
    CHECK(no_original->shape_payload.at(0).originalname == "s");
}

TEST_CASE("index parser: files that are not index files are refused with the key and the offset") {
    const char* refused[] = {
        R"({"meta": {"mode": "TRAIN", "mode_step": 1.5}})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 01}})",
        R"({"meta": {"mode": "TRAIN"}})",
        R"({"tensor_payload": []})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "x", "start_idx": 0, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "x", "start_idx": -1, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [{"tensorname": "x", "start_idx": 18446744073709551616, "length": 1}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "shape_payload": [{"tensorname": "s", "shape": [-2]}]})",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}} trailing)",
        R"({"meta": {"mode": "TRAIN", "mode_step": 0})",
        R"([])",
        "",
    };
    for (const char* text : refused) {
        INFO(text);
        CHECK_FALSE(independent_reading(text));
        CHECK_FALSE(tdbg_reading(text));
    }
    try {
        (void)tdbg::format::parse_index_file(R"({"meta": {"mode": "TRAIN", "mode_step": "7"}})", "i.json");
        FAIL("parsed");
    } catch (const tdbg::format_error& e) {
        CHECK(std::string(e.what()) == "i.json at byte 40: index file: key 'meta.mode_step' must be an integer");
    }
}

TEST_CASE("index parser: a run whose index names need escapes is read through the trial") {
    tdbg::test::temp_dir dir("escaped_index");
    tdbg::test::run_writer w(dir.path());
    w.collections("worker_0", 1);
    // The format layer writes non-ASCII names as \u escapes, as Python's json.dumps does.
    w.step(0, "worker_0", tdbg::mode::train, 0,
           {tdbg::test::saved_tensor{"caf\xc3\xa9/w\"q", tdbg::test::iota_value(3, 2), {}, {}}});
    w.end();
    const std::string text = read_file(dir.path() / "index" / "000000000" / "000000000000_worker_0.json");
    CHECK(text.find("caf\\u00e9/w\\\"q") != std::string::npos);
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.tensor_names() == std::vector<std::string>{"caf\xc3\xa9/w\"q"});
    CHECK(t.tensor("caf\xc3\xa9/w\"q").value(0).data_as<float>()[1] == 4.0F);
}

TEST_CASE("index parser: damaged files are refused or read exactly as the independent reading, never misread") {
    tdbg::format::index_file index;
    index.mode = tdbg::mode::eval;
    index.mode_step = 12;
    index.event_file_name = "events/000000000012/000000000012_worker_0.tfevents";
    index.tensor_payload = {{"a/b", 0, 100}, {"smdebug/reductions/abs_mean/a/b", 100, 90}};
    index.shape_payload = {{"c", "c", {2, 3}}};
    const std::string good = tdbg::format::to_json(index);
    REQUIRE(tdbg_reading(good) == index);
    std::size_t accepted = 0;
    std::size_t refused = 0;
    for (std::size_t i = 0; i < good.size(); ++i) {
        for (const char c : {'"', '\\', '{', '}', '[', ']', ',', ':', '9', '-', ' ', '\0', '\xff', 'x'}) {
            std::string damaged = good;
            damaged[i] = c;
            INFO("byte " << i << " set to " << static_cast<int>(c) << ": " << damaged);
            const auto ours = tdbg_reading(damaged);
            CHECK(ours == independent_reading(damaged));
            (ours ? accepted : refused) += 1;
        }
    }
    CHECK(accepted > 0); // e.g. digits changed, names changed
    CHECK(refused > 0);
}
