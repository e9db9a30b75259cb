// s3_storage against a real, signature-checking S3 server on loopback
// (OpenStack Swift's s3api, started by scripts/s3-server.sh).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "s3_test_server.hpp"
#include "support.hpp"
#include "tdbg/storage/s3.hpp"
#include "tdbg/storage/storage.hpp"

using tdbg::test::s3_test_server;

namespace {

/// Bytes that differ at every position, so a misplaced range shows.
std::string pattern(std::size_t n, unsigned seed = 1) {
    std::string out(n, '\0');
    std::uint32_t x = seed * 2654435761u + 12345u;
    for (std::size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        out[i] = static_cast<char>(x >> 24);
    }
    return out;
}

/// Runs f(i) for i in [0, n) on `threads` threads.
template <class F>
void parallel_for(int n, int threads, F f) {
    std::atomic<int> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = next++; i < n; i = next++) {
                f(i);
            }
        });
    }
    for (auto& t : pool) {
        t.join();
    }
}

} // namespace

TEST_CASE("s3 put, read, read_range, exists and remove round-trip", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const tdbg::s3_storage s(server.new_run(), server.options());
    const std::string data = pattern(100000);
    s.put("events/000000000001/a.tfevents", data);
    CHECK(s.read("events/000000000001/a.tfevents") == data);
    CHECK(s.read_range("events/000000000001/a.tfevents", 0, 10) == data.substr(0, 10));
    CHECK(s.read_range("events/000000000001/a.tfevents", 4321, 777) == data.substr(4321, 777));
    CHECK(s.read_range("events/000000000001/a.tfevents", 99990, 10) == data.substr(99990, 10));
    CHECK(s.read_range("events/000000000001/a.tfevents", 100000, 0).empty());
    CHECK(s.exists("events/000000000001/a.tfevents"));
    CHECK_FALSE(s.exists("events/000000000001"));
    CHECK_FALSE(s.exists("events/000000000001/b.tfevents"));

    CHECK_THROWS_WITH(s.read_range("events/000000000001/a.tfevents", 99990, 11),
                      Catch::Contains("ends at byte 100000"));
    CHECK_THROWS_WITH(s.read_range("events/000000000001/a.tfevents", 200000, 5), Catch::Contains("ends at byte 100000"));
    CHECK_THROWS_AS(s.read("missing"), tdbg::object_not_found);
    CHECK_THROWS_AS(s.read_range("missing", 0, 4), tdbg::object_not_found);
    CHECK_THROWS_AS(s.read_range("missing", 0, 0), tdbg::object_not_found);

    // an empty object, an overwrite, and a writer with several appends
    s.put("empty", "");
    CHECK(s.read("empty").empty());
    s.put("empty", "now full");
    CHECK(s.read("empty") == "now full");
    {
        auto w = s.open_write("index/000000000/000000000001_worker_0.json");
        w.append("{\"a\": ");
        w.append("1}");
        CHECK_FALSE(s.exists("index/000000000/000000000001_worker_0.json")); // nothing before commit
        w.commit();
        CHECK_THROWS_AS(w.append("x"), tdbg::storage_error);
    }
    CHECK(s.read("index/000000000/000000000001_worker_0.json") == "{\"a\": 1}");
    s.remove("empty");
    CHECK_FALSE(s.exists("empty"));
    s.remove("empty"); // removing twice is fine
    CHECK(s.stats().retries == 0);
}

TEST_CASE("s3 list: prefixes, start_after, *.tmp, run isolation and small pages", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("jobs/run");
    const std::string bucket = url.substr(5, url.find('/', 5) - 5);
    auto o = server.options();
    o.list_page_size = 7;
    const tdbg::s3_storage s(url, o);
    const tdbg::s3_storage sibling("s3://" + bucket + "/jobs/run2", o); // shares a string prefix with "jobs/run"
    std::vector<std::string> expected;
    for (int i = 0; i < 50; ++i) {
        const std::string key = "index/000000000/" + std::string(12 - std::to_string(i).size(), '0') + std::to_string(i) +
                                "_worker_0.json";
        expected.push_back(key);
    }
    parallel_for(50, 4, [&](int i) { s.put(expected[static_cast<std::size_t>(i)], std::to_string(i)); });
    s.put("collections/000000000/worker_0_collections.json", "{}");
    s.put("index/000000000/partial.json.tmp", "x");
    sibling.put("index/000000000/000000000000_worker_9.json", "other run");
    std::sort(expected.begin(), expected.end());

    const auto before = s.stats().requests;
    const auto index = s.list("index/");
    CHECK(index == expected);
    // 50 keys and one .tmp in pages of 7: 8 requests
    CHECK(s.stats().requests - before == 8);

    const auto after = s.list("index/", expected[41]);
    CHECK(after == std::vector<std::string>(expected.begin() + 42, expected.end()));
    CHECK(s.list("index/", "index/zzz").empty());
    CHECK(s.list("nothing/").empty());
    const auto all = s.list("");
    CHECK(all.size() == 51);
    CHECK(all.front() == "collections/000000000/worker_0_collections.json");
    CHECK(std::is_sorted(all.begin(), all.end()));
    CHECK(sibling.list("") == std::vector<std::string>{"index/000000000/000000000000_worker_9.json"});
    // a prefix that is not a directory name matches as a string prefix
    CHECK(s.list("index/000000000/00000000004").size() == 10);

    // A bounded listing stops paging at the page that passes its last key: keys 10-16, then
    // 17-23, which passes key 20.
    const auto bounded_before = s.stats().requests;
    CHECK(s.list_range("index/", expected[9], expected[20]) ==
          std::vector<std::string>(expected.begin() + 10, expected.begin() + 21));
    CHECK(s.stats().requests - bounded_before == 2);
    CHECK(tdbg::any_storage(s).list_range("index/", expected[47], "") ==
          std::vector<std::string>(expected.begin() + 48, expected.end()));
}

