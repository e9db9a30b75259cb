// The hook across threads and fork (hook/detail/call_gate.hpp, docs/reliability.md): one call
// at a time, a second thread's overlapping call refused with usage_error before it touches
// anything, calls handed between threads saving every step, and a forked child's hook inert.

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "support.hpp"
#include "test_storage.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::storage_control;
using tdbg::test::temp_dir;
using tdbg::test::test_storage;

namespace {

hook_options threads_options(const std::string& out_dir = {}) {
    hook_options o;
    o.out_dir = out_dir;
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"all"};
    o.save_all = true;
    return o;
}

// The value step `step` of thread `thread` saves.
tensor_value thread_value(int thread, std::int64_t step) {
    return tensor_value(std::vector<float>{static_cast<float>(thread), static_cast<float>(step)});
}

// Runs `f` when it goes.
class threads_cleanup {
public:
    explicit threads_cleanup(std::function<void()> f) : f_(std::move(f)) {}
    threads_cleanup(const threads_cleanup&) = delete;
    threads_cleanup& operator=(const threads_cleanup&) = delete;
    ~threads_cleanup() { f_(); }

private:
    std::function<void()> f_;
};

// Set in a forked child before it exits: LeakSanitizer then leaves its leak check out. What the
// parent's threads hold (their stacks are not the child's to scan) would read as leaks there.
std::atomic<bool> forked_child_exiting{false};

// A hook that lives as a trainer's global one would: destroyed by exit().
std::unique_ptr<hook>& global_hook() {
    static std::unique_ptr<hook> h;
    return h;
}

} // namespace

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer's hook (sanitizer/lsan_interface.h), asked at exit whether to check for leaks.
extern "C" int __lsan_is_turned_off() { return forked_child_exiting.load() ? 1 : 0; }
#endif

TEST_CASE("hook threads: a call while another call runs on another thread throws usage_error and changes nothing") {
    temp_dir dir("threads_overlap");
    auto control = std::make_shared<storage_control>();
    hook h(test_storage(dir.path(), control), threads_options());
    // The writer cannot write: the step below is queued whole, and a flush waits for its
    // publication, inside the hook, for as long as the gate is shut.
    control->set_gate(false);
    h.begin_step();
    h.save_tensor("w", thread_value(0, 0));
    h.end_step();
    std::thread flusher([&] {
        // Until this thread's flush gets in (the other thread's probes may hold the hook an instant).
        while (true) {
            try {
                h.flush();
                return;
            } catch (const usage_error&) {
            }
        }
    });
    // However the test ends, the gate opens and the flusher is joined.
    const auto let_flush_finish = [&] {
        control->set_gate(true);
        if (flusher.joinable()) {
            flusher.join();
        }
    };
    const threads_cleanup cleanup(let_flush_finish);
    std::string refused;
    const bool seen = tdbg::test::wait_until([&] {
        try {
            (void)h.is_saving_step();
        } catch (const usage_error& e) {
            refused = e.what();
            return true;
        }
        return false;
    });
    REQUIRE(seen);
    CHECK_THAT(refused, Catch::Contains("tdbg::hook::is_saving_step: called while another call of the same hook runs "
                                        "on another thread"));
    // Every kind of call is refused the same way while the flush holds the hook.
    CHECK_THROWS_AS(h.save_tensor("w", thread_value(1, 0)), usage_error);
    CHECK_THROWS_AS(h.begin_step(), usage_error);
    CHECK_THROWS_AS(h.save_scalar("lr", 0.1), usage_error);
    CHECK_THROWS_AS(h.close(), usage_error);
    let_flush_finish();
    h.close();
    // The refused calls changed nothing: one step, holding the first value of w.
    const auto t = create_trial(dir.path().string());
    CHECK(t.steps() == std::vector<std::int64_t>{0});
    CHECK(t.tensor("w").value(0).bytes() == thread_value(0, 0).bytes());
}

