// A trial opened while the run is being written: new steps appear as their
// index files land (and only those are read), completeness across workers,
// the end marker, refresh scopes, range_steps and concurrent readers.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "counting_storage.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::mode;
using tdbg::step_state;
using tdbg::test::iota_value;
using tdbg::test::run_writer;
using tdbg::test::saved_tensor;
using tdbg::test::counters;
using tdbg::test::counting_storage;
using steps_t = std::vector<std::int64_t>;
using namespace std::chrono_literals;

namespace {

tdbg::trial_options fast_options() {
    tdbg::trial_options o;
    o.poll_interval = 5ms;
    return o;
}

std::vector<saved_tensor> step_tensors(std::int64_t step, int worker = 0) {
    return {saved_tensor{"w", iota_value(static_cast<float>(step * 100 + worker * 10), 4), {}, {}},
            saved_tensor{"loss", tdbg::tensor_value::scalar(static_cast<float>(step)), {}, {}}};
}

float first_element(const tdbg::tensor_value& v) { return v.data_as<float>()[0]; }

} // namespace

TEST_CASE("live run: new steps appear, and only new index files are read") {
    tdbg::test::temp_dir dir("live_incremental");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0));

    auto c = std::make_shared<counters>();
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "live", {}, fast_options());
    CHECK(t.steps() == steps_t{0});
    CHECK(c->index_reads == 1);
    CHECK_FALSE(t.loaded_all_steps());
    CHECK(t.has_passed_step(1) == step_state::not_yet_available);

    w.step(1, "worker_0", mode::train, 1, step_tensors(1));
    w.step(2, "worker_0", mode::eval, 0, step_tensors(2));
    CHECK(t.steps() == steps_t{0, 1, 2});
    CHECK(c->index_reads == 3); // the two new ones only
    CHECK(t.steps(mode::eval) == steps_t{0});
    CHECK(t.steps() == steps_t{0, 1, 2});
    CHECK(c->index_reads == 3);
    CHECK(first_element(t.tensor("w").value(2)) == 200.0F);
    CHECK(first_element(t.tensor("w").value(0, mode::eval)) == 200.0F);

    // The end marker: everything is final, a step past the end is no_more_data.
    w.end();
    CHECK(t.has_passed_step(3) == step_state::unavailable);
    CHECK(t.loaded_all_steps());
    CHECK_THROWS_AS(t.tensor("w").value(3), tdbg::no_more_data);
    CHECK_THROWS_AS(t.wait_for_steps({3}), tdbg::no_more_data);
    CHECK_THROWS_AS(t.tensor("w").value(1, mode::eval), tdbg::no_more_data);
    const int lists = c->lists;
    CHECK(t.steps() == steps_t{0, 1, 2});
    CHECK(c->lists == lists); // a finished run is not listed again
}

TEST_CASE("live run: a writer thread and a reader waiting for steps") {
    tdbg::test::temp_dir dir("live_thread");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0));
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "live", {}, fast_options());

    std::thread writer([&] {
        for (std::int64_t s = 1; s < 20; ++s) {
            std::this_thread::sleep_for(2ms);
            w.step(s, "worker_0", mode::train, s, step_tensors(s));
        }
        w.end();
    });
    t.wait_for_steps({5, 19});
    CHECK(t.has_passed_step(19) == step_state::available);
    const auto values = t.tensor("w").values();
    REQUIRE(values.size() >= 20);
    for (std::int64_t s = 0; s < 20; ++s) {
        CHECK(first_element(values.at(s)) == static_cast<float>(s * 100));
    }
    writer.join();
    CHECK_THROWS_AS(t.wait_for_steps({20}), tdbg::no_more_data);
    CHECK(t.steps().size() == 20);
}