TEST_CASE("s3 list of more than 1000 keys follows the server's continuation tokens", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const tdbg::s3_storage s(server.new_run(), server.options());
    const int n = 1050;
    std::vector<std::string> expected;
    for (int i = 0; i < n; ++i) {
        expected.push_back("events/" + std::to_string(100000 + i * 7) + "/e.tfevents");
    }
    // many small requests from several threads through one storage
    parallel_for(n, 8, [&](int i) { s.put(expected[static_cast<std::size_t>(i)], std::to_string(i)); });
    std::sort(expected.begin(), expected.end());
    const auto before = s.stats().requests;
    const auto keys = s.list("events/");
    CHECK(s.stats().requests - before == 2); // 1000 + 50: a real second page
    CHECK(keys.size() == static_cast<std::size_t>(n));
    CHECK(keys == expected);
    CHECK(s.list("events/", expected[999]) == std::vector<std::string>(expected.begin() + 1000, expected.end()));
    CHECK(s.stats().retries == 0);
}

TEST_CASE("s3 keys with special characters are written, read, tested and listed", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const tdbg::s3_storage s(server.new_run("run with space+plus"), server.options());
    const std::vector<std::string> keys{
        "dir with space/a b.txt",
        "plus+sign=equals",
        "unicode/\xc3\xbcnic\xc3\xb6" "de/\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        "amp&q?hash#pct%25%",
        "tilde~star*paren()bang!quote'",
        "semi;comma,colon:dollar$at@",
        "dots/..x/.y/z.",
        "tab\tand\"quote<lt>gt",
        "percent%2Fslash",
    };
    for (std::size_t i = 0; i < keys.size(); ++i) {
        s.put(keys[i], "value " + std::to_string(i) + " of " + keys[i]);
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
        INFO(keys[i]);
        CHECK(s.read(keys[i]) == "value " + std::to_string(i) + " of " + keys[i]);
        CHECK(s.read_range(keys[i], 6, 1) == std::to_string(i));
        CHECK(s.exists(keys[i]));
    }
    std::vector<std::string> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    CHECK(s.list("") == sorted);
    CHECK(s.list("amp&q?") == std::vector<std::string>{"amp&q?hash#pct%25%"});
    CHECK(s.list("", "plus+sign=equals").size() ==
          static_cast<std::size_t>(std::count_if(keys.begin(), keys.end(), [](const std::string& k) {
              return k > "plus+sign=equals";
          })));
    CHECK_FALSE(s.exists("dir with space/a+b.txt")); // '+' is not a space in a path
}

TEST_CASE("s3 objects above the part size go up as multipart uploads of parts >= 5 MiB", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    auto o = server.options();
    o.part_size = 5u << 20;
    const tdbg::s3_storage s(server.new_run(), o);
    const std::string data = pattern((12u << 20) + 12345, 7);

    SECTION("writer, appended in odd pieces") {
        auto w = s.open_write("big/writer.bin");
        for (std::size_t at = 0; at < data.size(); at += 1000003) {
            w.append(std::string_view(data).substr(at, 1000003));
        }
        CHECK_FALSE(s.exists("big/writer.bin"));
        const auto before = s.stats().requests;
        w.commit();
        CHECK(s.stats().requests - before == 2); // the last part and the completion
        CHECK(s.read("big/writer.bin") == data);
        // ranges across the part boundaries
        CHECK(s.read_range("big/writer.bin", (5u << 20) - 3, 7) == data.substr((5u << 20) - 3, 7));
        CHECK(s.read_range("big/writer.bin", (10u << 20) - 1, 2) == data.substr((10u << 20) - 1, 2));
    }
    SECTION("put in one call") {
        const auto before = s.stats().requests;
        s.put("big/put.bin", data);
        CHECK(s.stats().requests - before == 5); // initiate, 3 parts, complete
        CHECK(s.read("big/put.bin") == data);
        CHECK(s.list("big/") == std::vector<std::string>{"big/put.bin"});
    }
    SECTION("an uncommitted writer leaves nothing behind") {
        {
            auto w = s.open_write("big/abandoned.bin");
            w.append(data);
        }
        CHECK_FALSE(s.exists("big/abandoned.bin"));
        CHECK(s.list("big/").empty());
    }
    CHECK(s.stats().retries == 0);
}

