// The trainer the reliability tests run in a child process (and kill): a
// training loop that saves tensors of known values through the real hook.
//
// Usage: tdbg_reliability_trainer <run dir> <steps> [pause microseconds per step]
// Exit status: 0 after close() (a write error that stopped saving is printed on
// stdout: training went on), 1 on a tdbg error thrown (printed), 2 on bad usage.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "tdbg/hook/hook.hpp"
#include "training_values.hpp"

namespace reliability = tdbg::test::reliability;

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) {
        std::fprintf(stderr, "usage: %s <run dir> <steps> [pause microseconds per step]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const long steps = std::strtol(argv[2], nullptr, 10);
    const long pause_us = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 0;
    try {
        tdbg::hook_options options;
        options.out_dir = dir;
        options.save_all = true;
        options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
        options.stop_check_interval = std::chrono::milliseconds(60000);
        tdbg::hook hook(options);
        hook.set_mode(tdbg::mode::train);
        for (long step = 0; step < steps; ++step) {
            hook.begin_step();
            for (int k = 0; k <= reliability::small_tensors; ++k) {
                const auto v = reliability::values(step, k);
                hook.save_tensor(reliability::tensor_name(k), v.data(), {v.size()});
            }
            hook.save_tensor("step_id", tdbg::tensor_value::scalar(static_cast<std::int64_t>(step)));
            if (pause_us > 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
            }
        }
        hook.close();
        if (const auto error = hook.write_error()) {
            // Training went on without the hook (hook_options::on_write_error): say so, succeed.
            std::printf("trainer: saving stopped: %s\n", error->c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainer: %s\n", e.what());
        return 1;
    }
    return 0;
}
