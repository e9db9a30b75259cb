// One job per run directory (docs/reliability.md): two trainers on one directory, at once or
// the second over a crashed first, never both write it; a crashed run is refused by name, and
// resumed or overwritten only when asked; workers of one job share the directory. And a storage
// that fails while the hook is built is a write error under the policy, never a throw.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "child_process.hpp"
#include "run_check.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/memory_storage.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::child_process;
using tdbg::test::describe_status;
using tdbg::test::temp_dir;
namespace reliability = tdbg::test::reliability;
namespace fs = std::filesystem;

namespace {

tdbg::hook_options one_job_options(const fs::path& run) {
    tdbg::hook_options o;
    o.out_dir = run.string();
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.worker = "worker_0";
    o.num_workers = 1;
    o.stop_check_interval = std::chrono::milliseconds(0);
    return o;
}

// `steps` steps saving "w" = base + step.
void one_job_train(tdbg::hook& h, int steps, float base) {
    for (int step = 0; step < steps; ++step) {
        h.begin_step();
        h.save_tensor("w", tdbg::tensor_value::scalar(base + static_cast<float>(h.global_step())));
    }
}

// Waits (at most a minute) until `done` says so or the child has exited.
template <class F>
void one_job_wait(child_process& child, int& status, F done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!done() && child.running(status) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// A storage whose every call fails as an S3 outage does.
class outage_storage {
public:
    class writer {
    public:
        void append(std::string_view) { fail(); }
        void commit() { fail(); }
    };
    void put(const std::string&, std::string_view) const { fail(); }
    [[nodiscard]] writer open_write(const std::string&) const { fail(); }
    [[nodiscard]] std::string read(const std::string&) const { fail(); }
    [[nodiscard]] std::string read_range(const std::string&, std::uint64_t, std::uint64_t) const { fail(); }
    [[nodiscard]] std::vector<std::string> list(const std::string&, const std::string&) const { fail(); }
    [[nodiscard]] bool exists(const std::string&) const { fail(); }
    [[nodiscard]] std::string describe() const { return "outage://run"; }

private:
    [[noreturn]] static void fail() { throw tdbg::storage_error("GET s3://bucket/run failed: Connection refused (simulated)"); }
};

} // namespace

TEST_CASE("one job per run directory: two trainers started at once on one directory, one runs and the other fails") {
    temp_dir root("one_job_race");
    const fs::path run = root.path() / "run";
    // Different lengths, so that the run says whose it is.
    child_process a(TDBG_RELIABILITY_TRAINER, {run.string(), "6"});
    child_process b(TDBG_RELIABILITY_TRAINER, {run.string(), "9"});
    const int status_a = a.wait();
    const int status_b = b.wait();
    INFO(describe_status(status_a) << ", " << describe_status(status_b));
    // Exactly one exits 0; the other is refused (exit 1: a tdbg error thrown by the hook's constructor).
    REQUIRE(((describe_status(status_a) == "exit 0") != (describe_status(status_b) == "exit 0")));
    CHECK((describe_status(status_a) == "exit 1" || describe_status(status_b) == "exit 1"));
    const std::size_t winner_steps = describe_status(status_a) == "exit 0" ? 6 : 9;
    CHECK(reliability::check_published_run(run) == winner_steps);
    CHECK(tdbg::create_trial(run.string()).steps().size() == winner_steps);
}

TEST_CASE("one job per run directory: a trainer over a crashed trainer's run fails, and the run stays the crashed one's") {
    temp_dir root("one_job_crashed");
    const fs::path run = root.path() / "run";
    std::size_t published = 0;
    {
        child_process first(TDBG_RELIABILITY_TRAINER, {run.string(), "100000", "2000"});
        int status = 0;
        one_job_wait(first, status, [&] { return reliability::published_steps(run).size() >= 3; });
        first.kill();
        (void)first.wait();
    }
    published = reliability::published_steps(run).size();
    REQUIRE(published >= 3);
    REQUIRE_FALSE(fs::exists(run / "training_job_end.ts"));
    child_process second(TDBG_RELIABILITY_TRAINER, {run.string(), "5"});
    CHECK(describe_status(second.wait()) == "exit 1");
    CHECK(reliability::check_published_run(run) == published); // untouched: the crashed run's steps only
    CHECK_FALSE(fs::exists(run / "training_job_end.ts"));
}

TEST_CASE("one job per run directory: a crashed run is refused naming it, resume goes on with it, overwrite starts again") {
    temp_dir root("one_job_policies");
    const fs::path run = root.path() / "run";
    {
        tdbg::hook h(one_job_options(run));
        one_job_train(h, 5, 0.0F);
        h.close();
    }
    fs::remove(run / "training_job_end.ts"); // as a crashed job leaves it: claimed, steps, no end marker
    REQUIRE(fs::exists(run / ".tdbg" / "claims" / "worker_0.json"));

    // Refused (the default), naming the directory, the claim and the options; nothing written.
    try {
        tdbg::hook h(one_job_options(run));
        FAIL("a hook started in another job's run");
    } catch (const tdbg::config_error& e) {
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains(run.string()) && Catch::Contains("another job's run of worker_0") &&
                             Catch::Contains(".tdbg/claims/worker_0.json is claimed by job ") && Catch::Contains(", pid ") &&
                             Catch::Contains("existing_run_policy::resume") &&
                             Catch::Contains("existing_run_policy::overwrite"));
    }
    CHECK(tdbg::create_trial(run.string()).steps().size() == 5);

