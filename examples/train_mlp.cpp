// train_mlp: a small complete trainer in plain C++ over xtensor, saving
// tensors with tdbg's hook in smdebug's format.
//
// The model is smdebug's PyTorch example shape: fc1 Linear(8,16) -> ReLU ->
// fc2 Linear(16,3), CrossEntropyLoss, SGD. The data are 512 synthetic points
// labelled by a random linear teacher. Forward and backward are written by
// hand. Tensor names follow smdebug's PyTorch hook: "MLP_fc1.weight",
// "gradient/MLP_fc1.weight", "relu_output_0", "CrossEntropyLoss_output_0".
//
//     train_mlp --out DIR [--steps N] [--eval-steps M] [--save-interval K] [--seed S]
//
// Then read the run with tdbg's trial or Python's smdebug.trials.create_trial(DIR).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "tdbg/hook/hook.hpp"
#include "tdbg/reduce/reduction_set.hpp"

namespace {

constexpr std::size_t inputs = 8;
constexpr std::size_t hidden = 16;
constexpr std::size_t classes = 3;
constexpr std::size_t points = 512;
constexpr std::size_t batch = 32;
constexpr float learning_rate = 0.1F;

using matrix = xt::xtensor<float, 2>;
using vector = xt::xtensor<float, 1>;

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

// Parses a non-negative integer, or returns -1.
long parse_count(std::string_view text) {
    if (text.empty() || text.size() > 12) {
        return -1;
    }
    long v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return -1;
        }
        v = v * 10 + (c - '0');
    }
    return v;
}

// Exits with the usage text and status 2 on any bad argument.
arguments parse_arguments(int argc, char** argv) {
    arguments a;
    auto fail = [](const std::string& why) {
        std::fprintf(stderr, "train_mlp: %s\n", why.c_str());
        usage(stderr);
        std::exit(2);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (i + 1 >= argc) {
            fail("missing value after " + std::string(flag));
        }
        const std::string_view value = argv[++i];
        if (flag == "--out") {
            a.out = value;
            continue;
        }
        const long n = parse_count(value);
        if (n < 0) {
            fail("bad number '" + std::string(value) + "' for " + std::string(flag));
        }
        if (flag == "--steps") {
            a.steps = n;
        } else if (flag == "--eval-steps") {
            a.eval_steps = n;
        } else if (flag == "--save-interval") {
            if (n == 0) {
                fail("--save-interval must be at least 1");
            }
            a.save_interval = n;
        } else if (flag == "--seed") {
            a.seed = static_cast<unsigned long>(n);
        } else {
            fail("unknown option " + std::string(flag));
        }
    }
    if (a.out.empty()) {
        fail("--out DIR is required");
    }
    return a;
}

// y = x . w^T + b   (x: batch x in, w: out x in, as torch.nn.Linear keeps it)
matrix linear(const matrix& x, const matrix& w, const vector& b) {
    matrix y = matrix::from_shape({x.shape(0), w.shape(0)});
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        for (std::size_t o = 0; o < w.shape(0); ++o) {
            float s = b(o);
            for (std::size_t k = 0; k < x.shape(1); ++k) {
                s += x(r, k) * w(o, k);
            }
            y(r, o) = s;
        }
    }
    return y;
}

struct mlp {
    matrix w1, w2;
    vector b1, b2;
};

struct gradients {
    matrix w1, w2;
    vector b1, b2;
};

struct forward_pass {
    matrix h;      // fc1 output
    matrix a;      // relu output
    matrix probs;  // softmax(fc2 output)
    float loss = 0;
    float accuracy = 0;
};

mlp init_model(std::mt19937& rng) {
    // torch.nn.Linear's default: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    auto uniform = [&](std::size_t fan_in) {
        const float bound = 1.0F / std::sqrt(static_cast<float>(fan_in));
        return std::uniform_real_distribution<float>(-bound, bound);
    };
    mlp m{matrix::from_shape({hidden, inputs}), matrix::from_shape({classes, hidden}), vector::from_shape({hidden}),
          vector::from_shape({classes})};
    auto d1 = uniform(inputs);
    auto d2 = uniform(hidden);
    for (auto& v : m.w1) { v = d1(rng); }
    for (auto& v : m.b1) { v = d1(rng); }
    for (auto& v : m.w2) { v = d2(rng); }
    for (auto& v : m.b2) { v = d2(rng); }
    return m;
}

