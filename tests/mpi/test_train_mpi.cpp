// Data-parallel training under a real launcher: the example trainer
// (examples/mpi/train_mpi.cpp) runs under Open MPI's mpirun, each rank a worker
// of one run; the trial then sees every worker with smdebug's complete-step
// semantics, and rules evaluate across the workers. The test is no MPI program
// itself: it starts mpirun and reads what the ranks wrote.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlp_model.hpp"
#include "support.hpp"
#include "tdbg/core/xtensor.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/worker.hpp"
#include "tdbg/rules/builtin/all_zero.hpp"
#include "tdbg/rules/builtin/loss_not_decreasing.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/trial/trial.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere in a header

namespace {

namespace fs = std::filesystem;
using tdbg::mode;
using tdbg::tensor_value;
using tdbg::test::temp_dir;

// Every step is saved, so that consecutive steps can be compared.
constexpr long steps = 24;
const std::vector<std::string> trainer_arguments{"--steps", std::to_string(steps), "--save-interval", "1", "--seed",
                                                 "1"};

const std::vector<std::string> parameters{"MLP_fc1.weight", "MLP_fc1.bias", "MLP_fc2.weight", "MLP_fc2.bias"};
const std::vector<std::string> gradients{"gradient/MLP_fc1.weight", "gradient/MLP_fc1.bias", "gradient/MLP_fc2.weight",
                                         "gradient/MLP_fc2.bias"};
const std::string loss_name = "CrossEntropyLoss_output_0";
const std::string mean_loss_name = "scalar/mean_loss";

// ---- running mpirun ----------------------------------------------------------

bool mpi_required() {
    const char* value = std::getenv("TDBG_REQUIRE_MPI");
    return value != nullptr && std::string_view(value) == "1";
}

// Why mpirun cannot be run here, if it cannot.
std::optional<std::string> mpirun_problem() {
    if (::access(TDBG_MPIEXEC, X_OK) != 0) {
        return std::string("mpirun (") + TDBG_MPIEXEC + ") is not there: " + std::strerror(errno) +
               " (Debian: apt-get install openmpi-bin)";
    }
    return std::nullopt;
}

} // namespace

/// Skips the test when mpirun is missing, or fails it when TDBG_REQUIRE_MPI=1.
#define TDBG_REQUIRE_MPIRUN()                                                                                          \
    do {                                                                                                               \
        if (const auto problem = mpirun_problem()) {                                                                   \
            if (mpi_required()) {                                                                                      \
                FAIL(*problem << "; TDBG_REQUIRE_MPI=1 makes this a failure");                                         \
            }                                                                                                          \
            TDBG_SKIP(*problem);                                                                                       \
        }                                                                                                              \
    } while (false)

