// A run tells the truth about who wrote it (docs/reliability.md, "Who wrote a run"): two jobs
// started at once on one new directory never mix (one is refused when its hook is built, naming
// the other job), a follower of a live run sees a job started again over it and says so instead
// of reading the two jobs as one run, and a run removed under a follower ends its wait.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "run_check.hpp"
#include "support.hpp"
#include "tdbg/format/job_claim.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/rules/watch.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"
#include "training_values.hpp"

using tdbg::test::child_process;
using tdbg::test::command_result;
using tdbg::test::describe_status;
using tdbg::test::temp_dir;
using tdbg::test::wait_until;
namespace reliability = tdbg::test::reliability;
namespace fs = std::filesystem;

namespace {

// The claim `run` holds for worker_0, parsed.
tdbg::format::job_claim claim_of(const fs::path& run) {
    const auto claim = tdbg::format::parse_job_claim(tdbg::test::read_file(run / tdbg::format::claim_key("worker_0")));
    REQUIRE(claim);
    return *claim;
}

// A job over `run` that starts it again (existing_run_policy::overwrite), saving `steps` steps
// of zeros under the reliability trainer's first tensor name.
void overwrite_with_zeros(const fs::path& run, int steps) {
    tdbg::hook_options o;
    o.out_dir = run.string();
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.existing_run = tdbg::existing_run_policy::overwrite;
    tdbg::hook h(o);
    for (int step = 0; step < steps; ++step) {
        h.begin_step();
        h.save_tensor(reliability::tensor_name(0), std::vector<float>(reliability::small_size, 0.0F).data(),
                      {reliability::small_size});
    }
    h.close();
}

// The steps a --progress file names.
std::set<std::int64_t> progress_steps(const fs::path& progress) {
    std::set<std::int64_t> steps;
    std::error_code ec;
    if (!fs::exists(progress, ec)) {
        return steps;
    }
    const std::string text = tdbg::test::read_file(progress);
    for (std::size_t at = text.find("\"step\": "); at != std::string::npos; at = text.find("\"step\": ", at + 1)) {
        steps.insert(std::stoll(text.substr(at + 8)));
    }
    return steps;
}

// A first job: a trainer child writing `run` that holds before its middle step (8 of 16) until
// `hold` exists, once it has published steps 0-6 (step 7 is open).
class first_job {
public:
    first_job(const fs::path& run, const fs::path& hold)
        : child_(TDBG_RELIABILITY_TRAINER, {run.string(), "16", "0", hold.string()}) {
        int status = 0;
        REQUIRE(wait_until([&] { return reliability::published_steps(run).size() >= 7 || !child_.running(status); }));
        REQUIRE(child_.running(status));
    }
    // Killed as a crash would: no end marker.
    void crash() {
        child_.kill();
        (void)child_.wait();
    }

private:
    child_process child_;
};

// `tdbg rules RUN --rule AllZero ... --follow` on its own thread, its progress in `progress`.
std::future<command_result> follow_all_zero(const fs::path& run, const fs::path& progress,
                                            std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"rules",   run.string(), "--rule", "AllZero", "--param",
                                  "tensor_regex=^" + reliability::tensor_name(0) + "$", "--follow", "--poll",
                                  "0.01",    "--progress",  progress.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::async(std::launch::async, [args] { return tdbg::test::run_program(TDBG_CLI_PATH, args); });
}

} // namespace