TEST_CASE("live run: with two workers a step is complete when both wrote it, or a later one is") {
    tdbg::test::temp_dir dir("live_workers");
    run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0, 0));
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "two", {}, fast_options());
    CHECK(t.num_workers() == 2);
    CHECK(t.workers() == std::vector<std::string>{"worker_0", "worker_1"});

    CHECK(t.steps().empty());
    CHECK(t.steps(mode::global, true) == steps_t{0});
    CHECK(t.has_passed_step(0) == step_state::not_yet_available);
    CHECK(t.tensor("w").steps().empty());
    CHECK(t.tensor("w").steps(mode::train, true) == steps_t{0});
    // What is there can be read already, as in smdebug.
    CHECK(first_element(t.tensor("w").value(0)) == 0.0F);
    CHECK_THROWS_AS(t.wait_for_steps({0}, mode::global, 30ms), tdbg::step_not_yet_available);

    w.step(0, "worker_1", mode::train, 0, step_tensors(0, 1));
    CHECK(t.steps() == steps_t{0});
    CHECK(t.has_passed_step(0) == step_state::available);
    CHECK(t.tensor("w").workers(0) == std::vector<std::string>{"worker_0", "worker_1"});
    CHECK(first_element(t.tensor("w").value(0, mode::global, std::string("worker_1"))) == 10.0F);
    CHECK(t.last_complete_step() == 0);

    // worker_1 skips step 1; once both have written step 2, step 1 is final.
    w.step(1, "worker_0", mode::train, 1, step_tensors(1, 0));
    w.step(2, "worker_1", mode::train, 2, step_tensors(2, 1));
    CHECK(t.steps() == steps_t{0});
    CHECK(t.has_passed_step(1) == step_state::not_yet_available);
    w.step(2, "worker_0", mode::train, 2, step_tensors(2, 0));
    CHECK(t.steps() == steps_t{0, 1, 2});
    CHECK(t.has_passed_step(1) == step_state::available);
    CHECK(t.tensor("w").workers(1) == std::vector<std::string>{"worker_0"});
    CHECK_THROWS_AS(t.tensor("w").value(1, mode::global, std::string("worker_1")), tdbg::invalid_worker);
    // values() with a worker leaves out the steps it did not write.
    const auto of_worker_1 = t.tensor("w").values(mode::global, std::string("worker_1"));
    CHECK(of_worker_1.size() == 2);
    CHECK(of_worker_1.count(1) == 0);

    // An incomplete step becomes final at the end of the run.
    w.step(3, "worker_0", mode::train, 3, step_tensors(3, 0));
    CHECK(t.has_passed_step(3) == step_state::not_yet_available);
    w.end();
    CHECK(t.has_passed_step(3) == step_state::available);
    CHECK(t.steps() == steps_t{0, 1, 2, 3});
    CHECK(t.tensor("w").steps(mode::train) == steps_t{0, 1, 2, 3});
}

TEST_CASE("live run: no_refresh keeps the view fixed until the guard goes") {
    tdbg::test::temp_dir dir("live_refresh");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0));
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "r", {}, fast_options());
    CHECK(t.refreshing());
    {
        const auto guard = t.no_refresh();
        CHECK_FALSE(t.refreshing());
        w.step(1, "worker_0", mode::train, 1, step_tensors(1));
        CHECK(t.steps() == steps_t{0});
        CHECK_FALSE(t.has_tensor("new"));
        CHECK_THROWS_AS(t.tensor("w").value(1), tdbg::step_not_yet_available);
        {
            const auto inner = t.with_refresh();
            CHECK(t.refreshing());
            CHECK(t.steps() == steps_t{0, 1});
        }
        CHECK_FALSE(t.refreshing());
        w.step(2, "worker_0", mode::train, 2, step_tensors(2));
        CHECK(t.steps() == steps_t{0, 1});
        // wait_for_steps refreshes whatever the setting, as smdebug's does.
        t.wait_for_steps({2});
        CHECK(t.steps() == steps_t{0, 1, 2});
    }
    CHECK(t.refreshing());
    w.step(3, "worker_0", mode::train, 3, step_tensors(3));
    CHECK(t.steps() == steps_t{0, 1, 2, 3});
    // An explicit refresh works inside no_refresh.
    const tdbg::refresh_guard guard({t.refresh_flag()}, false);
    w.step(4, "worker_0", mode::train, 4, step_tensors(4));
    CHECK(t.steps().size() == 4);
    t.refresh();
    CHECK(t.steps().size() == 5);
}

TEST_CASE("live run: skipped steps are unavailable, future ones not yet available") {
    tdbg::test::temp_dir dir("live_gaps");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0));
    w.step(5, "worker_0", mode::train, 1, step_tensors(5));
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "gaps", {}, fast_options());
    CHECK(t.has_passed_step(3) == step_state::unavailable);
    CHECK_THROWS_AS(t.wait_for_steps({3}), tdbg::step_unavailable);
    CHECK_THROWS_AS(t.tensor("w").value(3), tdbg::step_unavailable);
    CHECK_THROWS_AS(t.tensor("w").value(6), tdbg::step_not_yet_available);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(t.wait_for_steps({6}, mode::global, 40ms), tdbg::step_not_yet_available);
    CHECK(std::chrono::steady_clock::now() - start >= 40ms);
    CHECK(t.mode_step(5) == std::optional<std::int64_t>(1));
}

