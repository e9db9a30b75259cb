#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/storage/local_storage.hpp"

using namespace tdbg;

TEST_CASE("local_storage publishes atomically and reads ranges") {
    test::temp_dir dir("storage");
    local_storage s(dir.path());
    CHECK_FALSE(s.exists("index/000000000/a.json"));
    {
        auto w = s.open_write("events/000000000001/x.tfevents");
        w.append("hello ");
        CHECK_FALSE(s.exists("events/000000000001/x.tfevents"));
        CHECK(s.list("events/").empty()); // the temporary file is not listed
        w.append("world");
        w.commit();
    }
    CHECK(s.exists("events/000000000001/x.tfevents"));
    CHECK(s.read("events/000000000001/x.tfevents") == "hello world");
    CHECK(s.read_range("events/000000000001/x.tfevents", 6, 5) == "world");
    CHECK_THROWS_WITH(s.read_range("events/000000000001/x.tfevents", 6, 50), Catch::Contains("ends at byte 11"));
    CHECK_THROWS_AS(s.read("missing"), object_not_found);
}

TEST_CASE("an uncommitted writer leaves nothing behind") {
    test::temp_dir dir("storage");
    local_storage s(dir.path());
    { auto w = s.open_write("a/b"); w.append("partial"); }
    CHECK_FALSE(s.exists("a/b"));
    std::size_t files = 0;
    for ([[maybe_unused]] auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
        files += entry.is_regular_file() ? 1 : 0;
    }
    CHECK(files == 0);
}

TEST_CASE("local_storage: a run directory renamed under a writer: the publish error says why, and no temporary file "
          "is left") {
    namespace fs = std::filesystem;
    test::temp_dir dir("storage_renamed");
    const fs::path run = dir.path() / "run";
    const fs::path moved = dir.path() / "moved";
    const std::string key = "index/000000000/000000000005_worker_0.json";
    for (const bool durable : {false, true}) {
        INFO("durable: " << durable);
        local_storage::options options;
        options.durable = durable;
        const local_storage s(run, options);
        {
            auto w = s.open_write(key);
            w.append("{}");
            fs::rename(run, moved); // as `mv run moved` while a hook writes
            const std::string what = test::error_of([&] { w.commit(); });
            CHECK(what == "cannot publish " + (run / key).string() + ": " + std::strerror(ENOENT));
        }
        CHECK(test::temporary_files(moved) == 0);
        CHECK_FALSE(fs::exists(moved / key));
        CHECK_FALSE(fs::exists(run));
        fs::remove_all(moved);

        // Written, never committed: the temporary file goes with the writer, wherever it now is.
        {
            auto w = s.open_write(key);
            w.append("partial");
            fs::rename(run, moved);
        }
        CHECK(test::temporary_files(moved) == 0);
        fs::remove_all(moved);
    }
}

TEST_CASE("list filters by string prefix, sorted, after a key") {
    test::temp_dir dir("storage");
    local_storage s(dir.path());
    s.put("index/000000000/000000000002_worker_0.json", "{}");
    s.put("index/000000000/000000000001_worker_0.json", "{}");
    s.put("index/000000001/000000001000_worker_0.json", "{}");
    s.put("collections/000000000/worker_0_collections.json", "{}");
    const auto all = s.list("index/");
    REQUIRE(all.size() == 3);
    CHECK(all[0] == "index/000000000/000000000001_worker_0.json");
    CHECK(all[2] == "index/000000001/000000001000_worker_0.json");
    CHECK(s.list("index/000000001").size() == 1);
    CHECK(s.list("index/", "index/000000000/000000000002_worker_0.json").size() == 1);
    CHECK(s.list("nothing/").empty());
}

