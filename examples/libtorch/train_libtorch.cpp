// train_libtorch: trains a small libtorch network on synthetic data and saves it with tdbg's
// torch_hook, under the tensor names smdebug's PyTorch hook gives a PyTorch job's tensors.
//
// The model: fc1 Linear(8,32) -> ReLU -> fc2 Linear(32,3), registered as class "Net";
// CrossEntropyLoss, SGD, 512 synthetic points labelled by a random linear teacher, on the
// CPU. Saved: "Net_fc1.weight" and the other parameters, "gradient/Net_fc1.weight" and the
// other gradients (with statistics), "CrossEntropyLoss_output_0", and statistics of
// "relu_output_0"; after training, a few EVAL steps.
//
//     train_libtorch --out DIR [--steps N] [--save-interval K] [--seed S]
//
// Then read the run with tdbg's trial, `tdbg ls DIR`, or Python's smdebug.trials.create_trial(DIR).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/loss.h>
#include <torch/optim/sgd.h>

#include "example_args.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/libtorch.hpp"

namespace {

constexpr std::int64_t inputs = 8;
constexpr std::int64_t hidden = 32;
constexpr std::int64_t classes = 3;
constexpr std::int64_t points = 512;
constexpr std::int64_t batch = 32;
constexpr double learning_rate = 0.1;
constexpr long eval_steps = 5;

struct arguments {
    std::string out;
    long steps = 50;
    long save_interval = 5;
    long seed = 1;
};

void usage(std::FILE* to) {
    std::fprintf(to, "usage: train_libtorch --out DIR [--steps N] [--save-interval K] [--seed S]\n"
                     "  --out DIR           the run directory to write (must not hold a finished run)\n"
                     "  --steps N           training steps (default 50)\n"
                     "  --save-interval K   save every K-th step of each mode (default 5)\n"
                     "  --seed S            torch's random seed for data and weights (default 1)\n");
}

// Exits with the usage text: status 0 for --help, 2 for a bad argument.
arguments parse_arguments(int argc, char** argv) {
    try {
        const auto p = example_args::parse(argc, argv, {{"--steps", 50}, {"--save-interval", 5}, {"--seed", 1}});
        if (p.help) {
            usage(stdout);
            std::exit(0);
        }
        if (p.number("--save-interval") == 0) {
            throw std::invalid_argument("--save-interval must be at least 1");
        }
        return arguments{p.out, p.number("--steps"), p.number("--save-interval"), p.number("--seed")};
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "train_libtorch: %s\n", e.what());
        usage(stderr);
        std::exit(2);
    }
}

// The network. forward() also returns the hidden activation, which the loop saves.
struct mlp_net : torch::nn::Module {
    mlp_net()
        : fc1(register_module("fc1", torch::nn::Linear(inputs, hidden))),
          relu(register_module("relu", torch::nn::ReLU())),
          fc2(register_module("fc2", torch::nn::Linear(hidden, classes))) {}

    struct result {
        torch::Tensor activation;
        torch::Tensor logits;
    };
    result forward(const torch::Tensor& x) {
        result r;
        r.activation = relu(fc1(x));
        r.logits = fc2(r.activation);
        return r;
    }

    torch::nn::Linear fc1;
    torch::nn::ReLU relu;
    torch::nn::Linear fc2;
};

} // namespace

int main(int argc, char** argv) {
    const arguments args = parse_arguments(argc, argv);
    torch::manual_seed(static_cast<std::uint64_t>(args.seed));

    // Synthetic data, labelled by a random linear teacher.
    const torch::Tensor data = torch::randn({points, inputs});
    const torch::Tensor labels = data.mm(torch::randn({inputs, classes})).argmax(1);
    auto model = std::make_shared<mlp_net>();
    torch::nn::CrossEntropyLoss criterion;
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(learning_rate));

    tdbg::hook_options options;
    options.out_dir = args.out;
    options.save_config = tdbg::save_config(
        tdbg::save_config_mode{static_cast<std::uint64_t>(args.save_interval), {}, 0, std::nullopt});
    options.include_collections = {"weights", "biases", "gradients", "losses"};
    tdbg::collection grads("gradients");
    grads.set_reduction_config(tdbg::reduction_config::parse("min,max,mean,std,l2_norm,abs_mean", true));
    // The activations' statistics and shape, not the activations themselves (as smdebug's examples do).
    tdbg::collection relu("relu_activations");
    relu.include("^relu_output_");
    relu.set_reduction_config(tdbg::reduction_config::parse("mean,max,std,l2_norm,abs_l1_norm", false, true));
    options.collections = {grads, relu};

    try {
        tdbg::hook hook(options);
        tdbg::torch_hook torch_hook(hook);
        // "Net": the class name the same model has in smdebug's PyTorch examples.
        torch_hook.register_module(*model, "Net");

        const auto batch_at = [&](long step) {
            return (static_cast<std::int64_t>(step) * batch) % points;
        };
        hook.set_mode(tdbg::mode::train);
        float first_loss = 0;
        float last_loss = 0;
        for (long step = 0; step < args.steps; ++step) {
            torch_hook.begin_step(); // also saves the parameters this step's forward uses
            if (hook.should_stop()) {
                const auto& request = *hook.stop_request();
                std::printf("stopping at step %ld: rule %s asked (%s)\n", step, request.rule.c_str(),
                            request.reason.c_str());
                break;
            }
            const torch::Tensor x = data.narrow(0, batch_at(step), batch);
            const torch::Tensor y = labels.narrow(0, batch_at(step), batch);
            const auto out = model->forward(x);
            torch_hook.save_output(*model->relu, out.activation); // "relu_output_0"
            const torch::Tensor loss = criterion(out.logits, y);
            torch_hook.record_loss(*criterion, loss); // "CrossEntropyLoss_output_0"
            optimizer.zero_grad();
            loss.backward();
            torch_hook.after_backward(); // "gradient/Net_fc1.weight", ...
            optimizer.step();
            hook.save_scalar("lr", learning_rate);

            last_loss = loss.item<float>();
            first_loss = step == 0 ? last_loss : first_loss;
            if (step % 10 == 0 || step + 1 == args.steps) {
                std::printf("train step %4ld  loss %.4f\n", step, static_cast<double>(last_loss));
            }
        }

        hook.set_mode(tdbg::mode::eval);
        const torch::NoGradGuard no_grad;
        for (long step = 0; step < eval_steps; ++step) {
            torch_hook.begin_step();
            const torch::Tensor x = data.narrow(0, batch_at(step + 3), batch);
            const torch::Tensor y = labels.narrow(0, batch_at(step + 3), batch);
            const auto out = model->forward(x);
            torch_hook.save_output(*model->relu, out.activation);
            const torch::Tensor loss = criterion(out.logits, y);
            torch_hook.record_loss(*criterion, loss);
            const double accuracy = out.logits.argmax(1).eq(y).to(torch::kDouble).mean().item<double>();
            hook.save_scalar("accuracy", accuracy);
            if (step + 1 == eval_steps) {
                std::printf("eval  step %4ld  loss %.4f  accuracy %.3f\n", step, loss.item<double>(), accuracy);
            }
        }
        hook.close();
        if (args.steps > 0) {
            std::printf("loss %.4f -> %.4f; run written to %s\n", static_cast<double>(first_loss),
                        static_cast<double>(last_loss), args.out.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "train_libtorch: %s\n", e.what());
        return 1;
    }
    return 0;
}
