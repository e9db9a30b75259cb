// smdebug's state store (a resumed job goes on with its step numbers) and the
// SageMaker metrics file (scalars saved with sm_metric, and losses).

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <xtensor/xarray.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::read_file;
using tdbg::test::read_indexes;
using tdbg::test::read_tensor;
using tdbg::test::temp_dir;
using tdbg::test::write_file;

namespace {

// Sets (or unsets, with nullopt) an environment variable for a scope, then restores it.
class resume_test_env {
public:
    resume_test_env(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str()); old != nullptr) {
            old_ = old;
        }
        if (value) {
            ::setenv(name_.c_str(), value->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    resume_test_env(const resume_test_env&) = delete;
    resume_test_env& operator=(const resume_test_env&) = delete;
    ~resume_test_env() {
        if (old_) {
            ::setenv(name_.c_str(), old_->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }

private:
    std::string name_;
    std::optional<std::string> old_;
};

hook_options resume_test_options(const temp_dir& dir) {
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    return o;
}

// One step of `m` saving tensor "w" (in "default") with value `step`.
void resume_test_step(hook& h, mode m) {
    h.set_mode(m);
    h.begin_step();
    h.save_tensor("w", xt::xarray<float>{static_cast<float>(h.global_step())}, {"default"});
}

// A checkpoint directory under `dir`, and the checkpoint configuration (LocalPath) naming it.
std::pair<std::filesystem::path, std::filesystem::path> checkpoint_setup(const temp_dir& dir) {
    const auto ckpt = dir.path() / "checkpoints";
    std::filesystem::create_directories(ckpt);
    const auto config = dir.path() / "checkpointconfig.json";
    write_file(config, R"({"LocalPath": ")" + ckpt.string() + R"("})");
    return {ckpt, config};
}

std::vector<std::string> metric_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

} // namespace

TEST_CASE("a resumed hook continues the step numbers of smdebug's state store") {
    temp_dir dir("hook_resume");
    const auto [ckpt, config] = checkpoint_setup(dir);
    const resume_test_env config_env("CHECKPOINT_CONFIG_FILE_PATH", config.string());
    const resume_test_env job("TRAINING_JOB_NAME", std::string("resume-test")); // no end marker, as in SageMaker
    const auto states = ckpt / "metadata.json";

    {
        hook first(resume_test_options(dir));
        resume_test_step(first, mode::train); // global 0..2, train 0..2
        resume_test_step(first, mode::train);
        resume_test_step(first, mode::train);
        resume_test_step(first, mode::eval); // global 3..4, eval 0..1
        resume_test_step(first, mode::eval);
        CHECK_FALSE(std::filesystem::exists(states)); // no checkpoint yet: no state
        write_file(ckpt / "model.pt", "abc");         // the trainer saves a checkpoint after step 4
        resume_test_step(first, mode::train);                 // global 5, train 3: the state of step 4 is written
        CHECK(read_file(states) == R"([{"training-run": 0, "latest-global-step-saved": 4, )"
                                   R"("latest-global-step-seen": 4, "latest-mode-step": )"
                                   R"({"GLOBAL": 4, "TRAIN": 2, "EVAL": 1}}])");
        resume_test_step(first, mode::train); // global 6: the checkpoint did not change, no state
    } // the job "crashes" after step 6

    hook second(resume_test_options(dir));
    CHECK(second.global_step() == 4);
    CHECK(second.mode_step(mode::train) == 2);
    CHECK(second.mode_step(mode::eval) == 1);
    CHECK(second.mode_step(mode::predict) == 4); // a mode met later starts at the last step seen, as in smdebug
    resume_test_step(second, mode::train);
    CHECK(second.global_step() == 5);
    CHECK(second.mode_step() == 3);
    resume_test_step(second, mode::train); // global 6, train 4
    write_file(ckpt / "model.pt", "abcdef");
    resume_test_step(second, mode::train); // global 7, train 5: the state of step 6
    CHECK(read_file(states) ==
          R"([{"training-run": 0, "latest-global-step-saved": 4, "latest-global-step-seen": 4, )"
          R"("latest-mode-step": {"GLOBAL": 4, "TRAIN": 2, "EVAL": 1}}, )"
          R"({"training-run": 1, "latest-global-step-saved": 6, "latest-global-step-seen": 6, )"
          R"("latest-mode-step": {"GLOBAL": 6, "TRAIN": 4, "EVAL": 1}}])");
    second.close();

    auto trial = create_trial((dir.path() / "run").string());
    CHECK(trial.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(trial.steps(mode::train) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(trial.steps(mode::eval) == std::vector<std::int64_t>{0, 1});
    const auto indexes = read_indexes(dir.path() / "run");
    const auto& index7 = indexes.at({7, "worker_0"});
    const auto event = read_tensor(dir.path() / "run", index7, "w");
    CHECK(event.step == 7);
    CHECK(event.mode_step == 5);
}

TEST_CASE("the state store reads states sorted by the last step seen and keeps them") {
    temp_dir dir("hook_resume_sorted");
    const auto [ckpt, config] = checkpoint_setup(dir);
    // As smdebug would leave it: a later state first, and a saved step of null.
    write_file(ckpt / "metadata.json",
               R"([{"training-run": 1, "latest-global-step-saved": 9, "latest-global-step-seen": 9, )"
               R"("latest-mode-step": {"GLOBAL": 9, "TRAIN": 9}}, )"
               R"({"training-run": 0, "latest-global-step-saved": null, "latest-global-step-seen": 3, )"
               R"("latest-mode-step": {"GLOBAL": 3, "TRAIN": 3}}])");
    auto options = resume_test_options(dir);
    options.checkpoint_config_file = config.string(); // the option instead of the variable
    const resume_test_env config_env("CHECKPOINT_CONFIG_FILE_PATH", std::nullopt);
    hook h(options);
    CHECK(h.global_step() == 9);
    CHECK(h.mode_step(mode::train) == 9);
    h.set_mode(mode::eval); // new in this job: starts after the last step seen
    h.begin_step();
    CHECK(h.global_step() == 10);
    CHECK(h.mode_step() == 10);
    write_file(ckpt / "ckpt-10", "x");
    h.begin_step(); // no tensor saved since the resume: the saved step stays 9
    CHECK(read_file(ckpt / "metadata.json") ==
          R"([{"training-run": 0, "latest-global-step-saved": null, "latest-global-step-seen": 3, )"
          R"("latest-mode-step": {"GLOBAL": 3, "TRAIN": 3}}, )"
          R"({"training-run": 1, "latest-global-step-saved": 9, "latest-global-step-seen": 9, )"
          R"("latest-mode-step": {"GLOBAL": 9, "TRAIN": 9}}, )"
          R"({"training-run": 2, "latest-global-step-saved": 9, "latest-global-step-seen": 10, )"
          R"("latest-mode-step": {"GLOBAL": 10, "TRAIN": 9, "EVAL": 10}}])");
}

TEST_CASE("the state store keeps states with the same last step seen in the order of the file") {
    temp_dir dir("hook_resume_ties");
    const auto [ckpt, config] = checkpoint_setup(dir);
    const std::string a = R"({"training-run": 1, "latest-global-step-saved": 8, "latest-global-step-seen": 9, )"
                          R"("latest-mode-step": {"GLOBAL": 9, "TRAIN": 8}})";
    const std::string b = R"({"training-run": 0, "latest-global-step-saved": 3, "latest-global-step-seen": 3, )"
                          R"("latest-mode-step": {"GLOBAL": 3, "TRAIN": 3}})";
    const std::string c = R"({"training-run": 2, "latest-global-step-saved": 9, "latest-global-step-seen": 9, )"
                          R"("latest-mode-step": {"GLOBAL": 9, "TRAIN": 9}})";
    write_file(ckpt / "metadata.json", "[" + a + ", " + b + ", " + c + "]");
    auto options = resume_test_options(dir);
    options.checkpoint_config_file = config.string();
    const resume_test_env config_env("CHECKPOINT_CONFIG_FILE_PATH", std::nullopt);
    hook h(options);
    CHECK(h.mode_step(mode::train) == 9); // the last state is c, the later of the two at step 9
    h.begin_step();
    write_file(ckpt / "ckpt-10", "x");
    h.begin_step();
    const std::string written = read_file(ckpt / "metadata.json");
    CHECK(written.rfind("[" + b + ", " + a + ", " + c + ", {", 0) == 0);
}

TEST_CASE("a hook without a checkpoint configuration starts at step -1 and writes no state") {
    temp_dir dir("hook_resume_none");
    const resume_test_env config_env("CHECKPOINT_CONFIG_FILE_PATH", (dir.path() / "missing.json").string());
    hook h(resume_test_options(dir));
    CHECK(h.global_step() == -1);
    h.begin_step();
    CHECK(h.global_step() == 0);
}

TEST_CASE("malformed state store files are errors that name the file") {
    temp_dir dir("hook_resume_bad");
    const auto ckpt = dir.path() / "checkpoints";
    std::filesystem::create_directories(ckpt);
    const auto config = dir.path() / "checkpointconfig.json";
    auto options = resume_test_options(dir);
    options.checkpoint_config_file = config.string();

    SECTION("a configuration that is not JSON") {
        write_file(config, "{LocalPath");
        CHECK_THROWS_WITH(hook(options), Catch::Contains(config.string()));
        CHECK_THROWS_AS(hook(options), config_error);
    }
    SECTION("a metadata.json that is not JSON") {
        write_file(config, R"({"LocalPath": ")" + ckpt.string() + R"("})");
        write_file(ckpt / "metadata.json", "[{");
        CHECK_THROWS_WITH(hook(options), Catch::Contains((ckpt / "metadata.json").string()));
    }
    SECTION("a state without its last step seen") {
        write_file(config, R"({"LocalPath": ")" + ckpt.string() + R"("})");
        write_file(ckpt / "metadata.json", R"([{"training-run": 0, "latest-global-step-saved": 1, )"
                                           R"("latest-mode-step": {}}])");
        CHECK_THROWS_WITH(hook(options), Catch::Contains("metadata.json") && Catch::Contains("latest-global-step-seen"));
    }
    SECTION("an unknown mode") {
        write_file(config, R"({"LocalPath": ")" + ckpt.string() + R"("})");
        write_file(ckpt / "metadata.json", R"([{"training-run": 0, "latest-global-step-saved": 1, )"
                                           R"("latest-global-step-seen": 1, "latest-mode-step": {"TRAINING": 1}}])");
        CHECK_THROWS_WITH(hook(options), Catch::Contains("metadata.json") && Catch::Contains("TRAINING"));
    }
}

TEST_CASE("sm_metric scalars and losses go to the SageMaker metrics file as smdebug writes them") {
    temp_dir dir("hook_metrics");
    const auto metrics = dir.path() / "metrics";
    std::filesystem::create_directories(metrics);
    const resume_test_env metrics_env("SAGEMAKER_METRICS_DIRECTORY", metrics.string());
    {
        hook h(resume_test_options(dir));
        h.set_mode(mode::train);
        h.begin_step();
        h.save_scalar("acc", 0.5, true, 1700000000.25);
        h.save_scalar("lr", 0.1); // not a metric
        h.save_tensor("CrossEntropyLoss_output_0", xt::xarray<double>{1.0, 2.0}, {"losses"});
        h.set_mode(mode::eval);
        h.begin_step();
        h.save_scalar("acc", 0.75, true, 1700000001.5);
        h.close();
    }
    const auto lines = metric_lines(read_file(metrics / (std::to_string(::getpid()) + ".json")));
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == R"({"MetricName": "scalar/acc_TRAIN", "Value": 0.5, "Timestamp": 1700000000.25, "IterationNumber": 0})");
    const auto loss = format::parse_json(lines[1]);
    CHECK(loss.members().size() == 4);
    CHECK(loss.at("MetricName").as_string() == "CrossEntropyLoss_output_0_TRAIN");
    CHECK(loss.at("Value").as_double() == 1.5);
    CHECK(loss.at("Timestamp").as_double() > 1600000000.0); // time.time() when it was saved
    CHECK(loss.at("IterationNumber").as_int64() == 0);
    CHECK(lines[1].rfind(R"({"MetricName": "CrossEntropyLoss_output_0_TRAIN", "Value": 1.5, "Timestamp": )", 0) == 0);
    CHECK(lines[2] == R"({"MetricName": "scalar/acc_EVAL", "Value": 0.75, "Timestamp": 1700000001.5, "IterationNumber": 0})");

    // The timestamp is the scalar event's wall time, as in smdebug.
    const auto indexes = read_indexes(dir.path() / "run");
    CHECK(read_tensor(dir.path() / "run", indexes.at({0, "worker_0"}), "scalar/acc").wall_time == 1700000000.25);
    CHECK(read_tensor(dir.path() / "run", indexes.at({1, "worker_0"}), "scalar/acc").wall_time == 1700000001.5);
}

TEST_CASE("no metrics file without SAGEMAKER_METRICS_DIRECTORY") {
    temp_dir dir("hook_metrics_none");
    const resume_test_env metrics_env("SAGEMAKER_METRICS_DIRECTORY", std::nullopt);
    auto options = resume_test_options(dir);
    hook h(options);
    h.begin_step();
    h.save_scalar("acc", 0.5, true);
    h.close();
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        files += entry.path().filename() == "run" ? 0 : 1;
    }
    CHECK(files == 0);
}
