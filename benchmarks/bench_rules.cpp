// VanishingGradient through invoke_rule, against yardsticks measured in the same run:
//  1. data-bound: 300 steps x 30 gradients x 16K float32 raw (~590 MB of event
//     files), the mean |gradient| computed from every value; against reading
//     the same files from the page cache with cat (target >= 0.5x) and beside
//     Python smdebug's 0.69 s for this run (2-core machine);
//  2. the same run with the abs_mean reduction stored by the hook (no raw
//     values): the rule reads only the stored reductions; against Python
//     smdebug's ~70 us per value (target >= 50x);
//  3. overhead-bound: 2,000 steps x 200 gradients x 64 float32 raw; against
//     Python smdebug's ~70 us per value (target >= 50x).
// Also, for information: 1. with one thread, and 2. with the raw values kept
// beside the stored reductions.
// The runs are written to a temporary directory with the format layer.
//
// usage: bench_rules [--small]   (--small: a tenth of each size, for a smoke run)

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/core/reduction.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

// Python smdebug: VanishingGradient over the data-bound run (2-core machine),
// and its cost per value when values are small.
constexpr double python_data_bound_s = 0.69;
constexpr double python_per_value_s = 70e-6;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

enum class saved { raw, reduction, both };

// `steps` x `tensors` gradients of `elements` float32 each (mean |g| about 0.5,
// so the rule evaluates every step and triggers nowhere), one worker, as a hook publishes.
void write_run(const fs::path& dir, std::int64_t steps, std::size_t tensors, std::size_t elements, saved what) {
    const tdbg::local_storage storage(dir);
    tdbg::format::collections_file file;
    tdbg::format::collection_spec gradients;
    gradients.name = "gradients";
    gradients.include_regex = {"^gradient/"};
    file.collections.push_back(gradients);
    storage.put(tdbg::format::collections_file_key("worker_0"), tdbg::format::to_json(file));
    const tdbg::reduction abs_mean{tdbg::reduction_kind::mean, true};
    std::vector<float> data(elements);
    std::string events;
    for (std::int64_t step = 0; step < steps; ++step) {
        events.clear();
        tdbg::format::index_file index;
        index.mode = tdbg::mode::train;
        index.mode_step = step;
        index.event_file_name = tdbg::format::event_file_key(step, "worker_0");
        auto add = [&](std::string tag, tdbg::tensor_value value) {
            tdbg::format::tensor_event ev;
            ev.step = step;
            ev.wall_time = 1.7e9;
            ev.tag = std::move(tag);
            ev.value = std::move(value);
            ev.mode = tdbg::mode::train;
            ev.mode_step = step;
            const std::size_t start = events.size();
            tdbg::format::append_record(events, tdbg::format::encode_tensor_event(ev),
                                        tdbg::format::footer_kind::smdebug_constant);
            index.tensor_payload.push_back({ev.tag, start, events.size() - start});
        };
        for (std::size_t t = 0; t < tensors; ++t) {
            const std::string name = "gradient/layer_" + std::to_string(t) + ".weight";
            double sum = 0;
            for (std::size_t i = 0; i < elements; ++i) {
                data[i] = static_cast<float>((step * 31 + static_cast<std::int64_t>(t * 7 + i)) % 1000) * 1e-3F - 0.25F;
                sum += std::abs(static_cast<double>(data[i]));
            }
            if (what != saved::raw) {
                add(tdbg::format::reduction_tensor_name(abs_mean, name),
                    tdbg::tensor_value::scalar(static_cast<float>(sum / static_cast<double>(elements))));
            }
            if (what != saved::reduction) {
                add(name, tdbg::tensor_value::borrow(data.data(), {elements}));
            }
        }
        storage.put(index.event_file_name, events);
        storage.put(tdbg::format::index_file_key(step, "worker_0"), tdbg::format::to_json(index));
    }
    storage.put(std::string(tdbg::format::end_marker_key), "");
}

std::uint64_t event_bytes(const fs::path& dir) {
    std::uint64_t total = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir / "events")) {
        if (entry.is_regular_file()) {
            total += entry.file_size();
        }
    }
    return total;
}

// cat every event file to /dev/null; the best of three runs (page cache warm).
double cat_seconds(const fs::path& dir) {
    const std::string command =
        "find '" + (dir / "events").string() + "' -name '*.tfevents' -print0 | xargs -0 cat > /dev/null";
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
        const auto start = clock_type::now();
        if (std::system(command.c_str()) != 0) {
            std::cerr << "cat failed\n";
        }
        best = std::min(best, seconds_since(start));
    }
    return best;
}

struct timing {
    double seconds = 0; // open the trial + invoke_rule, best of `repeats`
    std::size_t evaluated = 0;
};

