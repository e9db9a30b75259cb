// The `tdbg` program as a whole process on runs of the sizes Python smdebug was
// measured with, beside Python smdebug on the same machine:
//  1. a raw run (1,000 steps x 100 float32 gradients of 64 elements, saved at
//     every TRAIN step) and a reductions-only run (the same gradients with min,
//     max, mean, std, l2 and abs_mean stored: 600 index entries per step, named
//     smdebug/reductions/<reduction>/<tensor>), both written by tdbg's hook in
//     smdebug's layout, read by `tdbg rules RUN --rule VanishingGradient`
//     (target >= 50x Python smdebug on both) and `tdbg ls RUN` (target <= 64
//     bytes of peak resident memory per index entry above the process's
//     baseline, on the reductions run);
//  2. a large index: `tdbg ls` of 1,000 to 10,000 steps x 600 entries (up to
//     6 million entries; targets at 10,000 steps: <= 2 s and <= 500 MB
//     resident), and how time and memory grow with the steps (linearly: the
//     per-entry constants of the largest and the smallest run within 1.25x).
//  3. with --grow (or --quick, --sizes), only growing runs: W workers x S steps,
//     worker_0 written by the hook and copied for the others (index files with
//     the worker renamed, event files hard-linked), `tdbg ls` and `tdbg rules`
//     with VanishingGradient and LossNotDecreasing timed at each size (wall, CPU,
//     peak memory, and the memory each index file and entry adds), against the
//     targets for 100 x 1,000, 10 x 10,000 and 1,000 x 1,000.
//
// Python smdebug runs beside it when asked (--python) or when $SMDEBUG_SRC is
// set and imports: <shared>/tools/smdebug/bench_smdebug.py with the same sizes,
// where <shared> is $TDBG_SHARED_DIR or the directory `shared` beside the
// source tree. Without it the ratios are against the issue's figures for the
// project's 2-core machine (the low ends: 8.3 s raw, 14.0 s reductions).
//
// Every process is timed best of N runs (wall seconds, and peak resident memory
// from wait4). The processes are started by a fresh copy of this program (see
// measure_mode): a process started directly by this one would count our own
// peak memory, inherited through fork or vfork, in its ru_maxrss.
//
// usage: bench_scale [options]   (bench_scale --help lists them)

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared_dir.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"

extern char** environ; // NOLINT: POSIX declares it in no header

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

// The issue's figures for Python smdebug 1.0.34 on the project's 2-core machine
// (the low end of each range), used when Python does not run beside.
constexpr double issue_python_raw_s = 8.3;
constexpr double issue_python_reductions_s = 14.0;

// The targets.
constexpr double target_ratio = 50.0; // smdebug seconds / tdbg seconds, both runs
constexpr double target_bytes_per_entry = 64.0; // `tdbg ls`, peak RSS above the baseline
constexpr std::int64_t target_large_steps = 10000; // the large index the next two apply to
constexpr double target_large_seconds = 2.0;
constexpr double target_large_mb = 500.0;
constexpr double target_growth = 1.25; // per-entry constant, largest run / smallest run

// The reductions bench_smdebug.py stores, in smdebug's spelling and in the
// order its hook writes them (reductions, norms, abs_reductions).
constexpr const char* reduction_spelling = "min,max,mean,std,l2_norm,abs_mean";
const std::vector<std::string> stored_reductions{"min", "max", "mean", "std", "l2", "abs_mean"};

constexpr const char* worker = "worker_0";
constexpr const char* loss_name = "CrossEntropyLoss_output_0"; // in the built-in collection "losses"
// The hidden first argument under which this program starts one process and
// reports on it (measure_mode).
constexpr std::string_view measure_flag = "--measure-process";

constexpr const char* usage =
    "usage: bench_scale [options]\n\n"
    "Writes smdebug-layout runs with tdbg's hook and times the tdbg program on them as\n"
    "whole processes (best of N: wall seconds, peak resident memory), beside Python smdebug.\n\n"
    "options:\n"
    "  --tdbg PATH          the tdbg program (default: the one built with this benchmark)\n"
    "  --runs N             runs of each process, the best shown (default 3)\n"
    "  --steps N            steps of the raw and reductions runs (default 1000)\n"
    "  --tensors N          gradients per step (default 100; 6 index entries each when reduced)\n"
    "  --elements N         float32 elements per gradient (default 64)\n"
    "  --large-steps LIST   steps of the large-index runs (default 1000,2000,5000,10000)\n"
    "  --workdir DIR        write the runs in a new directory under DIR (default: $TMPDIR or /tmp)\n"
    "  --keep               keep the runs (and Python's, with --python-runs)\n"
    "  --python             run Python smdebug's bench_smdebug.py beside (setting it up with\n"
    "                       setup.sh when $SMDEBUG_SRC is unset); default: when $SMDEBUG_SRC is\n"
    "                       set and imports\n"
    "  --python-runs        also time tdbg on the runs Python wrote (implies --python)\n"
    "  --no-python          never run Python; ratios against the issue's figures\n"
    "  --check              exit status 1 when a target is missed\n"
    "  --grow               only the growing runs: W workers x S steps (worker_0 written by the\n"
    "                       hook, copied for the others), tdbg ls and rules VanishingGradient and\n"
    "                       LossNotDecreasing timed at each size (default 100x1000,10x10000,1000x1000)\n"
    "  --sizes LIST         the growing runs' sizes, e.g. 10x1000,100x1000 (implies --grow)\n"
    "  --quick              small growing runs: 2x100,10x100,10x1000 (implies --grow)\n\n"
    "exit status: 0 done, 1 a target missed (with --check) or a run not in the expected\n"
    "layout, 2 an error (bad arguments, a process that failed)\n";

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// ---- options -------------------------------------------------------------------------

/// One size of a growing run (--grow).
struct run_size {
    std::int64_t workers = 0;
    std::int64_t steps = 0;
};

struct options {
    std::string tdbg;
    int runs = 3;
    std::int64_t steps = 1000;
    std::size_t tensors = 100;
    std::size_t elements = 64;
    std::vector<std::int64_t> large_steps{1000, 2000, 5000, 10000};
    std::string workdir;
    bool keep = false;
    enum class python_use { automatic, required, never } python = python_use::automatic;
    bool python_runs = false;
    bool check = false;
    bool grow = false;
    std::vector<run_size> sizes{{100, 1000}, {10, 10000}, {1000, 1000}};
};

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::int64_t parse_positive(const std::string& flag, const std::string& text) {
    std::size_t used = 0;
    long long value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || value <= 0) {
        throw usage_error(flag + " expects a positive integer, got '" + text + "'");
    }
    return value;
}

