#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "test_storage.hpp"

using namespace tdbg;
using tdbg::test::temp_dir;

TEST_CASE("should_stop turns true once a rule has written the stop marker") {
    temp_dir dir("hook_stop");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.stop_check_interval = std::chrono::milliseconds(0);
    hook h(o);
    int stopped_at = -1;
    for (int step = 0; step < 10; ++step) {
        h.begin_step();
        if (h.should_stop()) {
            stopped_at = step;
            break;
        }
        h.save_tensor("MSELoss_output_0", tensor_value::scalar(1.0F));
        if (step == 3) {
            h.storage().put(std::string(format::stop_marker_key),
                            make_stop_marker({"LossNotDecreasing", 3, "loss flat for 3 steps"}));
        }
    }
    CHECK(stopped_at == 4);
    REQUIRE(h.stop_request());
    CHECK(h.stop_request()->rule == "LossNotDecreasing");
    CHECK(h.stop_request()->step == 3);
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