namespace {

// mpirun's command line for `ranks` ranks of the trainer, with what keeps it
// working in containers and on a loaded machine with fewer cores than ranks.
std::vector<std::string> mpirun_command(int ranks, const std::vector<std::string>& trainer_args) {
    std::vector<std::string> argv{
        TDBG_MPIEXEC,
        // CI runs as root, which mpirun refuses unless told.
        "--allow-run-as-root",
        // More ranks than cores is fine; bound to no core, a busy machine runs them where it has room.
        "--oversubscribe", "--bind-to", "none",
        // All ranks on this machine: start them directly (no ssh) and let them talk
        // through shared memory only, so that no network interface is needed ...
        "--mca", "plm", "isolated", "--mca", "pml", "ob1", "--mca", "btl", "self,vader",
        // ... without cross-memory attach, which containers' ptrace restrictions refuse,
        "--mca", "btl_vader_single_copy_mechanism", "none",
        // and with mpirun's own connections to the ranks on loopback.
        "--mca", "oob_tcp_if_include", "lo",
        // A rank waiting in a collective yields its core: with more ranks than cores,
        // spinning ranks would starve the one everybody waits for.
        "--mca", "mpi_yield_when_idle", "1", "-np", std::to_string(ranks), TDBG_MPI_TRAINER};
    argv.insert(argv.end(), trainer_args.begin(), trainer_args.end());
    return argv;
}

// This process's environment for mpirun, which passes it on to the ranks, plus:
// LeakSanitizer's suppressions for Open MPI's own allocations (lsan.supp; they take
// effect only when the trainer is built with -fsanitize=address, and need the slow
// unwinder to see through Open MPI's frames), and PMIx's hash datastore, as its
// shared-memory one fails with lock errors in some containers.
// Where the trainer is built with AddressSanitizer, the ranks run without its leak check at
// exit: LeakSanitizer's stop-the-world tracer crashes now and then while Open MPI's threads
// wind down ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error", seen
// with several MPI tests running side by side), failing a job that did nothing wrong. ASan
// and UBSan still check every rank; leaks are the other sanitized tests' (the same hook
// and trainer code, without mpirun).
std::vector<std::string> mpirun_environment() {
    std::string lsan_options =
        std::string("suppressions=") + TDBG_MPI_LSAN_SUPPRESSIONS + ":fast_unwind_on_malloc=0:print_suppressions=0";
    std::string asan_options = "detect_leaks=0";
    bool has_gds = false;
    std::vector<std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string_view e(*entry);
        if (e.rfind("LSAN_OPTIONS=", 0) == 0) {
            lsan_options = std::string(e.substr(std::strlen("LSAN_OPTIONS="))) + ":" + lsan_options;
            continue;
        }
        if (e.rfind("ASAN_OPTIONS=", 0) == 0) { // the last setting of an option wins
            asan_options = std::string(e.substr(std::strlen("ASAN_OPTIONS="))) + ":" + asan_options;
            continue;
        }
        has_gds = has_gds || e.rfind("PMIX_MCA_gds=", 0) == 0;
        env.emplace_back(e);
    }
    env.push_back("LSAN_OPTIONS=" + lsan_options);
    env.push_back("ASAN_OPTIONS=" + asan_options);
    if (!has_gds) {
        env.emplace_back("PMIX_MCA_gds=hash");
    }
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) {
        return "exit status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        return "signal " + std::to_string(WTERMSIG(status));
    }
    return "wait status " + std::to_string(status);
}

// How an mpirun ended and what it printed (the ranks' stdout and stderr too).
struct mpi_result {
    bool ok = false;
    std::string how;
    std::string output;
};

// Runs mpirun with `ranks` ranks of the trainer; its output goes to `log`. A job
// still running after `limit` (generous: a loaded machine, sanitizers) is ended.
mpi_result run_mpi(int ranks, const std::vector<std::string>& trainer_args, const fs::path& log,
                   std::chrono::seconds limit = std::chrono::seconds(240)) {
    std::vector<std::string> argv_strings = mpirun_command(ranks, trainer_args);
    std::vector<std::string> env_strings = mpirun_environment();
    std::vector<char*> argv = c_strings(argv_strings);
    std::vector<char*> envp = c_strings(env_strings);
    const std::string log_path = log.string();

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
    // mpirun forwards its stdin to rank 0: give it none. Both output streams go to the log.
    ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::posix_spawn_file_actions_adddup2(&actions, 1, 2);
    // Its own process group, so that a hung job can be ended as a whole.
    ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    ::posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
        throw std::runtime_error(std::string("cannot start ") + argv[0] + ": " + std::strerror(rc));
    }

    mpi_result result;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    bool timed_out = false;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        if (r < 0 && errno != EINTR) {
            throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
        }
        if (!timed_out && std::chrono::steady_clock::now() >= deadline) {
            // mpirun passes SIGTERM on to the ranks; what is left after a grace period is killed.
            timed_out = true;
            ::kill(-pid, SIGTERM);
            std::this_thread::sleep_for(std::chrono::seconds(5));
            ::kill(-pid, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    result.ok = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    result.how =
        timed_out ? "still running after " + std::to_string(limit.count()) + " s, ended" : describe_status(status);
    result.output = tdbg::test::read_file(log);
    return result;
}

// Trains with `ranks` ranks into `dir`; fails the test when the job fails.
void train(int ranks, const fs::path& dir, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"--out", dir.string()};
    args.insert(args.end(), trainer_arguments.begin(), trainer_arguments.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const mpi_result r = run_mpi(ranks, args, dir.string() + ".log");
    INFO("mpirun -np " << ranks << ": " << r.how << "; its output:\n" << r.output);
    REQUIRE(r.ok);
    // The hook found its rank where Open MPI's launcher puts it.
    REQUIRE_THAT(r.output, Catch::Matchers::Contains("named worker_<rank> from OMPI_COMM_WORLD_RANK"));
}

// ---- what the run should hold -----------------------------------------------

std::vector<std::string> worker_names(int ranks) {
    std::vector<std::string> out;
    for (int r = 0; r < ranks; ++r) {
        out.push_back(tdbg::worker_name(r));
    }
    return out;
}

std::vector<std::int64_t> step_list(std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(end - begin));
    std::iota(out.begin(), out.end(), begin);
    return out;
}