TEST_CASE("s3 with a wrong secret fails at once with an error naming the key id, not the secret", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run();
    auto o = server.options();
    o.secret_access_key = "Wr0ngS3cretValue/xyz";
    const tdbg::s3_storage s(url, o);
    for (int op = 0; op < 3; ++op) {
        try {
            if (op == 0) {
                s.put("k", "v");
            } else if (op == 1) {
                (void)s.read("k");
            } else {
                (void)s.list("");
            }
            FAIL("the server accepted a wrong secret");
        } catch (const tdbg::s3_error& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(e.http_status() == 403);
            CHECK(e.code() == "SignatureDoesNotMatch");
            CHECK_THAT(what, Catch::Contains(s3_test_server::access_key_id) && Catch::Contains("us-east-1") &&
                                 Catch::Contains(server.endpoint()) && Catch::Contains("SignatureDoesNotMatch"));
            CHECK(what.find("Wr0ngS3cretValue") == std::string::npos);
            CHECK(what.find(s3_test_server::secret_access_key) == std::string::npos);
        }
    }
    CHECK(s.stats().requests == 3); // 4xx: no retries
    // a HEAD reply has no body, but the status still tells
    CHECK_THROWS_AS(s.exists("k"), tdbg::s3_error);
    // and the right secret works against the same bucket
    const tdbg::s3_storage good(url, server.options());
    good.put("k", "v");
    CHECK(good.read("k") == "v");
}

TEST_CASE("s3 writes survive the server being killed and restarted in the middle", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const tdbg::s3_storage s(server.new_run(), server.patient_options());
    const int n = 120;
    std::atomic<int> written{0};
    std::atomic<bool> killed{false};
    std::string failure;
    std::thread writer([&] {
        try {
            for (int i = 0; i < n; ++i) {
                if (i == 30) {
                    // The rest go to a server that is down, however long the kill took to land.
                    if (!tdbg::test::wait_until([&] { return killed.load(); })) {
                        throw std::runtime_error("the server was not killed");
                    }
                }
                s.put("steps/" + std::to_string(1000 + i), pattern(2000 + static_cast<std::size_t>(i), static_cast<unsigned>(i)));
                ++written;
            }
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    int at_kill = 0;
    server.outage([&] {
        at_kill = written.load();
        return at_kill >= 30 || !failure.empty();
    }, [&] { killed = true; });
    writer.join();
    REQUIRE(server.available());
    INFO(failure);
    REQUIRE(failure.empty());
    CHECK(at_kill < n); // the kill really happened mid-sequence
    CHECK(s.stats().retries > 0);
    const auto keys = s.list("steps/");
    REQUIRE(keys.size() == static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        CHECK(s.read("steps/" + std::to_string(1000 + i)) == pattern(2000 + static_cast<std::size_t>(i), static_cast<unsigned>(i)));
    }
}

TEST_CASE("s3 serves many small parallel reads through pooled connections", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const tdbg::s3_storage s(server.new_run(), server.options());
    const std::string data = pattern(64 * 1024, 3);
    s.put("events/e.tfevents", data);
    const tdbg::s3_storage copy = s; // copies share the pool and the counters
    const auto before = s.stats().requests;
    std::atomic<int> mismatches{0};
    parallel_for(400, 8, [&](int i) {
        const std::uint64_t off = static_cast<std::uint64_t>(i) * 131 % (data.size() - 200);
        const std::string got = (i % 2 == 0 ? s : copy).read_range("events/e.tfevents", off, 100 + static_cast<std::uint64_t>(i % 100));
        if (got != data.substr(static_cast<std::size_t>(off), 100 + static_cast<std::size_t>(i % 100))) {
            ++mismatches;
        }
    });
    CHECK(mismatches == 0);
    CHECK(s.stats().requests - before == 400);
    CHECK(copy.stats().requests == s.stats().requests);
}
