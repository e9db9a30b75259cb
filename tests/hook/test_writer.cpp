#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <xtensor/xarray.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "test_storage.hpp"
#include "tdbg/hook/detail/writer/record_block.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::storage_control;
using tdbg::test::temp_dir;
using tdbg::test::test_storage;

namespace {

hook_options small_queue(full_queue_policy policy) {
    hook_options o;
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"all"};
    o.save_all = true;
    o.max_queue_bytes = std::size_t{1} << 20U;
    o.on_full_queue = policy;
    return o;
}

// Large enough that the writer appends it straight to storage (where the gate holds it).
const xt::xarray<float> block = xt::ones<float>({70000}); // 280 KB

// Whether `call` throws the writer's error (a storage error whose message holds `expected`).
template <class Call>
bool surfaces(Call&& call, const std::string& expected) {
    try {
        call();
    } catch (const storage_error& e) {
        CHECK_THAT(e.what(), Catch::Contains(expected));
        return true;
    }
    return false;
}

} // namespace

TEST_CASE("writer: a full queue blocks the training thread until there is room (block policy)") {
    temp_dir dir("writer_block");
    auto control = std::make_shared<storage_control>();
    control->set_gate(false);
    hook h(test_storage(dir.path(), control), small_queue(full_queue_policy::block));
    std::atomic<int> saved{0};
    std::thread trainer([&] {
        h.begin_step();
        for (int i = 0; i < 10; ++i) {
            h.save_tensor("t" + std::to_string(i), block);
            ++saved;
        }
    });
    // The writer holds one tensor, the 1 MiB queue three more: the fifth save waits. Wait for
    // the trainer to get that far (however loaded the machine), then give a queue that does
    // not block a chance to let more saves through.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (saved.load() < 3 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(saved.load() >= 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(saved.load() <= 4);
    control->set_gate(true);
    trainer.join();
    CHECK(saved.load() == 10);
    h.close();
    CHECK(h.dropped_tensors() == 0);
    const auto indexes = read_indexes(dir.path());
    REQUIRE(indexes.size() == 1);
    CHECK(indexes.begin()->second.tensor_payload.size() == 10);
}

TEST_CASE("writer: a full queue drops and counts tensors (drop policy)") {
    temp_dir dir("writer_drop");
    auto control = std::make_shared<storage_control>();
    control->set_gate(false);
    hook h(test_storage(dir.path(), control), small_queue(full_queue_policy::drop));
    h.begin_step();
    for (int i = 0; i < 10; ++i) {
        h.save_tensor("t" + std::to_string(i), block);
    }
    const auto dropped = h.dropped_tensors();
    CHECK(dropped >= 6);
    CHECK(dropped <= 7);
    control->set_gate(true);
    h.close();
    const auto indexes = read_indexes(dir.path());
    REQUIRE(indexes.size() == 1);
    CHECK(indexes.begin()->second.tensor_payload.size() == 10 - dropped);
}

TEST_CASE("writer: with the rethrow policy an error surfaces on the next call, once, and nothing is written after it") {
    temp_dir dir("writer_error");
    auto control = std::make_shared<storage_control>();
    auto o = small_queue(full_queue_policy::block);
    o.on_write_error = write_error_policy::rethrow;
    hook h(test_storage(dir.path(), control), o);
    control->failing_appends = 1;
    h.begin_step();
    h.save_tensor("w", block);
    // The writer thread meets the error asynchronously, so it surfaces on whichever call
    // comes after it did: end_step() on a fast writer, else flush(), which waits for it.
    const bool at_end_step = surfaces([&] { h.end_step(); }, "injected");
    const bool at_flush = surfaces([&] { h.flush(); }, "injected");
    CHECK(at_end_step != at_flush); // reported exactly once
    REQUIRE(h.write_error());
    CHECK_THAT(*h.write_error(), Catch::Contains("injected: cannot write events/000000000000/"));
    // Training goes on; the hook saves nothing more, and says nothing more.
    h.begin_step();
    CHECK_NOTHROW(h.save_tensor("w", block));
    CHECK_NOTHROW(h.close());
    CHECK(read_indexes(dir.path()).empty());
    for (int step = 0; step < 2; ++step) {
        CHECK_FALSE(std::filesystem::exists(dir.path() / format::event_file_key(step, "worker_0")));
    }
    CHECK(tdbg::test::temporary_files(dir.path()) == 0);
    CHECK_FALSE(std::filesystem::exists(dir.path() / format::end_marker_key)); // not a finished run
    CHECK_FALSE(std::filesystem::exists(dir.path() / format::collections_file_key("worker_0")));
}

