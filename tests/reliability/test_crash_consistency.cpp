// Crash consistency: a trainer killed with SIGKILL at any moment leaves a
// valid run in which every published step is whole and exact, and nothing of
// an unpublished step is visible.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "child_process.hpp"
#include "run_check.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::child_process;
using tdbg::test::describe_status;
using tdbg::test::temp_dir;
namespace reliability = tdbg::test::reliability;

namespace {

constexpr int steps_per_run = 30;

int kills_wanted() {
    const char* env = std::getenv("TDBG_CRASH_KILLS");
    const int n = env != nullptr ? std::atoi(env) : 0;
    return n > 0 ? n : 60;
}

// Files in the run's first index directory (published or being written).
std::size_t index_files(const std::filesystem::path& run) {
    std::error_code ec;
    std::size_t n = 0;
    for (std::filesystem::directory_iterator it(run / "index" / "000000000", ec), end; !ec && it != end; it.increment(ec)) {
        ++n;
    }
    return n;
}

std::size_t count_temporary_files(const std::filesystem::path& run) {
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(run)) {
        if (entry.is_regular_file() && entry.path().extension() == ".tmp") {
            ++n;
        }
    }
    return n;
}

} // namespace

TEST_CASE("crash: a trainer killed at any moment leaves every published step whole and exact") {
    temp_dir root("crash");
    std::chrono::microseconds startup_time{0};

    // A run to completion; how long the trainer takes to start writing sets the start-up kill times.
    const auto full = root.path() / "complete";
    const auto start = std::chrono::steady_clock::now();
    {
        child_process trainer(TDBG_RELIABILITY_TRAINER, {full.string(), std::to_string(steps_per_run)});
        int status = 0;
        while (!std::filesystem::exists(full / "events") && trainer.running(status)) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        const auto writing = std::chrono::steady_clock::now();
        startup_time = std::chrono::duration_cast<std::chrono::microseconds>(writing - start);
        if (trainer.running(status)) {
            status = trainer.wait();
        }
        REQUIRE(describe_status(status) == "exit 0");
    }
    CHECK(reliability::check_published_run(full) == steps_per_run);
    CHECK(tdbg::create_trial(full.string()).loaded_all_steps());

    // One kill in ten lands while the trainer starts (spread over its start-up time). The others
    // wait until the trainer has reached a step (spread over the run, so that the machine's load
    // cannot bunch them up), then a further 0-3 ms, so that they land at every point of a step's
    // writing. The slots are visited in a scrambled but fixed order.
    const int kills = kills_wanted();
    const std::int64_t startup_span = std::max<std::int64_t>(startup_time.count(), 1000);
    int no_step = 0;
    int some_steps = 0;
    int finished = 0;
    int left_temporary = 0;
    for (int i = 0; i < kills; ++i) {
        const int slot = static_cast<int>((static_cast<std::int64_t>(i) * 37) % kills);
        const bool at_startup = slot % 10 == 0;
        const std::size_t target_step = static_cast<std::size_t>(slot) * steps_per_run / static_cast<std::size_t>(kills);
        const auto delay = std::chrono::microseconds(at_startup ? startup_span * slot / kills : (slot * 613) % 3000);
        const auto run = root.path() / ("killed_" + std::to_string(i));
        INFO("kill " << i << (at_startup ? " at start-up" : " after step " + std::to_string(target_step)) << ", after "
                     << delay.count() << " us (start-up takes " << startup_time.count() << " us)");
        int status = 0;
        {
            child_process trainer(TDBG_RELIABILITY_TRAINER, {run.string(), std::to_string(steps_per_run)});
            while (!at_startup && index_files(run) < target_step && trainer.running(status)) {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            std::this_thread::sleep_for(delay);
            trainer.kill();
            if (trainer.running(status)) {
                status = trainer.wait();
            }
        }
        const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        CHECK((killed || describe_status(status) == "exit 0"));

        if (!std::filesystem::exists(run)) {
            ++no_step; // killed before the hook created anything
            continue;
        }
        left_temporary += count_temporary_files(run) > 0 ? 1 : 0;
        const auto published = reliability::published_steps(run);
        // The collections file is published before the first index file: a run with a step always opens.
        if (published.empty() && !std::filesystem::exists(run / tdbg::format::collections_file_key("worker_0"))) {
            CHECK_THROWS_AS(tdbg::create_trial(run.string()), tdbg::missing_collection_files);
            ++no_step;
            continue;
        }
        // Published steps are a prefix: the writer publishes them in order.
        if (!published.empty()) {
            CHECK(*published.begin() == 0);
            CHECK(*published.rbegin() == static_cast<std::int64_t>(published.size()) - 1);
        }
        const std::size_t checked = reliability::check_published_run(run);
        if (checked == 0) {
            ++no_step;
        } else if (checked < steps_per_run) {
            ++some_steps;
        } else {
            ++finished;
        }
        // The trial also opens after the end marker only if the trainer closed.
        CHECK(tdbg::create_trial(run.string()).loaded_all_steps() ==
              std::filesystem::exists(run / std::string(tdbg::format::end_marker_key)));
        std::filesystem::remove_all(run);
    }
    WARN("kills: " << kills << ", before any step: " << no_step << ", mid-run: " << some_steps
                   << ", after the last step: " << finished << ", with unpublished temporary files: " << left_temporary);
    CHECK(no_step + some_steps + finished == kills);
    // The kills did land while steps were being written, not only before or after.
    CHECK(some_steps >= kills / 4);
    CHECK(left_temporary >= 1);
}
