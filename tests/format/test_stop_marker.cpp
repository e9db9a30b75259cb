#include <catch2/catch.hpp>

#include "tdbg/format/stop_marker.hpp"

using namespace tdbg;

TEST_CASE("stop marker round trip and lenient reading") {
    const std::string text = make_stop_marker({"VanishingGradient", 7, "mean |gradient| < 1e-07"});
    CHECK(text == R"({"rule":"VanishingGradient","step":7,"reason":"mean |gradient| < 1e-07"})");
    const auto back = parse_stop_marker(text);
    CHECK(back.rule == "VanishingGradient");
    REQUIRE(back.step);
    CHECK(*back.step == 7);
    CHECK(back.reason == "mean |gradient| < 1e-07");

    const auto partial = parse_stop_marker(R"({"rule": 3, "step": "x"})");
    CHECK(partial.rule.empty());
    CHECK_FALSE(partial.step);
    const auto garbage = parse_stop_marker("stop now");
    CHECK(garbage.reason == "stop now");
}
