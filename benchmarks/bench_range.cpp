// `tdbg rules` over a distributed run, whole and split by steps: a run of W workers x S steps
// (default 10 x 10,000; each step's index file and event file per worker, as distributed
// training writes them) with a scalar "loss" in collection "losses" and a few weights, read by
//   1. `tdbg rules RUN --rule LossNotDecreasing` (target: <= 2.5 s on the project's 2-core machine
//      at 10 x 10,000, where the rule's cost grew with the square of the steps);
//   2. the same over half the steps, the first (--end-step S/2) and the second (--start-step S/2)
//      (target: <= 0.65x the whole run's time for the first half; LossNotDecreasing carries state
//      from step to step, so the second half is evaluated from the run's first step and reads it all);
//   3. VanishingGradient, whose steps are independent, whole and over the second half (a range
//      that reads its own steps only);
//   4. four ranges evaluated one after the other and merged (`tdbg rules --merge`): the merged
//      verdict must equal the whole run's (checked, exit status 1 otherwise).
//
// The run is written with the format layer: worker_0's event files are written once and hard-linked
// under the other workers' names (their bytes name no worker); every worker has its own index files,
// which name their event file. Every process is timed best of N runs (wall seconds).
//
// usage: bench_range [--workers N] [--steps N] [--runs N] [--tdbg PATH] [--workdir DIR] [--keep]

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace {

namespace fs = std::filesystem;

struct options {
    std::int64_t workers = 10;
    std::int64_t steps = 10000;
    int runs = 3;
    std::string tdbg = "tdbg";
    fs::path workdir = fs::temp_directory_path();
    bool keep = false;
};

options parse(int argc, char** argv) {
    options o;
#ifdef TDBG_BENCH_TDBG_PATH
    o.tdbg = TDBG_BENCH_TDBG_PATH;
#endif
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                throw std::invalid_argument(a + " needs a value");
            }
            return argv[++i];
        };
        if (a == "--workers") {
            o.workers = std::stoll(next());
        } else if (a == "--steps") {
            o.steps = std::stoll(next());
        } else if (a == "--runs") {
            o.runs = std::stoi(next());
        } else if (a == "--tdbg") {
            o.tdbg = next();
        } else if (a == "--workdir") {
            o.workdir = next();
        } else if (a == "--keep") {
            o.keep = true;
        } else {
            std::cout << "usage: bench_range [--workers N] [--steps N] [--runs N] [--tdbg PATH] [--workdir DIR] "
                         "[--keep]\n";
            std::exit(a == "--help" ? 0 : 2);
        }
    }
    return o;
}

// The run: worker_<k> for k < workers, TRAIN steps 0..steps-1, a loss that goes down by 1% a
// step then stalls after 80% of the steps, and four weights of 16 float32.
void write_run(const fs::path& dir, const options& o) {
    const tdbg::local_storage storage(dir);
    tdbg::format::collections_file file;
    file.num_workers = static_cast<int>(o.workers);
    file.collections.push_back({});
    file.collections.back().name = "losses";
    file.collections.back().include_regex = {"^loss$"};
    file.collections.push_back({});
    file.collections.back().name = "gradients";
    file.collections.back().include_regex = {"^gradient/"};
    for (std::int64_t k = 0; k < o.workers; ++k) {
        storage.put(tdbg::format::collections_file_key("worker_" + std::to_string(k)), tdbg::format::to_json(file));
    }
    std::vector<float> weights(16);
    std::string events;
    for (std::int64_t step = 0; step < o.steps; ++step) {
        events.clear();
        tdbg::format::index_file index;
        index.mode = tdbg::mode::train;
        index.mode_step = step;
        const auto add = [&](const std::string& tag, const tdbg::tensor_value& value) {
            tdbg::format::tensor_event ev;
            ev.step = step;
            ev.wall_time = 1.7e9 + static_cast<double>(step);
            ev.tag = tag;
            ev.value = value;
            ev.mode = tdbg::mode::train;
            ev.mode_step = step;
            const std::size_t start = events.size();
            tdbg::format::append_record(events, tdbg::format::encode_tensor_event(ev),
                                        tdbg::format::footer_kind::smdebug_constant);
            index.tensor_payload.push_back({tag, start, events.size() - start});
        };
        const bool stalled = step > o.steps * 4 / 5;
        add("loss", tdbg::tensor_value::scalar(stalled ? 1.0F : 100.0F * static_cast<float>(std::pow(0.99, step))));
        for (int t = 0; t < 4; ++t) {
            std::fill(weights.begin(), weights.end(), static_cast<float>((step + t) % 7) + 1.0F);
            add("gradient/layer_" + std::to_string(t), tdbg::tensor_value::borrow(weights.data(), {weights.size()}));
        }
        const std::string first_events = tdbg::format::event_file_key(step, "worker_0");
        storage.put(first_events, events);
        for (std::int64_t k = 0; k < o.workers; ++k) {
            const std::string worker = "worker_" + std::to_string(k);
            index.event_file_name = tdbg::format::event_file_key(step, worker);
            if (k > 0) {
                fs::create_hard_link(dir / first_events, dir / index.event_file_name);
            }
            storage.put(tdbg::format::index_file_key(step, worker), tdbg::format::to_json(index));
        }
    }
    storage.put(std::string(tdbg::format::end_marker_key), "");
}