TEST_CASE("keys that escape the root are refused") {
    test::temp_dir dir("storage");
    local_storage s(dir.path());
    CHECK_THROWS_AS(s.put("../escape", "x"), invalid_name);
    CHECK_THROWS_AS(s.put("/etc/passwd", "x"), invalid_name);
    CHECK_THROWS_AS(s.put("a/./b", "x"), invalid_name);
    CHECK_THROWS_AS(s.put(std::string("a\0b", 3), "x"), invalid_name);
    CHECK_THROWS_AS(s.put(std::string(300, 'n'), "x"), invalid_name);
    CHECK_THROWS_AS(s.put("a//b", "x"), invalid_name);
    CHECK_FALSE(std::filesystem::exists(dir.path().parent_path() / "escape"));
}

namespace {

// Every published key below `dir` that starts with `prefix` and sorts after `start_after`,
// found by walking the whole tree: the reference the pruned listing must equal.
std::vector<std::string> walk_listing(const std::filesystem::path& dir, const std::string& prefix,
                                      const std::string& start_after) {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        const std::string key = entry.path().lexically_relative(dir).generic_string();
        if (entry.is_regular_file() && key.compare(0, prefix.size(), prefix) == 0 && key > start_after &&
            key.size() > 4 && key.compare(key.size() - 4, 4, ".tmp") != 0) {
            out.push_back(key);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("local_storage lists only the directories that can hold keys after start_after, and the same keys") {
    test::temp_dir dir("listing");
    const local_storage storage(dir.path());
    for (std::int64_t step : {0, 1, 2, 999, 1000, 1001, 2500, 12000}) {
        for (const char* worker : {"worker_0", "worker_1", "worker_10"}) {
            storage.put(format::index_file_key(step, worker), "{}");
        }
    }
    storage.put("events/000000000001/000000000001_worker_0.tfevents", "e");
    // Noise: a file being written, and something that is not an index file.
    std::ofstream(dir.path() / "index" / "000000001" / "000000001001_worker_0.json.5.tmp") << "x";
    std::ofstream(dir.path() / "index" / "000000001" / "notes.txt") << "x";
    std::filesystem::create_directories(dir.path() / "index" / "000000099");
    const auto all = storage.list("index/", "");
    REQUIRE(all.size() == 8 * 3 + 1); // notes.txt is listed; the trial skips it by name
    CHECK(all == walk_listing(dir.path(), "index/", ""));
    std::vector<std::string> starts(all.begin(), all.end());
    for (const char* extra : {"index/000000001/", "index/000000002/000000002500_worker_0.json.x", "index/000000099/",
                              "index/", "", "events/", "zzz", "index/000000001"}) {
        starts.emplace_back(extra);
    }
    for (const std::string& prefix : {std::string("index/"), std::string("index/000000001"), std::string(""),
                                      std::string("events/000000000001/"), std::string("ind")}) {
        for (const std::string& start : starts) {
            INFO("prefix '" << prefix << "', start_after '" << start << "'");
            CHECK(storage.list(prefix, start) == walk_listing(dir.path(), prefix, start));
        }
    }
    test::temp_dir empty("listing_empty");
    CHECK(local_storage(empty.path()).list("index/", "").empty());
}

TEST_CASE("local_storage opens objects for positional reads (the open_read capability)") {
    test::temp_dir dir("storage_reader");
    const local_storage s(dir.path());
    s.put("events/e.tfevents", "0123456789");
    const auto reader = s.open_read("events/e.tfevents");
    CHECK(reader.size() == 10);
    std::string out(4, '\0');
    reader.read_at(3, out.data(), out.size());
    CHECK(out == "3456");
    CHECK_THROWS_WITH(reader.read_at(8, out.data(), out.size()), Catch::Contains("ends at byte 10"));
    CHECK_THROWS_AS(s.open_read("events/missing.tfevents"), object_not_found);
    // Through the erased handle, as the trial uses it.
    const any_storage erased = s;
    const auto object = erased.open_read("events/e.tfevents");
    REQUIRE(object != nullptr);
    CHECK(object->size() == 10);
    CHECK(erased.request_concurrency() == 1);
    CHECK(erased.target<local_storage>() != nullptr);
}