TEST_CASE("range_steps: only the steps in range are loaded") {
    tdbg::test::temp_dir dir("range");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    for (std::int64_t s = 0; s < 10; ++s) {
        w.step(s, "worker_0", s < 6 ? mode::train : mode::eval, s < 6 ? s : s - 6, step_tensors(s));
    }
    w.end();
    const auto t = tdbg::create_trial(dir.path().string(), std::string("ranged"), tdbg::step_range{3, 8});
    CHECK(t.name() == "ranged");
    CHECK(t.steps() == steps_t{3, 4, 5, 6, 7});
    CHECK(t.steps(mode::eval) == steps_t{0, 1});
    CHECK(t.tensor("w").steps() == steps_t{3, 4, 5, 6, 7});
    CHECK(first_element(t.tensor("w").value(7)) == 700.0F);
    const auto open_start = tdbg::create_trial(dir.path().string(), std::nullopt, tdbg::step_range{7, std::nullopt});
    CHECK(open_start.steps() == steps_t{7, 8, 9});
    const auto open_end = tdbg::create_trial(dir.path().string(), std::nullopt, tdbg::step_range{std::nullopt, 2});
    CHECK(open_end.steps() == steps_t{0, 1});
    CHECK(open_end.name() == dir.path().filename().string());
    CHECK_THROWS_AS(tdbg::create_trial(dir.path().string(), std::nullopt, tdbg::step_range{5, 5}), tdbg::config_error);
}

TEST_CASE("live run: concurrent readers while the run grows") {
    tdbg::test::temp_dir dir("concurrent");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0));
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "c", {}, fast_options());
    std::atomic<bool> done{false};
    std::atomic<int> wrong{0};
    std::atomic<int> reads{0};
    std::atomic<int> reading{0}; // readers that have read the run once
    std::vector<std::thread> readers;
    for (int r = 0; r < 4; ++r) {
        readers.emplace_back([&, r] {
            bool counted = false;
            while (!done) {
                const auto steps = t.tensor("w").steps();
                for (std::int64_t s : steps) {
                    const float got = first_element(t.tensor("w").value(s));
                    wrong += got == static_cast<float>(s * 100) ? 0 : 1;
                    ++reads;
                }
                if (r % 2 == 0) {
                    (void)t.has_passed_step(static_cast<std::int64_t>(steps.size()));
                }
                if (!counted) {
                    counted = true;
                    ++reading;
                }
            }
        });
    }
    // The run grows while every reader reads, however late the machine's load starts them.
    CHECK(tdbg::test::wait_until([&] { return reading.load() == 4; }));
    for (std::int64_t s = 1; s < 60; ++s) {
        w.step(s, "worker_0", mode::train, s, step_tensors(s));
    }
    w.end();
    t.wait_for_steps({59});
    done = true;
    for (auto& th : readers) {
        th.join();
    }
    CHECK(wrong == 0);
    CHECK(reads > 0);
    CHECK(t.steps().size() == 60);
}

TEST_CASE("many index files load in parallel with the same result as one thread") {
    tdbg::test::temp_dir dir("parallel");
    run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    for (std::int64_t s = 0; s < 1200; ++s) { // crosses an index directory (1000 steps)
        for (int k = 0; k < 2; ++k) {
            w.step(s, "worker_" + std::to_string(k), mode::train, s, step_tensors(s, k));
        }
    }
    w.end();
    tdbg::trial_options one;
    one.threads = 1;
    tdbg::trial_options four;
    four.threads = 4;
    const auto a = tdbg::create_trial(dir.path().string(), std::nullopt, {}, one);
    const auto b = tdbg::create_trial(dir.path().string(), std::nullopt, {}, four);
    CHECK(a.steps().size() == 1200);
    CHECK(a.steps() == b.steps());
    CHECK(a.tensor_names() == b.tensor_names());
    CHECK(b.tensor("w").steps() == a.tensor("w").steps());
    for (std::int64_t s : {0, 999, 1000, 1199}) {
        CHECK(first_element(b.tensor("w").value(s, mode::global, std::string("worker_1"))) ==
              static_cast<float>(s * 100 + 10));
        CHECK(b.tensor("loss").value(s).bytes() == a.tensor("loss").value(s).bytes());
    }
}