std::vector<float> floats_of(const tensor_value& v) {
    REQUIRE(v.type() == tdbg::dtype::float32);
    const float* p = v.data_as<float>();
    return {p, p + v.size()};
}

// The model as a worker saved it at `step` (the weights that step used).
mlp_example::mlp model_at(const tdbg::trial& trial, std::int64_t step, const std::string& worker) {
    auto get = [&](const std::string& name) {
        return trial.tensor(name).value(step, mode::global, worker).to_xarray<float>();
    };
    mlp_example::mlp m;
    m.w1 = get("MLP_fc1.weight");
    m.b1 = get("MLP_fc1.bias");
    m.w2 = get("MLP_fc2.weight");
    m.b2 = get("MLP_fc2.bias");
    return m;
}

// The trainer's data set (the same seed) and the batch rank `rank` of `ranks` trained on at `step`,
// from its shard as train_mpi.cpp cuts them.
mlp_example::dataset batch_of(int rank, int ranks, std::int64_t step) {
    static const mlp_example::dataset data = [] {
        std::mt19937 rng(1);
        return mlp_example::make_dataset(rng);
    }();
    const std::size_t first = mlp_example::points * static_cast<std::size_t>(rank) / static_cast<std::size_t>(ranks);
    const std::size_t end = mlp_example::points * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(ranks);
    return mlp_example::make_batch(data, first, end - first, static_cast<long>(step));
}

tdbg::rules::rule_logger capture(std::vector<std::string>& messages) {
    return tdbg::rules::rule_logger(
        [&messages](tdbg::rules::log_level, std::string_view m) { messages.emplace_back(m); },
        tdbg::rules::log_level::warning);
}

// A check of data parallelism itself, reading every worker: met at a step when
// some worker's weights or biases differ, by as much as one bit, from the first
// worker's (a rank that missed an allreduce, or started from other weights).
class weights_out_of_sync : public tdbg::rules::rule<weights_out_of_sync> {
public:
    static constexpr std::string_view rule_name = "WeightsOutOfSync";
    static constexpr bool parallel_steps = true;

    explicit weights_out_of_sync(tdbg::trial base) : rule(std::move(base)) {}

    [[nodiscard]] tdbg::rules::verdict invoke_at_step(std::int64_t step) const {
        for (const char* collection : {"weights", "biases"}) {
            for (const std::string& name :
                 base_trial().tensor_names(std::nullopt, mode::global, std::nullopt, collection)) {
                const std::vector<std::string> workers = tensor(name).workers(step);
                const tensor_value first = value(name, step, mode::global, workers.front());
                for (const std::string& worker : workers) {
                    if (value(name, step, mode::global, worker).bytes() != first.bytes()) {
                        return tdbg::rules::condition_met(name + " of " + worker + " differs from " +
                                                          workers.front() + "'s");
                    }
                }
            }
        }
        return false;
    }
};