options parse_options(int argc, char** argv) {
    options o;
#ifdef TDBG_BENCH_TDBG_PATH
    o.tdbg = TDBG_BENCH_TDBG_PATH;
#endif
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) {
                throw usage_error(a + " needs a value");
            }
            return args[++i];
        };
        if (a == "--help" || a == "-h") {
            std::cout << usage;
            std::exit(0);
        } else if (a == "--tdbg") {
            o.tdbg = value();
        } else if (a == "--runs") {
            o.runs = static_cast<int>(std::min<std::int64_t>(parse_positive(a, value()), 100));
        } else if (a == "--steps") {
            o.steps = parse_positive(a, value());
        } else if (a == "--tensors") {
            o.tensors = static_cast<std::size_t>(parse_positive(a, value()));
        } else if (a == "--elements") {
            o.elements = static_cast<std::size_t>(parse_positive(a, value()));
        } else if (a == "--large-steps") {
            o.large_steps.clear();
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');) {
                o.large_steps.push_back(parse_positive(a, item));
            }
            std::sort(o.large_steps.begin(), o.large_steps.end());
            o.large_steps.erase(std::unique(o.large_steps.begin(), o.large_steps.end()), o.large_steps.end());
        } else if (a == "--workdir") {
            o.workdir = value();
        } else if (a == "--keep") {
            o.keep = true;
        } else if (a == "--python") {
            o.python = options::python_use::required;
        } else if (a == "--python-runs") {
            o.python = options::python_use::required;
            o.python_runs = true;
        } else if (a == "--no-python") {
            o.python = options::python_use::never;
        } else if (a == "--check") {
            o.check = true;
        } else if (a == "--grow") {
            o.grow = true;
        } else if (a == "--quick") {
            o.grow = true;
            o.sizes = {{2, 100}, {10, 100}, {10, 1000}};
        } else if (a == "--sizes") {
            o.grow = true;
            o.sizes.clear();
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');) {
                const std::size_t x = item.find('x');
                if (x == std::string::npos) {
                    throw usage_error("--sizes expects WORKERSxSTEPS items, got '" + item + "'");
                }
                o.sizes.push_back({parse_positive(a, item.substr(0, x)), parse_positive(a, item.substr(x + 1))});
            }
        } else {
            throw usage_error("unknown argument '" + a + "'");
        }
    }
    if (o.tdbg.empty()) {
        throw usage_error("no tdbg program: pass --tdbg PATH (or build the tools with the benchmarks)");
    }
    if (o.python == options::python_use::never && o.python_runs) {
        throw usage_error("--python-runs and --no-python contradict each other");
    }
    return o;
}

// ---- processes -----------------------------------------------------------------------

/// How a process ended and what it took.
struct process_result {
    int status = -1; ///< exit status; 128 + the signal when one killed it
    double seconds = 0; ///< wall seconds from start to exit
    std::uint64_t max_rss = 0; ///< peak resident memory in bytes (ru_maxrss)
    double cpu_seconds = 0; ///< user and system CPU seconds (ru_utime + ru_stime)
};

/// Starts `argv` (argv[0] a path) with stdout and stderr written to the files
/// `out` and `err`, waits for it and returns how it went. The peak memory is
/// the child's ru_maxrss, which also counts this process's peak at the moment
/// it started the child (see measure_mode).
process_result run_process(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    const auto start = clock_type::now();
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
    int wstatus = 0;
    rusage usage{};
    while (wait4(pid, &wstatus, 0, &usage) < 0) {
        if (errno != EINTR) {
            throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
        }
    }
    process_result r;
    r.seconds = seconds_since(start);
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    r.max_rss = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024U;
    const auto seconds_of = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
    r.cpu_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
    return r;
}

/// `bench_scale --measure-process OUT ERR PROGRAM ARGS...`: runs PROGRAM and
/// prints "status seconds max_rss" on stdout. A process's ru_maxrss starts from
/// the memory of the process that forked it (Linux records the old address
/// space's peak at exec, and with vfork that is the parent's), so the
/// benchmark, whose peak includes the runs it wrote, starts its processes
/// through this fresh, small copy of itself.
int measure_mode(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "bench_scale " << measure_flag << ": expects OUT ERR PROGRAM [ARGS...]\n";
        return 2;
    }
    const std::vector<std::string> command(argv + 4, argv + argc);
    const process_result r = run_process(command, argv[2], argv[3]);
    std::printf("%d %.9f %llu %.6f\n", r.status, r.seconds, static_cast<unsigned long long>(r.max_rss),
                r.cpu_seconds);
    return 0;
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// The last `lines` lines of a file that are not empty, indented, for error messages.
std::string tail_of(const fs::path& file, std::size_t lines) {
    std::vector<std::string> kept;
    std::istringstream in(read_file(file));
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            kept.push_back("    " + line + "\n");
        }
    }
    std::string out;
    for (std::size_t i = kept.size() > lines ? kept.size() - lines : 0; i < kept.size(); ++i) {
        out += kept[i];
    }
    return out;
}

/// The least seconds and the least peak memory of two measurements.
process_result best(const process_result& a, const process_result& b) {
    process_result r = a;
    r.seconds = std::min(a.seconds, b.seconds);
    r.max_rss = std::min(a.max_rss, b.max_rss);
    r.cpu_seconds = std::min(a.cpu_seconds, b.cpu_seconds);
    return r;
}

/// Runs processes through measure_mode; their output goes to files in `dir`.
class process_timer {
public:
    process_timer(std::string self, fs::path dir) : self_(std::move(self)), dir_(std::move(dir)) {}

    /// One run of `command`; stdout is discarded unless `out` is given.
    [[nodiscard]] process_result once(const std::vector<std::string>& command,
                                      const std::string& out = "/dev/null") const {
        const fs::path report = dir_ / "measure.txt";
        std::vector<std::string> argv{self_, std::string(measure_flag), out, stderr_file().string()};
        argv.insert(argv.end(), command.begin(), command.end());
        const process_result helper = run_process(argv, report.string(), (dir_ / "measure_err.txt").string());
        process_result r;
        std::istringstream in(read_file(report));
        if (helper.status != 0 || !(in >> r.status >> r.seconds >> r.max_rss >> r.cpu_seconds)) {
            throw std::runtime_error("could not measure " + command.front() + ":\n" +
                                     tail_of(dir_ / "measure_err.txt", 10));
        }
        return r;
    }

    /// The best of `runs` runs: the least seconds and the least peak memory. Throws
    /// when an exit status is not one of `ok_statuses`, with the process's stderr.
    [[nodiscard]] process_result best_of(int runs, const std::vector<std::string>& command,
                                         std::initializer_list<int> ok_statuses = {0}) const {
        process_result result;
        for (int i = 0; i < runs; ++i) {
            const process_result r = once(command);
            if (std::find(ok_statuses.begin(), ok_statuses.end(), r.status) == ok_statuses.end()) {
                std::string shown;
                for (const auto& c : command) {
                    shown += " " + c;
                }
                throw std::runtime_error("exit status " + std::to_string(r.status) + " from" + shown + ":\n" +
                                         tail_of(stderr_file(), 10));
            }
            result = i == 0 ? r : best(result, r);
        }
        return result;
    }