TEST_CASE("temporary and foreign files under index/ are ignored") {
    tdbg::test::temp_dir dir("foreign");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, step_tensors(0));
    // A file being written (smdebug and tdbg write *.tmp and rename) and a stray note.
    std::ofstream(dir.path() / "index" / "000000000" / "000000000001_worker_0.json.77.tmp") << "{\"meta\": {";
    std::ofstream(dir.path() / "index" / "000000000" / "README.txt") << "notes";
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.steps() == steps_t{0});
    CHECK(t.has_passed_step(1) == step_state::not_yet_available);
}

TEST_CASE("stored reductions and index shapes written here read back") {
    tdbg::test::temp_dir dir("reductions");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const tdbg::reduction abs_l2{tdbg::reduction_kind::l2, true};
    w.step(0, "worker_0", mode::train, 0,
           {saved_tensor{"only_reduced", std::nullopt,
                         {{mean, tdbg::tensor_value::scalar(2.5F)}, {abs_l2, tdbg::tensor_value::scalar(9.0F)}},
                         std::vector<std::int64_t>{3, 4}},
            saved_tensor{"both", iota_value(1, 3), {{mean, tdbg::tensor_value::scalar(7.0F)}}, std::nullopt}});
    w.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const auto reduced = t.tensor("only_reduced");
    CHECK(reduced.shape(0) == tdbg::tensor_value::shape_type{3, 4});
    CHECK(reduced.reduction_value(0, mean).data_as<float>()[0] == 2.5F);
    CHECK(reduced.reduction_value(0, "l2", mode::global, std::nullopt, true).data_as<float>()[0] == 9.0F);
    CHECK(reduced.reduction_value(0, "abs_l2_norm").data_as<float>()[0] == 9.0F);
    CHECK(reduced.reduction_values(0).size() == 2);
    CHECK_THROWS_AS(reduced.value(0), tdbg::tensor_unavailable_for_step);
    CHECK_THROWS_AS(reduced.reduction_value(0, "max"), tdbg::tensor_unavailable_for_step);
    CHECK_THROWS_AS(reduced.reduction_value(0, "median"), tdbg::config_error);
    const auto both = t.tensor("both");
    // The stored reduction wins over the value (7, not the computed 2).
    CHECK(both.reduction_value(0, mean).data_as<float>()[0] == 7.0F);
    CHECK(both.reduction_value(0, "max").data_as<float>()[0] == 3.0F);
    CHECK(both.reduction_value(0, "l1").data_as<float>()[0] == 6.0F);
    CHECK(both.shape(0) == tdbg::tensor_value::shape_type{3});
    const auto infos = both.entries();
    REQUIRE(infos.size() == 1);
    CHECK(infos[0].has_value);
    CHECK_FALSE(infos[0].stored_shape.has_value());
    CHECK(infos[0].stored_reductions == std::vector<tdbg::reduction>{mean});
}