TEST_CASE("run truth: two jobs started at a barrier on one new directory, 50 times: one is refused when built, "
          "naming the other, and the run is the winner's alone") {
    temp_dir root("job_identity_race");
    for (int round = 0; round < 50; ++round) {
        INFO("round " << round);
        const fs::path run = root.path() / ("run" + std::to_string(round));
        const fs::path start = root.path() / ("start" + std::to_string(round));
        // Different lengths, so that the run says whose it is; both build their hooks once `start` exists.
        child_process a(TDBG_RELIABILITY_TRAINER, {run.string(), "6", "0", "", start.string()});
        child_process b(TDBG_RELIABILITY_TRAINER, {run.string(), "9", "0", "", start.string()});
        tdbg::test::write_file(start, "");
        const std::string status_a = describe_status(a.wait());
        const std::string status_b = describe_status(b.wait());
        INFO(status_a << ", " << status_b);
        REQUIRE((status_a == "exit 0") != (status_b == "exit 0"));
        REQUIRE((status_a == "exit 1" || status_b == "exit 1"));
        const std::size_t winner_steps = status_a == "exit 0" ? 6 : 9;
        CHECK(reliability::check_published_run(run) == winner_steps);
        const auto t = tdbg::create_trial(run.string());
        CHECK(t.steps().size() == winner_steps);
        CHECK(t.loaded_all_steps());
        // The claim is the winner's: an id of 32 hex digits, this host, the step it began at.
        const tdbg::format::job_claim claim = claim_of(run);
        CHECK(claim.id.size() == 32);
        CHECK(claim.first_step == std::int64_t{0});
    }
}

TEST_CASE("run truth: the refusal of a second job names the job that holds the run, by id, host, pid and start, "
          "and tdbg ls shows it") {
    temp_dir root("job_identity_refusal");
    const fs::path run = root.path() / "run";
    tdbg::hook_options o;
    o.out_dir = run.string();
    o.save_all = true;
    tdbg::hook first(o);
    const tdbg::format::job_claim claim = claim_of(run);
    const std::string refusal = tdbg::test::error_of([&] { tdbg::hook second(o); });
    CHECK_THAT(refusal, Catch::Contains("another job's run of worker_0"));
    CHECK_THAT(refusal, Catch::Contains("job " + claim.id));
    CHECK_THAT(refusal, Catch::Contains("pid " + std::to_string(claim.pid)));
    CHECK_THAT(refusal, Catch::Contains("host " + claim.host));
    CHECK_THAT(refusal, Catch::Contains("started " + tdbg::format::utc_time_text(claim.time)));
    // Nothing of the second hook's was written: the claim is still the first job's.
    CHECK(tdbg::format::to_json(claim_of(run)) == tdbg::format::to_json(claim));
    first.close();
    // tdbg ls says who wrote the run.
    const command_result ls = tdbg::test::run_program(TDBG_CLI_PATH, {"ls", run.string()});
    INFO(ls.out << ls.err);
    CHECK(ls.status == 0);
    CHECK_THAT(ls.out, Catch::Contains("written by   worker_0: job " + claim.id + " (host " + claim.host + ", pid " +
                                       std::to_string(claim.pid) + ", started " +
                                       tdbg::format::utc_time_text(claim.time) + "), from step 0"));
}