forward_pass forward(const mlp& m, const matrix& x, const std::vector<int>& labels) {
    forward_pass f;
    f.h = linear(x, m.w1, m.b1);
    f.a = xt::maximum(f.h, 0.0F);
    f.probs = linear(f.a, m.w2, m.b2);
    const std::size_t n = x.shape(0);
    std::size_t correct = 0;
    for (std::size_t r = 0; r < n; ++r) {
        float top = f.probs(r, 0);
        std::size_t argmax = 0;
        for (std::size_t c = 1; c < classes; ++c) {
            if (f.probs(r, c) > top) {
                top = f.probs(r, c);
                argmax = c;
            }
        }
        float total = 0;
        for (std::size_t c = 0; c < classes; ++c) {
            f.probs(r, c) = std::exp(f.probs(r, c) - top);
            total += f.probs(r, c);
        }
        for (std::size_t c = 0; c < classes; ++c) {
            f.probs(r, c) /= total;
        }
        f.loss -= std::log(std::max(f.probs(r, static_cast<std::size_t>(labels[r])), 1e-30F));
        correct += argmax == static_cast<std::size_t>(labels[r]) ? 1 : 0;
    }
    f.loss /= static_cast<float>(n);
    f.accuracy = static_cast<float>(correct) / static_cast<float>(n);
    return f;
}

gradients backward(const mlp& m, const matrix& x, const std::vector<int>& labels, const forward_pass& f) {
    const std::size_t n = x.shape(0);
    matrix dlogits = f.probs;
    for (std::size_t r = 0; r < n; ++r) {
        dlogits(r, static_cast<std::size_t>(labels[r])) -= 1.0F;
    }
    dlogits /= static_cast<float>(n);
    gradients g{xt::zeros<float>({hidden, inputs}), xt::zeros<float>({classes, hidden}), xt::zeros<float>({hidden}),
                xt::zeros<float>({classes})};
    matrix dh = xt::zeros<float>({n, hidden});
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t c = 0; c < classes; ++c) {
            const float d = dlogits(r, c);
            g.b2(c) += d;
            for (std::size_t j = 0; j < hidden; ++j) {
                g.w2(c, j) += d * f.a(r, j);
                dh(r, j) += d * m.w2(c, j);
            }
        }
        for (std::size_t j = 0; j < hidden; ++j) {
            dh(r, j) = f.h(r, j) > 0.0F ? dh(r, j) : 0.0F;
            g.b1(j) += dh(r, j);
            for (std::size_t k = 0; k < inputs; ++k) {
                g.w1(j, k) += dh(r, j) * x(r, k);
            }
        }
    }
    return g;
}

} // namespace

int main(int argc, char** argv) {
    const arguments args = parse_arguments(argc, argv);
    std::mt19937 rng(static_cast<std::mt19937::result_type>(args.seed));

    // Synthetic data, labelled by a random linear teacher.
    std::normal_distribution<float> normal(0.0F, 1.0F);
    matrix data = matrix::from_shape({points, inputs});
    for (auto& v : data) {
        v = normal(rng);
    }
    matrix teacher = matrix::from_shape({classes, inputs});
    for (auto& v : teacher) {
        v = normal(rng);
    }
    std::vector<int> labels(points);
    const matrix scores = linear(data, teacher, xt::zeros<float>({classes}));
    for (std::size_t r = 0; r < points; ++r) {
        labels[r] = static_cast<int>(std::distance(
            &scores(r, 0), std::max_element(&scores(r, 0), &scores(r, 0) + static_cast<std::ptrdiff_t>(classes))));
    }
    mlp model = init_model(rng);

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
    relu.set_reduction_set<tdbg::reduce::reduction_set<tdbg::reduce::mean, tdbg::reduce::max, tdbg::reduce::std,
                                                       tdbg::reduce::variance, tdbg::reduce::l2, tdbg::reduce::abs_l1>>(
        false, true);
    options.collections = {grads, relu};

    try {
        tdbg::hook<> hook(options);
        auto batch_of = [&](long step, matrix& x, std::vector<int>& y) {
            const std::size_t first = (static_cast<std::size_t>(step) * batch) % points;
            x = matrix::from_shape({batch, inputs});
            y.assign(batch, 0);
            for (std::size_t r = 0; r < batch; ++r) {
                const std::size_t src = (first + r) % points;
                for (std::size_t k = 0; k < inputs; ++k) {
                    x(r, k) = data(src, k);
                }
                y[r] = labels[src];
            }
        };
        auto save_parameters = [&] {
            hook.save_tensor("MLP_fc1.weight", model.w1);
            hook.save_tensor("MLP_fc1.bias", model.b1);
            hook.save_tensor("MLP_fc2.weight", model.w2);
            hook.save_tensor("MLP_fc2.bias", model.b2);
        };

        hook.set_mode(tdbg::mode::train);
        float first_loss = 0;
        float last_loss = 0;
        matrix x;
        std::vector<int> y;
        for (long step = 0; step < args.steps; ++step) {
            hook.begin_step();
            if (hook.should_stop()) {
                const auto& request = *hook.stop_request();
                std::printf("stopping at step %ld: rule %s asked (%s)\n", step, request.rule.c_str(),
                            request.reason.c_str());
                break;
            }
            batch_of(step, x, y);
            save_parameters(); // as smdebug's forward pre-hook does: the weights this step uses
            const forward_pass f = forward(model, x, y);
            hook.save_tensor("relu_output_0", f.a);
            hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(f.loss));
            const gradients g = backward(model, x, y, f);
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
            batch_of(step + 7, x, y);
            save_parameters();
            const forward_pass f = forward(model, x, y);
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
