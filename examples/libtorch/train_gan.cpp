// train_gan: trains a small GAN (a generator and a discriminator, trained as PyTorch's C++ DCGAN
// example trains them: two backward passes of the discriminator, then one of the generator,
// each model with its own optimizer) and saves it with tdbg, one torch_hook per model over one
// hook.
//
// The data: 2-D points around (2, 2). The generator: Linear(4,16) -> ReLU -> Linear(16,2) from
// 4-D noise, registered as class "Generator"; the discriminator: Linear(2,16) -> LeakyReLU ->
// Linear(16,1), registered as "Discriminator"; BCEWithLogitsLoss, Adam for each. Saved at every
// `--save-interval`-th step: both models' weights, biases and gradients, and the three losses of
// a step, "BCEWithLogitsLoss_output_0" (the discriminator on real points), "_output_1" (on
// generated ones) and "_output_2" (the generator's loss), each recorded by its model's
// torch_hook: the torch_hooks of one hook number a name's outputs in one sequence per step, in
// the order they were recorded, as smdebug's one hook numbers them.
//
// Which gradients a step records: each model's torch_hook saves its own model's gradients right
// after that model's backward pass, before its optimizer's step, so they are the gradients its
// optimizer used. (The generator's backward pass also flows through the discriminator and adds
// to its gradients; they are not those the discriminator's optimizer used, and its torch_hook
// saved them before.)
//
//     train_gan --out DIR [--steps N] [--save-interval K] [--seed S] [--verify]
//
// --verify keeps a copy of every gradient as each optimizer used it, reads the run back after
// training and checks that every recorded gradient equals its copy, byte for byte (exit 1 if
// one does not); it also counts the steps where the discriminator's gradients changed after its
// optimizer's step, during the generator's backward pass: what one torch_hook over both models,
// saving after the last backward pass, would have recorded instead.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/loss.h>
#include <torch/optim/adam.h>

#include "example_args.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/libtorch.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

constexpr std::int64_t noise_size = 4;
constexpr std::int64_t hidden = 16;
constexpr std::int64_t batch = 64;
constexpr double learning_rate = 2e-3;

struct arguments {
    std::string out;
    long steps = 60;
    long save_interval = 5;
    long seed = 1;
    bool verify = false;
};

void usage(std::FILE* to) {
    std::fprintf(to, "usage: train_gan --out DIR [--steps N] [--save-interval K] [--seed S] [--verify]\n"
                     "  --out DIR           the run directory to write (must not hold a finished run)\n"
                     "  --steps N           training steps (default 60)\n"
                     "  --save-interval K   save every K-th step (default 5)\n"
                     "  --seed S            torch's random seed for data and weights (default 1)\n"
                     "  --verify            check that the recorded gradients are those each optimizer used\n");
}

// Exits with the usage text: status 0 for --help, 2 for a bad argument.
arguments parse_arguments(int argc, char** argv) {
    // --verify is a flag: taken out before the shared parser, which reads "--name value" pairs.
    std::vector<char*> rest;
    bool verify = false;
    for (int i = 0; i < argc; ++i) {
        if (i > 0 && std::strcmp(argv[i], "--verify") == 0) {
            verify = true;
        } else {
            rest.push_back(argv[i]);
        }
    }
    try {
        const auto p = example_args::parse(static_cast<int>(rest.size()), rest.data(),
                                           {{"--steps", 60}, {"--save-interval", 5}, {"--seed", 1}});
        if (p.help) {
            usage(stdout);
            std::exit(0);
        }
        if (p.number("--save-interval") == 0) {
            throw std::invalid_argument("--save-interval must be at least 1");
        }
        return arguments{p.out, p.number("--steps"), p.number("--save-interval"), p.number("--seed"), verify};
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "train_gan: %s\n", e.what());
        usage(stderr);
        std::exit(2);
    }
}

struct generator_net : torch::nn::Module {
    generator_net()
        : fc1(register_module("fc1", torch::nn::Linear(noise_size, hidden))),
          fc2(register_module("fc2", torch::nn::Linear(hidden, 2))) {}
    torch::Tensor forward(const torch::Tensor& z) { return fc2(torch::relu(fc1(z))); }
    torch::nn::Linear fc1;
    torch::nn::Linear fc2;
};

struct discriminator_net : torch::nn::Module {
    discriminator_net()
        : fc1(register_module("fc1", torch::nn::Linear(2, hidden))),
          fc2(register_module("fc2", torch::nn::Linear(hidden, 1))) {}
    torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::leaky_relu(fc1(x), 0.2)); }
    torch::nn::Linear fc1;
    torch::nn::Linear fc2;
};

// Every parameter's gradient as `prefix` + its name, copied (what an optimizer is about to use).
void copy_gradients(const torch::nn::Module& model, const std::string& prefix,
                    std::map<std::string, torch::Tensor>& into) {
    for (const auto& item : model.named_parameters()) {
        if (item.value().grad().defined()) {
            into[prefix + item.key()] = item.value().grad().detach().clone();
        }
    }
}