    /// Where the last process's stderr went.
    [[nodiscard]] fs::path stderr_file() const { return dir_ / "stderr.txt"; }

private:
    std::string self_;
    fs::path dir_;
};

// ---- runs ----------------------------------------------------------------------------

/// bench_smdebug.py's tensor names.
std::string gradient_name(std::size_t i) { return "gradient/layer_" + std::to_string(i); }

/// Writes a run as bench_smdebug.py does with smdebug's hook: `steps` TRAIN
/// steps, each saving `tensors` float32 gradients of `elements` elements (fixed
/// N(0,1) values scaled by 1/(1+step)) in collection "gradients", saved at every
/// step: raw, or reductions only; with `loss`, also a falling loss in the built-in collection
/// "losses" at every step. Returns the seconds it took (hook to close()).
double write_run(const fs::path& dir, std::int64_t steps, std::size_t tensors, std::size_t elements, bool reductions,
                 bool loss = false) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"gradients"};
    if (loss) {
        o.include_collections.emplace_back("losses");
    }
    o.worker = worker;
    o.num_workers = 1;
    o.checkpoint_config_file = "";
    o.sagemaker_metrics_dir = "";
    o.on_write_error = tdbg::write_error_policy::rethrow;
    tdbg::collection gradients("gradients");
    gradients.include("^gradient/");
    gradients.set_reduction_config(reductions ? tdbg::reduction_config::parse(reduction_spelling)
                                              : tdbg::reduction_config::raw_only());
    o.collections = {gradients};

    std::mt19937 rng(0);
    std::normal_distribution<float> normal;
    std::vector<std::vector<float>> base(tensors, std::vector<float>(elements));
    std::vector<std::string> names;
    for (std::size_t t = 0; t < tensors; ++t) {
        names.push_back(gradient_name(t));
        for (float& x : base[t]) {
            x = normal(rng);
        }
    }
    std::vector<float> scaled(elements);

    const auto start = clock_type::now();
    tdbg::hook hook(o);
    hook.set_mode(tdbg::mode::train);
    for (std::int64_t step = 0; step < steps; ++step) {
        hook.begin_step();
        const float scale = 1.0F / static_cast<float>(1 + step);
        for (std::size_t t = 0; t < tensors; ++t) {
            std::transform(base[t].begin(), base[t].end(), scaled.begin(), [scale](float x) { return x * scale; });
            hook.save_tensor(names[t], scaled.data(), {elements}); // borrowed: copied or reduced before it returns
        }
        if (loss) {
            hook.save_tensor(loss_name, &scale, {1});
        }
        hook.end_step();
    }
    hook.close();
    return seconds_since(start);
}

void link_or_copy(const fs::path& from, const fs::path& to) {
    fs::create_directories(to.parent_path());
    std::error_code error;
    fs::create_hard_link(from, to, error);
    if (error) {
        fs::copy_file(from, to);
    }
}

/// A run of the first `steps` steps of the run at `from`: its index and event
/// files hard-linked (copied where links fail), its collections file, and an
/// end marker. The files are those the hook wrote, byte for byte.
void link_first_steps(const fs::path& from, const fs::path& to, std::int64_t steps) {
    for (std::int64_t step = 0; step < steps; ++step) {
        for (const std::string& key :
             {tdbg::format::index_file_key(step, worker), tdbg::format::event_file_key(step, worker)}) {
            link_or_copy(from / key, to / key);
        }
    }
    const std::string collections = tdbg::format::collections_file_key(worker);
    link_or_copy(from / collections, to / collections);
    std::ofstream(to / std::string(tdbg::format::end_marker_key)).flush();
}

/// The bytes of every file under `dir`.
std::uint64_t bytes_under(const fs::path& dir) {
    std::uint64_t total = 0;
    if (fs::exists(dir)) {
        for (const auto& entry : fs::recursive_directory_iterator(dir)) {
            if (entry.is_regular_file()) {
                total += entry.file_size();
            }
        }
    }
    return total;
}

double mb(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e6; }

/// Empty when every one of the `steps` index files of the reductions run at
/// `dir` is smdebug's for that step (TRAIN, its mode step, its event file) and
/// lists the 6 stored reductions of each of the `tensors` gradients, named
/// smdebug/reductions/<reduction>/<tensor>, and nothing else; else what is wrong.
std::string check_reductions_index(const fs::path& dir, std::int64_t steps, std::size_t tensors) {
    std::vector<std::string> expected;
    for (std::size_t t = 0; t < tensors; ++t) {
        for (const auto& r : stored_reductions) {
            expected.push_back(std::string(tdbg::format::reduction_prefix) + r + "/" + gradient_name(t));
        }
    }
    std::sort(expected.begin(), expected.end());
    std::vector<std::string> names;
    for (std::int64_t step = 0; step < steps; ++step) {
        const std::string key = tdbg::format::index_file_key(step, worker);
        if (!fs::is_regular_file(dir / key)) {
            return key + " is missing";
        }
        const auto index = tdbg::format::parse_index_file(read_file(dir / key), key);
        if (index.mode != tdbg::mode::train || index.mode_step != step ||
            index.event_file_name != tdbg::format::event_file_key(step, worker)) {
            return key + ": not a TRAIN step " + std::to_string(step) + " with its event file";
        }
        names.clear();
        for (const auto& entry : index.tensor_payload) {
            names.push_back(entry.tensorname);
        }
        std::sort(names.begin(), names.end());
        if (names != expected || !index.shape_payload.empty()) {
            return key + ": " + std::to_string(index.tensor_payload.size()) + " tensor entries and " +
                   std::to_string(index.shape_payload.size()) + " shapes, not the " + std::to_string(expected.size()) +
                   " smdebug/reductions/<reduction>/<tensor> entries";
        }
    }
    return {};
}

/// How many of the `steps` index files of run `a` are byte for byte those of
/// run `b`, and the first that is not.
std::pair<std::int64_t, std::string> compare_index_files(const fs::path& a, const fs::path& b, std::int64_t steps) {
    std::int64_t same = 0;
    std::string first_different;
    for (std::int64_t step = 0; step < steps; ++step) {
        const std::string key = tdbg::format::index_file_key(step, worker);
        if (read_file(a / key) == read_file(b / key)) {
            ++same;
        } else if (first_different.empty()) {
            first_different = key;
        }
    }
    return {same, first_different};
}

// ---- Python smdebug ------------------------------------------------------------------

