// The libtorch integration header-only (tdbg::tdbg with tdbg::libtorch): this file compiles
// torch_hook itself (tdbg/integrations/impl/libtorch.ipp, inline), as a program that chooses
// header-only does, and its run reads back as the compiled integration's (test_libtorch.cpp).

// libtorch first: its logging (glog) defines CHECK(condition), which Catch2's CHECK replaces below.
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/loss.h>

#include "tdbg/integrations/libtorch.hpp"
#undef CHECK

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support.hpp"
#include "tdbg/config.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

static_assert(TDBG_HEADER_ONLY == 1, "this test compiles the integration header-only");

TEST_CASE("torch_hook compiled header-only saves parameters, the loss and gradients") {
    const tdbg::test::temp_dir dir("libtorch_header_only");
    torch::manual_seed(7);
    torch::nn::Linear net(3, 2);
    torch::nn::MSELoss criterion;
    const torch::Tensor x = torch::randn({4, 3});
    const torch::Tensor y = torch::randn({4, 2});
    torch::Tensor weight;
    torch::Tensor gradient;
    torch::Tensor loss;
    {
        tdbg::hook_options options;
        options.out_dir = (dir.path() / "run").string();
        options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
        options.include_collections = {"weights", "biases", "gradients", "losses"};
        tdbg::hook hook(options);
        tdbg::torch_hook torch_hook(hook);
        torch_hook.register_module(*net, "Net");
        CHECK(torch_hook.parameter_names() == std::vector<std::string>{"Net_weight", "Net_bias"});
        torch_hook.begin_step();
        weight = net->weight.detach().clone();
        loss = criterion(net(x), y);
        CHECK(torch_hook.record_loss(*criterion, loss) == "MSELoss_output_0");
        loss.backward();
        torch_hook.after_backward();
        gradient = net->weight.grad().clone();
        torch_hook.base().close();
    }

    const auto trial = tdbg::create_trial((dir.path() / "run").string());
    CHECK(trial.steps() == std::vector<std::int64_t>{0});
    CHECK(trial.tensor_names() == std::vector<std::string>{"MSELoss_output_0", "Net_bias", "Net_weight",
                                                           "gradient/Net_bias", "gradient/Net_weight"});
    const tdbg::tensor_value saved_weight = trial.tensor("Net_weight").value(0);
    const tdbg::tensor_value saved_gradient = trial.tensor("gradient/Net_weight").value(0);
    CHECK(saved_weight.shape() == tdbg::tensor_value::shape_type{2, 3});
    CHECK(torch::equal(tdbg::to_torch(saved_weight), weight));
    CHECK(torch::equal(tdbg::to_torch(saved_gradient), gradient));
    CHECK(tdbg::to_torch(trial.tensor("MSELoss_output_0").value(0)).item<float>() == loss.item<float>());
}