// create_trial + VanishingGradient over every step; the best of `repeats` runs.
timing vanishing_gradient(const fs::path& dir, std::size_t threads, int repeats = 3) {
    timing best{1e30, 0};
    for (int i = 0; i < repeats; ++i) {
        const auto start = clock_type::now();
        auto trial = tdbg::create_trial(dir.string());
        tdbg::rules::vanishing_gradient rule(trial, {{"threshold", "1e-7"}});
        tdbg::rules::invoke_options options;
        options.start_step = 0;
        options.threads = threads;
        const auto result = tdbg::rules::invoke_rule(rule, options);
        const double s = seconds_since(start);
        if (!result.triggered_steps.empty() || !result.skipped_steps.empty()) {
            std::cerr << "unexpected result: " << result.triggered_steps.size() << " triggered, "
                      << result.all_skipped_steps().size() << " skipped\n";
        }
        if (s < best.seconds) {
            best = {s, result.not_triggered_steps.size()};
        }
    }
    return best;
}

void print_row(const std::string& what, double seconds, const std::string& note) {
    std::printf("%-62s %9.4f s   %s\n", what.c_str(), seconds, note.c_str());
}

} // namespace

int main(int argc, char** argv) {
    const bool small = argc > 1 && std::string_view(argv[1]) == "--small";
    const std::int64_t data_steps = small ? 30 : 300;
    const std::int64_t overhead_steps = small ? 200 : 2000;
    const fs::path root = fs::temp_directory_path() / ("tdbg_bench_rules_" + std::to_string(::getpid()));
    fs::remove_all(root);
    char line[200];

    // 1. data-bound, raw values
    const fs::path data_run = root / "data_bound";
    write_run(data_run, data_steps, 30, 16384, saved::raw);
    const double mb = static_cast<double>(event_bytes(data_run)) / 1e6;
    const double cat_s = cat_seconds(data_run);
    std::printf("data-bound run: %lld steps x 30 gradients x 16K float32 raw, %.0f MB of event files\n",
                static_cast<long long>(data_steps), mb);
    print_row("yardstick: cat the event files (page cache)", cat_s, std::to_string(static_cast<int>(mb / cat_s)) + " MB/s");
    const timing data = vanishing_gradient(data_run, 0);
    std::snprintf(line, sizeof line, "%.0f MB/s = %.2fx the cat yardstick (target >= 0.5x); Python smdebug %.2f s = %.1fx",
                  mb / data.seconds, cat_s / data.seconds, python_data_bound_s, python_data_bound_s / data.seconds);
    print_row("VanishingGradient, mean |g| from the raw values", data.seconds, line);
    const timing data_1t = vanishing_gradient(data_run, 1, 1);
    std::snprintf(line, sizeof line, "%.0f MB/s = %.2fx cat", mb / data_1t.seconds, cat_s / data_1t.seconds);
    print_row("  the same on one thread", data_1t.seconds, line);
    fs::remove_all(data_run);

    // 2. the same run with the abs_mean reduction stored
    const auto values = static_cast<double>(data_steps * 30);
    const fs::path reduced_run = root / "reduced";
    write_run(reduced_run, data_steps, 30, 16384, saved::reduction);
    const timing reduced = vanishing_gradient(reduced_run, 0);
    std::snprintf(line, sizeof line, "%.2f us/value; Python ~70 us/value (%.2f s) = %.0fx (target >= 50x)",
                  reduced.seconds / values * 1e6, values * python_per_value_s, values * python_per_value_s / reduced.seconds);
    std::printf("\nthe same run with abs_mean stored by the hook (%.0f values)\n", values);
    print_row("VanishingGradient, stored abs_mean only", reduced.seconds, line);
    fs::remove_all(reduced_run);
    const fs::path both_run = root / "both";
    write_run(both_run, data_steps, 30, 16384, saved::both);
    const timing both = vanishing_gradient(both_run, 0);
    std::snprintf(line, sizeof line, "%.2f us/value = %.0fx Python", both.seconds / values * 1e6,
                  values * python_per_value_s / both.seconds);
    print_row("  with the raw values stored too (reads the reductions only)", both.seconds, line);
    fs::remove_all(both_run);

    // 3. overhead-bound
    const fs::path overhead_run = root / "overhead_bound";
    write_run(overhead_run, overhead_steps, 200, 64, saved::raw);
    const auto small_values = static_cast<double>(overhead_steps * 200);
    const timing overhead = vanishing_gradient(overhead_run, 0);
    std::printf("\noverhead-bound run: %lld steps x 200 gradients x 64 float32 raw (%.0f values)\n",
                static_cast<long long>(overhead_steps), small_values);
    std::snprintf(line, sizeof line, "%.2f us/value; Python ~70 us/value (%.1f s) = %.0fx (target >= 50x)",
                  overhead.seconds / small_values * 1e6, small_values * python_per_value_s,
                  small_values * python_per_value_s / overhead.seconds);
    print_row("VanishingGradient, mean |g| from 64-float values", overhead.seconds, line);
    const timing overhead_1t = vanishing_gradient(overhead_run, 1, 1);
    std::snprintf(line, sizeof line, "%.2f us/value = %.0fx Python", overhead_1t.seconds / small_values * 1e6,
                  small_values * python_per_value_s / overhead_1t.seconds);
    print_row("  the same on one thread", overhead_1t.seconds, line);
    fs::remove_all(root);
    return 0;
}