// Runs `command` (a shell command line) `runs` times: its best wall time, and its exit status.
std::pair<double, int> best_of(const std::string& command, int runs) {
    double best = 1e300;
    int status = -1;
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const int raw = std::system(command.c_str()); // NOLINT(cert-env33-c): the benchmark runs tdbg
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    }
    return {best, status};
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The results of a --json document with what says how they were invoked left out.
std::string verdicts(const fs::path& document) {
    const tdbg::format::json_value doc = tdbg::format::parse_json(read_file(document), document.string());
    tdbg::format::json_value out = tdbg::format::json_value::array();
    for (const tdbg::format::json_value& r : doc.at("results").items()) {
        for (const char* member :
             {"rule", "status", "triggered_steps", "not_triggered_steps", "skipped_steps", "trigger_reasons"}) {
            out.push_back(r.at(member));
        }
        out.push_back(r.at("coverage").at("text"));
    }
    return tdbg::format::dump_json(out);
}

} // namespace

int main(int argc, char** argv) {
    try {
        const options o = parse(argc, argv);
        const fs::path dir = o.workdir / ("tdbg_bench_range_" + std::to_string(::getpid()));
        const fs::path run = dir / "run";
        const auto written = std::chrono::steady_clock::now();
        write_run(run, o);
        double load[3] = {0, 0, 0};
        if (::getloadavg(load, 3) < 1) {
            load[0] = -1;
        }
        std::printf("bench_range: %s, %lld workers x %lld steps (%lld index files) written in %.1f s; best of %d "
                    "runs; load average %.2f\n",
                    o.tdbg.c_str(), static_cast<long long>(o.workers), static_cast<long long>(o.steps),
                    static_cast<long long>(o.workers * o.steps),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - written).count(), o.runs, load[0]);
        const std::string half = std::to_string(o.steps / 2);
        const auto rules = [&](const std::string& rule, const std::string& range, const std::string& out) {
            return o.tdbg + " rules " + run.string() + " --rule " + rule + " " + range + " --json -o " + out +
                   " >/dev/null 2>&1";
        };
        struct timed {
            const char* what;
            std::string command;
        };
        const std::vector<timed> commands{
            {"LossNotDecreasing, whole run", rules("LossNotDecreasing", "", (dir / "lnd.json").string())},
            {"LossNotDecreasing, first half (--end-step)",
             rules("LossNotDecreasing", "--end-step " + half, "/dev/null")},
            {"LossNotDecreasing, second half (--start-step)",
             rules("LossNotDecreasing", "--start-step " + half, "/dev/null")},
            {"VanishingGradient, whole run", rules("VanishingGradient", "", "/dev/null")},
            {"VanishingGradient, second half (--start-step)",
             rules("VanishingGradient", "--start-step " + half, "/dev/null")},
        };
        // Each command against its rule's whole run (the first command of each rule).
        double whole = 0;
        double whole_loss = 0; // LossNotDecreasing's, which the parts below are compared with
        std::printf("  %-48s %8s  %s\n", "command", "wall s", "x whole");
        for (const timed& t : commands) {
            const auto [seconds, status] = best_of(t.command, o.runs);
            if (std::string(t.what).find("whole") != std::string::npos) {
                whole = seconds;
                whole_loss = whole_loss == 0 ? seconds : whole_loss;
            }
            std::printf("  %-48s %8.2f  %.2f  (exit %d)\n", t.what, seconds, seconds / whole, status);
        }
        // Four ranges, then their merge: the verdict must be the whole run's.
        std::string merge = o.tdbg + " rules --merge";
        double parts = 0;
        for (int i = 0; i < 4; ++i) {
            const std::string part = (dir / ("part" + std::to_string(i) + ".json")).string();
            std::string range = "--start-step " + std::to_string(o.steps * i / 4);
            if (i < 3) {
                range += " --end-step " + std::to_string(o.steps * (i + 1) / 4);
            }
            const auto [seconds, status] = best_of(rules("LossNotDecreasing", range, part), 1);
            std::printf("  %-48s %8.2f  %.2f  (exit %d)\n",
                        ("LossNotDecreasing, part " + std::to_string(i + 1) + " of 4").c_str(), seconds,
                        seconds / whole_loss, status);
            parts = std::max(parts, seconds);
            merge += " " + part;
        }
        const auto [merge_seconds, merge_status] =
            best_of(merge + " --json -o " + (dir / "merged.json").string() + " >/dev/null 2>&1", 1);
        const bool same = verdicts(dir / "merged.json") == verdicts(dir / "lnd.json");
        std::printf("  %-48s %8.2f  (exit %d)\n", "tdbg rules --merge of the 4 parts", merge_seconds, merge_status);
        std::printf(
            "  the slowest part and the merge: %.2f s (%.2fx whole); merged verdict equals the whole run's: %s\n",
            parts + merge_seconds, (parts + merge_seconds) / whole_loss, same ? "yes" : "NO");
        if (!o.keep) {
            fs::remove_all(dir);
        } else {
            std::printf("kept %s\n", dir.c_str());
        }
        return same ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_range: %s\n", e.what());
        return 2;
    }
}
