// The files the hook opens outside its run (docs/reliability.md, "The hook's own files"): a
// hook or TensorBoard configuration, the checkpoint configuration and its metadata.json, the
// SageMaker metrics file. Whatever a path names there, the training loop never blocks on it:
// a FIFO, a directory or an oversized file is refused with a message that says what it is,
// before a byte is read; a training state whose steps the run's files cannot name is refused
// when the hook starts.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "support.hpp"
#include "tdbg/core/config_file.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/json_config.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::temp_dir;
using tdbg::test::write_file;
namespace fs = std::filesystem;

namespace {

hook_options files_test_options(const temp_dir& dir) {
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.sagemaker_metrics_dir = ""; // none, unless a test names one
    return o;
}

// A FIFO at `path` that nobody writes: reading it would block for good.
void make_fifo(const fs::path& path) { REQUIRE(::mkfifo(path.c_str(), 0600) == 0); }

// A checkpoint configuration naming `checkpoints`, and that directory.
fs::path checkpoint_config(const temp_dir& dir) {
    const fs::path ckpt = dir.path() / "checkpoints";
    fs::create_directories(ckpt);
    const fs::path config = dir.path() / "checkpointconfig.json";
    write_file(config, R"({"LocalPath": ")" + ckpt.string() + R"("})");
    return config;
}

} // namespace

TEST_CASE("config files: a FIFO, a directory or a file over the limit is refused before it is read, naming what it is") {
    temp_dir dir("config_file_kinds");
    const fs::path fifo = dir.path() / "fifo.json";
    make_fifo(fifo);
    CHECK_THROWS_AS(read_config_file(fifo, "hook configuration"), config_error);
    CHECK_THROWS_WITH(read_config_file(fifo, "hook configuration"),
                      Catch::Contains("the hook configuration " + fifo.string() + " is a FIFO, not a regular file"));
    CHECK_THROWS_WITH(read_config_file(dir.path(), "rule configuration"),
                      Catch::Contains(dir.path().string() + " is a directory, not a regular file"));
    CHECK_THROWS_WITH(read_config_file(dir.path() / "absent.json", "hook configuration"),
                      Catch::Contains("cannot open the hook configuration " + (dir.path() / "absent.json").string() +
                                      ": No such file or directory"));
    // A sparse file of 512 MiB: refused from its size, never read into memory.
    const fs::path huge = dir.path() / "huge.json";
    write_file(huge, "{}");
    fs::resize_file(huge, std::uintmax_t{512} << 20U);
    CHECK_THROWS_WITH(read_config_file(huge, "TensorBoard configuration"),
                      Catch::Contains("holds 536870912 bytes, more than the 16777216 a configuration may hold"));
    // A regular file within the limit reads whole.
    write_file(dir.path() / "ok.json", R"({"LocalPath": "x"})");
    CHECK(read_config_file(dir.path() / "ok.json", "hook configuration") == R"({"LocalPath": "x"})");
    CHECK(read_config_file(dir.path() / "ok.json", "hook configuration", 18).size() == 18);
    CHECK_THROWS_AS(read_config_file(dir.path() / "ok.json", "hook configuration", 17), config_error);
}

TEST_CASE("config files: a hook configuration that is a FIFO is refused as such, never read") {
    temp_dir dir("config_fifo_hook");
    const fs::path fifo = dir.path() / "hookconfig.json";
    make_fifo(fifo);
    CHECK_THROWS_WITH(load_hook_config(fifo.string()), Catch::Contains(fifo.string() + " is a FIFO, not a regular file"));
}

TEST_CASE("config files: a checkpoint configuration or a metadata.json that is a FIFO stops the hook's start, naming it") {
    temp_dir dir("config_fifo_checkpoint");
    auto options = files_test_options(dir);
    SECTION("the checkpoint configuration") {
        const fs::path fifo = dir.path() / "checkpointconfig.json";
        make_fifo(fifo);
        options.checkpoint_config_file = fifo.string();
        CHECK_THROWS_AS(hook(options), config_error);
        CHECK_THROWS_WITH(hook(options), Catch::Contains("the checkpoint configuration " + fifo.string() +
                                                          " is a FIFO, not a regular file"));
    }
    SECTION("its metadata.json") {
        options.checkpoint_config_file = checkpoint_config(dir).string();
        const fs::path fifo = dir.path() / "checkpoints" / "metadata.json";
        make_fifo(fifo);
        CHECK_THROWS_WITH(hook(options), Catch::Contains("the training state file " + fifo.string() +
                                                          " is a FIFO, not a regular file"));
    }
    SECTION("a metadata.json over the limit") {
        options.checkpoint_config_file = checkpoint_config(dir).string();
        const fs::path big = dir.path() / "checkpoints" / "metadata.json";
        write_file(big, "[]");
        fs::resize_file(big, std::uintmax_t{64} << 20U);
        CHECK_THROWS_WITH(hook(options), Catch::Contains("holds 67108864 bytes, more than the 16777216"));
    }
}

