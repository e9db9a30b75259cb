// torch_only.cpp with a torch_hook: registers the model, saves its parameters, the loss and the
// gradients of a step, closes the hook.
#include "torch_model.hpp"

#include <tdbg/integrations/libtorch.hpp>

int main(int argc, char** argv) {
    Net net;
    torch::nn::CrossEntropyLoss criterion;
    torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
    tdbg::hook_options options;
    options.out_dir = argc > 1 ? argv[1] : "run";
    tdbg::hook hook(options);
    tdbg::torch_hook torch_hook(hook);
    torch_hook.register_module(*net, "Net");
    torch_hook.begin_step();
    train_step(net, criterion, optimizer, [&](const torch::nn::Module& loss_module, const torch::Tensor& loss) {
        torch_hook.record_loss(loss_module, loss);
        torch_hook.after_backward();
    });
    hook.close();
    return 0;
}
