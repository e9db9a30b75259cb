// The consumer program of tdbg's packaging tests (through add_subdirectory, the installed CMake
// package and pkg-config; header-only and with the engine compiled once): writes a run with the
// hook, reads it back with a trial and runs a built-in rule over it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <tdbg/core/xtensor.hpp>
#include <tdbg/hook/hook.hpp>
#include <tdbg/rules/builtin/vanishing_gradient.hpp>
#include <tdbg/rules/invoke.hpp>
#include <tdbg/trial/trial.hpp>
#include <xtensor/xarray.hpp>

// Built with -DTDBG_CONSUMER_SEPARATE, the program must get the engine from the library.
#if defined(TDBG_CONSUMER_SEPARATE) && TDBG_HEADER_ONLY
#error "the separately compiled consumer got the header-only engine: TDBG_SEPARATE_COMPILATION is missing"
#endif

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
        return 2;
    }
    const std::filesystem::path root(argv[1]);
    std::filesystem::remove_all(root);

    // Three steps of one gradient; the last one vanishes.
    {
        tdbg::hook_options options;
        options.out_dir = root.string();
        options.include_collections = {"gradients"};
        tdbg::save_config_mode every_step;
        every_step.save_interval = 1;
        options.save_config = tdbg::save_config(every_step);
        tdbg::hook hook(options);
        for (int step = 0; step < 3; ++step) {
            hook.begin_step();
            xt::xarray<float> gradient = xt::xarray<float>::from_shape({2, 2});
            gradient.fill(step < 2 ? 0.5F : 1e-9F);
            hook.save_tensor("gradients/fc.weight", gradient, {"gradients"});
        }
        hook.close();
    }

    const tdbg::trial trial = tdbg::create_trial(root.string());
    const std::vector<std::int64_t> steps = trial.steps();
    const double first = trial.tensor("gradients/fc.weight").value(0).as<float>()(1, 1);
    tdbg::rules::vanishing_gradient rule(trial, {{"threshold", "1e-7"}});
    const tdbg::rules::evaluation_result result = tdbg::rules::invoke_rule(rule);
    std::filesystem::remove_all(root);

    if (steps != std::vector<std::int64_t>{0, 1, 2} || std::fabs(first - 0.5) > 0.0 ||
        result.triggered_steps != std::vector<std::int64_t>{2}) {
        std::fprintf(stderr, "unexpected run: %zu steps, first value %g, %zu triggered steps\n", steps.size(), first,
                     result.triggered_steps.size());
        return 1;
    }
    std::puts("tdbg consumer: wrote 3 steps, read them back, VanishingGradient triggered at step 2");
    return 0;
}
