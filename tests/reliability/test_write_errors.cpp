// Write errors and a full disk: training goes on (or, with the rethrow policy,
// the error reaches the trainer once, on its next hook call); the steps
// published before stay whole and exact and are a prefix of the run; nothing
// is published after the error, even once space is freed; no event file is
// left that no index names, no temporary file, no end marker.
// (Single injected failures: tests/hook/test_writer.cpp.)

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
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
using tdbg::test::temporary_files;
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

// The bytes one step takes on storage: its event file and its index file.
constexpr std::uint64_t step_bytes = reliability::large_size * 4 + 8 * 1024;

// What a run written into a disk that filled up must hold: a prefix of the steps
// trained, each whole and exact, no event file that no index names, no
// temporary file, and no end marker (it is not a finished run).
void check_failed_run(const fs::path& run, std::int64_t trained) {
    CHECK(temporary_files(run) == 0);
    CHECK_FALSE(fs::exists(run / tdbg::format::end_marker_key));
    const auto published = reliability::published_steps(run);
    std::set<std::string> indexed;
    std::int64_t expected = 0;
    for (const std::int64_t s : published) {
        CHECK(s == expected++); // steps 0, 1, ... with no gap
        indexed.insert(tdbg::format::event_file_key(s, "worker_0"));
    }
    CHECK(static_cast<std::int64_t>(published.size()) < trained);
    CHECK(reliability::event_files(run) == indexed);
    if (!published.empty()) {
        CHECK(fs::exists(run / tdbg::format::collections_file_key("worker_0")));
        CHECK(reliability::check_published_run(run) == published.size());
    }
}

} // namespace

TEST_CASE("full disk: training goes on, the error is reported once, the run is a readable prefix") {
    temp_dir root("full_disk");
    constexpr std::int64_t steps = 16;
    for (int i = 0; i < 12; ++i) {
        // Budgets from nothing to about six steps, landing at different points of a step's files.
        const std::uint64_t budget = static_cast<std::uint64_t>(i) * step_bytes / 2 + static_cast<std::uint64_t>(i) * 997;
        INFO("budget " << budget << " bytes");
        const fs::path run = root.path() / ("run" + std::to_string(i));
        auto state = std::make_shared<fault_state>();
        state->budget = budget;
        {
            tdbg::hook h(fault_storage(run, state), options());
            progress p;
            for (std::int64_t s = 0; s < steps; ++s) {
                CHECK(train_step(h, p) == s); // never throws: saving stops, training does not
                if (s == steps / 2) {
                    h.flush(); // eight steps do not fit: the writer has met the full disk by now
                    CHECK(h.write_error());
                    state->free_space(); // space coming back changes nothing: the run stays a prefix
                }
            }
            CHECK_NOTHROW(h.close());
            REQUIRE(h.write_error());
            CHECK_THAT(*h.write_error(), Catch::Contains("No space left on device"));
        }
        check_failed_run(run, steps);
    }
}

TEST_CASE("full disk, rethrow policy: the error reaches the trainer once, on its next call") {
    temp_dir root("full_disk_rethrow");
    for (const std::uint64_t budget : {std::uint64_t{100}, step_bytes * 2 + 5000}) {
        INFO("budget " << budget << " bytes");
        const fs::path run = root.path() / ("run" + std::to_string(budget));
        auto state = std::make_shared<fault_state>();
        state->budget = budget;
        tdbg::hook_options o = options();
        o.on_write_error = tdbg::write_error_policy::rethrow;
        std::int64_t trained = 0;
        int thrown = 0;
        {
            tdbg::hook h(fault_storage(run, state), o);
            progress p;
            for (std::int64_t s = 0; s < 12; ++s) {
                try {
                    (void)train_step(h, p);
                    if (s == 10) {
                        h.flush(); // by now the writer has met the full disk
                    }
                } catch (const tdbg::storage_error& e) {
                    CHECK_THAT(e.what(), Catch::Contains("No space left on device"));
                    ++thrown;
                }
                trained = s + 1;
            }
            CHECK_NOTHROW(h.close());
        }
        CHECK(thrown == 1);
        check_failed_run(run, trained);
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