// Everything a finished run of `ranks` healthy ranks must show.
void check_run(const fs::path& dir, int ranks) {
    const auto trial = tdbg::create_trial(dir.string());
    const std::vector<std::string> workers = worker_names(ranks);
    const std::vector<std::int64_t> all_steps = step_list(0, steps);

    // Every worker, every step, complete across the workers.
    REQUIRE(trial.workers() == workers);
    REQUIRE(trial.num_workers() == static_cast<std::size_t>(ranks));
    REQUIRE(trial.loaded_all_steps());
    REQUIRE(trial.steps() == all_steps);
    REQUIRE(trial.steps(mode::global, true) == all_steps);
    REQUIRE(trial.steps(mode::train) == all_steps);
    REQUIRE(trial.last_complete_step() == steps - 1);
    std::vector<std::string> names = parameters;
    names.insert(names.end(), gradients.begin(), gradients.end());
    names.push_back(loss_name);
    names.push_back(mean_loss_name);
    std::sort(names.begin(), names.end());
    REQUIRE(trial.tensor_names() == names);
    for (const std::string& name : names) {
        INFO(name);
        const auto t = trial.tensor(name);
        REQUIRE(t.steps() == all_steps);
        for (std::int64_t step : all_steps) {
            REQUIRE(t.workers(step) == workers);
        }
    }

    for (std::int64_t step : all_steps) {
        INFO("step " << step);
        // The weights after allreduce: the same on every worker, bit for bit.
        for (const std::string& name : parameters) {
            const tensor_value reference = trial.tensor(name).value(step, mode::global, workers[0]);
            for (const std::string& worker : workers) {
                INFO(name << " of " << worker);
                CHECK(trial.tensor(name).value(step, mode::global, worker).bytes() == reference.bytes());
            }
        }
        // The gradients of different shards differ, worker by worker.
        for (const std::string& name : gradients) {
            for (std::size_t a = 0; a < workers.size(); ++a) {
                for (std::size_t b = a + 1; b < workers.size(); ++b) {
                    INFO(name << " of " << workers[a] << " and " << workers[b]);
                    CHECK(trial.tensor(name).value(step, mode::global, workers[a]).bytes() !=
                          trial.tensor(name).value(step, mode::global, workers[b]).bytes());
                }
            }
        }
        // Each worker's loss is the loss of its own batch under the weights it saved;
        // the mean loss is their mean, the same on every worker.
        const mlp_example::mlp model = model_at(trial, step, workers[0]);
        double sum = 0;
        std::vector<float> losses;
        for (int rank = 0; rank < ranks; ++rank) {
            const mlp_example::dataset b = batch_of(rank, ranks, step);
            const float expected = mlp_example::forward(model, b.x, b.labels).loss;
            const tensor_value saved =
                trial.tensor(loss_name).value(step, mode::global, workers[static_cast<std::size_t>(rank)]);
            REQUIRE(saved.type() == tdbg::dtype::float32);
            REQUIRE(saved.size() == 1);
            CHECK(saved.data_as<float>()[0] == Approx(expected).epsilon(1e-6));
            losses.push_back(saved.data_as<float>()[0]);
            sum += static_cast<double>(saved.data_as<float>()[0]);
        }
        CHECK(std::adjacent_find(losses.begin(), losses.end()) == losses.end());
        const tensor_value mean_loss = trial.tensor(mean_loss_name).value(step, mode::global, workers[0]);
        CHECK(tdbg::rules::scalar_of(mean_loss) == Approx(sum / ranks).epsilon(1e-6));
        for (const std::string& worker : workers) {
            CHECK(trial.tensor(mean_loss_name).value(step, mode::global, worker).bytes() == mean_loss.bytes());
        }
    }

    // The weights move by the learning rate times the mean of the workers' gradients.
    for (std::int64_t step = 0; step + 1 < steps; ++step) {
        for (std::size_t p = 0; p < parameters.size(); ++p) {
            INFO(parameters[p] << " from step " << step);
            const std::vector<float> before = floats_of(trial.tensor(parameters[p]).value(step));
            const std::vector<float> after = floats_of(trial.tensor(parameters[p]).value(step + 1));
            std::vector<float> mean(before.size(), 0.0F);
            for (const std::string& worker : workers) {
                const std::vector<float> g = floats_of(trial.tensor(gradients[p]).value(step, mode::global, worker));
                for (std::size_t i = 0; i < g.size(); ++i) {
                    mean[i] += g[i];
                }
            }
            for (std::size_t i = 0; i < before.size(); ++i) {
                const float expected = before[i] - mlp_example::learning_rate * (mean[i] / static_cast<float>(ranks));
                CHECK(after[i] == Approx(expected).margin(1e-6));
            }
        }
    }

    // The model learns: the mean loss falls by more than 10 % over the run.
    auto mean_loss_at = [&](std::int64_t step) {
        return tdbg::rules::scalar_of(trial.tensor(mean_loss_name).value(step));
    };
    CHECK(mean_loss_at(steps - 1) < 0.9 * mean_loss_at(0));

    // Rules over every worker: no gradient is all zeros on any worker, none vanishes,
    // and the workers' weights agree at every step.
    {
        tdbg::rules::all_zero rule(trial, {{"collection_names", "gradients"}});
        rule.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = tdbg::rules::invoke_rule(rule);
        CHECK(result.status() == tdbg::rules::evaluation_status::no_issues_found);
        CHECK(result.not_triggered_steps == all_steps);
        CHECK(result.all_skipped_steps().empty());
    }
    {
        tdbg::rules::vanishing_gradient rule(trial, {{"threshold", "1e-7"}});
        rule.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = tdbg::rules::invoke_rule(rule);
        CHECK(result.not_triggered_steps == all_steps);
    }
    {
        weights_out_of_sync rule(trial);
        rule.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = tdbg::rules::invoke_rule(rule);
        CHECK(result.not_triggered_steps == all_steps);
    }
    // LossNotDecreasing on the mean loss, checked every 8 steps (at 8 and 16): it fell
    // at each check, so the rule stays quiet; asked for a 50 % fall each time, it triggers
    // at both checks, as the saved values say it must.
    for (const char* diff_percent : {"0", "50"}) {
        INFO("diff_percent " << diff_percent);
        tdbg::rules::loss_not_decreasing rule(trial, {{"tensor_regex", "scalar/mean_loss"},
                                                      {"use_losses_collection", "False"},
                                                      {"num_steps", "8"},
                                                      {"diff_percent", diff_percent}});
        rule.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = tdbg::rules::invoke_rule(rule);
        std::vector<std::int64_t> expected;
        const double fraction = std::stod(diff_percent) / 100.0;
        for (std::int64_t s = 8; s < steps; s += 8) {
            if (mean_loss_at(s) >= mean_loss_at(s - 8) - std::fabs(mean_loss_at(s - 8)) * fraction) {
                expected.push_back(s);
            }
        }
        CHECK(result.triggered_steps == expected);
        CHECK(result.triggered_steps ==
              (fraction == 0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{8, 16}));
        CHECK(result.triggered_steps.size() + result.not_triggered_steps.size() == all_steps.size());
    }
}

} // namespace

