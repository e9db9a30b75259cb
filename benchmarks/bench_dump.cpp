// `tdbg dump`'s peak memory against the trial's own: a run of 100,000 steps x 4
// float32 tensors of 8 elements (written with the format layer, as bench_trial
// writes its runs), and a tenth of it; for each, the peak resident memory of
//  1. the yardstick: this program re-run as `bench_dump --open-index RUN`, which
//     opens the trial and reads its whole index (every tensor's entries), the
//     memory any reading of the run needs;
//  2. `tdbg dump RUN > /dev/null`, the same trial's reading written out whole
//     (about 2.6 KB of JSON per tensor step; 1 GB for the large run).
// Both are measured as processes (ru_maxrss from wait4); this program starts them
// while it is small (the runs are written by a child process), since a child's
// ru_maxrss also counts the memory of the process that started it.
//
// The target: dump's peak is a bounded multiple of the trial's own, which does not
// grow with the steps: at most 3x the trial's, and at 100,000 steps no more than
// 1.1 times the ratio at 10,000 (before it wrote as it went, the ratio grew with
// the steps: 18x at 1,000, 60x at 10,000).
//
// usage: bench_dump [--steps N] [--tdbg PATH] [--keep]
// The runs go to $TMPDIR (default /tmp); a tmpfs such as /dev/shm spares the disk
// the 200,000 small files of the large run.

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

#include "synthetic_run.hpp"

extern char** environ; // NOLINT: POSIX declares it in no header

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr std::size_t tensors_per_step = 4;
constexpr std::size_t elements_per_tensor = 8;
constexpr double target_ratio = 3.0;  // dump's peak / the trial's, each run
constexpr double target_growth = 1.1; // the large run's ratio / the small run's

constexpr std::string_view open_index_flag = "--open-index";

// A run of `steps` steps, one worker, published as a hook does.
void write_run(const fs::path& dir, std::int64_t steps) {
    tdbg::bench::write_run(dir, steps, tensors_per_step, elements_per_tensor);
}

// Writes the run in a child process, so that this one stays small (see the file comment).
void write_run_apart(const fs::path& dir, std::int64_t steps) {
    std::cout.flush();
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        int status = 0;
        try {
            write_run(dir, steps);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "writing %s: %s\n", dir.c_str(), e.what());
            status = 1;
        }
        ::_exit(status);
    }
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
        }
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        throw std::runtime_error("could not write the run " + dir.string());
    }
}

// `bench_dump --open-index RUN`: the yardstick, the trial opened and its index read whole.
int open_index_mode(const char* run) {
    const tdbg::trial t(tdbg::local_storage(run), "bench");
    std::size_t entries = 0;
    for (const std::string& name : t.tensor_names()) {
        entries += t.tensor(name).entries().size();
    }
    std::printf("%zu\n", entries);
    return entries > 0 ? 0 : 1;
}

struct process_result {
    int status = -1;
    double seconds = 0;
    double peak_mb = 0;
};

// Runs `argv` with stdout to `out`, waits, and returns its exit status, time and peak memory.
process_result run_process(const std::vector<std::string>& argv, const std::string& out) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast): argv's type
    }
    args.push_back(nullptr);
    const auto start = clock_type::now();
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
    int wstatus = 0;
    rusage usage{};
    while (::wait4(pid, &wstatus, 0, &usage) < 0) {
        if (errno != EINTR) {
            throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
        }
    }
    process_result r;
    r.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    r.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
    if (r.status != 0) {
        throw std::runtime_error(argv[0] + " " + argv[1] + " exited with status " + std::to_string(r.status));
    }
    return r;
}

struct options {
    std::int64_t steps = 100000;
    std::string tdbg;
    bool keep = false;
};

