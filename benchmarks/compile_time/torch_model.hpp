// The model and the training step both libtorch files of compile_time.sh share: a small MLP,
// CrossEntropyLoss and SGD, one step on random data. The `saver` is what the file adds to
// each step (nothing, or a torch_hook's calls).
#pragma once
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
    NetImpl() : fc1(register_module("fc1", torch::nn::Linear(8, 32))), fc2(register_module("fc2", torch::nn::Linear(32, 3))) {}
    torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
    torch::nn::Linear fc1;
    torch::nn::Linear fc2;
};
TORCH_MODULE(Net);

// One training step; `saver(loss_module, loss)` is called after backward, before the optimizer.
template <class Saver>
void train_step(Net& net, torch::nn::CrossEntropyLoss& criterion, torch::optim::SGD& optimizer, Saver&& saver) {
    const torch::Tensor x = torch::randn({32, 8});
    const torch::Tensor y = torch::randint(0, 3, {32});
    optimizer.zero_grad();
    torch::Tensor loss = criterion(net->forward(x), y);
    loss.backward();
    saver(*criterion, loss);
    optimizer.step();
}
