// train_in_memory: a trainer that watches itself. The hook writes the run into
// memory (tdbg::memory_storage); a tdbg::rules::watcher evaluates
// VanishingGradient and ExplodingTensor on a background thread as steps are
// published, and at the first trigger writes the stop marker, so that the
// training loop's hook.should_stop() ends it: no second process, no files.
//
// The model is the small MLP of train_mlp (mlp_model.hpp). To show the stop, the
// data pipeline "breaks" at step --broken-at and feeds zeros: fc1's gradient is
// then exactly 0 and VanishingGradient fires at that step.
//
//     train_in_memory [--steps N] [--broken-at K]     (K = 0: never breaks)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "mlp_model.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/rules/watch.hpp"
#include "tdbg/storage/memory_storage.hpp"

namespace {

struct arguments {
    long steps = 100;
    long broken_at = 40;
};

// Exits with the usage text: status 0 for --help, 2 for a bad argument.
arguments parse_arguments(int argc, char** argv) {
    arguments args;
    const auto usage = [](std::FILE* to, int status) {
        std::fprintf(to, "usage: train_in_memory [--steps N] [--broken-at K]\n"
                         "  --steps N       training steps (default 100)\n"
                         "  --broken-at K   from this step the inputs are zeros (default 40; 0: never)\n");
        std::exit(status);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (flag == "-h" || flag == "--help") {
            usage(stdout, 0);
        }
        if ((flag != "--steps" && flag != "--broken-at") || i + 1 == argc) {
            usage(stderr, 2);
        }
        char* end = nullptr;
        const long value = std::strtol(argv[++i], &end, 10);
        if (*end != '\0' || value < 0) {
            usage(stderr, 2);
        }
        (flag == "--steps" ? args.steps : args.broken_at) = value;
    }
    return args;
}

} // namespace

int main(int argc, char** argv) {
    const arguments args = parse_arguments(argc, argv);
    std::mt19937 rng(1);
    const mlp_example::dataset data = mlp_example::make_dataset(rng);
    mlp_example::mlp model = mlp_example::init_model(rng);

    try {
        const tdbg::memory_storage run("train_in_memory");
        tdbg::hook_options options;
        options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt}); // every step
        options.include_collections = {"weights", "gradients", "losses"};
        options.stop_check_interval = std::chrono::milliseconds(0); // a look for the marker at every step

        tdbg::rules::watch_options watch;
        watch.stop_training = true;
        watch.poll_interval = std::chrono::milliseconds(10); // this trainer takes about a millisecond a step
        // Called on the watcher's thread, which runs a few steps behind the training loop:
        // the loop stops at a begin_step soon after the marker is written (the first after a look
        // for it, which the hook's stop watch makes off the training thread).
        watch.on_trigger = [first = true](const tdbg::rules::trigger& t) mutable {
            if (first) {
                std::printf("rule %s triggered at step %lld: %s\n", t.rule.c_str(), static_cast<long long>(t.step),
                            t.reason.c_str());
                first = false;
            }
        };
        watch.logger = tdbg::rules::rule_logger::silent(); // on_trigger says it
        tdbg::rules::watcher watcher(run,
                                     {tdbg::rules::watch_rule("VanishingGradient", {{"threshold", "1e-7"}}),
                                      tdbg::rules::watch_rule("ExplodingTensor")},
                                     watch);

        tdbg::hook hook(run, options);
        hook.set_mode(tdbg::mode::train);
        for (long step = 0; step < args.steps; ++step) {
            hook.begin_step();
            if (hook.should_stop()) {
                std::printf("stopping at step %ld: %s asked\n", step, hook.stop_request()->rule.c_str());
                break;
            }
            mlp_example::dataset batch = mlp_example::make_batch(data, 0, mlp_example::points, step);
            if (args.broken_at > 0 && step >= args.broken_at) {
                batch.x.fill(0.0F); // the broken pipeline
            }
            hook.save_tensor("MLP_fc1.weight", model.w1);
            hook.save_tensor("MLP_fc2.weight", model.w2);
            const mlp_example::forward_pass f = mlp_example::forward(model, batch.x, batch.labels);
            hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(f.loss));
            const mlp_example::gradients g = mlp_example::backward(model, batch.x, batch.labels, f);
            hook.save_tensor("gradient/MLP_fc1.weight", g.w1);
            hook.save_tensor("gradient/MLP_fc2.weight", g.w2);
            model.w1 -= mlp_example::learning_rate * g.w1;
            model.b1 -= mlp_example::learning_rate * g.b1;
            model.w2 -= mlp_example::learning_rate * g.w2;
            model.b2 -= mlp_example::learning_rate * g.b2;
        }
        hook.close();

        // Every step published has been evaluated once finish() returns.
        for (const tdbg::rules::evaluation_result& r : watcher.finish()) {
            std::printf("%s\n", tdbg::rules::to_text(r).c_str());
        }
        std::printf("the run held %zu objects (%llu bytes) in memory\n", run.size(),
                    static_cast<unsigned long long>(run.total_bytes()));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "train_in_memory: %s\n", e.what());
        return 2;
    }
}
