// Live following at scale: `tdbg rules RUN --rule VanishingGradient --follow` over a run
// that 8 worker processes write at once. Build it Release (see README.md).
//
// 1. The live pass. 8 writer processes (forks of this program), each a tdbg hook with its
//    own worker name in a run of 8 workers, write 10,000 steps of 10 float32 gradients of
//    64 elements into one run directory, as fast as they can (or at --rate), a worker never
//    more than --max-ahead steps ahead of the slowest, as the all-reduce of data-parallel
//    training keeps them; a step is complete once all 8 have published it. The follower,
//    `tdbg rules RUN --rule VanishingGradient --follow --progress FILE`, runs beside them from
//    the start; its --progress file says which step it evaluated, when. Every 100 ms this
//    program samples the last complete step (from the writers' index files: a worker's are
//    published in step order, and each one's modification time says when), the last step the
//    follower evaluated, and the follower's VmRSS (/proc/<pid>/status).
// 2. The memory pass. The finished run is replayed into a new directory 50 steps at a time,
//    followed by the same rule and by the same program loading only the index (--start-step
//    past the run's end: it evaluates nothing), both with glibc's malloc trimmed (see
//    trimmed_malloc). Every 500 steps, once both are idle, their VmRSS:
//    the index-only one grows by the trial's index, and the difference between the two is
//    what following adds beyond it, measured at the same steps with the same history.
//
// It prints the lag (steps and seconds behind the last complete step), the time from the
// writers' end to the follower's exit, the follower's RSS at 1k, 2k, 5k and 10k steps and its
// growth per step, the writers' throughput, and whether the targets hold (README.md).
//
//   bench_follow [--steps N] [--workers W] [--tensors T] [--elements E] [--rate STEPS_PER_S]
//                [--max-ahead K] [--poll SECONDS] [--tdbg PATH] [--dir DIR] [--trace]
//
// Every process it starts is killed and the temporary directory removed when it ends,
// whatever the reason (an error, SIGINT, SIGTERM); the children also die with it.
// Exit status: 0 targets met, 1 a target missed, 2 an error.

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/worker.hpp"

namespace fs = std::filesystem;

namespace {

// The most writers (--workers).
constexpr int max_workers = 64;
// The memory pass replays the run this many steps at a time (few: what the followers read at
// once, and then free, stays small beside what they keep), and measures every this many.
constexpr std::int64_t replay_chunk = 50;
constexpr std::int64_t replay_measure = 500;

struct arguments {
    std::int64_t steps = 10000;
    int workers = 8;
    int tensors = 10;
    std::size_t elements = 64;
    double rate = 0;   // steps per second per writer; 0: as fast as they can
    int max_ahead = 1; // steps a writer may be ahead of the slowest; 0: no limit
    double poll = 1;   // tdbg rules --poll
    std::string tdbg;
    fs::path dir; // where the temporary directory goes
    bool trace = false; // print every sample
};

const char* const usage_text =
    "usage: bench_follow [--steps N] [--workers W] [--tensors T] [--elements E] [--rate STEPS_PER_S]\n"
    "                    [--max-ahead K] [--poll SECONDS] [--tdbg PATH] [--dir DIR] [--trace]\n"
    "  --steps N        steps each writer writes (default 10000)\n"
    "  --workers W      writer processes, the run's workers (default 8)\n"
    "  --tensors T      gradients per step (default 10), float32 of --elements E (default 64)\n"
    "  --rate R         steps per second per writer (default 0: as fast as they can)\n"
    "  --max-ahead K    steps a writer may run ahead of the slowest, as data-parallel training's\n"
    "                   all-reduce of the gradients keeps workers together (default 1; 0: no limit)\n"
    "  --poll SECONDS   how often the follower looks for new steps (tdbg rules --poll, default 1)\n"
    "  --tdbg PATH      the tdbg program (default: the one built with this benchmark)\n"
    "  --dir DIR        where the temporary run is written (default: the temporary directory)\n"
    "  --trace          also print every sample of the live pass and of the memory pass\n";

double number_argument(const std::string& flag, const std::string& text, double min, double max) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !(v >= min && v <= max)) {
        throw std::invalid_argument(fmt::format("{} expects a number from {} to {}, got '{}'", flag, min, max, text));
    }
    return v;
}

