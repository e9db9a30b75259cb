// Reading runs with the trial, against yardsticks measured in the same run:
//  1. data-bound: 300 steps x 30 tensors x 16K float32 (~590 MB of event
//     files): open + read every value + one reduction per value, against
//     reading the same files from the page cache with cat, and beside Python
//     smdebug's published figures;
//  2. overhead-bound: 2,000 steps x 200 tensors x 64 float32, the same
//     reading, against Python smdebug's ~70 us per value;
//  3. opening the index of a 100,000-step run.
// The runs are written to a temporary directory with the format layer.
//
// Every reading is done three times; the fastest of each phase is shown.
//
// usage: bench_trial [--small]   (--small: a tenth of each size, for a smoke run)
// The runs go to $TMPDIR (default /tmp); a tmpfs such as /dev/shm spares the
// disk 100,000 small files.

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

#include <unistd.h>

#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

#include "synthetic_run.hpp"

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

// Python smdebug's published figures for the data-bound run (2-core machine).
constexpr double python_create_trial_s = 0.04;
constexpr double python_values_s = 0.61;
constexpr double python_reductions_s = 0.81;
// Python smdebug's cost per value when values are small (overhead-bound).
constexpr double python_per_value_s = 70e-6;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

using tdbg::bench::tensor_name;
using tdbg::bench::write_collections;
using tdbg::bench::write_run;