TEST_CASE("tensor::reductions says where each reduction of a step came from") {
    tdbg::test::temp_dir dir("step_reductions");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    using tdbg::reduction;
    using tdbg::reduction_kind;
    using tdbg::reduction_source;
    const reduction mean{reduction_kind::mean, false};
    const reduction max{reduction_kind::max, false};
    const reduction min{reduction_kind::min, false};
    const reduction l1{reduction_kind::l1, false};
    w.step(0, "worker_0", mode::train, 0,
           {saved_tensor{"both", iota_value(1, 3), {{mean, tdbg::tensor_value::scalar(7.0F)}}, std::nullopt},
            saved_tensor{"only_reduced", std::nullopt, {{mean, tdbg::tensor_value::scalar(2.5F)}}, std::nullopt},
            saved_tensor{"empty", iota_value(0, 0), {}, std::nullopt}});
    w.step(1, "worker_0", mode::train, 1, {saved_tensor{"other", iota_value(0, 2), {}, std::nullopt}});
    w.end();
    const auto t = tdbg::create_trial(dir.path().string());

    // Stored where the run saved it (7, not the 2 the value gives), else computed from the value.
    const auto both = t.tensor("both").reductions(0, {max, mean, l1});
    REQUIRE(both.size() == 3);
    CHECK(both[0].which == max);
    CHECK(both[0].source == reduction_source::computed);
    REQUIRE(both[0].value);
    CHECK(first_element(*both[0].value) == 3.0F);
    CHECK(both[1].which == mean);
    CHECK(both[1].source == reduction_source::stored);
    REQUIRE(both[1].value);
    CHECK(first_element(*both[1].value) == 7.0F);
    CHECK_FALSE(both[1].error);
    CHECK(both[2].source == reduction_source::computed);
    REQUIRE(both[2].value);
    CHECK(first_element(*both[2].value) == 6.0F);

    // A value the caller holds is used instead of reading one, once, and only to compute.
    int calls = 0;
    const auto held = [&] {
        ++calls;
        return iota_value(10, 2);
    };
    const auto from_held = t.tensor("both").reductions(0, {max, l1}, mode::global, std::nullopt, held);
    CHECK(calls == 1);
    REQUIRE(from_held[0].value);
    CHECK(first_element(*from_held[0].value) == 11.0F);
    REQUIRE(from_held[1].value);
    CHECK(first_element(*from_held[1].value) == 21.0F);
    CHECK(t.tensor("both").reductions(0, {mean}, mode::global, std::nullopt, held)[0].source ==
          reduction_source::stored);
    CHECK(calls == 1);

    // Neither stored nor computable: no value saved, or one it cannot be computed from.
    const auto reduced = t.tensor("only_reduced").reductions(0, {mean, max});
    CHECK(reduced[0].source == reduction_source::stored);
    CHECK(reduced[1].source == reduction_source::unavailable);
    CHECK_FALSE(reduced[1].value);
    REQUIRE(reduced[1].error);
    CHECK_THROWS_AS(std::rethrow_exception(reduced[1].error), tdbg::tensor_unavailable_for_step);
    const auto empty = t.tensor("empty").reductions(0, {min, l1});
    CHECK(empty[0].source == reduction_source::unavailable);
    REQUIRE(empty[0].error);
    CHECK_THROWS_AS(std::rethrow_exception(empty[0].error), tdbg::error);
    CHECK(empty[1].source == reduction_source::computed); // the others still are
    REQUIRE(empty[1].value);
    CHECK(first_element(*empty[1].value) == 0.0F);

    // A step the tensor was not saved at throws, as value() does.
    CHECK_THROWS_AS(t.tensor("both").reductions(1, {mean}), tdbg::tensor_unavailable_for_step);
    CHECK_THROWS_AS(t.tensor("both").reductions(5, {mean}), tdbg::no_more_data);
}

TEST_CASE("live run: an index file a listing missed (renamed during it) is found by the next, never declared passed") {
    tdbg::test::temp_dir dir("live_missed_listing");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    for (std::int64_t s = 0; s < 4; ++s) {
        w.step(s, "worker_0", mode::train, s, step_tensors(s));
    }
    auto c = std::make_shared<counters>();
    c->hidden = "000000000002_worker_0";
    c->hide_listings = 1; // the first listing misses step 2, as readdir can while it is renamed into place
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "missed", {}, fast_options());
    {
        const auto frozen = t.no_refresh();
        CHECK(t.steps() == steps_t{0, 1, 3});
        // Steps 0..3 are all there, but only a later listing can tell step 2 was skipped.
        CHECK(t.has_passed_step(2) == step_state::not_yet_available);
    }
    // The next refresh lists again from before step 2 and finds it.
    CHECK(t.has_passed_step(2) == step_state::available);
    CHECK(t.steps() == steps_t{0, 1, 2, 3});
    CHECK(first_element(t.tensor("w").value(2)) == 200.0F);

    // A step truly skipped is declared passed once a later listing confirms it.
    w.step(5, "worker_0", mode::train, 4, step_tensors(5));
    CHECK(t.has_passed_step(4) == step_state::not_yet_available); // the listing that found step 5
    CHECK(t.has_passed_step(4) == step_state::unavailable);        // the one after it
    CHECK(t.steps() == steps_t{0, 1, 2, 3, 5});
}