/// What bench_smdebug.py measured.
struct python_figures {
    std::string version; ///< empty when Python did not run (the issue's figures)
    double raw_s = 0; ///< VanishingGradient on the raw run
    double reductions_s = 0; ///< VanishingGradient on the reductions run
    double wall_s = 0; ///< the whole script (writes, reads and rules)
    fs::path runs; ///< where its runs are, with --keep

    [[nodiscard]] bool measured() const noexcept { return !version.empty(); }
};

using tdbg::bench::shared_dir;

constexpr const char* python = "/usr/bin/python3";

/// True when $SMDEBUG_SRC is set and Python imports smdebug from it.
bool python_smdebug_imports(const fs::path& tools, const fs::path& scratch) {
    const char* src = std::getenv("SMDEBUG_SRC");
    if (src == nullptr || *src == '\0' || !fs::exists(python)) {
        return false;
    }
    const auto r = run_process(
        {python, "-c", "import sys; sys.path[:0] = sys.argv[1:]; import smdebug", src, (tools / "stubs").string()},
        "/dev/null", (scratch / "python_import.txt").string());
    return r.status == 0;
}

/// Sets $SMDEBUG_SRC: to setup.sh's default destination when an earlier setup
/// left it there, else by running setup.sh, which prints "export SMDEBUG_SRC=DIR".
void set_up_python_smdebug(const fs::path& tools, const fs::path& scratch) {
    const char* tmp = std::getenv("TMPDIR");
    const fs::path earlier = fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "sagemaker-debugger";
    setenv("SMDEBUG_SRC", earlier.c_str(), 1);
    if (python_smdebug_imports(tools, scratch)) {
        return;
    }
    std::printf("setting up Python smdebug with %s ...\n", (tools / "setup.sh").c_str());
    std::fflush(stdout);
    const fs::path out = scratch / "setup_out.txt";
    const fs::path err = scratch / "setup_err.txt";
    const auto r = run_process({"/bin/bash", (tools / "setup.sh").string()}, out.string(), err.string());
    const std::string text = read_file(out);
    const std::string prefix = "export SMDEBUG_SRC=";
    const auto at = text.rfind(prefix);
    if (r.status != 0 || at == std::string::npos) {
        throw std::runtime_error("setup.sh failed:\n" + tail_of(err, 10));
    }
    std::string dir = text.substr(at + prefix.size());
    dir.erase(dir.find_last_not_of(" \r\n") + 1);
    setenv("SMDEBUG_SRC", dir.c_str(), 1);
}

/// Runs bench_smdebug.py with the same sizes (keeping its runs under `keep_in`
/// when given) and reads its JSON line.
python_figures run_python_smdebug(const fs::path& tools, const options& o, const fs::path& scratch,
                                  const std::optional<fs::path>& keep_in) {
    std::vector<std::string> argv{python,       (tools / "bench_smdebug.py").string(),
                                  "--steps",    std::to_string(o.steps),
                                  "--tensors",  std::to_string(o.tensors),
                                  "--elements", std::to_string(o.elements)};
    if (keep_in) {
        fs::create_directories(*keep_in);
        argv.insert(argv.end(), {"--keep", "--workdir", keep_in->string()});
    }
    const fs::path out = scratch / "python_out.txt";
    const fs::path err = scratch / "python_err.txt";
    const auto r = run_process(argv, out.string(), err.string());
    std::string json; // the last line that is a JSON object
    std::istringstream lines(read_file(out));
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.front() == '{') {
            json = line;
        }
    }
    if (r.status != 0 || json.empty()) {
        throw std::runtime_error("bench_smdebug.py failed (exit status " + std::to_string(r.status) + "):\n" +
                                 tail_of(err, 10));
    }
    const auto doc = tdbg::format::parse_json(json, "bench_smdebug.py's output");
    python_figures p;
    p.version = doc.at("smdebug_version").as_string();
    p.raw_s = doc.at("rule_vanishing_gradient_raw").at("seconds").as_double();
    p.reductions_s = doc.at("rule_vanishing_gradient_reductions").at("seconds").as_double();
    p.wall_s = r.seconds;
    if (const auto* dir = doc.find("workdir")) {
        p.runs = dir->as_string();
    }
    return p;
}

// ---- report --------------------------------------------------------------------------

/// printf into a string.
template <class... Args>
std::string text(const char* pattern, Args... args) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, pattern, args...);
    return buffer;
}

/// A target and whether it holds, with "value <= limit" (or >=, > and <) as its detail.
struct target {
    std::string what;
    bool met = false;
    std::string detail;
};

/// A target met when `value` >= `limit`; both printed with `number` (a printf format).
target at_least(std::string what, double value, double limit, const char* number) {
    const bool met = value >= limit;
    return {std::move(what), met, text(number, value) + (met ? " >= " : " < ") + text(number, limit)};
}

/// A target met when `value` <= `limit`.
target at_most(std::string what, double value, double limit, const char* number) {
    const bool met = value <= limit;
    return {std::move(what), met, text(number, value) + (met ? " <= " : " > ") + text(number, limit)};
}

/// Removes the benchmark's directory when it goes out of scope, unless kept.
class directory_guard {
public:
    directory_guard(fs::path dir, bool keep) : dir_(std::move(dir)), keep_(keep) {}
    directory_guard(const directory_guard&) = delete;
    directory_guard& operator=(const directory_guard&) = delete;
    ~directory_guard() {
        if (!keep_) {
            std::error_code ignored;
            fs::remove_all(dir_, ignored);
        }
    }

private:
    fs::path dir_;
    bool keep_;
};

/// The 1-minute load average ("?" where /proc/loadavg is missing): the machine may be shared.
std::string load_average() {
    std::string first = "?";
    std::ifstream("/proc/loadavg") >> first;
    return first;
}

/// One row of the process table: seconds, peak MB, and what follows.
void print_process_row(const std::string& what, const process_result& r, const std::string& rest) {
    std::printf("  %-52s %8.3f %9.1f  %s\n", what.c_str(), r.seconds, mb(r.max_rss), rest.c_str());
    std::fflush(stdout);
}

/// The runs the benchmark reads, in its directory.
struct run_dirs {
    explicit run_dirs(const fs::path& root)
        : raw(root / "raw"), long_run(root / "reductions_long"), reductions(root / "reductions"),
          one_step(root / "reductions_1_step") {}
    fs::path raw; ///< the raw run
    fs::path long_run; ///< the reductions run, as long as the longest large-index run
    fs::path reductions; ///< its first --steps steps: the reductions run
    fs::path one_step; ///< its first step: the process baseline
};

/// The steps of the long reductions run: enough for the reductions run and every large-index run.
std::int64_t long_run_steps(const options& o) {
    return std::max(o.steps, o.large_steps.empty() ? 0 : o.large_steps.back());
}