    // A run written without a claim (by Python smdebug, or before claims): refused too.
    fs::remove(run / ".tdbg" / "claims" / "worker_0.json");
    CHECK_THROWS_WITH(tdbg::hook(one_job_options(run)),
                      Catch::Contains("collections/000000000/worker_0_collections.json and no claim"));

    // resume: goes on with the run after its last published step (no state store here), so
    // the first job's steps stay its own and the new job's come after them.
    {
        auto o = one_job_options(run);
        o.existing_run = tdbg::existing_run_policy::resume;
        std::vector<std::string> logged;
        o.log = [&](std::string_view line) { logged.emplace_back(line); };
        tdbg::hook h(o);
        CHECK(h.global_step() == 4);
        one_job_train(h, 2, 100.0F);
        h.close();
        REQUIRE_FALSE(h.write_error());
        CHECK(std::any_of(logged.begin(), logged.end(), [](const std::string& line) {
            return line.find("resuming worker_0's run at") != std::string::npos &&
                   line.find("after its last published step 4: this job's steps start at 5") != std::string::npos;
        }));
    }
    {
        const auto t = tdbg::create_trial(run.string());
        CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
        CHECK(t.tensor("w").value(1).data_as<float>()[0] == 1.0F);   // the first job's
        CHECK(t.tensor("w").value(3).data_as<float>()[0] == 3.0F);   // the first job's
        CHECK(t.tensor("w").value(5).data_as<float>()[0] == 105.0F); // the second job's
    }
    // A run that has ended is refused even with resume.
    {
        auto o = one_job_options(run);
        o.existing_run = tdbg::existing_run_policy::resume;
        CHECK_THROWS_WITH(tdbg::hook(o), Catch::Contains("training_job_end.ts"));
    }

    // overwrite: the worker's old steps and the end marker go, the new run is all there is.
    {
        auto o = one_job_options(run);
        o.existing_run = tdbg::existing_run_policy::overwrite;
        tdbg::hook h(o);
        CHECK_FALSE(fs::exists(run / "training_job_end.ts"));
        one_job_train(h, 2, 200.0F);
        h.close();
    }
    const auto t = tdbg::create_trial(run.string());
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1});
    CHECK(t.loaded_all_steps());
    CHECK(t.tensor("w").value(1).data_as<float>()[0] == 201.0F);
    CHECK_FALSE(fs::exists(run / tdbg::format::event_file_key(4, "worker_0")));
    CHECK_FALSE(fs::exists(run / tdbg::format::index_file_key(4, "worker_0")));
}