TEST_CASE("train_mpi under mpirun -np 2: both workers, complete steps, weights in sync, rules across workers") {
    TDBG_REQUIRE_MPIRUN();
    temp_dir tmp("mpi2");
    train(2, tmp.path() / "run");
    check_run(tmp.path() / "run", 2);
}

TEST_CASE("train_mpi under mpirun -np 4: four workers, complete steps, weights in sync, rules across workers") {
    TDBG_REQUIRE_MPIRUN();
    temp_dir tmp("mpi4");
    train(4, tmp.path() / "run");
    check_run(tmp.path() / "run", 4);
}

TEST_CASE("train_mpi with a rank fed zeros: AllZero finds that worker's gradient") {
    TDBG_REQUIRE_MPIRUN();
    temp_dir tmp("mpibroken");
    const fs::path dir = tmp.path() / "run";
    train(2, dir, {"--broken-rank", "1"});
    const auto trial = tdbg::create_trial(dir.string());
    const std::vector<std::int64_t> all_steps = step_list(0, steps);
    REQUIRE(trial.workers() == worker_names(2));
    REQUIRE(trial.steps() == all_steps);

    // worker_1's inputs were zeros, so its fc1.weight gradient is: on that worker only.
    const auto g = trial.tensor("gradient/MLP_fc1.weight");
    for (std::int64_t step : all_steps) {
        INFO("step " << step);
        for (const std::string& worker : worker_names(2)) {
            const std::size_t zeros = tdbg::rules::count_zeros(g.value(step, mode::global, worker));
            CHECK((worker == "worker_1" ? zeros == mlp_example::hidden * mlp_example::inputs : zeros == 0));
        }
    }

    std::vector<std::string> messages;
    tdbg::rules::all_zero rule(trial, {{"collection_names", "gradients"}});
    rule.set_logger(capture(messages));
    const auto result = tdbg::rules::invoke_rule(rule);
    CHECK(result.status() == tdbg::rules::evaluation_status::issues_found);
    CHECK(result.triggered_steps == all_steps);
    CHECK(result.not_triggered_steps.empty());
    REQUIRE(messages.size() == all_steps.size());
    CHECK_THAT(messages.front(),
               Catch::Matchers::Contains("condition met at step 0") &&
                   Catch::Matchers::Contains("gradient/MLP_fc1.weight (worker_1) is 100% zeros"));

    // The allreduce still keeps the weights in sync: the fault is in one worker's data.
    weights_out_of_sync sync(trial);
    sync.set_logger(tdbg::rules::rule_logger::silent());
    CHECK(tdbg::rules::invoke_rule(sync).not_triggered_steps == all_steps);
}

