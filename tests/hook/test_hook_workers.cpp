// Several worker processes (fork) writing one run, each finding its rank in
// the environment as torchrun sets it.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::temp_dir;

namespace {

constexpr int workers = 3;
constexpr int steps = 4;

// Runs one worker: builds its hook, says so, waits for the go (so that every
// hook exists before any writes the end marker), trains, closes.
[[noreturn]] void worker_main(int rank, const std::string& out, workers_to_save which, int ready_fd, int go_fd) {
    int code = 0;
    try {
        ::setenv("RANK", std::to_string(rank).c_str(), 1);
        ::setenv("WORLD_SIZE", std::to_string(workers).c_str(), 1);
        hook_options o;
        o.out_dir = out;
        o.include_workers = which;
        o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
        hook h(o);
        char c = 'r';
        if (::write(ready_fd, &c, 1) != 1 || ::read(go_fd, &c, 1) != 1) {
            ::_exit(3);
        }
        h.set_mode(mode::train);
        for (int s = 0; s < steps; ++s) {
            h.begin_step();
            h.save_tensor("MSELoss_output_0", tensor_value::scalar(static_cast<float>(100 * rank + s)));
        }
        h.close();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "worker %d: %s\n", rank, e.what());
        code = 2;
    }
    ::_exit(code);
}

void run_workers(const std::string& out, workers_to_save which) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    std::vector<int> go_fds;
    std::vector<pid_t> pids;
    for (int rank = 0; rank < workers; ++rank) {
        int go[2];
        REQUIRE(::pipe(go) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            worker_main(rank, out, which, ready[1], go[0]);
        }
        ::close(go[0]);
        go_fds.push_back(go[1]);
        pids.push_back(pid);
    }
    for (int i = 0; i < workers; ++i) {
        char c = 0;
        REQUIRE(::read(ready[0], &c, 1) == 1);
    }
    for (int fd : go_fds) {
        const char c = 'g';
        REQUIRE(::write(fd, &c, 1) == 1);
        ::close(fd);
    }
    for (pid_t pid : pids) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    ::close(ready[0]);
    ::close(ready[1]);
}

} // namespace

TEST_CASE("workers: every process writes its own files with include_workers=all") {
    temp_dir dir("hook_workers_all");
    const auto out = dir.path() / "run";
    run_workers(out.string(), workers_to_save::all);
    const auto indexes = read_indexes(out);
    REQUIRE(indexes.size() == static_cast<std::size_t>(workers * steps));
    for (int rank = 0; rank < workers; ++rank) {
        const std::string name = "worker_" + std::to_string(rank);
        for (int s = 0; s < steps; ++s) {
            const auto& index = indexes.at({s, name});
            CHECK(index.event_file_name == format::event_file_key(s, name));
            const auto ev = tdbg::test::read_tensor(out, index, "MSELoss_output_0");
            CHECK(ev.value.data_as<float>()[0] == static_cast<float>(100 * rank + s));
        }
        const auto file = nlohmann::json::parse(tdbg::test::read_file(out / format::collections_file_key(name)));
        CHECK(file["_meta"]["num_workers"] == workers);
    }
    CHECK(std::filesystem::exists(out / "training_job_end.ts"));
}

TEST_CASE("workers: include_workers=one saves worker_0 only, as smdebug") {
    temp_dir dir("hook_workers_one");
    const auto out = dir.path() / "run";
    run_workers(out.string(), workers_to_save::one);
    const auto indexes = read_indexes(out);
    REQUIRE(indexes.size() == static_cast<std::size_t>(steps));
    for (const auto& [key, index] : indexes) {
        CHECK(key.second == "worker_0");
    }
    const auto file = nlohmann::json::parse(tdbg::test::read_file(out / format::collections_file_key("worker_0")));
    CHECK(file["_meta"]["num_workers"] == 1); // smdebug records a single worker then
    CHECK_FALSE(std::filesystem::exists(out / format::collections_file_key("worker_1")));
    CHECK(std::filesystem::exists(out / "training_job_end.ts"));
}
