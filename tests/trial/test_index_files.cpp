// Listing index files after a key: the local fast listing returns exactly
// what storage.list returns, and reading index files goes through both paths.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/detail/index_files.hpp"

TEST_CASE("index listing: the local listing equals storage.list for every start_after") {
    tdbg::test::temp_dir dir("listing");
    const tdbg::local_storage storage(dir.path());
    for (std::int64_t step : {0, 1, 2, 999, 1000, 1001, 2500, 12000}) {
        for (const char* worker : {"worker_0", "worker_1", "worker_10"}) {
            storage.put(tdbg::format::index_file_key(step, worker), "{}");
        }
    }
    // Noise: a file being written, and something that is not an index file.
    std::ofstream(dir.path() / "index" / "000000001" / "000000001001_worker_0.json.5.tmp") << "x";
    std::ofstream(dir.path() / "index" / "000000001" / "notes.txt") << "x";
    std::filesystem::create_directories(dir.path() / "index" / "000000099");
    const auto all = storage.list("index/", "");
    REQUIRE(all.size() == 8 * 3 + 1); // notes.txt is listed; the trial skips it by name
    CHECK(tdbg::detail::list_index_keys(storage, "") == all);
    std::vector<std::string> starts(all.begin(), all.end());
    starts.push_back("index/000000001/");
    starts.push_back("index/000000002/000000002500_worker_0.json.x");
    starts.push_back("index/000000099/");
    starts.push_back("index/");
    starts.push_back("zzz");
    for (const std::string& start : starts) {
        INFO("start_after " << start);
        CHECK(tdbg::detail::list_index_keys(storage, start) == storage.list("index/", start));
    }
    tdbg::test::temp_dir empty("listing_empty");
    CHECK(tdbg::detail::list_index_keys(tdbg::local_storage(empty.path()), "").empty());
}

TEST_CASE("index reading: the local reader returns whole files, across directories") {
    tdbg::test::temp_dir dir("index_reader");
    const tdbg::local_storage storage(dir.path());
    const std::string big(100000, 'x'); // larger than one read
    storage.put("index/000000000/000000000001_worker_0.json", "small");
    storage.put("index/000000000/000000000002_worker_0.json", big);
    storage.put("index/000000001/000000001000_worker_0.json", "");
    storage.put("top.json", "top");
    tdbg::detail::index_file_reader<tdbg::local_storage> reader(storage);
    CHECK(reader.read("index/000000000/000000000001_worker_0.json") == "small");
    CHECK(reader.read("index/000000000/000000000002_worker_0.json") == big);
    CHECK(reader.read("index/000000001/000000001000_worker_0.json").empty());
    CHECK(reader.read("top.json") == "top");
    CHECK_THROWS_AS(reader.read("index/000000001/missing.json"), tdbg::object_not_found);
    CHECK_THROWS_AS(reader.read("index/000000007/missing.json"), tdbg::object_not_found);
    CHECK_THROWS_AS(reader.read("../escape.json"), tdbg::invalid_name);
}
