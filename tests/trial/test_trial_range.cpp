// A trial that reads part of a run: a step range lists and reads only the index files of its
// steps (the index's folders it covers, from its first step's name to its last), a worker
// filter only the chosen workers' files; what they read equals the full trial's reading of
// the same steps and workers. And the bounded listing of the storage concept.

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counting_storage.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/storage/memory_storage.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::mode;
using tdbg::test::counters;
using tdbg::test::counting_storage;
using tdbg::test::iota_value;
using tdbg::test::run_writer;
using tdbg::test::saved_tensor;
using steps_t = std::vector<std::int64_t>;

namespace {

// Steps 0, 250, 500, ... 2750 (three folders of the index: 0-999, 1000-1999, 2000-2999), each
// written by worker_0, worker_1 and worker_2, whose values differ; the run has ended.
constexpr std::int64_t step_stride = 250;
constexpr std::int64_t run_steps = 12;

void write_three_worker_run(const run_writer& w) {
    for (const char* worker : {"worker_0", "worker_1", "worker_2"}) {
        w.collections(worker, 3);
    }
    for (std::int64_t i = 0; i < run_steps; ++i) {
        const std::int64_t step = i * step_stride;
        for (int k = 0; k < 3; ++k) {
            const float base = static_cast<float>(step * 10 + k);
            w.step(step, "worker_" + std::to_string(k), mode::train, i,
                   {saved_tensor{"w", iota_value(base, 3), {}, {}},
                    saved_tensor{"loss", tdbg::tensor_value::scalar(base), {}, {}}});
        }
    }
    w.end();
}

// The first element of every value of `name` at `steps`, from `worker` (none: the default worker).
std::vector<float> firsts(const tdbg::trial& t, const std::string& name, const steps_t& steps,
                          const std::optional<std::string>& worker = std::nullopt) {
    std::vector<float> out;
    for (const std::int64_t s : steps) {
        out.push_back(t.tensor(name).value(s, mode::global, worker).data_as<float>()[0]);
    }
    return out;
}

} // namespace

TEST_CASE("trial range: a step range reads only its index files, and reads them as the full trial does") {
    tdbg::test::temp_dir dir("range_index");
    write_three_worker_run(run_writer(dir.path()));

    auto all_counts = std::make_shared<counters>();
    const auto all = tdbg::open_trial(counting_storage(dir.path(), all_counts), "all");
    CHECK(all_counts->index_reads == run_steps * 3);

    // Steps 1000 to 2249: the second folder and the first step of the third.
    auto c = std::make_shared<counters>();
    const auto part = tdbg::open_trial(counting_storage(dir.path(), c), "part", tdbg::step_range{1000, 2250});
    CHECK(c->index_reads == 5 * 3);
    CHECK(part.steps() == steps_t{1000, 1250, 1500, 1750, 2000});
    CHECK(part.tensor("w").steps() == steps_t{1000, 1250, 1500, 1750, 2000});
    CHECK(part.steps(mode::train) == steps_t{4, 5, 6, 7, 8});
    CHECK(part.num_workers() == 3);
    CHECK(part.workers() == std::vector<std::string>{"worker_0", "worker_1", "worker_2"});
    for (const char* worker : {"worker_0", "worker_1", "worker_2"}) {
        CHECK(firsts(part, "w", part.steps(), std::string(worker)) ==
              firsts(all, "w", part.steps(), std::string(worker)));
    }
    CHECK(firsts(part, "loss", part.steps()) == std::vector<float>{10000.0F, 12500.0F, 15000.0F, 17500.0F, 20000.0F});
    // Its two folders listed, one listing each; a finished run is not listed again.
    CHECK(c->lists == 2 + 1); // and the collection files, once
    const int lists = c->lists;
    CHECK(part.steps().size() == 5);
    CHECK(c->lists == lists);

    // A range inside one folder: that folder alone, from the range's first step to its last.
    auto one = std::make_shared<counters>();
    const auto inner = tdbg::open_trial(counting_storage(dir.path(), one), "inner", tdbg::step_range{260, 750});
    CHECK(inner.steps() == steps_t{500});
    CHECK(one->index_reads == 3);
    CHECK(one->lists == 1 + 1);

    // A range with no end: from its first step's folder on.
    auto open_ended = std::make_shared<counters>();
    const auto tail =
        tdbg::open_trial(counting_storage(dir.path(), open_ended), "tail", tdbg::step_range{2500, std::nullopt});
    CHECK(tail.steps() == steps_t{2500, 2750});
    CHECK(open_ended->index_reads == 2 * 3);
}