TEST_CASE("writer: by default an error is printed once, training goes on, and the run stays readable up to it") {
    temp_dir dir("writer_error_default");
    auto control = std::make_shared<storage_control>();
    hook h(test_storage(dir.path(), control), small_queue(full_queue_policy::block));
    CHECK(h.options().on_write_error == write_error_policy::disable);
    for (int step = 0; step < 3; ++step) {
        h.begin_step();
        h.save_tensor("w", block);
    }
    h.flush(); // steps 0 and 1 are published
    control->failing_puts = true; // step 2's index cannot be written
    for (int step = 3; step < 6; ++step) {
        CHECK_NOTHROW(h.begin_step());
        CHECK_NOTHROW(h.save_tensor("w", block));
    }
    CHECK_NOTHROW(h.flush());
    REQUIRE(h.write_error());
    CHECK_THAT(*h.write_error(), Catch::Contains("injected: cannot put index/000000000/000000000002_worker_0.json"));
    CHECK_NOTHROW(h.close());
    const auto indexes = read_indexes(dir.path());
    REQUIRE(indexes.size() == 2);
    CHECK(indexes.begin()->first.first == 0);
    CHECK(indexes.rbegin()->first.first == 1);
    // Step 2's event file was committed before its index failed: it is taken back.
    const auto log = control->published();
    CHECK(std::count(log.begin(), log.end(), "remove " + format::event_file_key(2, "worker_0")) == 1);
    for (int step = 2; step < 6; ++step) {
        CHECK_FALSE(std::filesystem::exists(dir.path() / format::event_file_key(step, "worker_0")));
    }
    CHECK_FALSE(std::filesystem::exists(dir.path() / format::end_marker_key));
    const auto t = create_trial(dir.path().string());
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1});
    CHECK(t.tensor("w").value(1).size() == 70000);
}

TEST_CASE("writer: an error reaches the next save, flush or close, never the destructor") {
    temp_dir dir("writer_error_close");
    auto control = std::make_shared<storage_control>();
    {
        hook_options o = small_queue(full_queue_policy::block);
        o.on_write_error = write_error_policy::rethrow;
        hook h(test_storage(dir.path(), control), o);
        control->failing_puts = true; // index, collections and end marker cannot be written
        h.begin_step();
        h.save_tensor("w", block);
        // The writer meets the error asynchronously: on a fast writer it surfaces on the
        // begin_step() that queued step 0's end (the collections file, then its index, cannot be
        // written), else on flush(), which waits for the writer, whatever the machine's load.
        const bool at_begin_step = surfaces([&] { h.begin_step(); }, "injected: cannot put ");
        const bool at_flush = surfaces([&] { h.flush(); }, "injected: cannot put ");
        CHECK(at_begin_step != at_flush); // reported exactly once
        CHECK_NOTHROW(h.close());         // and not again
        // Step 0's event file was committed, but the collections file failed first: it is
        // withdrawn, so that the failed run holds nothing that no index names.
        CHECK_FALSE(h.storage().exists(format::event_file_key(0, "worker_0")));
        CHECK_FALSE(h.storage().exists(std::string(format::end_marker_key)));
    }
    {
        // Left to the destructor, the error is printed, not thrown.
        hook_options o = small_queue(full_queue_policy::block);
        o.on_write_error = write_error_policy::rethrow;
        temp_dir other("writer_error_dtor");
        auto control2 = std::make_shared<storage_control>();
        control2->failing_puts = true;
        auto h = std::make_unique<hook>(test_storage(other.path(), control2), o);
        h->begin_step();
        h->save_tensor("w", block);
        CHECK_NOTHROW(h.reset());
    }
}

