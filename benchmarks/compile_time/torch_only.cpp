// The yardstick of the libtorch integration: a libtorch trainer file with nothing of tdbg.
#include "torch_model.hpp"

int main() {
    Net net;
    torch::nn::CrossEntropyLoss criterion;
    torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
    train_step(net, criterion, optimizer, [](const torch::nn::Module&, const torch::Tensor&) {});
    return 0;
}