/// Writes the runs with the hook, prints what they hold and checks the
/// reductions run's index; false when it is not as expected.
bool write_runs(const options& o, const run_dirs& dirs) {
    const std::size_t entries_per_step = o.tensors * stored_reductions.size();
    const std::int64_t long_steps = long_run_steps(o);
    std::printf("\nruns written by tdbg's hook in smdebug's layout (worker_0, TRAIN, every step; %zu gradients of "
                "%zu float32):\n",
                o.tensors, o.elements);
    std::printf("  %-11s %8s %14s %10s %10s %10s %10s\n", "run", "steps", "entries/step", "entries", "index MB",
                "events MB", "written s");
    auto print_run = [&](const char* name, const fs::path& dir, std::int64_t steps, std::size_t per_step,
                         double written_s) {
        std::printf("  %-11s %8lld %14zu %10lld %10.1f %10.1f %10.2f\n", name, static_cast<long long>(steps), per_step,
                    static_cast<long long>(steps) * static_cast<long long>(per_step), mb(bytes_under(dir / "index")),
                    mb(bytes_under(dir / "events")), written_s);
        std::fflush(stdout);
    };
    print_run("raw", dirs.raw, o.steps, o.tensors, write_run(dirs.raw, o.steps, o.tensors, o.elements, false));
    print_run("reductions", dirs.long_run, long_steps, entries_per_step,
              write_run(dirs.long_run, long_steps, o.tensors, o.elements, true));
    link_first_steps(dirs.long_run, dirs.reductions, o.steps);
    link_first_steps(dirs.long_run, dirs.one_step, 1);
    if (long_steps > o.steps) {
        std::printf("  (the reductions run of %lld steps, the baseline's run and the shorter large-index runs are "
                    "its first steps, hard-linked)\n",
                    static_cast<long long>(o.steps));
    }
    const std::string error = check_reductions_index(dirs.long_run, long_steps, o.tensors);
    std::printf("  check: every index file of the reductions run has %zu entries named "
                "smdebug/reductions/<reduction>/<tensor>: %s\n",
                entries_per_step, error.empty() ? "yes" : ("NO, " + error).c_str());
    return error.empty();
}

/// What a `tdbg ls` process costs before the index entries it reads: `tdbg ls`
/// of the first step of the reductions run. Per-entry figures are above it.
struct baseline {
    process_result ls;
    double entries = 0;

    /// Peak resident bytes per index entry above the baseline, for `r` reading `n` entries.
    [[nodiscard]] double bytes_per_entry(const process_result& r, double n) const {
        return (static_cast<double>(r.max_rss) - static_cast<double>(ls.max_rss)) / (n - entries);
    }
    /// Seconds per million index entries above the baseline.
    [[nodiscard]] double seconds_per_million(const process_result& r, double n) const {
        return (r.seconds - ls.seconds) / (n - entries) * 1e6;
    }
};

/// Python smdebug's VanishingGradient seconds on both runs: measured now by
/// bench_smdebug.py when `o` asks for it or finds it set up, else the issue's.
python_figures python_smdebug(const options& o, const fs::path& root, const fs::path& scratch) {
    python_figures py;
    py.raw_s = issue_python_raw_s;
    py.reductions_s = issue_python_reductions_s;
    const fs::path tools = shared_dir() / "tools" / "smdebug";
    if (o.python == options::python_use::required) {
        if (!python_smdebug_imports(tools, scratch)) {
            set_up_python_smdebug(tools, scratch);
            if (!python_smdebug_imports(tools, scratch)) {
                throw std::runtime_error("Python cannot import smdebug from $SMDEBUG_SRC:\n" +
                                         tail_of(scratch / "python_import.txt", 10));
            }
        }
    } else if (o.python == options::python_use::never || !fs::exists(tools / "bench_smdebug.py") ||
               !python_smdebug_imports(tools, scratch)) {
        return py;
    }
    std::printf("\nrunning Python smdebug's bench_smdebug.py --steps %lld --tensors %zu --elements %zu (minutes) ...\n",
                static_cast<long long>(o.steps), o.tensors, o.elements);
    std::fflush(stdout);
    return run_python_smdebug(tools, o, scratch,
                              o.python_runs ? std::optional<fs::path>(root / "python") : std::nullopt);
}

/// Times tdbg on the runs Python smdebug wrote and compares their index files
/// with tdbg's; false when they are not byte for byte the same.
bool read_python_runs(const options& o, const process_timer& timer, const python_figures& py, const run_dirs& dirs,
                      const baseline& base) {
    const fs::path raw = py.runs / "raw";
    const fs::path reductions = py.runs / "reductions";
    std::printf("\nthe runs Python smdebug wrote, read by tdbg:\n");
    const process_result rules_raw =
        timer.best_of(o.runs, {o.tdbg, "rules", raw.string(), "--rule", "VanishingGradient"}, {0, 1});
    print_process_row("tdbg rules PYTHON_RAW --rule VanishingGradient", rules_raw,
                      text("%.1fx faster than smdebug (%.2f s)", py.raw_s / rules_raw.seconds, py.raw_s));
    const process_result rules_reductions =
        timer.best_of(o.runs, {o.tdbg, "rules", reductions.string(), "--rule", "VanishingGradient"}, {0, 1});
    print_process_row(
        "tdbg rules PYTHON_REDUCTIONS --rule VanishingGradient", rules_reductions,
        text("%.1fx faster than smdebug (%.2f s)", py.reductions_s / rules_reductions.seconds, py.reductions_s));
    const double entries = static_cast<double>(o.steps) * static_cast<double>(o.tensors * stored_reductions.size());
    const process_result ls = timer.best_of(o.runs, {o.tdbg, "ls", reductions.string()});
    print_process_row("tdbg ls PYTHON_REDUCTIONS", ls,
                      text("%.0f bytes per index entry above the baseline", base.bytes_per_entry(ls, entries)));

    const auto [same_raw, different_raw] = compare_index_files(dirs.raw, raw, o.steps);
    const auto [same_reductions, different_reductions] = compare_index_files(dirs.reductions, reductions, o.steps);
    auto first = [](const std::string& key) { return key.empty() ? std::string() : " (first different: " + key + ")"; };
    std::printf("  index files byte for byte the same as tdbg's: raw %lld of %lld%s, reductions %lld of %lld%s\n",
                static_cast<long long>(same_raw), static_cast<long long>(o.steps), first(different_raw).c_str(),
                static_cast<long long>(same_reductions), static_cast<long long>(o.steps),
                first(different_reductions).c_str());
    std::printf("  event files: raw %.1f MB (tdbg's %.1f MB), reductions %.1f MB (tdbg's %.1f MB); the values "
                "and wall times differ\n",
                mb(bytes_under(raw / "events")), mb(bytes_under(dirs.raw / "events")),
                mb(bytes_under(reductions / "events")), mb(bytes_under(dirs.reductions / "events")));
    return same_raw == o.steps && same_reductions == o.steps;
}