// Only index files (the event files are never opened when a trial opens).
void write_index_only_run(const fs::path& dir, std::int64_t steps, std::size_t tensors) {
    const tdbg::local_storage storage(dir);
    write_collections(storage);
    for (std::int64_t step = 0; step < steps; ++step) {
        tdbg::format::index_file index;
        index.mode = tdbg::mode::train;
        index.mode_step = step;
        index.event_file_name = tdbg::format::event_file_key(step, "worker_0");
        for (std::size_t t = 0; t < tensors; ++t) {
            index.tensor_payload.push_back({tensor_name(t), t * 400, 400});
        }
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
    const std::string command = "find '" + (dir / "events").string() + "' -name '*.tfevents' -print0 | xargs -0 cat > /dev/null";
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

struct reading {
    double open_s = 0;
    double values_s = 0;
    double reductions_s = 0;
    std::size_t values = 0;
    double checksum = 0;
};

// Open, then read every value step by step (all tensors of a step, then the
// next step) and compute one reduction (mean) of each. The clock is read once
// per step and phase, not per value.
reading read_step_major(const fs::path& dir) {
    reading r;
    auto start = clock_type::now();
    const auto trial = tdbg::create_trial(dir.string());
    r.open_s = seconds_since(start);
    const auto names = trial.tensor_names();
    std::vector<tdbg::tensor> tensors;
    for (const auto& n : names) {
        tensors.push_back(trial.tensor(n));
    }
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const auto no_refresh = trial.no_refresh();
    std::vector<tdbg::tensor_value> values;
    values.reserve(tensors.size());
    for (const std::int64_t step : trial.steps()) {
        const auto t0 = clock_type::now();
        values.clear();
        for (const auto& t : tensors) {
            values.push_back(t.value(step));
        }
        const auto t1 = clock_type::now();
        for (const auto& v : values) {
            r.checksum += static_cast<double>(tdbg::compute_reduction(v, mean).data_as<float>()[0]);
        }
        r.values_s += std::chrono::duration<double>(t1 - t0).count();
        r.reductions_s += seconds_since(t1);
        r.values += values.size();
    }
    return r;
}

// The same, tensor by tensor: values() of each tensor across all steps.
reading read_tensor_major(const fs::path& dir) {
    reading r;
    auto start = clock_type::now();
    const auto trial = tdbg::create_trial(dir.string());
    r.open_s = seconds_since(start);
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    start = clock_type::now();
    for (const auto& n : trial.tensor_names()) {
        for (const auto& [step, v] : trial.tensor(n).values()) {
            r.checksum += static_cast<double>(tdbg::compute_reduction(v, mean).data_as<float>()[0]) + 0 * static_cast<double>(step);
            ++r.values;
        }
    }
    r.values_s = seconds_since(start);
    return r;
}

void print_row(const std::string& what, double seconds, const std::string& versus) {
    std::printf("  %-44s %9.3f s   %s\n", what.c_str(), seconds, versus.c_str());
}

// The fastest of `runs` readings, phase by phase (the machine may be shared).
template <class F>
reading best_of(int runs, F&& read) {
    reading best = read();
    for (int i = 1; i < runs; ++i) {
        const reading r = read();
        best.open_s = std::min(best.open_s, r.open_s);
        best.values_s = std::min(best.values_s, r.values_s);
        best.reductions_s = std::min(best.reductions_s, r.reductions_s);
    }
    return best;
}

std::string ratio(double theirs, double ours, const char* label) {
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%.1fx %s", theirs / ours, label);
    return buffer;
}

} // namespace

int main(int argc, char** argv) {
    const bool small = argc > 1 && std::string_view(argv[1]) == "--small";
    const std::int64_t scale = small ? 10 : 1;
    const fs::path root = fs::temp_directory_path() / ("tdbg_bench_trial_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    std::printf("bench_trial (%s): runs written under %s\n", small ? "small" : "full", root.c_str());

    // 1. Data-bound.
    {
        const std::int64_t steps = 300 / scale;
        const std::size_t tensors = 30;
        const std::size_t elements = 16384;
        const fs::path dir = root / "data_bound";
        auto start = clock_type::now();
        write_run(dir, steps, tensors, elements);
        const double write_s = seconds_since(start);
        const std::uint64_t bytes = event_bytes(dir);
        const double mb = static_cast<double>(bytes) / 1e6;
        std::printf("\n1. data-bound: %lld steps x %zu tensors x %zu float32 = %.0f MB of event files (written in %.2f s)\n",
                    static_cast<long long>(steps), tensors, elements, mb, write_s);
        const double cat_s = cat_seconds(dir);
        const reading r = best_of(3, [&] { return read_step_major(dir); });
        const double total = r.open_s + r.values_s + r.reductions_s;
        const double python_scale = static_cast<double>(r.values) / 9000.0; // Python's figures are for 9000 values
        print_row("yardstick: cat the event files (page cache)", cat_s, std::to_string(static_cast<int>(mb / cat_s)) + " MB/s");
        print_row("create_trial", r.open_s, ratio(python_create_trial_s * python_scale, r.open_s, "faster than Python (0.04 s)"));
        print_row("read " + std::to_string(r.values) + " values", r.values_s,
                  ratio(python_values_s * python_scale, r.values_s, "faster than Python (0.61 s / 9000)"));
        print_row("one reduction (mean) per value", r.reductions_s,
                  ratio(python_reductions_s * python_scale, r.reductions_s, "faster than Python's computed reductions (0.81 s / 9000)"));
        char rate[160];
        std::snprintf(rate, sizeof rate, "%.0f MB/s = %.2fx the cat yardstick (target >= 0.5x)", mb / total, cat_s / total);
        print_row("open + values + reductions", total, rate);
        const reading tm = best_of(3, [&] { return read_tensor_major(dir); });
        std::snprintf(rate, sizeof rate, "%.0f MB/s = %.2fx cat", mb / (tm.open_s + tm.values_s), cat_s / (tm.open_s + tm.values_s));
        print_row("same, tensor by tensor (values())", tm.open_s + tm.values_s, rate);
        if (tm.checksum != r.checksum) {
            std::printf("  MISMATCH: the two reading orders disagree\n");
        }
        fs::remove_all(dir);
    }

    // 2. Overhead-bound.
    {
        const std::int64_t steps = 2000 / scale;
        const std::size_t tensors = 200;
        const std::size_t elements = 64;
        const fs::path dir = root / "overhead_bound";
        auto start = clock_type::now();
        write_run(dir, steps, tensors, elements);
        const double write_s = seconds_since(start);
        std::printf("\n2. overhead-bound: %lld steps x %zu tensors x %zu float32 (written in %.2f s)\n",
                    static_cast<long long>(steps), tensors, elements, write_s);
        const reading r = best_of(3, [&] { return read_step_major(dir); });
        const double total = r.open_s + r.values_s + r.reductions_s;
        const double python_s = static_cast<double>(r.values) * python_per_value_s;
        print_row("create_trial", r.open_s, "");
        print_row("read " + std::to_string(r.values) + " values", r.values_s,
                  std::to_string(static_cast<int>(r.values_s / static_cast<double>(r.values) * 1e9)) + " ns per value");
        print_row("one reduction (mean) per value", r.reductions_s, "");
        print_row("open + values + reductions", total,
                  ratio(python_s, total, "faster than Python at 70 us per value (target >= 50x)"));
        const reading tm = best_of(3, [&] { return read_tensor_major(dir); });
        print_row("same, tensor by tensor (values())", tm.open_s + tm.values_s,
                  ratio(python_s, tm.open_s + tm.values_s, "faster than Python"));
        fs::remove_all(dir);
    }

    // 3. Opening a 100,000-step index.
    {
        const std::int64_t steps = 100000 / scale;
        const std::size_t tensors = 10;
        const fs::path dir = root / "long_run";
        auto start = clock_type::now();
        write_index_only_run(dir, steps, tensors);
        const double write_s = seconds_since(start);
        std::printf("\n3. index of %lld steps x %zu tensors (written in %.2f s)\n", static_cast<long long>(steps), tensors, write_s);
        double open_s = 1e30;
        std::size_t steps_seen = 0;
        std::size_t tensors_seen = 0;
        for (int i = 0; i < 3; ++i) {
            start = clock_type::now();
            const auto trial = tdbg::create_trial(dir.string());
            open_s = std::min(open_s, seconds_since(start));
            steps_seen = trial.steps().size();
            tensors_seen = trial.tensor_names().size();
        }
        char note[96];
        std::snprintf(note, sizeof note, "%zu steps, %zu tensors (target < 2 s)", steps_seen, tensors_seen);
        print_row("create_trial", open_s, note);
        fs::remove_all(dir);
    }
    fs::remove_all(root);
    return 0;
}