TEST_CASE("config files: a training state whose steps the run's files cannot name is refused when the hook starts") {
    temp_dir dir("config_state_edges");
    auto options = files_test_options(dir);
    options.checkpoint_config_file = checkpoint_config(dir).string();
    const fs::path states = dir.path() / "checkpoints" / "metadata.json";
    const auto state = [](const std::string& seen, const std::string& train) {
        return R"([{"training-run": 0, "latest-global-step-saved": null, "latest-global-step-seen": )" + seen +
               R"(, "latest-mode-step": {"TRAIN": )" + train + "}}]";
    };
    SECTION("a step below -1") {
        write_file(states, state("-5", "-1"));
        CHECK_THROWS_WITH(hook(options), Catch::Contains(states.string()) &&
                                             Catch::Contains("\"latest-global-step-seen\" is -5, outside -1 to 999999999998"));
    }
    SECTION("a step with more than 12 digits") {
        write_file(states, state("999999999999999997", "3"));
        CHECK_THROWS_WITH(hook(options), Catch::Contains("\"latest-global-step-seen\" is 999999999999999997"));
    }
    SECTION("a step where the next would overflow") {
        write_file(states, state("9223372036854775806", "3"));
        CHECK_THROWS_AS(hook(options), config_error);
    }
    SECTION("a mode step out of range") {
        write_file(states, state("7", "1000000000000"));
        CHECK_THROWS_WITH(hook(options), Catch::Contains("\"latest-mode-step\" \"TRAIN\" is 1000000000000"));
    }
    SECTION("the largest step the files can name next is accepted") {
        write_file(states, state("999999999998", "5"));
        hook h(options);
        CHECK(h.global_step() == 999999999998);
        h.begin_step();
        CHECK(h.global_step() == 999999999999);
    }
}

TEST_CASE("config files: a SageMaker metrics file that is a FIFO never blocks training, and saving goes on without it") {
    temp_dir dir("config_fifo_metrics");
    const fs::path metrics = dir.path() / "metrics";
    fs::create_directories(metrics);
    const fs::path fifo = metrics / (std::to_string(::getpid()) + ".json");
    make_fifo(fifo);
    auto options = files_test_options(dir);
    options.sagemaker_metrics_dir = metrics.string();
    std::vector<std::string> logged;
    options.log = [&](std::string_view line) { logged.emplace_back(line); };
    {
        hook h(options);
        for (int step = 0; step < 3; ++step) {
            h.begin_step();
            h.save_scalar("acc", 0.5, true);
        }
        h.close();
    }
    // Said once, and the run has every step.
    std::vector<std::string> said;
    for (const auto& line : logged) {
        if (line.find("SageMaker metrics") != std::string::npos) {
            said.push_back(line);
        }
    }
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0], Catch::Contains("no more SageMaker metrics: cannot open the SageMaker metrics file " +
                                          fifo.string()) &&
                            Catch::Contains("not a regular file: refused"));
    CHECK(create_trial((dir.path() / "run").string()).steps() == std::vector<std::int64_t>{0, 1, 2});
    struct stat st {};
    REQUIRE(::stat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode)); // left as it was
}

TEST_CASE("worker names: a name the run's readers could not give back is refused at construction, naming the rule") {
    temp_dir dir("worker_names");
    auto options = files_test_options(dir);
    options.worker = "a__b";
    CHECK_THROWS_AS(hook(options), config_error);
    CHECK_THROWS_WITH(hook(options), Catch::Contains("worker name 'a__b' (options): contains '__'"));
    options.worker = std::string("\xff\xfe");
    CHECK_THROWS_WITH(hook(options), Catch::Contains("not valid UTF-8 at byte 0"));
    options.worker = "a/b";
    CHECK_THROWS_WITH(hook(options), Catch::Contains("contains '/'"));
    // Nothing was claimed or written by the refused hooks.
    CHECK_FALSE(fs::exists(dir.path() / "run" / "collections"));
}

TEST_CASE("worker names: the only worker of a job, not named worker_0, is told that it saves nothing") {
    temp_dir dir("worker_saves_nothing");
    auto options = files_test_options(dir);
    options.worker = "trainer";
    options.num_workers = 1;
    std::vector<std::string> logged;
    options.log = [&](std::string_view line) { logged.emplace_back(line); };
    {
        hook h(options);
        CHECK_FALSE(h.is_writing());
    }
    std::size_t told = 0;
    for (const auto& line : logged) {
        if (line.find("worker 'trainer' (options) saves nothing: with include_workers \"one\" (the default) only "
                      "worker_0 saves") != std::string::npos) {
            ++told;
        }
    }
    CHECK(told == 1);
    // With include_workers all, it saves, and says nothing of it (a run of its own: the first
    // one ended when its hook closed).
    logged.clear();
    options.include_workers = workers_to_save::all;
    options.out_dir = (dir.path() / "run2").string();
    {
        hook h(options);
        CHECK(h.is_writing());
        h.begin_step();
        h.save_scalar("lr", 0.1);
    }
    for (const auto& line : logged) {
        CHECK(line.find("saves nothing") == std::string::npos);
    }
    CHECK(create_trial((dir.path() / "run2").string()).workers() == std::vector<std::string>{"trainer"});
}