TEST_CASE("trial range: a worker filter reads only its workers' index files, and they alone make steps complete") {
    tdbg::test::temp_dir dir("range_workers");
    const run_writer w(dir.path());
    write_three_worker_run(w);

    auto c = std::make_shared<counters>();
    tdbg::trial_options options;
    options.workers = {"worker_1"};
    const auto one = tdbg::open_trial(counting_storage(dir.path(), c), "one", {}, options);
    CHECK(c->index_reads == run_steps);
    CHECK(one.workers() == std::vector<std::string>{"worker_1"});
    CHECK(one.num_workers() == 1);
    CHECK(one.steps().size() == static_cast<std::size_t>(run_steps));
    const auto all = tdbg::open_trial(tdbg::local_storage(dir.path()), "all");
    // Its default worker is the one it loaded: its values are worker_1's.
    CHECK(firsts(one, "w", one.steps()) == firsts(all, "w", all.steps(), std::string("worker_1")));
    CHECK(one.tensor("w").workers(0) == std::vector<std::string>{"worker_1"});

    // Both filters at once.
    auto both_counts = std::make_shared<counters>();
    options.workers = {"worker_2", "worker_0"};
    const auto both =
        tdbg::open_trial(counting_storage(dir.path(), both_counts), "both", tdbg::step_range{0, 500}, options);
    CHECK(both_counts->index_reads == 2 * 2);
    CHECK(both.num_workers() == 2);
    CHECK(both.steps() == steps_t{0, 250});
    CHECK(firsts(both, "w", both.steps(), std::string("worker_2")) == std::vector<float>{2.0F, 2502.0F});

    // A worker the run does not have is refused, naming the run's workers.
    options.workers = {"worker_9"};
    CHECK_THROWS_WITH(tdbg::open_trial(tdbg::local_storage(dir.path()), "bad", {}, options),
                      Catch::Contains("invalid worker 'worker_9'") && Catch::Contains("worker_0, worker_1, worker_2"));
}

TEST_CASE("trial range: in a live run a step is complete once the workers loaded wrote it") {
    tdbg::test::temp_dir dir("range_live");
    const run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    w.step(0, "worker_0", mode::train, 0, {saved_tensor{"w", iota_value(0.0F, 2), {}, {}}});

    const auto all = tdbg::open_trial(tdbg::local_storage(dir.path()), "all");
    CHECK(all.steps().empty()); // worker_1 has not written step 0
    tdbg::trial_options options;
    options.workers = {"worker_0"};
    const auto one = tdbg::open_trial(tdbg::local_storage(dir.path()), "one", {}, options);
    CHECK(one.steps() == steps_t{0});
    CHECK(one.last_complete_step() == 0);
    CHECK_FALSE(one.loaded_all_steps());

    // worker_1's files of later steps are passed over; the end marker still ends the run.
    w.step(0, "worker_1", mode::train, 0, {saved_tensor{"w", iota_value(5.0F, 2), {}, {}}});
    w.step(1, "worker_1", mode::train, 1, {saved_tensor{"w", iota_value(6.0F, 2), {}, {}}});
    w.end();
    CHECK(one.steps() == steps_t{0});
    CHECK(one.loaded_all_steps());
    CHECK(one.tensor("w").workers(0) == std::vector<std::string>{"worker_0"});
    CHECK(all.steps() == steps_t{0, 1});
}

TEST_CASE("storage: a bounded listing stops at its last key, with or without the backend's own") {
    tdbg::memory_storage memory;
    for (const char* key : {"index/a", "index/b", "index/c", "index/d", "other/e"}) {
        memory.put(key, "x");
    }
    const tdbg::any_storage native(memory);
    using keys = std::vector<std::string>;
    CHECK(native.list_range("index/", "index/a", "index/c") == keys{"index/b", "index/c"});
    CHECK(native.list_range("index/", "", "index/b") == keys{"index/a", "index/b"});
    CHECK(native.list_range("index/", "index/b", "") == keys{"index/c", "index/d"});
    CHECK(native.list_range("index/", "index/d", "index/z").empty());

    // counting_storage has no list_range: any_storage lists and drops the keys after the last.
    tdbg::test::temp_dir dir("range_listing");
    const tdbg::local_storage local(dir.path());
    for (const char* key : {"index/a", "index/b", "index/c"}) {
        local.put(key, "x");
    }
    auto c = std::make_shared<counters>();
    const tdbg::any_storage fallback(counting_storage(dir.path(), c));
    CHECK(fallback.list_range("index/", "index/a", "index/b") == keys{"index/b"});
    CHECK(c->lists == 1);
}