TEST_CASE("opening waits as smdebug's create_trial does: for the run to start, then for every worker's collections") {
    tdbg::test::temp_dir dir("open_waits");
    run_writer w(dir.path());
    // The run appears while the trial waits: worker_1's collections at the first pause,
    // worker_0's at the second (two workers), nothing more after.
    int pauses = 0;
    tdbg::trial_options o = fast_options();
    o.collection_wait = tdbg::trial_options::wait_forever;
    o.pause = [&](std::chrono::milliseconds t) {
        CHECK(t <= 500ms);
        ++pauses;
        if (pauses == 1) {
            w.collections("worker_1", 2);
        } else if (pauses == 2) {
            w.collections("worker_0", 2);
        }
    };
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "starting", {}, o);
    CHECK(pauses == 2);
    CHECK(t.num_workers() == 2);
    CHECK(t.workers() == std::vector<std::string>{"worker_0", "worker_1"});
    w.step(0, "worker_0", mode::train, 0, step_tensors(0, 0));
    w.step(0, "worker_1", mode::train, 0, step_tensors(0, 1));
    w.end();
    CHECK(t.steps() == steps_t{0});

    // Without waiting, a run with one of its two workers' collections opens with what is there.
    tdbg::test::temp_dir partial("open_partial");
    run_writer p(partial.path());
    p.collections("worker_0", 2);
    const auto now = tdbg::open_trial(tdbg::local_storage(partial.path()), "partial", {}, fast_options());
    CHECK(now.workers() == std::vector<std::string>{"worker_0"});
    // Waiting, the end marker ends the wait: the run opens with the workers that wrote.
    p.end();
    const auto ended = tdbg::open_trial(tdbg::local_storage(partial.path()), "partial", {}, o);
    CHECK(ended.workers() == std::vector<std::string>{"worker_0"});
}

TEST_CASE("opening gives up waiting when its pause throws, or when collection_wait is over") {
    tdbg::test::temp_dir dir("open_gives_up");
    tdbg::trial_options o = fast_options();
    o.collection_wait = tdbg::trial_options::wait_forever;
    int pauses = 0;
    o.pause = [&](std::chrono::milliseconds) {
        if (++pauses == 3) {
            throw std::runtime_error("interrupted");
        }
    };
    CHECK_THROWS_WITH(tdbg::open_trial(tdbg::local_storage(dir.path()), "never", {}, o), "interrupted");
    CHECK(pauses == 3);
    // A bounded wait ends in missing_collection_files naming the run.
    o.pause = nullptr;
    o.collection_wait = 20ms;
    CHECK_THROWS_AS(tdbg::open_trial(tdbg::local_storage(dir.path()), "never", {}, o), tdbg::missing_collection_files);
}

TEST_CASE("smdebug's SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW and SMDEBUG_TRAINING_END_DELAY_REFRESH set the defaults") {
    struct environment_guard {
        ~environment_guard() {
            ::unsetenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW");
            ::unsetenv("SMDEBUG_TRAINING_END_DELAY_REFRESH");
        }
    } guard;
    CHECK(tdbg::trial_options{}.incomplete_step_wait_window == 1000);
    CHECK(tdbg::trial_options{}.training_end_delay_refresh == 0ms);
    ::setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "6", 1);
    ::setenv("SMDEBUG_TRAINING_END_DELAY_REFRESH", "2", 1);
    CHECK(tdbg::trial_options{}.incomplete_step_wait_window == 6);
    CHECK(tdbg::trial_options{}.training_end_delay_refresh == 2000ms);
    ::setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "many", 1);
    CHECK_THROWS_WITH(tdbg::trial_options{}, Catch::Contains("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW='many'"));
    ::setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "-1", 1);
    CHECK_THROWS_AS(tdbg::trial_options{}, tdbg::config_error);
    ::unsetenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW");

    // The window applies: with it at 2, a worker that never writes holds steps back
    // only until 2 more are waiting (the older half is then declared complete).
    ::setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "2", 1);
    tdbg::test::temp_dir dir("env_window");
    run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    for (std::int64_t s = 0; s < 4; ++s) {
        w.step(s, "worker_0", mode::train, s, step_tensors(s, 0));
    }
    tdbg::trial_options o;
    o.poll_interval = 5ms;
    const auto t = tdbg::open_trial(tdbg::local_storage(dir.path()), "window", {}, o);
    CHECK(t.last_complete_step() == 0); // smdebug: -1 + window / 2
    ::setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "0", 1);
    tdbg::trial_options never;
    const auto held = tdbg::open_trial(tdbg::local_storage(dir.path()), "window", {}, never);
    CHECK(held.last_complete_step() == -1);
}

