#include <catch2/catch.hpp>

#include <fstream>

#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"

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

TEST_CASE("the stop marker is looked for at most once per check interval") {
    temp_dir dir("hook_stop_interval");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.stop_check_interval = std::chrono::hours(1);
    hook h(o);
    h.begin_step(); // first check: no marker yet
    h.storage().put(std::string(format::stop_marker_key), "{}");
    for (int i = 0; i < 5; ++i) {
        h.begin_step();
    }
    CHECK_FALSE(h.should_stop()); // next check only in an hour
    h.close();
}