options parse(int argc, char** argv) {
    options o;
#ifdef TDBG_BENCH_TDBG_PATH
    o.tdbg = TDBG_BENCH_TDBG_PATH;
#endif
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--steps" && i + 1 < argc) {
            o.steps = std::stoll(argv[++i]);
            if (o.steps < 10) {
                throw std::invalid_argument("--steps: at least 10");
            }
        } else if (a == "--tdbg" && i + 1 < argc) {
            o.tdbg = argv[++i];
        } else if (a == "--keep") {
            o.keep = true;
        } else {
            throw std::invalid_argument("usage: bench_dump [--steps N] [--tdbg PATH] [--keep]");
        }
    }
    if (o.tdbg.empty()) {
        throw std::invalid_argument("no tdbg program: build the tools (-DTDBG_BUILD_TOOLS=ON) or pass --tdbg PATH");
    }
    return o;
}

struct row {
    std::int64_t steps = 0;
    process_result trial;
    process_result dump;
    std::uintmax_t printed = 0;
    [[nodiscard]] double excess_mb() const { return dump.peak_mb - trial.peak_mb; }
};

row measure(const options& o, const std::string& self, const fs::path& root, std::int64_t steps) {
    const fs::path run = root / ("run_" + std::to_string(steps));
    const auto written = clock_type::now();
    write_run_apart(run, steps);
    std::printf("  wrote %lld steps in %.1f s\n", static_cast<long long>(steps),
                std::chrono::duration<double>(clock_type::now() - written).count());
    std::fflush(stdout);
    row r;
    r.steps = steps;
    r.trial = run_process({self, std::string(open_index_flag), run.string()}, "/dev/null");
    const fs::path out = root / "dump.json";
    r.dump = run_process({o.tdbg, "dump", run.string()}, out.string());
    r.printed = fs::file_size(out);
    fs::remove(out);
    if (!o.keep) {
        fs::remove_all(run);
    }
    return r;
}

} // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 3 && argv[1] == open_index_flag) {
            return open_index_mode(argv[2]);
        }
        const options o = parse(argc, argv);
        const std::string self = fs::canonical("/proc/self/exe").string();
        const char* tmp = std::getenv("TMPDIR");
        const fs::path root = fs::path(tmp != nullptr ? tmp : "/tmp") / ("tdbg_bench_dump_" + std::to_string(::getpid()));
        fs::create_directories(root);
        std::printf("bench_dump: %s; runs of %zu float32 tensors x %zu elements per step under %s\n", o.tdbg.c_str(),
                    tensors_per_step, elements_per_tensor, root.c_str());
        std::vector<row> rows;
        for (const std::int64_t steps : {o.steps / 10, o.steps}) {
            rows.push_back(measure(o, self, root, steps));
        }
        if (!o.keep) {
            fs::remove_all(root);
        }
        std::printf("\n%8s  %16s  %16s  %8s  %14s  %10s  %12s\n", "steps", "trial+index MB", "tdbg dump MB", "ratio",
                    "dump - trial", "dump s", "printed MB");
        for (const row& r : rows) {
            std::printf("%8lld  %16.1f  %16.1f  %7.2fx  %11.1f MB  %10.2f  %12.1f\n", static_cast<long long>(r.steps),
                        r.trial.peak_mb, r.dump.peak_mb, r.dump.peak_mb / r.trial.peak_mb, r.excess_mb(),
                        r.dump.seconds, static_cast<double>(r.printed) / 1048576.0);
        }
        const auto ratio = [](const row& r) { return r.dump.peak_mb / r.trial.peak_mb; };
        const double growth = ratio(rows.back()) / ratio(rows.front());
        const bool bounded = ratio(rows.back()) <= target_ratio && ratio(rows.front()) <= target_ratio;
        const bool flat = growth <= target_growth;
        std::printf("\ntargets:\n  %s  dump's peak / the trial's: %.2fx and %.2fx (<= %.1fx)\n",
                    bounded ? "met   " : "MISSED", ratio(rows.front()), ratio(rows.back()), target_ratio);
        std::printf("  %s  that ratio at %lld steps / at %lld steps: %.2f (<= %.1f)\n", flat ? "met   " : "MISSED",
                    static_cast<long long>(rows.back().steps), static_cast<long long>(rows.front().steps), growth,
                    target_growth);
        return bounded && flat ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_dump: %s\n", e.what());
        return 2;
    }
}
