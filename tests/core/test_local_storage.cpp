#include <catch2/catch.hpp>

#include <filesystem>

#include "support.hpp"
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