TEST_CASE("run truth: a trial of a live run started again by another job throws run_changed naming the new job and "
          "its first step, before reading anything of it") {
    temp_dir root("job_identity_trial");
    const fs::path run = root.path() / "run";
    const fs::path hold = root.path() / "hold";
    first_job first(run, hold);
    const std::string old_id = claim_of(run).id;
    const auto t = tdbg::create_trial(run.string());
    REQUIRE(t.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
    first.crash();

    overwrite_with_zeros(run, 10);
    const tdbg::format::job_claim now = claim_of(run);
    REQUIRE(now.id != old_id);
    std::optional<tdbg::run_changed> thrown;
    try {
        t.wait_for_steps({9}, tdbg::mode::global, std::chrono::minutes(5));
    } catch (const tdbg::run_changed& e) {
        thrown = e;
    }
    REQUIRE(thrown);
    CHECK(thrown->what_changed() == tdbg::run_changed::kind::restarted);
    CHECK(thrown->worker() == "worker_0");
    CHECK(thrown->first_step() == std::int64_t{0});
    CHECK_THAT(thrown->what(), Catch::Contains("was started again by another job") &&
                                   Catch::Contains("job " + now.id) && Catch::Contains("began at step 0") &&
                                   Catch::Contains("job " + old_id));
    REQUIRE(t.run_change());
    CHECK(std::string(t.run_change()->what()) == thrown->what());
    // Every later refresh says the same, and nothing of the new job was read: the steps are the
    // old job's, and no value is read from event files that are now the new job's.
    CHECK_THROWS_AS(t.refresh(), tdbg::run_changed);
    {
        const auto frozen = t.no_refresh();
        CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
        CHECK_THROWS_AS(t.tensor(reliability::tensor_name(0)).value(3), tdbg::run_changed);
    }
}

TEST_CASE("run truth: tdbg rules --follow across a restart stops with exit 2 naming the new job, or with "
          "--on-restart follow evaluates the new job from its first step") {
    for (const bool follow_new_job : {false, true}) {
        INFO((follow_new_job ? "--on-restart follow" : "the default, --on-restart stop"));
        temp_dir root("job_identity_follow");
        const fs::path run = root.path() / "run";
        const fs::path hold = root.path() / "hold";
        const fs::path progress = root.path() / "progress.jsonl";
        first_job first(run, hold);
        auto follower = follow_all_zero(run, progress,
                                        follow_new_job ? std::vector<std::string>{"--on-restart", "follow"}
                                                       : std::vector<std::string>{});
        // The follower has evaluated the first job's steps 0-6 (not triggered: they are not zeros).
        REQUIRE(wait_until([&] { return progress_steps(progress).count(6) == 1; }));
        first.crash();
        overwrite_with_zeros(run, 30);
        const command_result r = follower.get();
        INFO(r.out << r.err);
        CHECK_THAT(r.err, Catch::Contains("was started again by another job") && Catch::Contains("began at step 0"));
        if (follow_new_job) {
            // The new job's 30 steps of zeros, from its step 0: triggered.
            CHECK(r.status == 1);
            CHECK_THAT(r.err, Catch::Contains("evaluating the new job from step 0"));
            CHECK_THAT(r.out, Catch::Contains("IssuesFound"));
            CHECK(progress_steps(progress) == [] {
                std::set<std::int64_t> all;
                for (std::int64_t s = 0; s < 30; ++s) {
                    all.insert(s);
                }
                return all;
            }());
        } else {
            CHECK(r.status == 2);
            CHECK_THAT(r.err, Catch::Contains("--on-restart follow"));
            // Only the first job's steps were evaluated: none of the new job's.
            const std::set<std::int64_t> evaluated = progress_steps(progress);
            CHECK(*evaluated.rbegin() <= 7);
            CHECK_THAT(r.out, !Catch::Contains("IssuesFound"));
        }
    }
}

TEST_CASE("run truth: a run removed under tdbg rules --follow ends its wait: 'the run was removed', exit 2") {
    temp_dir root("job_identity_removed");
    const fs::path run = root.path() / "run";
    const fs::path hold = root.path() / "hold";
    const fs::path progress = root.path() / "progress.jsonl";
    first_job first(run, hold);
    auto follower = follow_all_zero(run, progress);
    REQUIRE(wait_until([&] { return progress_steps(progress).count(6) == 1; }));
    first.crash();
    fs::remove_all(run);
    // Within the poll interval and a small bound; the limit only bounds a failing test.
    REQUIRE(wait_until([&] { return follower.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }));
    const command_result r = follower.get();
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains("was removed"));
}

TEST_CASE("run truth: the in-process watcher following a run started again by another job ends its rule with "
          "the change, having evaluated the first job's steps only") {
    temp_dir root("job_identity_watcher");
    const fs::path run = root.path() / "run";
    const fs::path hold = root.path() / "hold";
    first_job first(run, hold);
    tdbg::rules::watch_options watch;
    watch.poll_interval = std::chrono::milliseconds(5);
    tdbg::rules::rule_params params;
    params.set("tensor_regex", "^" + reliability::tensor_name(0) + "$");
    tdbg::rules::watcher watcher(tdbg::local_storage(run), {tdbg::rules::watch_rule("AllZero", params)}, watch);
    REQUIRE(watcher.wait_for_step(6, std::chrono::minutes(5)));
    first.crash();
    overwrite_with_zeros(run, 30);
    const std::vector<tdbg::rules::evaluation_result> results = watcher.finish();
    REQUIRE(results.size() == 1);
    CHECK(results[0].status() == tdbg::rules::evaluation_status::error);
    CHECK_THAT(results[0].error, Catch::Contains("was started again by another job") &&
                                     Catch::Contains("began at step 0"));
    CHECK_FALSE(watcher.triggered()); // none of the new job's zeros was evaluated
}