TEST_CASE("train_mpi under mpirun -np 3, then a worker's steps missing: only steps every worker wrote are complete") {
    TDBG_REQUIRE_MPIRUN();
    temp_dir tmp("mpi3");
    const fs::path dir = tmp.path() / "run";
    train(3, dir);
    check_run(dir, 3); // uneven shards: 170, 171 and 171 rows

    // As if worker_2 had died before publishing its last step, and had lost an earlier
    // one: its files for those steps go, and so does the end marker.
    const fs::path partial = tmp.path() / "partial";
    fs::copy(dir, partial, fs::copy_options::recursive);
    const std::int64_t last = steps - 1;
    const std::int64_t lost = 10;
    for (std::int64_t step : {lost, last}) {
        REQUIRE(fs::remove(partial / tdbg::format::event_file_key(step, "worker_2")));
        REQUIRE(fs::remove(partial / tdbg::format::index_file_key(step, "worker_2")));
    }
    REQUIRE(fs::remove(partial / std::string(tdbg::format::end_marker_key)));

    const std::vector<std::int64_t> all_steps = step_list(0, steps);
    std::vector<std::int64_t> complete = step_list(0, last);
    {
        const auto trial = tdbg::create_trial(partial.string());
        CHECK(trial.workers() == worker_names(3));
        CHECK_FALSE(trial.loaded_all_steps());
        // The last step waits for worker_2; the lost one counts as complete, since a later
        // step is: worker_2 went past it (smdebug's rule).
        CHECK(trial.steps() == complete);
        CHECK(trial.steps(mode::train) == complete);
        CHECK(trial.steps(mode::global, true) == all_steps);
        CHECK(trial.last_complete_step() == last - 1);
        CHECK(trial.has_passed_step(last) == tdbg::step_state::not_yet_available);
        CHECK(trial.has_passed_step(lost) == tdbg::step_state::available);
        const auto loss = trial.tensor(loss_name);
        CHECK(loss.steps() == complete);
        CHECK(loss.workers(lost) == std::vector<std::string>{"worker_0", "worker_1"});
        CHECK(loss.workers(last) == std::vector<std::string>{"worker_0", "worker_1"});
        CHECK_THROWS_AS(loss.value(lost, mode::global, "worker_2"), tdbg::invalid_worker);
        CHECK(loss.value(lost, mode::global, "worker_1").bytes() ==
              tdbg::create_trial(dir.string()).tensor(loss_name).value(lost, mode::global, "worker_1").bytes());
        std::vector<std::int64_t> written_by_2 = step_list(0, last);
        written_by_2.erase(written_by_2.begin() + lost);
        std::vector<std::int64_t> got;
        for (const auto& item : loss.values(mode::global, "worker_2")) {
            got.push_back(item.first);
        }
        CHECK(got == written_by_2);

        // A rule evaluates the complete steps and, given a deadline, reports the last as not there yet.
        tdbg::rules::all_zero rule(trial, {{"collection_names", "gradients"}});
        rule.set_logger(tdbg::rules::rule_logger::silent());
        tdbg::rules::invoke_options options;
        options.start_step = 0;
        options.end_step = steps;
        options.step_timeout = std::chrono::milliseconds(300);
        options.skip_late_steps = true;
        const auto result = tdbg::rules::invoke_rule(rule, options);
        CHECK(result.not_triggered_steps == complete);
        CHECK(result.skipped_steps == std::map<std::string, tdbg::rules::step_set>{
                                          {std::string(tdbg::rules::skip_reason::step_not_yet_available), {last}}});
    }

    // Once the job has ended, what the workers wrote is all there will be: every step is final.
    tdbg::test::write_file(partial / std::string(tdbg::format::end_marker_key), "");
    const auto trial = tdbg::create_trial(partial.string());
    CHECK(trial.loaded_all_steps());
    CHECK(trial.steps() == all_steps);
    CHECK(trial.has_passed_step(last) == tdbg::step_state::available);
    CHECK(trial.tensor(loss_name).workers(last) == std::vector<std::string>{"worker_0", "worker_1"});
    tdbg::rules::all_zero rule(trial, {{"collection_names", "gradients"}});
    rule.set_logger(tdbg::rules::rule_logger::silent());
    CHECK(tdbg::rules::invoke_rule(rule).not_triggered_steps == all_steps);
}