TEST_CASE("trial range: first_worker_only reads each step's first worker's index file, the others counted") {
    tdbg::test::temp_dir dir("range_first_worker");
    write_three_worker_run(run_writer(dir.path()));

    auto c = std::make_shared<counters>();
    tdbg::trial_options options;
    options.first_worker_only = true;
    const auto first = tdbg::open_trial(counting_storage(dir.path(), c), "first", {}, options);
    CHECK(c->index_reads == run_steps);
    const auto all = tdbg::open_trial(tdbg::local_storage(dir.path()), "all");
    CHECK(first.steps() == all.steps());
    CHECK(first.steps(mode::train) == all.steps(mode::train));
    CHECK(first.num_workers() == 3);
    CHECK(firsts(first, "w", first.steps()) == firsts(all, "w", all.steps()));
    CHECK(firsts(first, "loss", first.steps()) == firsts(all, "loss", all.steps()));
    CHECK(first.tensor("w").workers(0) == std::vector<std::string>{"worker_0"});

    // With a worker filter: the first of the workers loaded.
    auto filtered = std::make_shared<counters>();
    options.workers = {"worker_2", "worker_1"};
    const auto later = tdbg::open_trial(counting_storage(dir.path(), filtered), "later", {}, options);
    CHECK(filtered->index_reads == run_steps);
    CHECK(firsts(later, "w", later.steps()) == firsts(all, "w", all.steps(), std::string("worker_1")));
}

TEST_CASE("trial range: first_worker_only takes each step's first worker from the names listed") {
    tdbg::test::temp_dir dir("range_first_worker_steps");
    const run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    const auto write = [&](std::int64_t step, const char* worker, float value) {
        w.step(step, worker, mode::train, step, {saved_tensor{"w", iota_value(value, 2), {}, {}}});
    };
    write(0, "worker_1", 10.0F); // worker_1 first: the only file listed of step 0

    auto c = std::make_shared<counters>();
    tdbg::trial_options options;
    options.first_worker_only = true;
    const auto first = tdbg::open_trial(counting_storage(dir.path(), c), "first", {}, options);
    const auto all = tdbg::open_trial(tdbg::local_storage(dir.path()), "all");
    CHECK(first.steps().empty()); // worker_0 has not written step 0: incomplete, as for the full trial
    CHECK(all.steps().empty());
    CHECK(c->index_reads == 1);

    // worker_0 sorts first: its file of step 0, published later, is read too, and it is the default.
    write(0, "worker_0", 0.0F);
    // Step 1 by both, worker_1's counted; step 2 by worker_1 alone (worker_0 stopped): read.
    write(1, "worker_0", 1.0F);
    write(1, "worker_1", 11.0F);
    write(2, "worker_1", 12.0F);
    w.end();
    CHECK(first.steps() == steps_t{0, 1, 2});
    CHECK(all.steps() == steps_t{0, 1, 2});
    CHECK(c->index_reads == 4);
    CHECK(firsts(first, "w", first.steps()) == std::vector<float>{0.0F, 1.0F, 12.0F});
    CHECK(firsts(first, "w", first.steps()) == firsts(all, "w", all.steps()));
    CHECK(first.last_complete_step() == 2);
}

TEST_CASE("trial range: with first_worker_only a live step is complete once every worker listed it") {
    tdbg::test::temp_dir dir("range_first_worker_live");
    const run_writer w(dir.path());
    for (const char* worker : {"worker_0", "worker_1", "worker_2"}) {
        w.collections(worker, 3);
    }
    const auto write = [&](std::int64_t step, const char* worker) {
        w.step(step, worker, mode::train, step, {saved_tensor{"w", iota_value(0.0F, 2), {}, {}}});
    };
    write(0, "worker_0");
    write(0, "worker_1");
    auto c = std::make_shared<counters>();
    tdbg::trial_options options;
    options.first_worker_only = true;
    const auto first = tdbg::open_trial(counting_storage(dir.path(), c), "first", {}, options);
    CHECK(first.steps().empty());
    CHECK(first.last_complete_step() == -1);
    write(0, "worker_2");
    write(1, "worker_0");
    CHECK(first.steps() == steps_t{0}); // step 1 waits for worker_1 and worker_2
    CHECK(first.last_complete_step() == 0);
    CHECK_FALSE(first.loaded_all_steps());
    CHECK(c->index_reads == 2); // worker_0's files only
}