TEST_CASE("create_trial waits for a run directory that does not exist yet, as smdebug's does") {
    tdbg::test::temp_dir dir("create_waits");
    const std::filesystem::path run = dir.path() / "later";
    int pauses = 0;
    tdbg::trial_options o = fast_options();
    o.collection_wait = tdbg::trial_options::wait_forever;
    o.pause = [&](std::chrono::milliseconds) {
        if (++pauses == 2) {
            run_writer w(run); // the directory and its collections appear
            w.collections("worker_0", 1);
            w.step(0, "worker_0", mode::train, 0, step_tensors(0));
            w.end();
        }
    };
    const auto t = tdbg::create_trial(run.string(), std::nullopt, {}, o);
    CHECK(pauses == 2);
    CHECK(t.name() == "later");
    CHECK(t.steps() == steps_t{0});
    // Not waiting, it is missing_collection_files at once.
    CHECK_THROWS_AS(tdbg::create_trial((dir.path() / "never").string()), tdbg::missing_collection_files);
}

TEST_CASE("tensor summary: steps, modes, what was saved and the last entry, over every step seen") {
    tdbg::test::temp_dir dir("tensor_summary");
    run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const tdbg::reduction abs_max{tdbg::reduction_kind::max, true};
    const tdbg::reduction l2{tdbg::reduction_kind::l2, false};
    // Step 0: a value from both workers; step 1 (EVAL): reductions only; step 2: only worker_1's shape.
    w.step(0, "worker_0", mode::train, 0, {saved_tensor{"x", iota_value(0, 3), {}, {}}});
    w.step(0, "worker_1", mode::train, 0, {saved_tensor{"x", iota_value(10, 3), {}, {}}});
    w.step(1, "worker_0", mode::eval, 0,
           {saved_tensor{"x", std::nullopt, {{abs_max, iota_value(2, 1)}, {mean, iota_value(1, 1)}}, {}}});
    w.step(2, "worker_1", mode::train, 1, {saved_tensor{"x", std::nullopt, {{l2, iota_value(5, 1)}}, {{4, 5}}}});
    const auto t = tdbg::create_trial(dir.path().string());
    const auto s = t.tensor("x").summary();
    CHECK(s.steps == 3); // step 2 is incomplete (one worker of two): counted, as tdbg ls shows it
    CHECK(s.modes == std::vector<mode>{mode::train, mode::eval});
    CHECK(s.has_value);
    CHECK(s.has_shape);
    CHECK(s.stored_reductions == std::vector<tdbg::reduction>{mean, l2, abs_max});
    REQUIRE(s.last.has_value());
    CHECK(s.last->step == 2);
    CHECK(s.last->worker == "worker_1");
    CHECK_FALSE(s.last->has_value);
    CHECK(s.last->stored_shape == tdbg::tensor_value::shape_type{4, 5});
    CHECK(s.last->stored_reductions == std::vector<tdbg::reduction>{l2});
    // The same facts entry by entry.
    const auto infos = t.tensor("x").entries(mode::global, true);
    REQUIRE(infos.size() == 4);
    CHECK(infos[2].stored_reductions == std::vector<tdbg::reduction>{abs_max, mean}); // sorted by name
    CHECK(t.tensor("x").reduction_value(1, mean).data_as<float>()[0] == 1.0F);
    CHECK(t.tensor("x").reduction_value(1, abs_max).data_as<float>()[0] == 2.0F);
    CHECK(t.tensor("x").value(0, mode::global, "worker_1").data_as<float>()[2] == 12.0F);
}

