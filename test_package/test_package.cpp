// Writes a two-step run with the hook and reads it back with the trial.
#include <cstdio>
#include <vector>

#include <tdbg/hook/hook.hpp>
#include <tdbg/trial/trial.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: tdbg_test_package DIR\n");
        return 2;
    }
    tdbg::hook_options options;
    options.out_dir = argv[1];
    options.save_config = tdbg::save_config(tdbg::save_config_mode{1});
    options.include_collections = {"losses"};
    {
        tdbg::hook<> hook(options);
        for (int step = 0; step < 2; ++step) {
            hook.begin_step();
            hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(1.0F / static_cast<float>(step + 1)));
        }
    }
    const auto trial = tdbg::create_trial(argv[1]);
    const auto steps = trial.steps();
    const float last = trial.tensor("CrossEntropyLoss_output_0").value(1).data_as<float>()[0];
    std::printf("tdbg: %zu steps, last loss %.2f\n", steps.size(), static_cast<double>(last));
    return steps.size() == 2 && last == 0.5F ? 0 : 1;
}
