// Write errors and a full disk: the writer thread's error reaches the trainer
// as a storage_error on its next hook call; the steps published before stay
// whole and exact, a failed step is never published, no temporary file is
// left behind, and once space is freed later steps are written again.
// (Single injected failures: tests/hook/test_writer.cpp.)

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fault_storage.hpp"
#include "run_check.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "training_values.hpp"

using tdbg::test::fault_state;
using tdbg::test::fault_storage;
using tdbg::test::temp_dir;
namespace reliability = tdbg::test::reliability;
namespace fs = std::filesystem;

namespace {

tdbg::hook_options options() {
    tdbg::hook_options o;
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    return o;
}

// Where training stood: the step open and the tensors whose save returned.
struct progress {
    std::int64_t step = -1;
    std::vector<std::string> saved;
};

// One step of the reliability trainer's tensors (tests/reliability/trainer.cpp); returns its global step.
std::int64_t train_step(tdbg::hook& h, progress& p) {
    if (h.current_mode() != tdbg::mode::train) {
        h.set_mode(tdbg::mode::train);
    }
    h.begin_step();
    p.step = h.global_step();
    p.saved.clear();
    for (int k = 0; k <= reliability::small_tensors; ++k) {
        const auto v = reliability::values(p.step, k);
        h.save_tensor(reliability::tensor_name(k), v.data(), {v.size()});
        p.saved.push_back(reliability::tensor_name(k));
    }
    h.save_tensor("step_id", tdbg::tensor_value::scalar(p.step));
    p.saved.emplace_back("step_id");
    return p.step;
}

// Trains until a hook call throws (polling, as the writer meets the error on its own thread).
std::optional<std::string> train_until_error(tdbg::hook& h, progress& p, int limit) {
    for (int i = 0; i < limit; ++i) {
        try {
            (void)train_step(h, p);
        } catch (const tdbg::storage_error& e) {
            return std::string(e.what());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
}

std::size_t temporary_files(const fs::path& run) {
    std::size_t n = 0;
    if (fs::exists(run)) {
        for (const auto& entry : fs::recursive_directory_iterator(run)) {
            n += entry.path().extension() == ".tmp" ? 1 : 0;
        }
    }
    return n;
}

// The bytes one step takes on storage: its event file and its index file.
constexpr std::uint64_t step_bytes = reliability::large_size * 4 + 8 * 1024;

} // namespace

TEST_CASE("full disk: the error reaches the trainer on its next call, the steps before stay intact") {
    temp_dir root("full_disk");
    for (int i = 0; i < 12; ++i) {
        // Budgets from nothing to about six steps, landing at different points of a step's files.
        const std::uint64_t budget = static_cast<std::uint64_t>(i) * step_bytes / 2 + static_cast<std::uint64_t>(i) * 997;
        INFO("budget " << budget << " bytes");
        const fs::path run = root.path() / ("run" + std::to_string(i));
        auto state = std::make_shared<fault_state>();
        state->budget = budget;
        std::int64_t last_step = 0;
        {
            tdbg::hook h(fault_storage(run, state), options());
            progress p;
            const auto error = train_until_error(h, p, 2000);
            last_step = h.global_step();
            REQUIRE(error);
            CHECK_THAT(*error, Catch::Contains("No space left on device") && Catch::Contains("cannot write "));
            // The disk stays full: close() cannot publish and says so.
            CHECK_THROWS_AS(h.close(), tdbg::storage_error);
        }
        CHECK(temporary_files(run) == 0);
        const auto published = reliability::published_steps(run);
        CHECK(static_cast<std::int64_t>(published.size()) <= last_step + 1);
        if (published.empty() && !fs::exists(run / tdbg::format::collections_file_key("worker_0"))) {
            continue; // nothing of the run fitted
        }
        CHECK(reliability::check_published_run(run) == published.size());
    }
}

TEST_CASE("full disk: once space is freed, later steps are written again and the run reads whole") {
    temp_dir root("full_disk_freed");
    for (const std::uint64_t budget : {std::uint64_t{100}, step_bytes * 2 + 5000}) {
        INFO("budget " << budget << " bytes");
        const fs::path run = root.path() / ("run" + std::to_string(budget));
        auto state = std::make_shared<fault_state>();
        state->budget = budget;
        tdbg::hook h(fault_storage(run, state), options());
        progress failed;
        REQUIRE(train_until_error(h, failed, 2000));
        state->free_space();
        // Errors met meanwhile are reported, one per call, then the writer is clean.
        for (int i = 0; i < 100; ++i) {
            try {
                h.flush();
                break;
            } catch (const tdbg::storage_error& e) {
                CHECK_THAT(e.what(), Catch::Contains("No space left on device"));
            }
        }
        CHECK_NOTHROW(h.flush());
        const std::int64_t resumed = h.global_step() + 1;
        progress p;
        for (int i = 0; i < 3; ++i) {
            CHECK(train_step(h, p) == resumed + i);
        }
        CHECK_NOTHROW(h.close());
        CHECK(temporary_files(run) == 0);
        // The last three steps are there; the steps lost to the full disk are not; all read exactly.
        const auto published = reliability::published_steps(run);
        REQUIRE(published.size() >= 3);
        CHECK(*published.rbegin() == resumed + 2);
        CHECK(published.count(resumed) == 1);
        {
            const auto t = tdbg::create_trial(run.string());
            CHECK(t.loaded_all_steps());
            const std::vector<std::int64_t> expected(published.begin(), published.end());
            CHECK(t.steps() == expected);
            for (const std::int64_t s : published) {
                INFO("step " << s << " (the error surfaced in step " << failed.step << ")");
                // The step the error interrupted holds the tensors whose save returned; every other step all of them.
                std::vector<std::string> names = s == failed.step ? failed.saved : reliability::tensor_names();
                std::sort(names.begin(), names.end());
                auto listed = t.tensor_names(s);
                std::sort(listed.begin(), listed.end());
                CHECK(listed == names);
                for (int k = 0; k <= reliability::small_tensors; ++k) {
                    if (std::find(names.begin(), names.end(), reliability::tensor_name(k)) != names.end()) {
                        CHECK(reliability::same_floats(t.tensor(reliability::tensor_name(k)).value(s),
                                                       reliability::values(s, k)));
                    }
                }
            }
        }
    }
}

TEST_CASE("publication order: collections before the first index, each event file before its index, the end marker last") {
    temp_dir dir("publish_order");
    auto state = std::make_shared<fault_state>();
    {
        tdbg::hook h(fault_storage(dir.path(), state), options());
        progress p;
        for (std::int64_t step = 0; step < 4; ++step) {
            CHECK(train_step(h, p) == step);
        }
        h.close();
    }
    const auto log = state->entries();
    const auto at = [&](const std::string& entry) {
        const auto it = std::find(log.begin(), log.end(), entry);
        REQUIRE(it != log.end());
        return it - log.begin();
    };
    const auto collections = at("put " + tdbg::format::collections_file_key("worker_0"));
    for (std::int64_t step = 0; step < 4; ++step) {
        const auto event = at("commit " + tdbg::format::event_file_key(step, "worker_0"));
        const auto index = at("put " + tdbg::format::index_file_key(step, "worker_0"));
        CHECK(event < index);
        CHECK(collections < index);
    }
    CHECK(log.back() == "put " + std::string(tdbg::format::end_marker_key));
}