arguments parse_arguments(int argc, char** argv) {
    arguments a;
#ifdef TDBG_BENCH_TDBG_PATH
    a.tdbg = TDBG_BENCH_TDBG_PATH;
#endif
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        }
        if (flag == "--trace") {
            a.trace = true;
            continue;
        }
        if (i + 1 >= argc) {
            throw std::invalid_argument(fmt::format("{}: unknown option, or its value is missing", flag));
        }
        const std::string value = argv[++i];
        if (flag == "--steps") {
            a.steps = static_cast<std::int64_t>(number_argument(flag, value, 1000, 1e8));
        } else if (flag == "--workers") {
            a.workers = static_cast<int>(number_argument(flag, value, 1, max_workers));
        } else if (flag == "--tensors") {
            a.tensors = static_cast<int>(number_argument(flag, value, 1, 1000));
        } else if (flag == "--elements") {
            a.elements = static_cast<std::size_t>(number_argument(flag, value, 1, 1e7));
        } else if (flag == "--rate") {
            a.rate = number_argument(flag, value, 0, 1e6);
        } else if (flag == "--max-ahead") {
            a.max_ahead = static_cast<int>(number_argument(flag, value, 0, 1e6));
        } else if (flag == "--poll") {
            a.poll = number_argument(flag, value, 0.01, 60);
        } else if (flag == "--tdbg") {
            a.tdbg = value;
        } else if (flag == "--dir") {
            a.dir = value;
        } else {
            throw std::invalid_argument(fmt::format("unknown option '{}'", flag));
        }
    }
    if (a.tdbg.empty()) {
        throw std::invalid_argument("no tdbg program: build the tools (-DTDBG_BUILD_TOOLS=ON) or pass --tdbg PATH");
    }
    if (a.dir.empty()) {
        a.dir = fs::temp_directory_path();
    }
    return a;
}

// Seconds of CLOCK_REALTIME: the clock of file times and of the --progress file.
double wall_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// ---- what the processes share ------------------------------------------------

// Shared by this program and its writers (an anonymous shared mapping made before fork).
struct shared_state {
    std::atomic<std::int64_t> begun[max_workers]; // the step each writer is at (-1 before the first)
    std::atomic<std::int32_t> slowest{-1};        // the step every writer has begun (a futex word)
    std::atomic<int> ready{0};                    // writers whose hook exists
    std::atomic<int> go{0};                       // set once all are ready: the writers start together
    std::atomic<int> written{0};                  // writers that published their last step
    std::atomic<double> first_start{1e300};       // wall time at which the first writer began writing
    std::atomic<double> last_end{0};              // wall time at which the last writer closed its hook
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free && std::atomic<double>::is_always_lock_free &&
                  sizeof(std::atomic<std::int32_t>) == sizeof(std::int32_t),
              "the writers share atomics across processes");

// Sleeps while `word` holds `seen` (a futex shared by processes: no lost wake-up).
void futex_wait(std::atomic<std::int32_t>& word, std::int32_t seen) {
    ::syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAIT, seen, nullptr, nullptr, 0);
}

// Wakes every process sleeping on `word`.
void futex_wake_all(std::atomic<std::int32_t>& word) {
    ::syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Raises `slot` to `value` (a maximum kept across processes).
void store_max(std::atomic<double>& slot, double value) {
    double seen = slot.load();
    while (value > seen && !slot.compare_exchange_weak(seen, value)) {
    }
}

// Lowers `slot` to `value` (a minimum kept across processes).
void store_min(std::atomic<double>& slot, double value) {
    double seen = slot.load();
    while (value < seen && !slot.compare_exchange_weak(seen, value)) {
    }
}

// Set by SIGINT, SIGTERM and SIGHUP: the waits then stop, and everything is cleaned up.
volatile std::sig_atomic_t stop_requested = 0;
extern "C" void on_signal(int) { stop_requested = 1; }

void throw_if_interrupted() {
    if (stop_requested != 0) {
        throw std::runtime_error("interrupted");
    }
}

// ---- a writer --------------------------------------------------------------------

// One worker of the run: `steps` steps of `tensors` gradients, then, once every writer
// has published its last step (a data-parallel job ends its last step together), closes
// its hook: every worker's close writes the run's end marker. Every 64 steps it waits until
// its hook has published what it queued: a real step takes far longer than saving it, so a
// job's published steps follow its training closely; without that wait, on 2 shared cores
// the hook's writer threads (nice +10) fell thousands of steps behind a training loop that
// does nothing else, and the trial's incomplete-step wait window (1000 steps) then declared
// steps complete without the lagging worker.
int writer_main(const arguments& a, int rank, const std::string& run, shared_state& shared) {
    tdbg::hook_options o;
    o.out_dir = run;
    o.worker = tdbg::worker_name(rank);
    o.num_workers = a.workers;
    o.include_workers = tdbg::workers_to_save::all;
    o.include_collections = {"gradients"};
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt}); // every step
    o.checkpoint_config_file = "";
    o.sagemaker_metrics_dir = "";
    tdbg::hook hook(o);

    std::vector<std::string> names;
    for (int t = 0; t < a.tensors; ++t) {
        names.push_back(fmt::format("gradient/layer{}.weight", t));
    }
    std::mt19937 rng(static_cast<unsigned>(rank + 1));
    std::normal_distribution<float> normal(0.0F, 0.01F);
    std::vector<std::vector<float>> values(names.size(), std::vector<float>(a.elements));
    for (auto& v : values) {
        for (float& x : v) {
            x = normal(rng);
        }
    }

    shared.ready.fetch_add(1);
    while (shared.go.load() == 0) { // this program kills the writers if it gives up
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    store_min(shared.first_start, wall_now());
    const auto started = std::chrono::steady_clock::now();
    // After beginning a step: raise the step every writer has begun, and wake those waiting for it.
    const auto begun = [&](std::int64_t step) {
        shared.begun[rank].store(step);
        std::int64_t low = step;
        for (int w = 0; w < a.workers; ++w) {
            low = std::min(low, shared.begun[w].load());
        }
        std::int32_t seen = shared.slowest.load();
        bool raised = false;
        while (low > seen && !(raised = shared.slowest.compare_exchange_weak(seen, static_cast<std::int32_t>(low)))) {
        }
        if (raised) {
            futex_wake_all(shared.slowest);
        }
    };
    hook.set_mode(tdbg::mode::train);
    for (std::int64_t s = 0; s < a.steps; ++s) {
        for (std::int32_t seen = shared.slowest.load(); a.max_ahead > 0 && seen < s - a.max_ahead;
             seen = shared.slowest.load()) {
            futex_wait(shared.slowest, seen);
        }
        if (a.rate > 0) {
            std::this_thread::sleep_until(started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(static_cast<double>(s) / a.rate)));
        }
        hook.begin_step();
        begun(s);
        for (std::size_t t = 0; t < names.size(); ++t) {
            values[t][static_cast<std::size_t>(s) % a.elements] = normal(rng); // a gradient that moves
            hook.save_tensor(names[t], values[t].data(), {a.elements});
        }
        if ((s + 1) % 64 == 0) {
            hook.flush();
        }
    }
    hook.end_step();
    hook.flush();
    shared.written.fetch_add(1);
    while (shared.written.load() < a.workers) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    hook.close();
    store_max(shared.last_end, wall_now());
    if (const auto error = hook.write_error()) {
        std::fprintf(stderr, "writer %d: %s\n", rank, error->c_str());
        return 2;
    }
    return 0;
}