TEST_CASE("hook threads: calls handed between 8 threads one at a time save every step of every thread") {
    temp_dir dir("threads_turns");
    constexpr int threads = 8;
    constexpr int steps_each = 25;
    {
        hook h(threads_options((dir.path() / "run").string()));
        std::mutex turn;
        std::vector<std::thread> pool;
        for (int thread = 0; thread < threads; ++thread) {
            pool.emplace_back([&, thread] {
                for (int i = 0; i < steps_each; ++i) {
                    const std::lock_guard<std::mutex> lock(turn);
                    h.begin_step();
                    h.save_tensor("w", thread_value(thread, h.global_step()));
                }
            });
        }
        for (auto& t : pool) {
            t.join();
        }
        h.close();
    }
    const auto t = create_trial((dir.path() / "run").string());
    REQUIRE(t.steps().size() == static_cast<std::size_t>(threads * steps_each));
    for (const std::int64_t step : t.steps()) {
        const tensor_value v = t.tensor("w").value(step);
        REQUIRE(v.size() == 2);
        CHECK(v.data_as<float>()[1] == static_cast<float>(step));
    }
}

TEST_CASE("hook threads: 8 threads calling at once get usage_error or success, never a crash or a corrupt run") {
    temp_dir dir("threads_race");
    constexpr int threads = 8;
    std::atomic<int> refused{0};
    std::atomic<int> other_errors{0};
    {
        hook h(threads_options((dir.path() / "run").string()));
        std::vector<std::thread> pool;
        for (int thread = 0; thread < threads; ++thread) {
            pool.emplace_back([&, thread] {
                for (int i = 0; i < 200; ++i) {
                    try {
                        h.begin_step();
                        const std::int64_t step = h.global_step();
                        h.save_tensor("w" + std::to_string(thread), thread_value(thread, step));
                    } catch (const usage_error&) {
                        ++refused;
                    } catch (...) {
                        ++other_errors;
                    }
                }
            });
        }
        for (auto& t : pool) {
            t.join();
        }
        h.close();
    }
    CHECK(other_errors.load() == 0);
    // Whatever was saved reads back exactly: the value of the thread that saved it.
    const auto t = create_trial((dir.path() / "run").string());
    CHECK_FALSE(t.steps().empty());
    for (int thread = 0; thread < threads; ++thread) {
        const std::string name = "w" + std::to_string(thread);
        if (!t.has_tensor(name)) {
            continue;
        }
        for (const std::int64_t step : t.tensor(name).steps()) {
            const tensor_value v = t.tensor(name).value(step);
            REQUIRE(v.size() == 2);
            CHECK(v.data_as<float>()[0] == static_cast<float>(thread));
        }
    }
}

TEST_CASE("hook fork: a forked child's hook saves nothing, writes nothing into the parent's run, and exits cleanly") {
#if defined(__SANITIZE_THREAD__)
    TDBG_SKIP("ThreadSanitizer ends a child forked from a process with threads (its die_after_fork)");
#endif
    temp_dir dir("fork_child");
    const auto run = dir.path() / "run";
    global_hook() = std::make_unique<hook>(threads_options(run.string()));
    hook& h = *global_hook();
    h.begin_step();
    h.save_tensor("w", thread_value(0, 0));
    h.flush();
    std::fflush(nullptr); // nothing buffered twice
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // The child trains on with the hook it inherited, closes it, and exits: exit() destroys the
        // global hook. Any exception or crash shows in the status the parent checks.
        try {
            h.begin_step();
            h.save_tensor("w", thread_value(1, 1));
            h.save_scalar("lr", 0.5);
            h.flush();
            h.close();
        } catch (...) {
            ::_exit(3);
        }
        forked_child_exiting = true;
        std::exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The parent goes on; its run holds its own steps only.
    h.begin_step();
    h.save_tensor("w", thread_value(0, 1));
    global_hook().reset();
    const auto t = create_trial(run.string());
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1});
    CHECK(t.tensor("w").value(1).bytes() == thread_value(0, 1).bytes());
    CHECK_FALSE(t.has_tensor("scalar/lr"));
}
