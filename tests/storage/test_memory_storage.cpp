// memory_storage: the storage contract (storage/storage.hpp), checked on it and
// on local_storage alike so that the two backends cannot disagree; what only the
// memory backend does; and a hook writing into it while a trial reads it.

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/memory_storage.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace memory_storage_test {

using tdbg::any_storage;

// The contract every backend keeps, through the handle the library holds.
void check_contract(const any_storage& s) {
    INFO("storage " << s.describe());
    CHECK_FALSE(s.exists("a/b"));
    CHECK(s.list("").empty());

    s.put("index/000000000/000000000002_worker_0.json", "two");
    s.put("index/000000000/000000000000_worker_0.json", "zero");
    s.put("index/000000000/000000000001_worker_0.json", "one");
    s.put("collections/000000000/worker_0_collections.json", "{}");
    s.put("indexes", "not below index/");

    CHECK(s.read("index/000000000/000000000001_worker_0.json") == "one");
    CHECK(s.exists("indexes"));
    CHECK_FALSE(s.exists("index"));

    // A string prefix, sorted, after start_after.
    CHECK(s.list("index/") == std::vector<std::string>{"index/000000000/000000000000_worker_0.json",
                                                       "index/000000000/000000000001_worker_0.json",
                                                       "index/000000000/000000000002_worker_0.json"});
    CHECK(s.list("index/", "index/000000000/000000000000_worker_0.json") ==
          std::vector<std::string>{"index/000000000/000000000001_worker_0.json",
                                   "index/000000000/000000000002_worker_0.json"});
    CHECK(s.list("index/", "index/000000000/000000000002_worker_0.json").empty());
    CHECK(s.list("index/000000000/000000000001").size() == 1);
    CHECK(s.list("", "index/000000000/000000000002_worker_0.json") == std::vector<std::string>{"indexes"});
    CHECK(s.list("", "a").size() == 5);
    CHECK(s.list("events/").empty());

    // Put replaces an object whole.
    s.put("indexes", "replaced");
    CHECK(s.read("indexes") == "replaced");

    // Ranges, and the end of the object.
    s.put("events/e", "0123456789");
    CHECK(s.read_range("events/e", 2, 3) == "234");
    CHECK(s.read_range("events/e", 10, 0).empty());
    CHECK_THROWS_AS(s.read_range("events/e", 8, 3), tdbg::storage_error);
    CHECK_THROWS_AS(s.read_range("events/e", 11, 0), tdbg::storage_error);
    CHECK_THROWS_AS(s.read("events/missing"), tdbg::object_not_found);
    CHECK_THROWS_AS(s.read_range("events/missing", 0, 1), tdbg::object_not_found);

    // Positional reads.
    const auto r = s.open_read("events/e");
    REQUIRE(r != nullptr);
    CHECK(r->size() == 10);
    std::string out(4, '\0');
    r->read_at(6, out.data(), out.size());
    CHECK(out == "6789");
    CHECK_THROWS_AS(r->read_at(7, out.data(), out.size()), tdbg::storage_error);

    // A writer publishes at commit; destroyed uncommitted, nothing is published.
    {
        auto w = s.open_write("events/w");
        w.append("ab");
        w.append("cd");
        CHECK_FALSE(s.exists("events/w"));
        w.commit();
    }
    CHECK(s.read("events/w") == "abcd");
    {
        auto w = s.open_write("events/discarded");
        w.append("xyz");
    }
    CHECK_FALSE(s.exists("events/discarded"));
    CHECK(s.list("events/") == std::vector<std::string>{"events/e", "events/w"});

    // Remove, and again (no error).
    REQUIRE(s.remove("events/w"));
    CHECK_FALSE(s.exists("events/w"));
    CHECK(s.remove("events/w"));

    // put_if_absent publishes a key once; the object first published stays.
    CHECK(s.put_if_absent("claims/w", "first"));
    CHECK_FALSE(s.put_if_absent("claims/w", "second"));
    CHECK(s.read("claims/w") == "first");
    CHECK(s.list("claims/") == std::vector<std::string>{"claims/w"}); // nothing else left behind
    CHECK_THROWS_AS(s.put_if_absent("../claim", "x"), tdbg::invalid_name);
    // Threads racing for one key: exactly one publishes it, with its bytes.
    {
        constexpr int racers = 8;
        std::atomic<int> won{0};
        std::atomic<int> winner{-1};
        std::vector<std::thread> threads;
        for (int i = 0; i < racers; ++i) {
            threads.emplace_back([&, i] {
                if (s.put_if_absent("claims/race", std::to_string(i))) {
                    ++won;
                    winner = i;
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        CHECK(won.load() == 1);
        CHECK(s.read("claims/race") == std::to_string(winner.load()));
        CHECK(s.list("claims/") == std::vector<std::string>{"claims/race", "claims/w"});
    }

    // Keys are checked.
    CHECK_THROWS_AS(s.put("../escape", "x"), tdbg::invalid_name);
    CHECK_THROWS_AS(s.put("/absolute", "x"), tdbg::invalid_name);
    CHECK_THROWS_AS(s.read("a//b"), tdbg::invalid_name);
    CHECK_THROWS_AS(s.open_write("a/./b"), tdbg::invalid_name);
}

} // namespace memory_storage_test

TEST_CASE("memory_storage keeps the storage contract") {
    memory_storage_test::check_contract(tdbg::memory_storage("contract"));
}

TEST_CASE("local_storage keeps the same storage contract as memory_storage") {
    tdbg::test::temp_dir dir("memory_contract");
    memory_storage_test::check_contract(tdbg::local_storage(dir.path()));
}

TEST_CASE("memory_storage copies share one run and describe it as memory://name") {
    const tdbg::memory_storage a("shared");
    const tdbg::memory_storage b = a; // NOLINT(performance-unnecessary-copy-initialization): the point
    a.put("k", "v");
    CHECK(b.read("k") == "v");
    CHECK(b.describe() == "memory://shared");
    CHECK(a.name() == "shared");
    CHECK(b.size() == 1);
    CHECK(b.total_bytes() == 1);
    const tdbg::any_storage erased = b;
    REQUIRE(erased.target<tdbg::memory_storage>() != nullptr);
    CHECK(erased.target<tdbg::memory_storage>()->describe() == "memory://shared");
    CHECK(tdbg::memory_storage("other").list("").empty()); // another run
}

TEST_CASE("memory_storage errors name the key and the run") {
    const tdbg::memory_storage s("errors");
    s.put("events/e", "0123");
    CHECK_THROWS_WITH(s.read("index/missing.json"), Catch::Contains("memory://errors/index/missing.json"));
    CHECK_THROWS_WITH(s.read_range("events/e", 2, 5),
                      Catch::Contains("memory://errors/events/e") && Catch::Contains("ends at byte 4"));
    auto w = s.open_write("events/twice");
    w.commit();
    CHECK_THROWS_AS(w.commit(), tdbg::usage_error);
    CHECK_THROWS_AS(w.append("x"), tdbg::usage_error);
}

TEST_CASE("an object opened for reads keeps its bytes when it is replaced or removed") {
    const tdbg::memory_storage s("snapshot");
    s.put("o", "first");
    const tdbg::memory_storage::reader r = s.open_read("o");
    s.put("o", "second, longer");
    s.remove("o");
    std::string out(5, '\0');
    r.read_at(0, out.data(), out.size());
    CHECK(out == "first");
    CHECK(r.size() == 5);
}

TEST_CASE("a trial reads what a hook writes into memory_storage, also while it is written") {
    const tdbg::memory_storage run("hooked");
    tdbg::hook_options options;
    options.include_collections = {"losses"};
    options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    tdbg::hook h(run, options);
    h.set_mode(tdbg::mode::train);
    h.begin_step();
    h.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(2.0F));
    h.end_step();
    h.flush();

    const tdbg::trial live = tdbg::open_trial(run, "hooked");
    CHECK(live.path().find("memory://hooked") != std::string::npos);
    CHECK_FALSE(live.loaded_all_steps());
    live.wait_for_steps({0});
    CHECK(live.tensor("CrossEntropyLoss_output_0").value(0).data_as<float>()[0] == 2.0F);

    for (int step = 1; step < 5; ++step) {
        h.begin_step();
        h.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(2.0F - static_cast<float>(step) / 4));
    }
    h.close();
    live.refresh();
    CHECK(live.loaded_all_steps());
    CHECK(live.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4});
    CHECK(live.tensor("CrossEntropyLoss_output_0").value(4).data_as<float>()[0] == 1.0F);
    CHECK(run.exists(std::string(tdbg::format::end_marker_key)));
}

TEST_CASE("memory_storage publishes whole objects while threads write and list side by side") {
    const tdbg::memory_storage s("threads");
    constexpr int writers = 4;
    constexpr int per_writer = 200;
    std::atomic<bool> torn{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < writers; ++t) {
        threads.emplace_back([&s, t] {
            for (int i = 0; i < per_writer; ++i) {
                auto w = s.open_write("w" + std::to_string(t) + "/" + std::to_string(i));
                w.append(std::string(100, 'a'));
                w.append(std::string(100, 'b'));
                w.commit();
            }
        });
    }
    threads.emplace_back([&s, &torn] {
        std::size_t seen = 0;
        while (seen < static_cast<std::size_t>(writers * per_writer)) {
            const auto keys = s.list("w");
            seen = keys.size();
            for (const auto& key : keys) {
                if (s.read(key).size() != 200) {
                    torn = true;
                }
            }
        }
    });
    for (auto& t : threads) {
        t.join();
    }
    CHECK_FALSE(torn);
    CHECK(s.size() == static_cast<std::size_t>(writers * per_writer));
    CHECK(s.total_bytes() == static_cast<std::uint64_t>(writers * per_writer * 200));
}
