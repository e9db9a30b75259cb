// The libtorch consumer of the installed package, built with the integration the installation
// compiled against its engine (tdbg::libtorch_engine, the components engine and libtorch
// combined): saves one step of a model through a torch_hook and reads the run back.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/nn/modules/linear.h>

#include <tdbg/integrations/libtorch.hpp>
#include <tdbg/trial/trial.hpp>

static_assert(!TDBG_HEADER_ONLY, "tdbg::libtorch_engine brings TDBG_SEPARATE_COMPILATION");

// The run goes to torch_scratch/run in the working directory (ctest's: the build directory).
int main() {
    const std::filesystem::path root = std::filesystem::absolute("torch_scratch");
    std::filesystem::remove_all(root);
    torch::nn::Linear net(3, 2);
    {
        tdbg::hook_options options;
        options.out_dir = (root / "run").string();
        options.include_collections = {"weights", "biases", "gradients"};
        tdbg::hook hook(options);
        tdbg::torch_hook torch_hook(hook);
        torch_hook.register_module(*net, "Net");
        torch_hook.begin_step();
        net(torch::ones({4, 3})).sum().backward();
        torch_hook.after_backward();
        torch_hook.base().close();
    }
    const std::vector<std::string> expected{"Net_bias", "Net_weight", "gradient/Net_bias", "gradient/Net_weight"};
    const std::vector<std::string> names = tdbg::create_trial((root / "run").string()).tensor_names();
    if (names != expected) {
        std::fprintf(stderr, "the run holds %zu tensors, not the 4 expected\n", names.size());
        return 1;
    }
    std::puts("torch_hook's run read back: Net_bias, Net_weight and their gradients");
    return 0;
}