TEST_CASE("writer: a step's event file is committed before its index file is published") {
    temp_dir dir("writer_order");
    auto control = std::make_shared<storage_control>();
    {
        hook h(test_storage(dir.path(), control), small_queue(full_queue_policy::block));
        for (int step = 0; step < 5; ++step) {
            h.begin_step();
            h.save_tensor("w", block);
            h.save_scalar("lr", 0.5);
        }
        h.close();
    }
    const auto log = control->published();
    for (int step = 0; step < 5; ++step) {
        const std::string event = "commit " + format::event_file_key(step, "worker_0");
        const std::string index = "put " + format::index_file_key(step, "worker_0");
        const auto e = std::find(log.begin(), log.end(), event);
        const auto i = std::find(log.begin(), log.end(), index);
        REQUIRE(e != log.end());
        REQUIRE(i != log.end());
        CHECK(e < i);
    }
    // The end marker comes last, after every index.
    REQUIRE_FALSE(log.empty());
    CHECK(log.back() == "put training_job_end.ts");
}

TEST_CASE("writer: data threads write steps side by side and publish them in step order") {
    const std::size_t threads = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{3});
    CAPTURE(threads);
    temp_dir dir("writer_threads");
    auto control = std::make_shared<storage_control>();
    hook_options o = small_queue(full_queue_policy::block);
    o.max_queue_bytes = std::size_t{64} << 20U;
    o.writer_threads = threads;
    constexpr int steps = 7;
    const std::string step0_events = format::event_file_key(0, "worker_0");
    control->hold(step0_events); // step 0's data thread stalls on its first append
    {
        hook h(test_storage(dir.path(), control), o);
        for (int step = 0; step < steps; ++step) {
            h.begin_step();
            const xt::xarray<float> scaled = block * static_cast<float>(step);
            h.save_tensor("w", scaled);
            h.save_scalar("loss", 1.0 / (step + 1));
        }
        h.end_step();
        if (threads > 1) {
            // Another data thread writes (and commits) step 1 while step 0 is held; its index waits.
            const std::string step1_written = "append " + format::event_file_key(1, "worker_0");
            CHECK(tdbg::test::wait_until([&] {
                const auto log = control->published();
                return std::find(log.begin(), log.end(), step1_written) != log.end();
            }));
            const auto log = control->published();
            CHECK(std::none_of(log.begin(), log.end(), [](const std::string& line) {
                return line.rfind("put index/", 0) == 0 || line == "commit " + format::event_file_key(0, "worker_0");
            }));
        }
        control->release_held();
        h.close();
    }
    // Every index after its event file, in step order, after the collections file; the end marker last.
    const auto log = control->published();
    std::vector<std::string> index_puts;
    for (const std::string& line : log) {
        if (line.rfind("put index/", 0) == 0) {
            index_puts.push_back(line);
        }
    }
    REQUIRE(index_puts.size() == steps);
    const auto collections = std::find(log.begin(), log.end(), "put " + format::collections_file_key("worker_0"));
    REQUIRE(collections != log.end());
    for (int step = 0; step < steps; ++step) {
        CHECK(index_puts[static_cast<std::size_t>(step)] == "put " + format::index_file_key(step, "worker_0"));
        const auto e = std::find(log.begin(), log.end(), "commit " + format::event_file_key(step, "worker_0"));
        const auto i = std::find(log.begin(), log.end(), index_puts[static_cast<std::size_t>(step)]);
        REQUIRE(e != log.end());
        CHECK(e < i);
        CHECK(collections < i);
    }
    CHECK(log.back() == "put training_job_end.ts");
    // And every step reads back with its own values.
    const auto indexes = read_indexes(dir.path());
    REQUIRE(indexes.size() == steps);
    for (const auto& [key, index] : indexes) {
        CAPTURE(key.first);
        const auto w = tdbg::test::read_tensor(dir.path(), index, "w");
        REQUIRE(w.value.size() == 70000);
        CHECK(w.value.data_as<float>()[0] == static_cast<float>(key.first));
        CHECK(w.value.data_as<float>()[69999] == static_cast<float>(key.first));
        const auto loss = tdbg::test::read_tensor(dir.path(), index, "scalar/loss");
        REQUIRE(loss.value.size() == 1);
        CHECK(loss.value.data_as<double>()[0] == Approx(1.0 / static_cast<double>(key.first + 1)));
    }
}

