#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "test_storage.hpp"

using namespace tdbg;
using tdbg::test::temp_dir;

namespace {

// begin_step() until should_stop(), for at most `steps` steps; the step it stopped at. The stop
// watch looks on its own thread, so the marker is seen a look's time after it was written: a
// number of steps that depends on the machine, bounded here generously (never a wait for time).
std::optional<std::int64_t> steps_until_stop(hook& h, int steps) {
    for (int i = 0; i < steps; ++i) {
        h.begin_step();
        if (h.should_stop()) {
            return h.global_step();
        }
        std::this_thread::yield(); // a step's work, during which the watch looks
    }
    return std::nullopt;
}

} // namespace

TEST_CASE("should_stop turns true once a rule has written the stop marker") {
    temp_dir dir("hook_stop");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.stop_check_interval = std::chrono::milliseconds(0);
    hook h(o);
    for (int step = 0; step < 4; ++step) {
        h.begin_step();
        REQUIRE_FALSE(h.should_stop());
        h.save_tensor("MSELoss_output_0", tensor_value::scalar(1.0F));
    }
    h.storage().put(std::string(format::stop_marker_key),
                    make_stop_marker({"LossNotDecreasing", 3, "loss flat for 3 steps"}));
    const std::optional<std::int64_t> stopped_at = steps_until_stop(h, 100000);
    REQUIRE(stopped_at);
    CHECK(*stopped_at >= 4);
    REQUIRE(h.stop_request());
    CHECK(h.stop_request()->rule == "LossNotDecreasing");
    CHECK(h.stop_request()->step == 3);
    h.close();
}

TEST_CASE("with a stop check interval of 0 every begin_step asks the watch for a look, and none waits for one") {
    // The watch's first look is held in storage (as an S3 outage holds a request for a minute of
    // retries) while the trainer goes on: a begin_step that looked itself, or waited for the look,
    // would wait for the hold, which ends by itself only after a minute (exists_held_too_long).
    temp_dir dir("hook_stop_every_step");
    auto control = std::make_shared<tdbg::test::storage_control>();
    hook_options o;
    o.stop_check_interval = std::chrono::milliseconds(0);
    hook h(tdbg::test::test_storage(dir.path(), control), o);
    const std::string marker(format::stop_marker_key);
    {
        std::lock_guard<std::mutex> lock(control->mutex);
        control->exists_calls.clear(); // the constructor's (end marker, collections file)
    }
    control->hold_exists(marker, std::chrono::minutes(1));
    h.begin_step(); // starts the watch, whose first look is held
    REQUIRE(control->wait_for_exists_calls(1, std::chrono::minutes(1)));
    for (int step = 1; step <= 100; ++step) {
        h.begin_step(); // asks for a look: answered after the one held
        REQUIRE_FALSE(h.should_stop());
    }
    CHECK(h.global_step() == 100);
    {
        std::lock_guard<std::mutex> lock(control->mutex);
        CHECK_FALSE(control->exists_held_too_long);
        CHECK(control->exists_calls.size() == 1); // the one held; the asks wait for its end
    }
    // The marker comes while the look held has found none. Once it ends, the asks made meanwhile
    // are answered by one more look, with no further begin_step, which finds the marker.
    h.storage().put(marker, make_stop_marker({"VanishingGradient", 100, "flat"}));
    control->release_exists();
    REQUIRE(control->wait_for_exists_calls(2, std::chrono::minutes(1)));
    const std::optional<std::int64_t> stopped_at = steps_until_stop(h, 100000);
    REQUIRE(stopped_at);
    CHECK(*stopped_at >= 101);
    REQUIRE(h.stop_request());
    CHECK(h.stop_request()->rule == "VanishingGradient");
    CHECK(h.stop_request()->step == 100);
    std::vector<std::thread::id> calls;
    {
        std::lock_guard<std::mutex> lock(control->mutex);
        calls = control->exists_calls;
    }
    CHECK(calls.size() >= 2);
    CHECK(std::count(calls.begin(), calls.end(), std::this_thread::get_id()) == 0);
    h.close();
}

TEST_CASE("the stop marker is looked for by a background thread once per interval, never by begin_step") {
    temp_dir dir("hook_stop_interval");
    auto control = std::make_shared<tdbg::test::storage_control>();
    hook_options o;
    o.stop_check_interval = std::chrono::hours(1);
    hook h(tdbg::test::test_storage(dir.path(), control), o);
    const auto looks = [&] {
        std::lock_guard<std::mutex> lock(control->mutex);
        return control->exists_calls;
    };
    {
        std::lock_guard<std::mutex> lock(control->mutex);
        control->exists_calls.clear(); // the constructor's looks (end marker, collections file)
    }
    h.begin_step(); // starts the watch; its first look is its own
    while (looks().empty()) {
        std::this_thread::yield(); // waits for the first look, whatever the machine's load
    }
    h.storage().put(std::string(format::stop_marker_key), "{}");
    for (int i = 0; i < 100; ++i) {
        h.begin_step();
    }
    CHECK_FALSE(h.should_stop()); // next look only in an hour
    const auto calls = looks();
    CHECK(calls.size() == 1);
    CHECK(std::count(calls.begin(), calls.end(), std::this_thread::get_id()) == 0);
    h.close();
}

TEST_CASE("a stop marker present when training starts is found by the watch and reported at a begin_step") {
    temp_dir dir("hook_stop_watch");
    auto control = std::make_shared<tdbg::test::storage_control>();
    tdbg::test::test_storage storage(dir.path(), control);
    storage.put(std::string(format::stop_marker_key), make_stop_marker({"VanishingGradient", 7, "flat"}));
    hook_options o;
    o.stop_check_interval = std::chrono::milliseconds(50);
    hook h(storage, o);
    control->exists_calls.clear();
    std::int64_t steps = 0;
    do {
        h.begin_step();
        ++steps;
        std::this_thread::yield();
    } while (!h.should_stop());
    REQUIRE(h.stop_request());
    CHECK(h.stop_request()->rule == "VanishingGradient");
    CHECK(h.stop_request()->step == 7);
    std::vector<std::thread::id> calls;
    {
        std::lock_guard<std::mutex> lock(control->mutex);
        calls = control->exists_calls;
    }
    CHECK_FALSE(calls.empty());
    CHECK(std::count(calls.begin(), calls.end(), std::this_thread::get_id()) == 0);
    CHECK(steps >= 1);
    h.close();
}
