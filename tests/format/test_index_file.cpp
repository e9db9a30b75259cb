#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"

using namespace tdbg;
using namespace tdbg::format;
namespace fs = std::filesystem;

namespace {

using tdbg::test::read_file;

} // namespace

TEST_CASE("index_file: to_json writes Python's json.dumps text") {
    index_file index;
    index.mode = mode::eval;
    index.mode_step = 3;
    index.event_file_name = "events/000000000007/000000000007_worker_0.tfevents";
    index.tensor_payload = {{"a", 0, 100}, {"b/c", 100, 2000000000000}};
    index.shape_payload = {{"red/x", "red/x", {3, 4}}, {"s", "orig", {}}};
    CHECK(
        to_json(index) ==
        R"({"meta": {"mode": "EVAL", "mode_step": 3, "event_file_name": "events/000000000007/000000000007_worker_0.tfevents"}, )"
        R"("tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 100}, )"
        R"({"tensorname": "b/c", "start_idx": 100, "length": 2000000000000}], )"
        R"("shape_payload": [{"tensorname": "red/x", "originalname": "red/x", "shape": [3, 4]}, )"
        R"({"tensorname": "s", "originalname": "orig", "shape": []}]})");
    // A step that saved only shapes has no event file name (smdebug omits the key).
    index_file shapes_only;
    shapes_only.mode = mode::train;
    shapes_only.shape_payload = {{"t", "t", {2}}};
    CHECK(to_json(shapes_only) == R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [], )"
                                  R"("shape_payload": [{"tensorname": "t", "originalname": "t", "shape": [2]}]})");
    CHECK(parse_index_file(to_json(shapes_only), "x") == shapes_only);
    CHECK(parse_index_file(to_json(index), "x") == index);
}

TEST_CASE("index_file: names are escaped as json.dumps escapes them (ASCII only, lowercase hex)") {
    index_file index;
    index.event_file_name = "e";
    // tab, quote, backslash, DEL, e-acute, a CJK character and an emoji (a surrogate pair in JSON)
    index.tensor_payload = {{"a\tb\"c\\d\x7f\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\x01", 0, 1}};
    const std::string json = to_json(index);
    CHECK_THAT(json, Catch::Contains(R"("tensorname": "a\tb\"c\\d\u007f\u00e9\u4e2d\ud83d\ude00\u0001")"));
    CHECK(parse_index_file(json, "x").tensor_payload[0].tensorname == index.tensor_payload[0].tensorname);
    index.tensor_payload[0].tensorname = "bad\xff";
    CHECK_THROWS_AS(to_json(index), error);
}

TEST_CASE("index_file: errors name the file and the key") {
    const std::string file = "index/000000000/000000000001_worker_0.json";
    CHECK_THROWS_WITH(parse_index_file(R"({"meta": {"mode": "TRAIN"}})", file),
                      file + " at byte 26: index file: key 'meta.mode_step' is missing"); // where meta ends
    CHECK_THROWS_WITH(parse_index_file(R"({"meta": {"mode": "TRAINING", "mode_step": 1}})", file),
                      Catch::Contains("'meta.mode'") && Catch::Contains("TRAINING"));
    CHECK_THROWS_WITH(parse_index_file(R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "e"},
                             "tensor_payload": [{"tensorname": "a", "start_idx": -1, "length": 3}]})",
                                       file),
                      Catch::Contains("'tensor_payload[0].start_idx'") && Catch::Contains("non-negative"));
    CHECK_THROWS_WITH(parse_index_file(R"({"meta": {"mode": "TRAIN", "mode_step": 1},
                                           "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 3}]})",
                                       file),
                      Catch::Contains("'meta.event_file_name'"));
    CHECK_THROWS_WITH(parse_index_file(R"({"meta": {"mode": "TRAIN", "mode_step": 1},
                                           "shape_payload": [{"tensorname": "a", "shape": [2, 2.5]}]})",
                                       file),
                      Catch::Contains("'shape_payload[0].shape[1]'"));
    // A shape of more dimensions than a tensor may have (numpy's 64): refused where it passes 64.
    const auto shape_of_rank = [](std::size_t rank) {
        std::string dims;
        for (std::size_t i = 0; i < rank; ++i) {
            dims += i == 0 ? "1" : ", 1";
        }
        return R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": [{"tensorname": "a", "shape": [)" + dims +
               "]}]}";
    };
    CHECK(parse_index_file(shape_of_rank(tdbg::max_tensor_rank), file).shape_payload[0].shape.size() == 64);
    CHECK_THROWS_WITH(parse_index_file(shape_of_rank(60000), file),
                      Catch::Contains("'shape_payload[0].shape[64]' is past the 64 dimensions a tensor may have"));
    CHECK_THROWS_WITH(parse_index_file(R"({"meta": )", file),
                      Catch::StartsWith(file + " at byte ") && Catch::Contains("not valid JSON"));
    CHECK_THROWS_AS(parse_index_file("[]", file), format_error);
}

TEST_CASE("index_file: every fixture index file round-trips byte for byte and points at its records") {
    const auto fixtures = test::fixtures_dir();
    int files = 0;
    int locations = 0;
    for (const char* run : test::fixture_runs) {
        const fs::path root = fixtures / run;
        for (const auto& entry : fs::recursive_directory_iterator(root / "index")) {
            if (!entry.is_regular_file()) {
                continue;
            }
            const std::string key = fs::relative(entry.path(), root).generic_string();
            const auto info = parse_index_file_key(key);
            REQUIRE(info);
            CHECK(key == index_file_key(info->step, info->worker));
            const std::string text = read_file(entry.path());
            const index_file index = parse_index_file(text, key);
            CHECK(to_json(index) == text);
            ++files;
            if (index.tensor_payload.empty()) {
                continue;
            }
            CHECK(index.event_file_name == event_file_key(info->step, info->worker));
            const std::string events = read_file(root / index.event_file_name);
            for (const tensor_location& loc : index.tensor_payload) {
                REQUIRE(loc.start_idx + loc.length <= events.size());
                const std::string_view payload = record_payload(
                    std::string_view(events).substr(loc.start_idx, loc.length), index.event_file_name, loc.start_idx);
                const tensor_event ev =
                    decode_tensor_event(payload, nullptr, index.event_file_name, loc.start_idx + record_header_size);
                CHECK(ev.tag == loc.tensorname);
                CHECK(ev.step == info->step);
                CHECK(ev.mode == index.mode);
                CHECK(ev.mode_step == index.mode_step);
                ++locations;
            }
        }
    }
    CHECK(files == 83);
    CHECK(locations > 1000);
}
