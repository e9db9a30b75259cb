// A tensor saved twice in one step (two backward passes a step, one hook over two models):
// the run keeps the first save of the step, so readers, which take a step's last record of a
// name, read what was saved first, and the hook says so once per tensor.

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::temp_dir;

TEST_CASE("saved twice: a step keeps the first save of a tensor, drops the later ones, and says so once per tensor") {
    temp_dir dir("saved_twice");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.save_all = true;
    std::vector<std::string> logged;
    o.log = [&](std::string_view line) { logged.emplace_back(line); };
    {
        hook h(o);
        for (int step = 0; step < 3; ++step) {
            h.begin_step();
            // The discriminator's gradient after its backward pass, then again after the generator's.
            h.save_tensor("gradient/D.w", tensor_value(std::vector<float>{1.0F, static_cast<float>(step)}));
            h.save_tensor("gradient/G.w", tensor_value(std::vector<float>{2.0F, static_cast<float>(step)}));
            h.save_tensor("gradient/D.w", tensor_value(std::vector<float>{-1.0F, -1.0F}));
            // plan_save (the deferred path) drops it the same way.
            CHECK_FALSE(h.plan_save("gradient/G.w", dtype::float32, {2}).has_value());
        }
        h.close();
    }
    const auto t = create_trial((dir.path() / "run").string());
    for (const std::int64_t step : {0, 1, 2}) {
        const tensor_value d = t.tensor("gradient/D.w").value(step);
        REQUIRE(d.size() == 2);
        CHECK(d.data_as<float>()[0] == 1.0F);
        CHECK(d.data_as<float>()[1] == static_cast<float>(step));
    }
    std::vector<std::string> said;
    for (const auto& line : logged) {
        if (line.find("saved again") != std::string::npos) {
            said.push_back(line);
        }
    }
    REQUIRE(said.size() == 2); // once for each tensor, not once a step
    CHECK_THAT(said[0], Catch::Contains("'gradient/D.w' saved again in step 0 (GLOBAL step 0): a step keeps the first "
                                        "save of a tensor and drops the later ones"));
    CHECK_THAT(said[1], Catch::Contains("'gradient/G.w' saved again in step 0"));
}
