// train_mlp: a small complete trainer in plain C++ over xtensor, saving
// tensors with tdbg's hook in smdebug's format.
//
// The model is smdebug's PyTorch example shape: fc1 Linear(8,16) -> ReLU ->
// fc2 Linear(16,3), CrossEntropyLoss, SGD. The data are 512 synthetic points
// labelled by a random linear teacher. Forward and backward are written by
// hand (mlp_model.hpp, shared with mpi/train_mpi.cpp). Tensor names follow
// smdebug's PyTorch hook: "MLP_fc1.weight", "gradient/MLP_fc1.weight",
// "relu_output_0", "CrossEntropyLoss_output_0".
//
//     train_mlp --out DIR [--steps N] [--eval-steps M] [--save-interval K] [--seed S]
//
// Then read the run with tdbg's trial or Python's smdebug.trials.create_trial(DIR).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "example_args.hpp"
#include "mlp_model.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/reduce/reduction_set.hpp"

namespace {

using mlp_example::learning_rate;

struct arguments {
    std::string out;
    long steps = 200;
    long eval_steps = 20;
    long save_interval = 10;
    unsigned long seed = 1;
};

void usage(std::FILE* to) {
    std::fprintf(to, "usage: train_mlp --out DIR [--steps N] [--eval-steps M] [--save-interval K] [--seed S]\n"
                     "  --out DIR           the run directory to write (must not hold a finished run)\n"
                     "  --steps N           training steps (default 200)\n"
                     "  --eval-steps M      evaluation steps after training (default 20)\n"
                     "  --save-interval K   save every K-th step of each mode (default 10)\n"
                     "  --seed S            random seed for data and weights (default 1)\n");
}

// Exits with the usage text: status 0 for --help, 2 for a bad argument.
arguments parse_arguments(int argc, char** argv) {
    try {
        const auto p = example_args::parse(
            argc, argv, {{"--steps", 200}, {"--eval-steps", 20}, {"--save-interval", 10}, {"--seed", 1}});
        if (p.help) {
            usage(stdout);
            std::exit(0);
        }
        if (p.number("--save-interval") == 0) {
            throw std::invalid_argument("--save-interval must be at least 1");
        }
        return arguments{p.out, p.number("--steps"), p.number("--eval-steps"), p.number("--save-interval"),
                         static_cast<unsigned long>(p.number("--seed"))};
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "train_mlp: %s\n", e.what());
        usage(stderr);
        std::exit(2);
    }
}

} // namespace

int main(int argc, char** argv) {
    const arguments args = parse_arguments(argc, argv);
    std::mt19937 rng(static_cast<std::mt19937::result_type>(args.seed));

    // Synthetic data, labelled by a random linear teacher.
    const mlp_example::dataset data = mlp_example::make_dataset(rng);
    mlp_example::mlp model = mlp_example::init_model(rng);

    tdbg::hook_options options;
    options.out_dir = args.out;
    options.save_config = tdbg::save_config(
        tdbg::save_config_mode{static_cast<std::uint64_t>(args.save_interval), {}, 0, std::nullopt});
    options.include_collections = {"weights", "biases", "gradients", "losses"};
    tdbg::collection grads("gradients");
    grads.set_reduction_config(tdbg::reduction_config::parse("min,max,mean,std,variance,l2_norm,abs_mean", true));
    tdbg::collection relu("relu_activations");
    relu.include("^relu_output_");
    // Statistics of the activations without the activations themselves, computed in one pass.
    relu.set_reduction_set<tdbg::reduce::reduction_set<tdbg::reduce::mean, tdbg::reduce::max, tdbg::reduce::stddev,
                                                       tdbg::reduce::variance, tdbg::reduce::l2, tdbg::reduce::abs_l1>>(
        false, true);
    options.collections = {grads, relu};

    try {
        tdbg::hook hook(options);
        auto batch_of = [&](long step) { return mlp_example::make_batch(data, 0, mlp_example::points, step); };
        auto save_parameters = [&] {
            hook.save_tensor("MLP_fc1.weight", model.w1);
            hook.save_tensor("MLP_fc1.bias", model.b1);
            hook.save_tensor("MLP_fc2.weight", model.w2);
            hook.save_tensor("MLP_fc2.bias", model.b2);
        };

        hook.set_mode(tdbg::mode::train);
        float first_loss = 0;
        float last_loss = 0;
        for (long step = 0; step < args.steps; ++step) {
            hook.begin_step();
            if (hook.should_stop()) {
                const auto& request = *hook.stop_request();
                std::printf("stopping at step %ld: rule %s asked (%s)\n", step, request.rule.c_str(),
                            request.reason.c_str());
                break;
            }
            const mlp_example::dataset b = batch_of(step);
            save_parameters(); // as smdebug's forward pre-hook does: the weights this step uses
            const mlp_example::forward_pass f = mlp_example::forward(model, b.x, b.labels);
            hook.save_tensor("relu_output_0", f.a);
            hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(f.loss));
            const mlp_example::gradients g = mlp_example::backward(model, b.x, b.labels, f);
            hook.save_tensor("gradient/MLP_fc2.bias", g.b2);
            hook.save_tensor("gradient/MLP_fc2.weight", g.w2);
            hook.save_tensor("gradient/MLP_fc1.bias", g.b1);
            hook.save_tensor("gradient/MLP_fc1.weight", g.w1);
            hook.save_scalar("lr", learning_rate);
            model.w1 -= learning_rate * g.w1;
            model.b1 -= learning_rate * g.b1;
            model.w2 -= learning_rate * g.w2;
            model.b2 -= learning_rate * g.b2;
            first_loss = step == 0 ? f.loss : first_loss;
            last_loss = f.loss;
            if (step % 50 == 0 || step + 1 == args.steps) {
                std::printf("train step %4ld  loss %.4f  accuracy %.3f\n", step, static_cast<double>(f.loss),
                            static_cast<double>(f.accuracy));
            }
        }

        hook.set_mode(tdbg::mode::eval);
        for (long step = 0; step < args.eval_steps; ++step) {
            hook.begin_step();
            const mlp_example::dataset b = batch_of(step + 7);
            save_parameters();
            const mlp_example::forward_pass f = mlp_example::forward(model, b.x, b.labels);
            hook.save_tensor("relu_output_0", f.a);
            hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(f.loss));
            hook.save_scalar("accuracy", static_cast<double>(f.accuracy));
            if (step + 1 == args.eval_steps) {
                std::printf("eval  step %4ld  loss %.4f  accuracy %.3f\n", step, static_cast<double>(f.loss),
                            static_cast<double>(f.accuracy));
            }
        }
        hook.close();
        if (args.steps > 0) {
            std::printf("loss %.4f -> %.4f; run written to %s\n", static_cast<double>(first_loss),
                        static_cast<double>(last_loss), args.out.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "train_mlp: %s\n", e.what());
        return 1;
    }
    return 0;
}