/// One large-index run: `tdbg ls` of its steps.
struct large_row {
    std::int64_t steps = 0;
    double entries = 0;
    process_result ls;
    double seconds_per_million = 0;
    double bytes_per_entry = 0;
};

/// `tdbg ls` of the first N steps of the long reductions run, for each N of --large-steps.
std::vector<large_row> large_index(const options& o, const process_timer& timer, const run_dirs& dirs,
                                   const baseline& base, const fs::path& root) {
    std::vector<large_row> rows;
    if (o.large_steps.empty()) {
        return rows;
    }
    const std::size_t entries_per_step = o.tensors * stored_reductions.size();
    std::printf("\nlarge index: tdbg ls of N steps x %zu index entries (per entry: above the 1-step baseline)\n",
                entries_per_step);
    std::printf("  %8s %10s %10s %9s %9s %16s %14s\n", "steps", "entries", "index MB", "seconds", "peak MB",
                "s per M entries", "bytes/entry");
    for (const std::int64_t steps : o.large_steps) {
        // The long run itself, the reductions run, or the long run's first steps, linked.
        fs::path dir = root / ("large_" + std::to_string(steps));
        if (steps == long_run_steps(o)) {
            dir = dirs.long_run;
        } else if (steps == o.steps) {
            dir = dirs.reductions;
        } else {
            link_first_steps(dirs.long_run, dir, steps);
        }
        large_row row;
        row.steps = steps;
        row.entries = static_cast<double>(steps) * static_cast<double>(entries_per_step);
        row.ls = timer.best_of(o.runs, {o.tdbg, "ls", dir.string()});
        row.seconds_per_million = base.seconds_per_million(row.ls, row.entries);
        row.bytes_per_entry = base.bytes_per_entry(row.ls, row.entries);
        std::printf("  %8lld %10.0f %10.1f %9.3f %9.1f %16.3f %14.1f\n", static_cast<long long>(steps), row.entries,
                    mb(bytes_under(dir / "index")), row.ls.seconds, mb(row.ls.max_rss), row.seconds_per_million,
                    row.bytes_per_entry);
        std::fflush(stdout);
        rows.push_back(row);
    }
    if (rows.size() > 1) {
        const large_row& first = rows.front();
        const large_row& last = rows.back();
        std::printf("  growth from %lld to %lld steps (x%.0f entries): seconds per entry x%.2f, bytes per entry x%.2f "
                    "(1 = linear)\n",
                    static_cast<long long>(first.steps), static_cast<long long>(last.steps),
                    last.entries / first.entries, last.seconds_per_million / first.seconds_per_million,
                    last.bytes_per_entry / first.bytes_per_entry);
        std::printf("  each entry from %lld to %lld steps adds %.3f s per million entries and %.1f bytes\n",
                    static_cast<long long>(first.steps), static_cast<long long>(last.steps),
                    (last.ls.seconds - first.ls.seconds) / (last.entries - first.entries) * 1e6,
                    (static_cast<double>(last.ls.max_rss) - static_cast<double>(first.ls.max_rss)) /
                        (last.entries - first.entries));
    }
    return rows;
}

// ---- growing runs (--grow) ---------------------------------------------------------------

// What each worker saves at each step of a growing run: raw gradients and the loss.
constexpr std::size_t grow_gradients = 20;
constexpr std::size_t grow_elements = 16;
constexpr std::size_t grow_entries_per_file = grow_gradients + 1;

// The issue's targets for the growing runs.
constexpr double target_100x1000_rules_s = 0.6;
constexpr double target_100x1000_mb = 60.0; // rules VanishingGradient and ls
constexpr double target_10x10000_loss_s = 2.5;
constexpr double target_1000x1000_rules_s = 3.0;
constexpr double target_1000x1000_ls_s = 15.0;
constexpr double target_1000x1000_mb = 200.0; // rules and ls

/// "worker_<i>".
std::string worker_name(std::int64_t i) { return "worker_" + std::to_string(i); }