// ---- processes and files, cleaned up whatever happens -------------------------

// A temporary directory below `parent`, removed with everything in it.
class temp_directory {
public:
    explicit temp_directory(const fs::path& parent) {
        std::string pattern = (parent / "tdbg_bench_follow_XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error(
                fmt::format("cannot create a temporary directory in {}: {}", parent.string(), std::strerror(errno)));
        }
        path_ = pattern;
    }
    temp_directory(const temp_directory&) = delete;
    temp_directory& operator=(const temp_directory&) = delete;
    ~temp_directory() {
        // The directories three levels down (run/events/<step>, run/index/<n>) are removed by
        // several threads at once: on a disk mounted with `discard`, removing a run's 170,000
        // small files one after the other took minutes, each unlink waiting for the device.
        std::vector<fs::path> parts;
        try {
            collect(path_, 3, parts);
        } catch (const std::exception&) {
            parts.clear(); // removed below, one after the other
        }
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8 && !parts.empty(); ++t) {
            threads.emplace_back([&] {
                for (std::size_t i = next++; i < parts.size(); i = next++) {
                    std::error_code ec;
                    fs::remove_all(parts[i], ec);
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    [[nodiscard]] const fs::path& path() const noexcept { return path_; }

private:
    // The directories `depth` levels below `dir`.
    static void collect(const fs::path& dir, int depth, std::vector<fs::path>& out) {
        for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
            if (e.is_directory() && !e.is_symlink()) {
                if (depth == 1) {
                    out.push_back(e.path());
                } else {
                    collect(e.path(), depth - 1, out);
                }
            }
        }
    }

    fs::path path_;
};

// The child processes: killed (SIGKILL) and reaped when it goes, unless they ended before.
class children {
public:
    children() = default;
    children(const children&) = delete;
    children& operator=(const children&) = delete;
    ~children() {
        for (const pid_t pid : running_) {
            ::kill(pid, SIGKILL);
        }
        for (const pid_t pid : running_) {
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }

    void add(pid_t pid) { running_.push_back(pid); }

    // The exit status of `pid` if it has ended (reaped then; 128 + N if signal N killed it), else nullopt.
    std::optional<int> ended(pid_t pid) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) != pid) {
            return std::nullopt;
        }
        running_.erase(std::remove(running_.begin(), running_.end(), pid), running_.end());
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    std::vector<pid_t> running_;
};

// Forks a child that dies with this program and takes signals the default way; returns
// the child's pid in the parent (recorded in `kids`), 0 in the child.
pid_t fork_child(children& kids) {
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        std::signal(SIGHUP, SIG_DFL);
    } else {
        kids.add(pid);
    }
    return pid;
}

// Starts `command` (argv[0] a path), its standard error into `err`, with `env` added to
// its environment.
pid_t start_program(children& kids, std::vector<std::string> command, const fs::path& err,
                    const std::vector<std::pair<const char*, const char*>>& env = {}) {
    const pid_t pid = fork_child(kids);
    if (pid == 0) {
        for (const auto& [name, value] : env) {
            ::setenv(name, value, 1);
        }
        const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ::dup2(fd, STDERR_FILENO);
        }
        std::vector<char*> argv;
        for (std::string& s : command) {
            argv.push_back(s.data());
        }
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    return pid;
}

// `tdbg rules DIR --rule VanishingGradient --follow` with `options` after it.
std::vector<std::string> follow_command(const arguments& a, const fs::path& run, std::vector<std::string> options) {
    std::vector<std::string> command{a.tdbg, "rules", run.string(), "--rule", "VanishingGradient", "--follow"};
    command.insert(command.end(), std::make_move_iterator(options.begin()), std::make_move_iterator(options.end()));
    return command;
}

