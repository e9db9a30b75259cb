// The trainer the reliability tests run in a child process (and kill): a
// training loop that saves tensors of known values through the real hook.
//
// Usage: tdbg_reliability_trainer <run dir> <steps> [pause microseconds per step] [hold file] [start file]
// With a hold file (not ""), the trainer waits before its middle step until that file exists (at
// most ten minutes), so that a reader can be sure to see the run half written. With a start file,
// it waits until that file exists before it builds its hook: trainers started apart begin at once.
// Exit status: 0 after close() (a write error that stopped saving is printed on
// stdout: training went on), 1 on a tdbg error thrown (printed), 2 on bad usage.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>

#include "tdbg/hook/hook.hpp"
#include "training_values.hpp"

namespace reliability = tdbg::test::reliability;

int main(int argc, char** argv) {
    if (argc < 3 || argc > 6) {
        std::fprintf(stderr, "usage: %s <run dir> <steps> [pause microseconds per step] [hold file] [start file]\n",
                     argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const long steps = std::strtol(argv[2], nullptr, 10);
    const long pause_us = argc >= 4 ? std::strtol(argv[3], nullptr, 10) : 0;
    const std::string hold = argc >= 5 ? argv[4] : "";
    const std::string start = argc == 6 ? argv[5] : "";
    const auto wait_for_file = [](const std::string& file) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
        while (!std::filesystem::exists(file) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    };
    if (!start.empty()) {
        wait_for_file(start);
    }
    try {
        tdbg::hook_options options;
        options.out_dir = dir;
        options.save_all = true;
        options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
        options.stop_check_interval = std::chrono::milliseconds(60000);
        tdbg::hook hook(options);
        hook.set_mode(tdbg::mode::train);
        for (long step = 0; step < steps; ++step) {
            if (!hold.empty() && step == steps / 2) {
                wait_for_file(hold);
            }
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