TEST_CASE("summary_only trial: the summaries of the whole index, without its past entries") {
    tdbg::test::temp_dir dir("summary_only");
    run_writer w(dir.path());
    w.collections("worker_0", 2);
    w.collections("worker_1", 2);
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const tdbg::reduction l2{tdbg::reduction_kind::l2, false};
    for (std::int64_t step = 0; step < 40; ++step) {
        for (const char* worker : {"worker_0", "worker_1"}) {
            std::vector<saved_tensor> saved{saved_tensor{"r", std::nullopt, {{mean, iota_value(1, 1)}}, {}}};
            if (step % 4 == 0) { // x every fourth step, its value at the last of them a shape only
                saved.push_back(step == 36 ? saved_tensor{"x", std::nullopt, {{l2, iota_value(2, 1)}}, {{7, 3}}}
                                           : saved_tensor{"x", iota_value(static_cast<float>(step), 3), {}, {}});
            }
            w.step(step, worker, step < 30 ? mode::train : mode::eval, step, saved);
        }
    }
    w.end();
    tdbg::trial_options summarised;
    summarised.summary_only = true;
    const auto whole = tdbg::create_trial(dir.path().string());
    const auto kept = tdbg::create_trial(dir.path().string(), std::nullopt, {}, summarised);
    CHECK(kept.tensor_names() == whole.tensor_names());
    CHECK(kept.steps(mode::global, true) == whole.steps(mode::global, true));
    CHECK(kept.workers() == whole.workers());
    for (const char* name : {"r", "x"}) {
        const auto a = kept.tensor(name).summary();
        const auto b = whole.tensor(name).summary();
        CHECK(a.steps == b.steps);
        CHECK(a.modes == b.modes);
        CHECK(a.has_value == b.has_value);
        CHECK(a.has_shape == b.has_shape);
        CHECK(a.stored_reductions == b.stored_reductions);
        REQUIRE(a.last.has_value() == b.last.has_value());
        if (a.last) {
            CHECK(a.last->step == b.last->step);
            CHECK(a.last->worker == b.last->worker);
            CHECK(a.last->has_value == b.last->has_value);
            CHECK(a.last->stored_shape == b.last->stored_shape);
        }
    }
    CHECK(kept.tensor("x").summary().steps == 10);
    CHECK(kept.tensor("x").summary().last->stored_shape == tdbg::tensor_value::shape_type{7, 3});
    CHECK(kept.tensor("r").summary().steps == 40);
    // Only the kept entries answer: the last step's, not the first's.
    CHECK(kept.tensor("r").reduction_value(39, mean, mode::global, "worker_1").data_as<float>()[0] == 1.0F);
    CHECK(kept.tensor("x").layout(32, mode::global, "worker_1").shape == tdbg::tensor_value::shape_type{3});
}

TEST_CASE("index: reductions of one entry listed apart, and a step arriving after a later one, read right") {
    tdbg::test::temp_dir dir("index_apart");
    run_writer w(dir.path());
    w.collections("worker_0", 1);
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const tdbg::reduction sum{tdbg::reduction_kind::sum, false};
    const tdbg::reduction abs_min{tdbg::reduction_kind::min, true};
    // One index file listing a's mean, then b's, then a's sum again after b: a's reductions are not adjacent.
    w.step(0, "worker_0", mode::train, 0,
           {saved_tensor{"a", std::nullopt, {{mean, iota_value(1, 1)}}, {}},
            saved_tensor{"b", std::nullopt, {{mean, iota_value(2, 1)}}, {}},
            saved_tensor{"a", std::nullopt, {{sum, iota_value(3, 1)}, {abs_min, iota_value(4, 1)}}, {}},
            saved_tensor{"a", std::nullopt, {{mean, iota_value(7, 1)}}, {}}}); // a later record replaces the mean
    const auto t = tdbg::create_trial(dir.path().string());
    const auto a = t.tensor("a");
    CHECK(a.reduction_value(0, mean).data_as<float>()[0] == 7.0F);
    CHECK(a.reduction_value(0, sum).data_as<float>()[0] == 3.0F);
    CHECK(a.reduction_value(0, abs_min).data_as<float>()[0] == 4.0F);
    CHECK(t.tensor("b").reduction_value(0, mean).data_as<float>()[0] == 2.0F);
    CHECK(a.reduction_values(0).size() == 3);
    CHECK(a.summary().stored_reductions == std::vector<tdbg::reduction>{mean, sum, abs_min});
    // Step 2, then step 1 (as a listing that missed it would find them): inserted in order.
    w.step(2, "worker_0", mode::train, 2, {saved_tensor{"a", iota_value(20, 2), {{mean, iota_value(21, 1)}}, {}}});
    CHECK(a.steps() == steps_t{0, 2});
    w.step(1, "worker_0", mode::train, 1, {saved_tensor{"a", iota_value(10, 2), {{sum, iota_value(11, 1)}}, {}}});
    CHECK(a.steps() == steps_t{0, 1, 2});
    CHECK(a.summary().steps == 3);
    CHECK(a.value(1).data_as<float>()[1] == 11.0F);
    CHECK(a.reduction_value(1, sum).data_as<float>()[0] == 11.0F);
    CHECK(a.reduction_value(2, mean).data_as<float>()[0] == 21.0F);
    CHECK(a.reduction_value(0, abs_min).data_as<float>()[0] == 4.0F);
}