TEST_CASE("writer: steps that end while a data thread dozes are published without a flush") {
    const auto doze = GENERATE(std::chrono::microseconds{0}, std::chrono::microseconds{2000},
                               std::chrono::microseconds{50000});
    CAPTURE(doze.count());
    temp_dir dir("writer_doze");
    auto control = std::make_shared<storage_control>();
    hook_options o = small_queue(full_queue_policy::block);
    o.writer_doze = doze;
    constexpr int steps = 12;
    hook h(test_storage(dir.path(), control), o);
    for (int step = 0; step < steps; ++step) {
        h.begin_step();
        h.save_scalar("loss", 1.0 / (step + 1)); // small records: nothing here wakes a data thread early
    }
    h.end_step();
    // No flush: the data threads take the steps when their doze ends (or at once, doze 0).
    const std::string last_index = "put " + format::index_file_key(steps - 1, "worker_0");
    CHECK(tdbg::test::wait_until([&] {
        const auto log = control->published();
        return std::find(log.begin(), log.end(), last_index) != log.end();
    }));
    std::vector<std::string> index_puts;
    for (const std::string& line : control->published()) {
        if (line.rfind("put index/", 0) == 0) {
            index_puts.push_back(line);
        }
    }
    REQUIRE(index_puts.size() == steps);
    for (int step = 0; step < steps; ++step) {
        CHECK(index_puts[static_cast<std::size_t>(step)] == "put " + format::index_file_key(step, "worker_0"));
    }
    h.close();
    const auto indexes = read_indexes(dir.path());
    REQUIRE(indexes.size() == steps);
    for (const auto& [key, index] : indexes) {
        const auto loss = tdbg::test::read_tensor(dir.path(), index, "scalar/loss");
        REQUIRE(loss.value.size() == 1);
        CHECK(loss.value.data_as<double>()[0] == Approx(1.0 / static_cast<double>(key.first + 1)));
    }
}

TEST_CASE("writer: a written block of small records gives its memory back for a later block") {
    detail::record_spares spares;
    CHECK_FALSE(spares.take().has_value());
    detail::write_items::records block;
    block.bytes.assign(50000, 'x');
    block.names = "some_tensor_name_longer_than_small_strings";
    block.entries.resize(10);
    const char* memory = block.bytes.data();
    spares.give_back(std::move(block));
    std::optional<detail::write_items::records> again = spares.take();
    REQUIRE(again.has_value());
    CHECK(again->bytes.empty());
    CHECK(again->names.empty());
    CHECK(again->entries.empty());
    CHECK(again->bytes.capacity() >= 50000);
    CHECK(again->bytes.data() == memory); // the same memory, not a copy
    CHECK_FALSE(spares.take().has_value());

    // What is kept is bounded: blocks beyond max_kept_bytes are freed.
    constexpr std::size_t block_bytes = std::size_t{64} << 10U;
    for (int i = 0; i < 1000; ++i) {
        detail::write_items::records b;
        b.bytes.reserve(block_bytes);
        spares.give_back(std::move(b));
    }
    std::size_t kept = 0;
    while (spares.take().has_value()) {
        ++kept;
    }
    CHECK(kept >= 1);
    CHECK(kept <= detail::record_spares::max_kept_bytes / block_bytes);
}