TEST_CASE("WeightsOutOfSync, the cross-worker check the MPI runs pass, triggers when a worker's weights differ") {
    // Written in this process, two hooks as two workers: the rule must not pass vacuously.
    temp_dir tmp("outofsync");
    {
        auto options_for = [&](int rank) {
            tdbg::hook_options o;
            o.out_dir = tmp.path().string();
            o.include_workers = tdbg::workers_to_save::all;
            o.worker = tdbg::worker_name(rank);
            o.num_workers = 2;
            o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
            o.include_collections = {"weights"};
            return o;
        };
        tdbg::hook first(options_for(0));
        tdbg::hook second(options_for(1));
        for (int step = 0; step < 3; ++step) {
            const float drift = step == 2 ? 1e-7F : 0.0F; // one worker's update lost, by a hair
            for (auto* h : {&first, &second}) {
                h->begin_step();
                h->save_tensor("MLP_fc1.weight",
                               tensor_value(std::vector<float>{0.5F, h == &second ? 0.25F + drift : 0.25F}));
            }
        }
        first.close();
        second.close();
    }
    const auto trial = tdbg::create_trial(tmp.path().string());
    REQUIRE(trial.workers() == worker_names(2));
    std::vector<std::string> messages;
    weights_out_of_sync rule(trial);
    rule.set_logger(capture(messages));
    const auto result = tdbg::rules::invoke_rule(rule);
    CHECK(result.triggered_steps == std::vector<std::int64_t>{2});
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0, 1});
    REQUIRE(messages.size() == 1);
    CHECK_THAT(messages[0], Catch::Matchers::Contains("MLP_fc1.weight of worker_1 differs from worker_0's"));
}