// The recorded gradients against the copies: the number checked; throws on the first that differs.
std::size_t verify_run(const std::string& dir, const std::map<long, std::map<std::string, torch::Tensor>>& used) {
    const tdbg::trial trial = tdbg::create_trial(dir);
    std::size_t checked = 0;
    for (const auto& [step, gradients] : used) {
        for (const auto& [name, copy] : gradients) {
            const tdbg::tensor_value saved = trial.tensor(name).value(step, tdbg::mode::train);
            const torch::Tensor expected = copy.contiguous();
            const std::string_view bytes(static_cast<const char*>(expected.data_ptr()),
                                         static_cast<std::size_t>(expected.numel()) * expected.element_size());
            if (saved.bytes() != bytes) {
                throw std::runtime_error("step " + std::to_string(step) + ": the run's " + name +
                                         " is not the gradient its optimizer used");
            }
            ++checked;
        }
    }
    return checked;
}

} // namespace

int main(int argc, char** argv) {
    const arguments args = parse_arguments(argc, argv);
    torch::manual_seed(static_cast<std::uint64_t>(args.seed));

    auto generator = std::make_shared<generator_net>();
    auto discriminator = std::make_shared<discriminator_net>();
    torch::optim::Adam g_optimizer(generator->parameters(), torch::optim::AdamOptions(learning_rate));
    torch::optim::Adam d_optimizer(discriminator->parameters(), torch::optim::AdamOptions(learning_rate));
    torch::nn::BCEWithLogitsLoss criterion;

    tdbg::hook_options options;
    options.out_dir = args.out;
    options.save_config = tdbg::save_config(
        tdbg::save_config_mode{static_cast<std::uint64_t>(args.save_interval), {}, 0, std::nullopt});
    options.include_collections = {"weights", "biases", "gradients", "losses"};

    std::map<long, std::map<std::string, torch::Tensor>> used; // --verify: step -> gradient name -> copy
    long changed_after = 0; // --verify: steps where G's backward pass changed D's gradients
    try {
        tdbg::hook hook(options);
        tdbg::torch_hook g_hook(hook);
        tdbg::torch_hook d_hook(hook);
        g_hook.register_module(*generator, "Generator");
        d_hook.register_module(*discriminator, "Discriminator");
        hook.set_mode(tdbg::mode::train);
        for (long step = 0; step < args.steps; ++step) {
            // One step for both models: begun once, then each model's parameters.
            hook.begin_step();
            g_hook.save_parameters();
            d_hook.save_parameters();
            const bool saved = step % args.save_interval == 0;
            const torch::Tensor real = torch::randn({batch, 2}) * 0.5 + 2.0;
            const torch::Tensor fake = generator->forward(torch::randn({batch, noise_size}));

            // The discriminator: two backward passes (real points, generated ones), one optimizer step.
            d_optimizer.zero_grad();
            const torch::Tensor d_real = criterion(discriminator->forward(real), torch::ones({batch, 1}));
            d_hook.record_loss(*criterion, d_real); // BCEWithLogitsLoss_output_0
            d_real.backward();
            const torch::Tensor d_fake = criterion(discriminator->forward(fake.detach()), torch::zeros({batch, 1}));
            d_hook.record_loss(*criterion, d_fake); // BCEWithLogitsLoss_output_1
            d_fake.backward();
            d_hook.after_backward(); // gradient/Discriminator_*: what d_optimizer uses
            if (args.verify && saved) {
                copy_gradients(*discriminator, "gradient/Discriminator_", used[step]);
            }
            d_optimizer.step();

            // The generator: its loss through the discriminator, one backward pass, one optimizer step.
            g_optimizer.zero_grad();
            const torch::Tensor g_loss = criterion(discriminator->forward(fake), torch::ones({batch, 1}));
            g_hook.record_loss(*criterion, g_loss); // BCEWithLogitsLoss_output_2: numbered after D's two
            g_loss.backward();
            g_hook.after_backward(); // gradient/Generator_*: what g_optimizer uses
            if (args.verify && saved) {
                copy_gradients(*generator, "gradient/Generator_", used[step]);
                std::map<std::string, torch::Tensor> after;
                copy_gradients(*discriminator, "gradient/Discriminator_", after);
                for (const auto& [name, gradient] : after) {
                    if (!torch::equal(gradient, used[step][name])) {
                        ++changed_after;
                        break;
                    }
                }
            }
            g_optimizer.step();

            if (step % 20 == 0 || step + 1 == args.steps) {
                std::printf("step %4ld  D loss %.4f  G loss %.4f\n", step,
                            (d_real + d_fake).item<double>(), g_loss.item<double>());
            }
        }
        hook.close();
        std::printf("run written to %s\n", args.out.c_str());
        if (args.verify) {
            const std::size_t checked = verify_run(args.out, used);
            std::printf("verified %zu recorded gradients at %zu steps: each is what its optimizer used\n", checked,
                        used.size());
            std::printf("the generator's backward pass changed the discriminator's gradients at %ld of %zu saved "
                        "steps, after its optimizer had used them\n",
                        changed_after, used.size());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "train_gan: %s\n", e.what());
        return 1;
    }
    return 0;
}
