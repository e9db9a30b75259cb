// Fetching records: small records of one file read one after the other cost
// one read of the whole file; large records are always read by range; and a
// reader going tensor by tensor across many files is not made to read whole
// files over and over.

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "counting_storage.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::mode;
using tdbg::test::counters;
using tdbg::test::counting_storage;
using tdbg::test::saved_tensor;

namespace {

void write_run(const std::filesystem::path& dir, int steps, int tensors, std::size_t elements) {
    tdbg::test::run_writer w(dir);
    w.collections("worker_0", 1);
    for (int s = 0; s < steps; ++s) {
        std::vector<saved_tensor> saved;
        for (int k = 0; k < tensors; ++k) {
            saved.push_back(saved_tensor{"t" + std::to_string(k), tdbg::test::iota_value(static_cast<float>(s * 1000 + k), elements), {}, {}});
        }
        w.step(s, "worker_0", mode::train, s, saved);
    }
    w.end();
}

} // namespace

TEST_CASE("record cache: a step's small records cost two reads, then none") {
    tdbg::test::temp_dir dir("cache_small");
    write_run(dir.path(), 3, 10, 8);
    auto c = std::make_shared<counters>();
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "small");
    for (int k = 0; k < 10; ++k) {
        CHECK(t.tensor("t" + std::to_string(k)).value(1).data_as<float>()[0] == static_cast<float>(1000 + k));
    }
    CHECK(c->range_reads == 2); // the first record alone, then the whole file
    for (int k = 9; k >= 0; --k) {
        CHECK(t.tensor("t" + std::to_string(k)).value(1).data_as<float>()[7] == static_cast<float>(1007 + k));
    }
    CHECK(c->range_reads == 2);
    // Tensor by tensor across steps: the first pass reads records, the second reads each file whole, then hits.
    for (int k = 0; k < 10; ++k) {
        const auto values = t.tensor("t" + std::to_string(k)).values();
        REQUIRE(values.size() == 3);
        CHECK(values.at(2).data_as<float>()[0] == static_cast<float>(2000 + k));
    }
    CHECK(c->range_reads == 2 + 2 + 2); // steps 0 and 2: one record each, then whole
}

TEST_CASE("record cache: large records are read by range only") {
    tdbg::test::temp_dir dir("cache_large");
    write_run(dir.path(), 2, 3, 8192); // 32 KB records
    auto c = std::make_shared<counters>();
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "large");
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < 3; ++k) {
            CHECK(t.tensor("t" + std::to_string(k)).value(0).data_as<float>()[8191] == static_cast<float>(k + 8191));
        }
    }
    CHECK(c->range_reads == 6);
}

TEST_CASE("record cache: files evicted and read whole twice are then read by range") {
    tdbg::test::temp_dir dir("cache_thrash");
    write_run(dir.path(), 6, 4, 16); // small records, 6 files
    const auto file_size = std::filesystem::file_size(dir.path() / "events" / "000000000000" / "000000000000_worker_0.tfevents");
    auto c = std::make_shared<counters>();
    tdbg::trial_options o;
    o.file_cache_bytes = 4 * file_size + 10; // four files fit, six do not
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "thrash", {}, o);
    for (int k = 0; k < 4; ++k) {
        const auto values = t.tensor("t" + std::to_string(k)).values(); // tensor by tensor over all files
        CHECK(values.at(5).data_as<float>()[0] == static_cast<float>(5000 + k));
    }
    // Each file was read whole at most twice; the last pass reads records one by one.
    const int before = c->range_reads;
    CHECK(t.tensor("t0").values().size() == 6);
    CHECK(c->range_reads - before <= 6); // by range (a file still kept may serve one)
    CHECK(before <= 6 + 2 * 6 + 6);
}

TEST_CASE("record cache: an index entry past the end of its event file is a format error, not an allocation") {
    tdbg::test::temp_dir dir("cache_corrupt_length");
    write_run(dir.path(), 1, 2, 8);
    // Give the second tensor a length no file could hold (100 TB).
    std::filesystem::path index;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "index")) {
        if (e.path().extension() == ".json") {
            index = e.path();
        }
    }
    REQUIRE(!index.empty());
    auto json = nlohmann::json::parse(tdbg::test::read_file(index));
    auto& entry = json.at("tensor_payload").at(1);
    const std::string victim = entry.at("tensorname").get<std::string>();
    entry["length"] = 100'000'000'000'000ULL;
    tdbg::test::write_file(index, json.dump());

    const auto t = tdbg::create_trial(dir.path().string());
    try {
        (void)t.tensor(victim).value(0);
        FAIL("a 100 TB record was read");
    } catch (const tdbg::format_error& e) {
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains(".tfevents") && Catch::Contains("the event file has"));
    }
    // The other tensor of the same file still reads.
    const std::string other = json.at("tensor_payload").at(0).at("tensorname").get<std::string>();
    CHECK(t.tensor(other).value(0).size() == 8);

    // The storage's own range read refuses too, naming the file.
    const tdbg::local_storage storage(dir.path());
    const std::string event_key = json.at("meta").at("event_file_name").get<std::string>();
    CHECK_THROWS_WITH(storage.read_range(event_key, 0, 100'000'000'000'000ULL),
                      Catch::Contains(event_key) && Catch::Contains("the file ends at byte"));
}