// The last 2000 characters of a file, for error messages.
std::string tail_of(const fs::path& file) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.size() > 2000 ? "..." + text.substr(text.size() - 2000) : text;
}

// ---- what is measured ------------------------------------------------------------

// VmRSS of process `pid` in bytes; 0 once it is gone.
std::uint64_t resident_bytes(pid_t pid) {
    std::ifstream in(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
        }
    }
    return 0;
}

// A follower's --progress file, read as it grows: the last step evaluated, and when each was.
class progress_reader {
public:
    explicit progress_reader(fs::path file) : file_(std::move(file)) {}

    // Reads the lines appended since the last call.
    void poll() {
        std::ifstream in(file_, std::ios::binary);
        if (!in) {
            return; // not there yet: the follower waits for the run to start
        }
        in.seekg(static_cast<std::streamoff>(offset_));
        const std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::size_t start = 0;
        for (std::size_t end = chunk.find('\n'); end != std::string::npos; end = chunk.find('\n', start)) {
            parse(chunk.substr(start, end - start));
            start = end + 1;
        }
        offset_ += start; // a partial last line is read again next time
    }

    // The last step evaluated (-1: none yet).
    [[nodiscard]] std::int64_t last_step() const noexcept { return static_cast<std::int64_t>(times_.size()) - 1; }
    // When step `s` was evaluated (wall seconds).
    [[nodiscard]] double time_of(std::int64_t s) const { return times_.at(static_cast<std::size_t>(s)); }
    [[nodiscard]] std::int64_t triggered() const noexcept { return triggered_; }
    [[nodiscard]] std::int64_t skipped() const noexcept { return skipped_; }

private:
    // {"rule": ..., "step": N, "outcome": "...", "time": T}
    void parse(const std::string& line) {
        const auto field = [&](const char* key) -> const char* {
            const auto at = line.find(key);
            if (at == std::string::npos) {
                throw std::runtime_error("unexpected --progress line: " + line);
            }
            return line.c_str() + at + std::strlen(key);
        };
        const std::int64_t step = std::strtoll(field("\"step\": "), nullptr, 10);
        const double time = std::strtod(field("\"time\": "), nullptr);
        const std::string outcome = field("\"outcome\": \"");
        if (outcome.rfind("triggered", 0) == 0) {
            ++triggered_;
        } else if (outcome.rfind("skipped", 0) == 0) {
            skipped_ += step - last_step();
        }
        while (last_step() < step) { // steps skipped together are reported once, by the last
            times_.push_back(time);
        }
    }

    fs::path file_;
    std::size_t offset_ = 0;
    std::vector<double> times_;
    std::int64_t triggered_ = 0;
    std::int64_t skipped_ = 0;
};

// The steps the writers have published, found from their index files: a worker's are
// published in step order, so each worker's next one is looked for until it is missing.
class published_steps {
public:
    published_steps(fs::path run, int workers, std::int64_t steps)
        : run_(std::move(run)), next_(static_cast<std::size_t>(workers), 0),
          complete_time_(static_cast<std::size_t>(steps), 0) {}

    void poll() {
        for (std::size_t w = 0; w < next_.size(); ++w) {
            const std::string worker = tdbg::worker_name(static_cast<int>(w));
            while (next_[w] < static_cast<std::int64_t>(complete_time_.size())) {
                struct stat st {};
                const fs::path index = run_ / tdbg::format::index_file_key(next_[w], worker);
                if (::stat(index.c_str(), &st) != 0) {
                    break;
                }
                const double written =
                    static_cast<double>(st.st_mtim.tv_sec) + 1e-9 * static_cast<double>(st.st_mtim.tv_nsec);
                auto& complete = complete_time_[static_cast<std::size_t>(next_[w])];
                complete = std::max(complete, written);
                ++next_[w];
            }
        }
        const auto [low, high] = std::minmax_element(next_.begin(), next_.end());
        drift_ = std::max(drift_, *high - *low);
    }

    // The last step every worker has published (-1: none).
    [[nodiscard]] std::int64_t last_complete() const { return *std::min_element(next_.begin(), next_.end()) - 1; }
    // When step `s` became complete: its last worker's index file was written (wall seconds).
    [[nodiscard]] double complete_time(std::int64_t s) const { return complete_time_.at(static_cast<std::size_t>(s)); }
    // The most steps the first worker had published beyond the last, at one look.
    [[nodiscard]] std::int64_t drift() const noexcept { return drift_; }

private:
    fs::path run_;
    std::vector<std::int64_t> next_;
    std::vector<double> complete_time_;
    std::int64_t drift_ = 0;
};

// One look at the live pass.
struct sample {
    double time = 0; // wall seconds
    std::int64_t complete = -1;
    std::int64_t evaluated = -1;
    std::uint64_t rss = 0;
    bool writing = true; // the writers had not all closed their hooks yet
};

// One look at the memory pass, both followers idle.
struct memory_point {
    std::int64_t steps = 0;
    std::uint64_t rule = 0;       // VmRSS of the rule's follower
    std::uint64_t index_only = 0; // VmRSS of the follower that only loads the index
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const auto at = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, at == 0 ? 0 : at - 1)];
}

