#include <catch2/catch.hpp>

#include "tdbg/core/save_config.hpp"

using namespace tdbg;

TEST_CASE("save_config_mode follows smdebug's should_save_step") {
    save_config_mode every_two{2, {}, 0, std::nullopt};
    CHECK(every_two.should_save(0));
    CHECK_FALSE(every_two.should_save(1));
    CHECK(every_two.should_save(4));

    // save_steps win whatever the range; the interval still applies in range.
    save_config_mode sparse{1000, {2}, 1, std::nullopt};
    CHECK(sparse.should_save(2));
    CHECK_FALSE(sparse.should_save(0)); // 0 % 1000 == 0 but below start_step
    CHECK(sparse.should_save(1000));

    save_config_mode ranged{1, {}, 3, 5};
    CHECK_FALSE(ranged.should_save(2));
    CHECK(ranged.should_save(3));
    CHECK(ranged.should_save(4));
    CHECK_FALSE(ranged.should_save(5));

    save_config_mode listed_outside{1, {9}, 3, 5};
    CHECK(listed_outside.should_save(9));
}

TEST_CASE("save_config per mode with defaults merged in") {
    save_config config;
    config.set(mode::train, save_config_mode{5, {}, 0, std::nullopt});
    CHECK(config.should_save(mode::train, 10));
    CHECK_FALSE(config.should_save(mode::eval, 10)); // no schedule for eval
    config.merge_defaults(save_config(save_config_mode{2, {}, 0, std::nullopt}));
    CHECK(config.should_save(mode::eval, 10));
    CHECK_FALSE(config.should_save(mode::train, 12)); // train keeps its own
}
