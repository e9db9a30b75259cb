// The Conan package's test: writes a two-step run with the hook, reads it back with a trial
// (the engine compiled once, tdbg::compiled) and, where the package has the command line,
// lists the run with the installed `tdbg` command.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <tdbg/hook/hook.hpp>
#include <tdbg/trial/trial.hpp>

#if TDBG_HEADER_ONLY
#error "test_package must be built with the engine compiled once (tdbg::compiled)"
#endif

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: tdbg_test_package DIR\n");
        return 2;
    }
    tdbg::hook_options options;
    options.out_dir = argv[1];
    tdbg::save_config_mode every_step;
    every_step.save_interval = 1;
    options.save_config = tdbg::save_config(every_step);
    options.include_collections = {"losses"};
    {
        tdbg::hook hook(options);
        for (int step = 0; step < 2; ++step) {
            hook.begin_step();
            hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(1.0F / static_cast<float>(step + 1)), {"losses"});
        }
        hook.close();
    }
    const tdbg::trial trial = tdbg::create_trial(argv[1]);
    const auto steps = trial.steps();
    const float last = trial.tensor("CrossEntropyLoss_output_0").value(1).data_as<float>()[0];
    std::printf("tdbg: %zu steps, last loss %.2f\n", steps.size(), static_cast<double>(last));
    if (steps.size() != 2 || last != 0.5F) {
        return 1;
    }
#ifdef TDBG_COMMAND
    const std::string command = std::string(TDBG_COMMAND) + " ls " + argv[1];
    if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "%s failed\n", command.c_str());
        return 1;
    }
#endif
    return 0;
}