// The slope of the least-squares line through (x, y) points.
double slope(const std::vector<std::pair<double, double>>& points) {
    double mx = 0;
    double my = 0;
    for (const auto& [x, y] : points) {
        mx += x;
        my += y;
    }
    const auto n = static_cast<double>(points.size());
    mx /= n;
    my /= n;
    double sxy = 0;
    double sxx = 0;
    for (const auto& [x, y] : points) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
    }
    return sxx > 0 ? sxy / sxx : 0;
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }
double kib_per_1000_steps(double bytes_per_step) { return bytes_per_step * 1000 / 1024; }

// The mean size of the event files of `worker` at steps [first, last).
double mean_event_file_bytes(const fs::path& run, const std::string& worker, std::int64_t first, std::int64_t last) {
    double total = 0;
    for (std::int64_t s = first; s < last; ++s) {
        total += static_cast<double>(fs::file_size(run / tdbg::format::event_file_key(s, worker)));
    }
    return last > first ? total / static_cast<double>(last - first) : 0;
}

// ---- the two passes ----------------------------------------------------------------

// What the live pass saw.
struct live_result {
    std::vector<sample> samples;
    double writers_start = 0; // wall seconds
    double writers_end = 0;
    double follower_exit = 0;
};

// The live pass (see the file comment): the writers and the follower, sampled every 100 ms.
live_result live_pass(const arguments& a, const fs::path& dir, const fs::path& run, children& kids,
                      shared_state& shared, published_steps& published, progress_reader& progress) {
    std::vector<pid_t> writers;
    for (int rank = 0; rank < a.workers; ++rank) {
        const pid_t pid = fork_child(kids);
        if (pid == 0) {
            int code = 2;
            try {
                code = writer_main(a, rank, run.string(), shared);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "writer %d: %s\n", rank, e.what());
            }
            std::fflush(stderr);
            ::_exit(code);
        }
        writers.push_back(pid);
    }
    // The follower, started with the writers, as a rule job is started with training.
    const fs::path err = dir / "rules.err";
    const pid_t follower = start_program(
        kids,
        follow_command(a, run,
                       {"--poll", fmt::format("{}", a.poll), "--progress", (dir / "progress.jsonl").string(), "-o",
                        (dir / "rules.out").string()}),
        err);

    const auto check_writers = [&](std::size_t& left) {
        for (const pid_t w : writers) {
            if (const auto code = kids.ended(w)) {
                if (*code != 0) {
                    throw std::runtime_error(fmt::format("a writer failed (status {})", *code));
                }
                --left;
            }
        }
    };
    std::size_t writers_left = writers.size();
    while (shared.ready.load() < a.workers) {
        check_writers(writers_left);
        throw_if_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    shared.go.store(1);

    // Sample every 100 ms until the follower exits; look for its exit every 5 ms.
    live_result result;
    std::optional<int> follower_status;
    auto next_sample = std::chrono::steady_clock::now();
    const double drain_limit = 120; // seconds the follower may take after the writers' end
    while (!follower_status) {
        throw_if_interrupted();
        check_writers(writers_left);
        if (writers_left == 0 && result.writers_end == 0) {
            result.writers_end = shared.last_end.load();
        }
        if ((follower_status = kids.ended(follower))) {
            result.follower_exit = wall_now();
            break;
        }
        if (std::chrono::steady_clock::now() >= next_sample) {
            next_sample += std::chrono::milliseconds(100);
            sample s;
            s.rss = resident_bytes(follower);
            s.time = wall_now();
            published.poll();
            progress.poll();
            s.complete = published.last_complete();
            s.evaluated = progress.last_step();
            s.writing = writers_left > 0;
            result.samples.push_back(s);
            if (writers_left == 0 && s.time - result.writers_end > drain_limit) {
                throw std::runtime_error(fmt::format("the follower did not end within {} s of the writers' end "
                                                     "(it evaluated {} of {} steps); its stderr:\n{}",
                                                     drain_limit, s.evaluated + 1, a.steps, tail_of(err)));
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    published.poll();
    progress.poll();
    if (writers_left != 0) {
        throw std::runtime_error(fmt::format("the follower exited (status {}) before the writers ended; its stderr:\n{}",
                                             *follower_status, tail_of(err)));
    }
    if (*follower_status != 0 || progress.last_step() + 1 != a.steps) {
        throw std::runtime_error(fmt::format("the follower exited with status {} after {} of {} steps; its stderr:\n{}",
                                             *follower_status, progress.last_step() + 1, a.steps, tail_of(err)));
    }
    result.writers_start = shared.first_start.load();
    return result;
}

// glibc's malloc keeps memory that was freed (per-thread arenas, the top of the heap) and
// hands it back when it sees fit, so a process's VmRSS moves by a few hundred KiB with
// the order of its threads' allocations, whatever it holds. The memory pass runs both
// followers with one arena and no trim threshold, so that their VmRSS follows what they
// hold: the growth it measures is memory in use, not the allocator's reserve. (Run with
// the defaults, the rule's follower showed 60-110 bytes per step more than the index-only
// one, changing sign from sample to sample by up to 1 MiB; with these settings the two
// stay within 0.2 MiB.)
const std::vector<std::pair<const char*, const char*>> trimmed_malloc{
    {"MALLOC_ARENA_MAX", "1"}, {"MALLOC_TRIM_THRESHOLD_", "0"}, {"MALLOC_TOP_PAD_", "0"}};

// The memory pass (see the file comment): the finished run replayed into `replay`, moved
// there chunk by chunk (its event files first, then its index files, as the hook publishes
// them) once the rule has evaluated the previous chunk, followed by the rule and by an
// index-only follower; their VmRSS every `replay_measure` steps, both idle.
std::vector<memory_point> memory_pass(const arguments& a, const fs::path& dir, const fs::path& run,
                                      const fs::path& replay, children& kids) {
    fs::create_directories(replay / "events");
    fs::copy(run / "collections", replay / "collections", fs::copy_options::recursive);
    const std::string poll = "0.1";
    const fs::path rule_err = dir / "replay_rule.err";
    const fs::path index_err = dir / "replay_index.err";
    const pid_t rule = start_program(kids,
                                     follow_command(a, replay,
                                                    {"--poll", poll, "--progress", (dir / "replay.jsonl").string(),
                                                     "-o", (dir / "replay_rule.out").string()}),
                                     rule_err, trimmed_malloc);
    const pid_t index_only = start_program(
        kids,
        follow_command(a, replay,
                       // It evaluates no step by design: its run never reaches --start-step (--allow-empty).
                       {"--poll", poll, "--start-step", std::to_string(a.steps), "--allow-empty", "-o",
                        (dir / "replay_index.out").string()}),
        index_err, trimmed_malloc);
    const auto check_running = [&] {
        for (const auto& [pid, err] : {std::pair{rule, rule_err}, std::pair{index_only, index_err}}) {
            if (const auto code = kids.ended(pid)) {
                throw std::runtime_error(
                    fmt::format("a follower of the replay exited early (status {}); its stderr:\n{}", *code, tail_of(err)));
            }
        }
    };

    progress_reader progress(dir / "replay.jsonl");
    std::vector<memory_point> points;
    for (std::int64_t done = 0; done < a.steps;) {
        const std::int64_t next = std::min(done + replay_chunk, a.steps);
        for (std::int64_t s = done; s < next; ++s) {
            const fs::path events = fs::path(tdbg::format::event_file_key(s, tdbg::worker_name(0))).parent_path();
            fs::rename(run / events, replay / events);
            for (int w = 0; w < a.workers; ++w) {
                const fs::path index = tdbg::format::index_file_key(s, tdbg::worker_name(w));
                fs::create_directories((replay / index).parent_path());
                fs::rename(run / index, replay / index);
            }
        }
        done = next;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        for (progress.poll(); progress.last_step() + 1 < done; progress.poll()) {
            throw_if_interrupted();
            check_running();
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error(fmt::format("the replay's rule did not reach step {} in 120 s", done));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (done % replay_measure == 0 || done == a.steps) {
            // Five more polls: both are idle, every step read.
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            check_running();
            points.push_back(memory_point{done, resident_bytes(rule), resident_bytes(index_only)});
        }
    }
    std::ofstream(replay / std::string(tdbg::format::end_marker_key)).flush(); // both end now
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (const auto& [pid, err] : {std::pair{rule, rule_err}, std::pair{index_only, index_err}}) {
        std::optional<int> code;
        while (!(code = kids.ended(pid))) {
            throw_if_interrupted();
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error("a follower of the replay did not end after its end marker");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (*code != 0) {
            throw std::runtime_error(
                fmt::format("a follower of the replay exited with status {}; its stderr:\n{}", *code, tail_of(err)));
        }
    }
    return points;
}

// ---- the report ---------------------------------------------------------------------

int run_benchmark(const arguments& a) {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (const int s : {SIGINT, SIGTERM, SIGHUP}) {
        ::sigaction(s, &action, nullptr);
    }

    void* memory = ::mmap(nullptr, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
        throw std::runtime_error(fmt::format("mmap: {}", std::strerror(errno)));
    }
    struct unmap {
        void* p;
        ~unmap() { ::munmap(p, sizeof(shared_state)); }
    } const unmapped{memory};
    auto* shared = new (memory) shared_state();
    for (auto& b : shared->begun) {
        b.store(-1);
    }

    const temp_directory dir(a.dir);
    const fs::path run = dir.path() / "run";
    children kids; // declared after dir: killed and reaped before the directory goes

    published_steps published(run, a.workers, a.steps);
    progress_reader progress(dir.path() / "progress.jsonl");
    const live_result live = live_pass(a, dir.path(), run, kids, *shared, published, progress);
    const std::vector<sample>& samples = live.samples;
    const double cached = mean_event_file_bytes(run, tdbg::worker_name(0), 0, a.steps);
    const std::vector<memory_point> points = memory_pass(a, dir.path(), run, dir.path() / "replay", kids);

    if (a.trace) {
        fmt::print("samples: seconds since the writers started, last complete step, last evaluated step, RSS MiB\n");
        for (const sample& s : samples) {
            fmt::print("  {:8.3f} {:8} {:8} {:8.2f}{}\n", s.time - live.writers_start, s.complete, s.evaluated,
                       mib(static_cast<double>(s.rss)), s.writing ? "" : "  (writers done)");
        }
        fmt::print("memory pass: steps, RSS MiB of the rule's follower and of the index-only one\n");
        for (const memory_point& p : points) {
            fmt::print("  {:8} {:8.2f} {:8.2f}\n", p.steps, mib(static_cast<double>(p.rule)),
                       mib(static_cast<double>(p.index_only)));
        }
    }

    // ---- the writers and the follower

    const double writing_seconds = live.writers_end - live.writers_start;
    const auto total_steps = static_cast<double>(a.steps);
    const double value_bytes = total_steps * a.workers * a.tensors * static_cast<double>(a.elements) * 4;
    fmt::print("live following: {} writer processes x {} steps x {} float32 gradients of {} elements, {}, at most {} "
               "step(s) apart;\n"
               "  follower: tdbg rules RUN --rule VanishingGradient --follow --poll {}, started with the writers;\n"
               "  {} cores for all {} processes\n",
               a.workers, a.steps, a.tensors, a.elements,
               a.rate > 0 ? fmt::format("{} steps/s each", a.rate) : std::string("as fast as they can"), a.max_ahead,
               a.poll, std::thread::hardware_concurrency(), a.workers + 1);
    fmt::print("writers: {:.2f} s for {} steps: {:.0f} steps/s per worker, {:.0f} index+event files/s, "
               "{:.1f} MB/s of tensor values; their published steps drifted up to {} apart\n",
               writing_seconds, a.steps, total_steps / writing_seconds, 2 * total_steps * a.workers / writing_seconds,
               value_bytes / writing_seconds / 1e6, published.drift());
    std::int64_t early = 0; // evaluated before every worker had published them
    std::vector<double> latency;
    for (std::int64_t s = 0; s < a.steps; ++s) {
        const double waited = progress.time_of(s) - published.complete_time(s);
        early += waited < 0 ? 1 : 0;
        latency.push_back(std::max(0.0, waited));
    }
    fmt::print("follower: {} steps evaluated ({} triggered, {} skipped), the last {:.3f} s after the writers' end, "
               "exit {:.3f} s after it; {} steps evaluated before all workers had published them\n",
               progress.last_step() + 1, progress.triggered(), progress.skipped(),
               progress.time_of(progress.last_step()) - live.writers_end, live.follower_exit - live.writers_end, early);

    // Lag while the writers ran: steps behind the last complete step, and since when the
    // first of them is complete; the seconds also by quarter of the writing time.
    std::vector<double> lag_steps;
    std::vector<double> lag_seconds;
    std::vector<std::vector<double>> quarters(4);
    for (const sample& s : samples) {
        if (!s.writing || s.complete < 0) {
            continue;
        }
        const std::int64_t behind = std::max<std::int64_t>(0, s.complete - s.evaluated);
        const double seconds = behind == 0 ? 0.0 : std::max(0.0, s.time - published.complete_time(s.evaluated + 1));
        lag_steps.push_back(static_cast<double>(behind));
        lag_seconds.push_back(seconds);
        const auto q = static_cast<std::size_t>(std::max(0.0, 4 * (s.time - live.writers_start) / writing_seconds));
        quarters[std::min<std::size_t>(q, 3)].push_back(seconds);
    }
    fmt::print("lag behind the last complete step while the writers ran ({} samples, every 100 ms):\n",
               lag_steps.size());
    fmt::print("                  max      p50      p95   at the end\n");
    fmt::print("  steps      {:9.0f} {:8.0f} {:8.0f} {:12.0f}\n", percentile(lag_steps, 100), percentile(lag_steps, 50),
               percentile(lag_steps, 95), lag_steps.empty() ? 0.0 : lag_steps.back());
    fmt::print("  seconds    {:9.3f} {:8.3f} {:8.3f} {:12.3f}   p95 by quarter of the writing:",
               percentile(lag_seconds, 100), percentile(lag_seconds, 50), percentile(lag_seconds, 95),
               lag_seconds.empty() ? 0.0 : lag_seconds.back());
    for (const auto& q : quarters) {
        fmt::print(" {:.3f}", percentile(q, 95));
    }
    fmt::print(" s\n");
    fmt::print("each step, from complete (its last index file written) to evaluated: max {:.3f} s, p50 {:.3f} s, "
               "p95 {:.3f} s\n",
               percentile(latency, 100), percentile(latency, 50), percentile(latency, 95));

    // ---- memory

    // The follower's RSS when it had evaluated k steps: the first sample at or past k while
    // the writers ran, or for the run's last step the last sample then (after the writers'
    // end, it reads the last steps, then frees what it holds as it exits).
    const auto rss_at = [&](std::int64_t k) -> std::optional<sample> {
        std::optional<sample> latest;
        for (const sample& s : samples) {
            if (s.rss == 0 || !s.writing) {
                continue;
            }
            if (s.evaluated + 1 >= k) {
                return s;
            }
            latest = s;
        }
        return k == a.steps ? latest : std::nullopt;
    };
    std::vector<std::int64_t> marks;
    for (const std::int64_t k : {std::int64_t{1000}, std::int64_t{2000}, std::int64_t{5000}, std::int64_t{10000}}) {
        if (k < a.steps) {
            marks.push_back(k);
        }
    }
    marks.push_back(a.steps);
    std::string rss_line = "follower RSS while the writers ran:";
    for (const std::int64_t k : marks) {
        if (const auto s = rss_at(k)) {
            rss_line += fmt::format("  {} steps {:.2f} MiB", s->evaluated + 1, mib(static_cast<double>(s->rss)));
        }
    }
    // Its growth while the writers ran, from the first mark on (least squares: the samples
    // catch the follower at any moment, some while it holds the index files it is reading).
    std::vector<std::pair<double, double>> live_points;
    for (const sample& s : samples) {
        if (s.writing && s.rss > 0 && s.evaluated + 1 >= marks.front()) {
            live_points.emplace_back(static_cast<double>(s.evaluated + 1), static_cast<double>(s.rss));
        }
    }
    const double live_growth = live_points.size() >= 2 ? slope(live_points) : 0;
    fmt::print("{}; growth {:.0f} bytes/step ({} samples while the writers ran)\n", rss_line, live_growth,
               live_points.size());

    // The memory pass, idle at every chunk: the same steps, the same reading history.
    fmt::print("memory, replaying the run {} steps at a time to the rule and to an index-only follower (the same "
               "program, --start-step {}), both idle every {} steps:\n",
               replay_chunk, a.steps, replay_measure);
    std::string header = "  steps          ";
    std::string rule_line = "  rule MiB       ";
    std::string index_line = "  index only MiB ";
    std::string difference_line = "  difference MiB ";
    std::vector<std::pair<double, double>> index_points;
    std::vector<std::pair<double, double>> difference_points;
    for (const memory_point& p : points) {
        const auto rule = static_cast<double>(p.rule);
        const auto index = static_cast<double>(p.index_only);
        if (std::find(marks.begin(), marks.end(), p.steps) != marks.end()) {
            header += fmt::format(" {:>8}", p.steps);
            rule_line += fmt::format(" {:8.2f}", mib(rule));
            index_line += fmt::format(" {:8.2f}", mib(index));
            difference_line += fmt::format(" {:8.2f}", mib(rule - index));
        }
        if (p.steps >= marks.front()) {
            index_points.emplace_back(static_cast<double>(p.steps), index);
            difference_points.emplace_back(static_cast<double>(p.steps), rule - index);
        }
    }
    const double index_growth = slope(index_points);
    const double beyond = slope(difference_points);
    fmt::print("{}   per step from {} (least squares)\n{}\n{}   {:8.0f} bytes: the trial's index, {:.1f} bytes per "
               "entry ({} tensors x {} workers)\n{}   {:8.0f} bytes = {:.1f} KiB per 1000 steps beyond the index\n",
               header, marks.front(), rule_line, index_line, index_growth, index_growth / (a.tensors * a.workers),
               a.tensors, a.workers, difference_line, beyond, kib_per_1000_steps(beyond));
    fmt::print("  the rule reads worker_0's event file at each step, {:.0f} bytes (the record cache lets a file go "
               "once its records are read; tdbg rules caps it at 8 MiB); both followers run with malloc trimmed "
               "(MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=0 MALLOC_TOP_PAD_=0), so RSS is memory in use\n",
               cached);

    // Targets (see README.md). Lag: the follower looks for new steps every poll interval P
    // once it has caught up; if it evaluates at least twice as fast as the writers write, the
    // steps one look finds take at most as long again, so a step waits at most 2P, plus 1 s
    // for a machine shared with the writers. A follower that cannot keep up has a lag that
    // grows with the run and passes any such bound. Memory: what grows is the trial's index
    // of the steps seen, give or take 16 KiB per 1000 steps.
    const double lag_target = 2 * a.poll + 1.0;
    const double p95 = percentile(lag_seconds, 95);
    const bool lag_met = !lag_seconds.empty() && p95 <= lag_target;
    const bool memory_met = kib_per_1000_steps(beyond) <= 16;
    fmt::print("targets:\n");
    fmt::print("  {:8} lag bounded: p95 {:.3f} s <= 2 x poll + 1 s = {:.3f} s (max {:.3f} s, {:.0f} steps)\n",
               lag_met ? "met" : "MISSED", p95, lag_target, percentile(lag_seconds, 100), percentile(lag_steps, 100));
    fmt::print("  {:8} flat memory: {:.1f} KiB per 1000 steps beyond the index <= 16 KiB\n",
               memory_met ? "met" : "MISSED", kib_per_1000_steps(beyond));
    std::fflush(stdout); // before the clean-up, which takes a while for a large run
    return lag_met && memory_met ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return run_benchmark(parse_arguments(argc, argv));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "bench_follow: %s\n%s", e.what(), usage_text);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_follow: error: %s\n", e.what());
    }
    return 2;
}