TEST_CASE("one job per run directory: hooks racing for one worker of one run, exactly one starts") {
    temp_dir root("one_job_threads");
    const tdbg::memory_storage memory("race");
    const tdbg::local_storage local(root.path() / "run");
    for (const tdbg::any_storage& storage : {tdbg::any_storage(memory), tdbg::any_storage(local)}) {
        INFO(storage.describe());
        constexpr int contenders = 6;
        std::mutex mutex;
        std::condition_variable go;
        int ready = 0;
        std::atomic<int> started{0};
        std::atomic<int> refused{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < contenders; ++i) {
            threads.emplace_back([&] {
                {
                    std::unique_lock<std::mutex> lock(mutex);
                    ++ready;
                    go.notify_all();
                    go.wait(lock, [&] { return ready == contenders; }); // all start together
                }
                try {
                    tdbg::hook h(storage, one_job_options(root.path() / "run"));
                    ++started;
                    one_job_train(h, 3, 0.0F);
                    h.close();
                } catch (const tdbg::config_error&) {
                    ++refused;
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        CHECK(started.load() == 1);
        CHECK(refused.load() == contenders - 1);
        CHECK(tdbg::open_trial(storage, "run").steps() == std::vector<std::int64_t>{0, 1, 2});
    }
}

TEST_CASE("one job per run directory: workers of one job write one directory side by side") {
    temp_dir root("one_job_workers");
    const fs::path run = root.path() / "run";
    {
        auto o0 = one_job_options(run);
        o0.include_workers = tdbg::workers_to_save::all;
        o0.num_workers = 2;
        auto o1 = o0;
        o1.worker = "worker_1";
        tdbg::hook w0(o0);
        tdbg::hook w1(o1);
        for (int step = 0; step < 3; ++step) {
            for (tdbg::hook* h : {&w0, &w1}) {
                h->begin_step();
                h->save_tensor("w", tdbg::tensor_value::scalar(static_cast<float>(step)));
            }
        }
        w0.close();
        w1.close();
    }
    const auto t = tdbg::create_trial(run.string());
    CHECK(t.workers() == std::vector<std::string>{"worker_0", "worker_1"});
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2});
    CHECK(t.loaded_all_steps());
}

TEST_CASE("hook start: a storage failing while the hook is built is a write error under the policy, never a throw") {
    for (const bool writing : {true, false}) {
        INFO((writing ? "worker_0, which writes" : "worker_1, which writes only the end marker"));
        auto o = one_job_options("outage");
        o.worker = writing ? "worker_0" : "worker_1";
        o.num_workers = 2;
        {
            // disable (the default): printed once, the hook saves nothing, training goes on.
            std::optional<tdbg::hook> h;
            REQUIRE_NOTHROW(h.emplace(outage_storage(), o));
            REQUIRE(h->write_error());
            CHECK_THAT(*h->write_error(), Catch::Contains("Connection refused"));
            CHECK_NOTHROW(one_job_train(*h, 3, 0.0F));
            CHECK(h->global_step() == 2);
            CHECK_NOTHROW(h->close());
        }
        {
            // rethrow: thrown once, by the next call (the first begin_step), then training goes on.
            o.on_write_error = tdbg::write_error_policy::rethrow;
            std::optional<tdbg::hook> h;
            REQUIRE_NOTHROW(h.emplace(outage_storage(), o));
            CHECK_FALSE(h->write_error());
            CHECK_THROWS_AS(h->begin_step(), tdbg::storage_error);
            REQUIRE(h->write_error());
            CHECK_THAT(*h->write_error(), Catch::Contains("Connection refused"));
            CHECK_NOTHROW(one_job_train(*h, 3, 0.0F));
            CHECK_NOTHROW(h->close());
        }
    }
}

TEST_CASE("one job per run directory: of two jobs resuming one run at once, the second is refused while the first runs") {
    temp_dir root("one_job_resume_race");
    const fs::path run = root.path() / "run";
    {
        tdbg::hook h(one_job_options(run));
        one_job_train(h, 3, 0.0F);
        h.close();
    }
    // A crashed job's run, to be resumed: no end marker, and a claim no running process holds
    // (this process made that hook, and runs on; a run without a claim is one before claims).
    fs::remove(run / "training_job_end.ts");
    fs::remove(run / ".tdbg" / "claims" / "worker_0.json");
    auto o = one_job_options(run);
    o.existing_run = tdbg::existing_run_policy::resume;
    // The first job: a child process that resumes the run, trains a step, and holds on until told.
    int ready[2];
    int go[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(go) == 0);
    std::fflush(nullptr);
    const pid_t first = ::fork();
    REQUIRE(first >= 0);
    if (first == 0) {
        ::close(ready[0]);
        ::close(go[1]);
        int code = 0;
        try {
            tdbg::hook h(o);
            one_job_train(h, 1, 100.0F);
            h.flush();
            char c = 'r';
            (void)::write(ready[1], &c, 1);
            (void)::read(go[0], &c, 1);
            h.close();
        } catch (...) {
            code = 1;
        }
        ::_exit(code);
    }
    ::close(ready[1]); // the child's ends: a child that fails ends the read below
    ::close(go[0]);
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    // The second job, while the first runs: refused, naming the first; it writes nothing.
    const auto before = reliability::published_steps(run);
    CHECK_THROWS_WITH(tdbg::hook(o), Catch::Contains(".tdbg/claims/worker_0.json is claimed by process " +
                                                     std::to_string(first) + " on this host, which is still running"));
    CHECK(reliability::published_steps(run) == before);
    c = 'g';
    REQUIRE(::write(go[1], &c, 1) == 1);
    int status = 0;
    REQUIRE(::waitpid(first, &status, 0) == first);
    CHECK(describe_status(status) == "exit 0");
    ::close(ready[0]);
    ::close(go[1]);
    // The first job ended its run; a job over a crashed first job takes the claim over.
    fs::remove(run / "training_job_end.ts");
    tdbg::hook again(o);
    CHECK(again.global_step() == 3); // after the steps 0-3 the two jobs published
    again.close();
}