/// `text` with every "worker_0" made `to`.
std::string renamed(std::string text, const std::string& to) {
    const std::string from = worker;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

void write_file(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    fs::remove(file); // a new file: never through a hard link to another run's
    std::ofstream out(file, std::ios::binary);
    out << text;
    if (!out.flush()) {
        throw std::runtime_error("cannot write " + file.string());
    }
}

/// Makes the run at `dir` (worker_0's `steps` steps, written by the hook) a run of `to`
/// workers: workers from `from` on are worker_0's copies, each index file with the worker
/// renamed inside, the event files hard-linked; every collections file says `to` workers.
void add_workers(const fs::path& dir, std::int64_t steps, std::int64_t from, std::int64_t to) {
    for (std::int64_t step = 0; step < steps; ++step) {
        const std::string index = read_file(dir / tdbg::format::index_file_key(step, worker));
        const fs::path events = dir / tdbg::format::event_file_key(step, worker);
        for (std::int64_t w = from; w < to; ++w) {
            const std::string name = worker_name(w);
            write_file(dir / tdbg::format::index_file_key(step, name), renamed(index, name));
            link_or_copy(events, dir / tdbg::format::event_file_key(step, name));
        }
    }
    const fs::path first = dir / tdbg::format::collections_file_key(worker);
    auto collections = tdbg::format::parse_collections_file(read_file(first), first.string());
    collections.num_workers = static_cast<int>(to);
    const std::string text = tdbg::format::to_json(collections);
    for (std::int64_t w = 0; w < to; ++w) {
        const std::string name = worker_name(w);
        write_file(dir / tdbg::format::collections_file_key(name), renamed(text, name));
    }
}

/// The three processes timed at each size.
struct grow_row {
    run_size size;
    process_result ls, vanishing, loss;
};

/// Prints one process of a size: wall and CPU seconds, peak MB and what each index file
/// and entry adds above the 1-worker, 1-step `base`.
void print_grow_process(const char* what, const run_size& size, const process_result& r, const process_result& base) {
    const double files = static_cast<double>(size.workers * size.steps);
    const double above = static_cast<double>(r.max_rss) - static_cast<double>(base.max_rss);
    std::printf("  %5lld x %-6lld %9.0f  %-28s %8.3f %8.3f %9.1f %9.2f %9.1f\n", static_cast<long long>(size.workers),
                static_cast<long long>(size.steps), files, what, r.seconds, r.cpu_seconds, mb(r.max_rss),
                above / (files - 1) / 1e3, above / ((files - 1) * grow_entries_per_file));
    std::fflush(stdout);
}

/// The targets of the sizes among `rows` that the issue names.
std::vector<target> grow_targets(const std::vector<grow_row>& rows) {
    std::vector<target> out;
    const auto is = [](const grow_row& r, std::int64_t w, std::int64_t s) {
        return r.size.workers == w && r.size.steps == s;
    };
    for (const grow_row& r : rows) {
        if (is(r, 100, 1000)) {
            out.push_back(at_most("100 x 1,000: rules VanishingGradient (seconds)", r.vanishing.seconds,
                                  target_100x1000_rules_s, "%.2f"));
            out.push_back(at_most("100 x 1,000: rules VanishingGradient (peak MB)", mb(r.vanishing.max_rss),
                                  target_100x1000_mb, "%.0f"));
            out.push_back(at_most("100 x 1,000: ls (peak MB)", mb(r.ls.max_rss), target_100x1000_mb, "%.0f"));
        } else if (is(r, 10, 10000)) {
            out.push_back(at_most("10 x 10,000: rules LossNotDecreasing (seconds)", r.loss.seconds,
                                  target_10x10000_loss_s, "%.2f"));
        } else if (is(r, 1000, 1000)) {
            for (const auto& [name, p] : {std::pair<const char*, const process_result*>{"VanishingGradient", &r.vanishing},
                                          {"LossNotDecreasing", &r.loss}}) {
                out.push_back(at_most(std::string("1,000 x 1,000: rules ") + name + " (seconds)", p->seconds,
                                      target_1000x1000_rules_s, "%.2f"));
                out.push_back(at_most(std::string("1,000 x 1,000: rules ") + name + " (peak MB)", mb(p->max_rss),
                                      target_1000x1000_mb, "%.0f"));
            }
            out.push_back(at_most("1,000 x 1,000: ls (seconds)", r.ls.seconds, target_1000x1000_ls_s, "%.2f"));
            out.push_back(at_most("1,000 x 1,000: ls (peak MB)", mb(r.ls.max_rss), target_1000x1000_mb, "%.0f"));
        }
    }
    return out;
}

/// --grow: runs of workers x steps, worker_0 written by the hook and copied for the others;
/// `tdbg ls` and two rules timed at each size. Sizes of one step count share one run,
/// which gains workers from one size to the next.
int grow_runs(const options& o, const process_timer& timer, const fs::path& root) {
    std::vector<run_size> sizes = o.sizes;
    std::stable_sort(sizes.begin(), sizes.end(), [](const run_size& a, const run_size& b) {
        return a.steps != b.steps ? a.steps < b.steps : a.workers < b.workers;
    });
    std::printf("\ngrowing runs: worker_0 written by tdbg's hook (TRAIN, every step: %zu gradients of %zu float32 "
                "raw and the loss, %zu index entries a file), copied for the other workers (index files with the "
                "worker renamed, event files hard-linked)\n",
                grow_gradients, grow_elements, grow_entries_per_file);
    std::map<std::int64_t, std::int64_t> workers_of; // a run's steps -> the workers it has now
    std::optional<std::array<process_result, 3>> base;
    std::vector<grow_row> rows;
    const auto measure = [&](const fs::path& dir) {
        const std::string run = dir.string();
        return std::array<process_result, 3>{
            timer.best_of(o.runs, {o.tdbg, "ls", run}),
            // --allow-empty: the baseline's single step is no window of LossNotDecreasing's.
            timer.best_of(o.runs, {o.tdbg, "rules", run, "--rule", "VanishingGradient", "--allow-empty"}, {0, 1}),
            timer.best_of(o.runs, {o.tdbg, "rules", run, "--rule", "LossNotDecreasing", "--allow-empty"}, {0, 1})};
    };
    for (const run_size& size : sizes) {
        const fs::path dir = root / ("grow_" + std::to_string(size.steps));
        if (workers_of.count(size.steps) == 0) {
            const double written = write_run(dir, size.steps, grow_gradients, grow_elements, false, true);
            std::printf("  worker_0 of %lld steps written in %.2f s\n", static_cast<long long>(size.steps), written);
            workers_of[size.steps] = 1;
        }
        if (!base) {
            const fs::path one = root / "grow_1_step";
            link_first_steps(dir, one, 1);
            base = measure(one);
            std::printf("  baseline (1 worker x 1 step): ls %.3f s %.1f MB; rules VanishingGradient %.3f s %.1f MB; "
                        "rules LossNotDecreasing %.3f s %.1f MB\n\n",
                        (*base)[0].seconds, mb((*base)[0].max_rss), (*base)[1].seconds, mb((*base)[1].max_rss),
                        (*base)[2].seconds, mb((*base)[2].max_rss));
            std::printf("  %14s %9s  %-28s %8s %8s %9s %9s %9s\n", "workers x steps", "files", "process", "wall s",
                        "cpu s", "peak MB", "KB/file", "B/entry");
        }
        const auto start = clock_type::now();
        add_workers(dir, size.steps, workers_of[size.steps], size.workers);
        workers_of[size.steps] = std::max(workers_of[size.steps], size.workers);
        const double copied = seconds_since(start);
        const auto [ls, vanishing, loss] = measure(dir);
        print_grow_process("tdbg ls", size, ls, (*base)[0]);
        print_grow_process("rules VanishingGradient", size, vanishing, (*base)[1]);
        print_grow_process("rules LossNotDecreasing", size, loss, (*base)[2]);
        std::printf("  %14s (copies made in %.1f s; per file and entry: peak above the baseline's)\n", "", copied);
        rows.push_back(grow_row{size, ls, vanishing, loss});
    }
    const std::vector<target> targets = grow_targets(rows);
    std::printf("\ntargets (load average now %s):\n", load_average().c_str());
    bool all_met = true;
    for (const auto& t : targets) {
        std::printf("  %-8s %s: %s\n", t.met ? "met" : "MISSED", t.what.c_str(), t.detail.c_str());
        all_met = all_met && t.met;
    }
    return o.check && !all_met ? 1 : 0;
}

int run(const options& o, const std::string& self) {
    const fs::path parent = o.workdir.empty() ? fs::temp_directory_path() : fs::path(o.workdir);
    const fs::path root = fs::absolute(parent / ("tdbg_bench_scale_" + std::to_string(::getpid())));
    fs::remove_all(root);
    fs::create_directories(root);
    const directory_guard guard(root, o.keep);
    const fs::path scratch = root / "scratch";
    fs::create_directories(scratch);
    const process_timer timer(self, scratch);

    // The program's version line, which also says it runs.
    if (timer.once({o.tdbg, "--version"}, (scratch / "version.txt").string()).status != 0) {
        throw std::runtime_error(o.tdbg + " --version failed:\n" + tail_of(timer.stderr_file(), 10));
    }
    std::string tdbg_version;
    std::getline(std::istringstream(read_file(scratch / "version.txt")), tdbg_version);
    std::printf("bench_scale: %s (%s), best of %d runs per process, runs under %s; load average %s\n", o.tdbg.c_str(),
                tdbg_version.c_str(), o.runs, root.c_str(), load_average().c_str());

    if (o.grow) {
        return grow_runs(o, timer, root);
    }
    const run_dirs dirs(root);
    bool layout_ok = write_runs(o, dirs);

    const std::size_t entries_per_step = o.tensors * stored_reductions.size();
    const process_result version = timer.best_of(o.runs, {o.tdbg, "--version"});
    const baseline base{timer.best_of(o.runs, {o.tdbg, "ls", dirs.one_step.string()}),
                        static_cast<double>(entries_per_step)};
    std::printf("\nprocess baseline (peak resident memory): tdbg --version %.3f s %.1f MB; tdbg ls of a 1-step run "
                "%.3f s %.1f MB (the baseline)\n",
                version.seconds, mb(version.max_rss), base.ls.seconds, mb(base.ls.max_rss));

    // Whole processes on the two runs, before Python smdebug runs on runs of the
    // same sizes and again after it (the best of both rounds: the machine may be shared).
    auto read_runs = [&](const char* command, const fs::path& dir) {
        return command == std::string_view("ls")
                   ? timer.best_of(o.runs, {o.tdbg, "ls", dir.string()})
                   : timer.best_of(o.runs, {o.tdbg, "rules", dir.string(), "--rule", "VanishingGradient"}, {0, 1});
    };
    process_result rules_raw = read_runs("rules", dirs.raw);
    process_result rules_reductions = read_runs("rules", dirs.reductions);
    process_result ls_reductions = read_runs("ls", dirs.reductions);
    const python_figures py = python_smdebug(o, root, scratch);
    if (py.measured()) {
        rules_raw = best(rules_raw, read_runs("rules", dirs.raw));
        rules_reductions = best(rules_reductions, read_runs("rules", dirs.reductions));
        ls_reductions = best(ls_reductions, read_runs("ls", dirs.reductions));
    }
    std::printf("\nwhole processes (wall seconds, peak resident MB%s):\n",
                py.measured() ? "; tdbg: the best of the rounds before and after Python" : "");

    const std::string versus = py.measured() ? "smdebug " + py.version + " measured now" : "the issue's smdebug figure";
    print_process_row("tdbg rules RAW --rule VanishingGradient", rules_raw,
                      text("%.1fx faster than smdebug (%.2f s, ", py.raw_s / rules_raw.seconds, py.raw_s) + versus +
                          ")");
    print_process_row(
        "tdbg rules REDUCTIONS --rule VanishingGradient", rules_reductions,
        text("%.1fx faster than smdebug (%.2f s, ", py.reductions_s / rules_reductions.seconds, py.reductions_s) +
            versus + ")");
    const double reductions_entries = static_cast<double>(o.steps) * static_cast<double>(entries_per_step);
    const double ls_bytes_per_entry = base.bytes_per_entry(ls_reductions, reductions_entries);
    print_process_row(
        "tdbg ls REDUCTIONS", ls_reductions,
        text("%.0f bytes per index entry above the baseline (%.0f entries)", ls_bytes_per_entry, reductions_entries));
    if (py.measured()) {
        std::printf("  Python smdebug %s, VanishingGradient (create_trial + invoke_rule, timed inside the script): "
                    "raw %.2f s, reductions %.2f s; the whole script took %.0f s\n",
                    py.version.c_str(), py.raw_s, py.reductions_s, py.wall_s);
    } else {
        std::printf("  Python smdebug did not run (--python runs it): the ratios are against the issue's figures "
                    "for smdebug 1.0.34 on the project's 2-core machine (8.3-11.1 s raw, 14.0-15.3 s reductions; "
                    "the low ends)%s\n",
                    o.steps == 1000 && o.tensors == 100 && o.elements == 64
                        ? ""
                        : ", measured with 1000 steps x 100 tensors x 64 elements, not these sizes");
    }
    if (py.measured() && o.python_runs) {
        layout_ok = read_python_runs(o, timer, py, dirs, base) && layout_ok;
        if (!o.keep) {
            fs::remove_all(py.runs);
        }
    }

    const std::vector<large_row> rows = large_index(o, timer, dirs, base, root);

    // Targets.
    std::vector<target> targets;
    const std::string of = py.measured() ? "smdebug measured now" : "the issue's smdebug figure";
    targets.push_back(at_least("VanishingGradient, raw run (x faster than " + of + ")", py.raw_s / rules_raw.seconds,
                               target_ratio, "%.1fx"));
    targets.push_back(at_least("VanishingGradient, reductions run (x faster than " + of + ")",
                               py.reductions_s / rules_reductions.seconds, target_ratio, "%.1fx"));
    targets.push_back(at_most("tdbg ls of the reductions run (bytes per index entry above the baseline)",
                              ls_bytes_per_entry, target_bytes_per_entry, "%.0f"));
    const auto large =
        std::find_if(rows.begin(), rows.end(), [](const large_row& r) { return r.steps == target_large_steps; });
    if (large != rows.end()) {
        const std::string what = "tdbg ls of 10,000 steps x " + std::to_string(entries_per_step) + " entries";
        targets.push_back(at_most(what + " (seconds)", large->ls.seconds, target_large_seconds, "%.2f"));
        targets.push_back(at_most(what + " (peak resident MB)", mb(large->ls.max_rss), target_large_mb, "%.0f"));
    }
    if (rows.size() > 1) {
        targets.push_back(at_most("linear growth of tdbg ls's time (per entry, longest / shortest run)",
                                  rows.back().seconds_per_million / rows.front().seconds_per_million, target_growth,
                                  "%.2f"));
        targets.push_back(at_most("linear growth of tdbg ls's memory (per entry, longest / shortest run)",
                                  rows.back().bytes_per_entry / rows.front().bytes_per_entry, target_growth, "%.2f"));
    }
    std::printf("\ntargets (load average now %s):\n", load_average().c_str());
    bool all_met = true;
    for (const auto& t : targets) {
        std::printf("  %-8s %s: %s\n", t.met ? "met" : "MISSED", t.what.c_str(), t.detail.c_str());
        all_met = all_met && t.met;
    }
    if (large == rows.end()) {
        std::printf("  (the 10,000-step targets need 10000 in --large-steps)\n");
    }
    if (o.keep) {
        std::printf("\nruns kept under %s\n", root.c_str());
    }
    if (!layout_ok) {
        std::printf("\nERROR: a run is not in smdebug's layout (see above)\n");
        return 1;
    }
    return o.check && !all_met ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string_view(argv[1]) == measure_flag) {
        try {
            return measure_mode(argc, argv);
        } catch (const std::exception& e) {
            std::cerr << "bench_scale: " << e.what() << "\n";
            return 2;
        }
    }
    try {
        const options o = parse_options(argc, argv);
        return run(o, fs::read_symlink("/proc/self/exe").string());
    } catch (const usage_error& e) {
        std::cerr << "bench_scale: " << e.what() << "\n\n" << usage;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "bench_scale: error: " << e.what() << "\n";
        return 2;
    }
}
