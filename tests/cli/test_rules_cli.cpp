// `tdbg rules`: exit statuses, text, --json against the fixtures' rules
// files (through --config), --junit, --stop-training, --follow on a run
// being written, and SIGINT/SIGTERM while it waits. Runs the built `tdbg` program.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/reference_defaults.hpp"
#include "rules/rule_run.hpp"
#include "storage/unprivileged.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/rules/registry.hpp"

namespace {

using cli_result = tdbg::test::command_result;

cli_result tdbg_rules(std::vector<std::string> args) {
    args.insert(args.begin(), "rules");
    return tdbg::test::run_program(TDBG_CLI_PATH, args);
}

std::vector<std::int64_t> steps_of(const nlohmann::json& j) { return j.get<std::vector<std::int64_t>>(); }

// How a background `tdbg rules` may be limited: RLIMIT_NPROC, the processes and threads of its
// user, as `prlimit --nproc=N` sets it. Root ignores that limit: as root the program runs as
// user 65534 (set up with tdbg::test::run_unprivileged), from `program`, a copy it can reach.
struct thread_limit {
    std::string program;
    rlim_t nproc = 1;
};

// `tdbg rules ARGS` running in the background, its standard output and error read
// as they come, so that a test can act once the program says something.
class background_rules {
public:
    explicit background_rules(std::vector<std::string> args, const std::optional<thread_limit>& limit = std::nullopt) {
        args.insert(args.begin(), {limit ? limit->program : std::string(TDBG_CLI_PATH), "rules"});
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        int out[2] = {-1, -1};
        int err[2] = {-1, -1};
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
            throw std::runtime_error("cannot create pipes");
        }
        pid_ = ::fork();
        if (pid_ == 0) {
            // The child: SIGINT and SIGTERM as a shell's foreground job has them (a test
            // runner started in the background may ignore them), output into the pipes.
            struct sigaction default_action {};
            default_action.sa_handler = SIG_DFL;
            ::sigaction(SIGINT, &default_action, nullptr);
            ::sigaction(SIGTERM, &default_action, nullptr);
            sigset_t none;
            sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);
            const int null_in = ::open("/dev/null", O_RDONLY);
            if (null_in < 0 || ::dup2(null_in, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) {
                ::_exit(126);
            }
            if (limit) {
                // The user first (as root), then the limit: setuid() under a limit already
                // exceeded would mark the process, and execv() would then fail.
                if (::geteuid() == 0 &&
                    (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
                    ::_exit(125);
                }
                const rlimit nproc{limit->nproc, limit->nproc};
                if (::setrlimit(RLIMIT_NPROC, &nproc) != 0) {
                    ::_exit(125);
                }
            }
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        out_fd_ = out[0];
        err_fd_ = err[0];
        if (pid_ < 0) {
            throw std::runtime_error("cannot fork");
        }
    }
    background_rules(const background_rules&) = delete;
    background_rules& operator=(const background_rules&) = delete;
    ~background_rules() {
        if (pid_ > 0 && !ended_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        for (const int fd : {out_fd_, err_fd_}) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    }

    /// Reads the output until stderr holds `text`; false if the program ended
    /// first, or said nothing more for a minute (a failure, not a pace).
    bool wait_for_stderr(const std::string& text) {
        while (err.find(text) == std::string::npos) {
            if (!read_some(60000)) {
                return false;
            }
        }
        return true;
    }

    void send(int sig) const { ::kill(pid_, sig); }

    /// Reads the rest of the output and waits for the program to end; its wait status.
    int finish() {
        while (read_some(-1)) {
        }
        int status = 0;
        ::waitpid(pid_, &status, 0);
        ended_ = true;
        return status;
    }

    std::string out;
    std::string err;

private:
    // Reads what either pipe has; false once both are at their end, or after `timeout_ms` of silence.
    bool read_some(int timeout_ms) {
        if (out_fd_ < 0 && err_fd_ < 0) {
            return false;
        }
        pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}}; // poll skips a pipe at its end (-1)
        const int ready = ::poll(fds, 2, timeout_ms);
        if (ready <= 0) {
            return ready < 0 && errno == EINTR;
        }
        int* const fd_of[2] = {&out_fd_, &err_fd_};
        std::string* const text_of[2] = {&out, &err};
        char buffer[4096];
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) {
                continue;
            }
            const ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
            if (got > 0) {
                text_of[i]->append(buffer, static_cast<std::size_t>(got));
            } else if (got == 0 || errno != EINTR) {
                ::close(*fd_of[i]);
                *fd_of[i] = -1;
            }
        }
        return true;
    }

    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    bool ended_ = false;
};

// A run whose writer died: steps 0-2 of gradient/w, the last one vanishing, and no end marker.
void write_abandoned_run(const tdbg::test::rule_run& run) {
    run.collections({{"gradients", "^gradient/"}});
    run.step(0, {{"gradient/w", tdbg::test::f32({1.0F, -1.0F}), {}}});
    run.step(1, {{"gradient/w", tdbg::test::f32({0.5F, -0.5F}), {}}});
    run.step(2, {{"gradient/w", tdbg::test::f32({1e-9F, -1e-9F}), {}}});
}

} // namespace

TEST_CASE("tdbg rules over a run without its end marker notes that the run has not ended") {
    tdbg::test::temp_dir dir("rules_cli_unended");
    const tdbg::test::rule_run run(dir.path() / "run");
    write_abandoned_run(run); // a trainer that exited without closing its hook
    const auto unended = tdbg_rules({run.path(), "--rule", "VanishingGradient"});
    CHECK(unended.status == 1);
    CHECK_THAT(unended.err, Catch::Contains("tdbg rules: note: the run has not ended (it holds no training_job_end.ts): "
                                            "its trainer is still writing it, or exited without closing the hook"));
    run.end();
    const auto ended = tdbg_rules({run.path(), "--rule", "VanishingGradient"});
    CHECK(ended.status == 1);
    CHECK(ended.err.find("has not ended") == std::string::npos);
}

TEST_CASE("tdbg rules exits 0 without issues, 1 with issues, 2 on errors") {
    const auto fixtures = tdbg::test::fixtures_dir();
    const std::string run = (fixtures / "vanishing_run").string();
    auto r = tdbg_rules({run, "--rule", "ExplodingTensor"});
    CHECK(r.status == 0);
    CHECK(r.out.find("ExplodingTensor: NoIssuesFound") != std::string::npos);

    r = tdbg_rules({run, "--rule", "ExplodingTensor", "--rule", "VanishingGradient"});
    CHECK(r.status == 1);
    CHECK(r.out.find("VanishingGradient: IssuesFound") != std::string::npos);
    CHECK(r.out.find("triggered at steps 7-39") != std::string::npos);

    r = tdbg_rules({run, "--rule", "LossNotDecreasing", "--param", "num_steps=3", "--param", "diff_percent=1"});
    CHECK(r.status == 1);
    CHECK(r.out.find("triggered at steps 9, 12, 15") != std::string::npos);

    CHECK(tdbg_rules({run, "--rule", "NoSuchRule"}).status == 2);
    r = tdbg_rules({run, "--rule", "VanishingGradient", "--param", "threshold=tiny"});
    CHECK(r.status == 2);
    CHECK(r.err.find("parameter 'threshold' = 'tiny' is not a number") != std::string::npos);
    r = tdbg_rules({run, "--rule", "VanishingGradient", "--param", "threshold=nan"}); // would never trigger
    CHECK(r.status == 2);
    CHECK(r.err.find("parameter 'threshold' = 'nan' is not a number such as 0.5 or 1e-07 (not NaN)") != std::string::npos);
    r = tdbg_rules({run, "--rule", "AllZero", "--threads", "-1"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--threads expects a whole number from 0 to 1024, got '-1'") != std::string::npos);
    CHECK(tdbg_rules({run, "--rule", "VanishingGradient", "--param", "typo=1"}).status == 2);
    CHECK(tdbg_rules({run}).status == 2);                                          // no rule
    CHECK(tdbg_rules({"/nonexistent/run", "--rule", "AllZero"}).status == 2);      // no run
    CHECK(tdbg_rules({run, "--param", "x=1", "--rule", "AllZero"}).status == 2);   // --param before --rule
    CHECK(tdbg_rules({run, "--rule", "AllZero", "--end-step", "-1"}).status == 2); // bad step
    r = tdbg_rules({"--list"});
    CHECK(r.status == 0);
    CHECK(r.out.find("\nVanishingGradient  ") != std::string::npos);
}

TEST_CASE("tdbg rules --list gives each rule's summary and parameter defaults, --describe its whole text") {
    auto r = tdbg_rules({"--list"});
    REQUIRE(r.status == 0);
    // Each rule's block starts with its name at column 0 and its summary; its parameters follow.
    std::vector<std::string> first_words;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.front() != ' ') {
            first_words.push_back(line.substr(0, line.find(' ')));
        }
    }
    CHECK(first_words == tdbg::rules::registry::names());
    CHECK(r.out.find("VanishingGradient  Gradients vanish: a gradient's mean absolute value falls below a "
                     "threshold.\n  threshold=1e-07  the mean |gradient| below which a gradient has vanished\n") !=
          std::string::npos);
    // Aligned: the meanings of one rule's parameters start in the same column.
    CHECK(r.out.find("\n  num_steps=3            how many saved steps must agree (at least 2)\n") != std::string::npos);
    CHECK(r.out.find("\n  equal_nan=False        True: NaNs in the same places count as equal\n") != std::string::npos);
    CHECK(r.out.find("(no description)") == std::string::npos); // every built-in rule is described

    r = tdbg_rules({"--describe", "loss_not_decreasing"}); // any spelling the registry takes
    CHECK(r.status == 0);
    CHECK(r.out.rfind("LossNotDecreasing  The loss stopped going down.\n\nMet when a loss", 0) == 0);
    CHECK(r.out.find("\nParameters:\n  collection_names=None ") != std::string::npos);
    CHECK(r.out.find("\n  mode=GLOBAL ") != std::string::npos);
    std::istringstream text(r.out);
    while (std::getline(text, line)) {
        INFO(line);
        if (line.rfind("  ", 0) != 0) { // the text, not a parameter line, is wrapped
            CHECK(line.size() <= 80);
        }
    }

    r = tdbg_rules({"--describe", "VanishingGradiant"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("unknown rule 'VanishingGradiant' (did you mean 'VanishingGradient'?)") != std::string::npos);
    r = tdbg_rules({"--describe"});
    CHECK(r.status == 2);
}

// A run where every ReLU unit is dead, its output saved as relu1_output_0 (not matched by
// DeadRelu's default tensor_regex '.*relu_output'), with a collection called "gradients".
void write_dead_relu_run(const tdbg::test::rule_run& run) {
    run.collections({{"relu", ".*relu1_output"}, {"gradients", "^gradient/"}});
    for (std::int64_t s = 0; s < 4; ++s) {
        run.step(s, {{"relu1_output_0", tdbg::test::matrix(2, 8, [](std::size_t, std::size_t) { return 0.0F; }), {}},
                     {"gradient/fc.weight", tdbg::test::f32({0.5F, -0.5F}), {}}});
    }
    run.end();
}

TEST_CASE("tdbg rules: a rule that evaluated nothing is NothingEvaluated with its reason, exit 2, unless --allow-empty") {
    tdbg::test::temp_dir dir("rules_cli_nothing");
    const tdbg::test::rule_run run(dir.path() / "run");
    write_dead_relu_run(run);
    const std::string junit = (dir.path() / "rules.xml").string();

    // The default regex matches nothing: said in the text, on stderr, in JUnit; exit 2.
    auto r = tdbg_rules({run.path(), "--rule", "DeadRelu", "--junit", junit});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.find("DeadRelu: NothingEvaluated\n") != std::string::npos);
    CHECK(r.out.find("did you mean 'relu1_output_0'?") != std::string::npos);
    CHECK(r.out.find("  evaluated 0 of 4 steps; 4 skipped:") != std::string::npos);
    CHECK(r.err.find("tdbg rules: error: DeadRelu evaluated nothing: ") != std::string::npos);
    CHECK(r.err.find("(--allow-empty if that is expected)") != std::string::npos);
    std::string xml = tdbg::test::read_file(junit);
    CHECK(xml.find(R"(errors="1")") != std::string::npos);
    CHECK(xml.find(R"(<error type="NothingEvaluated" message="DeadRelu evaluated no step: )") != std::string::npos);

    // A typo in a collection name, and a regex that matches nothing, fail the same way.
    r = tdbg_rules({run.path(), "--rule", "AllZero", "--param", "collection_names=gradient"});
    CHECK(r.status == 2);
    CHECK(r.out.find("AllZero: NothingEvaluated  [collection_names=gradient]\n") != std::string::npos);
    CHECK(r.out.find("'gradients'") != std::string::npos);
    r = tdbg_rules({run.path(), "--rule", "AllZero", "--param", "tensor_regex=nomatch", "--json"});
    CHECK(r.status == 2);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("results")[0].at("status") == "NothingEvaluated");
    CHECK(doc.at("results")[0].at("nothing_evaluated_reason").get<std::string>().find("nomatch") != std::string::npos);

    // --allow-empty: expected, exit 0, a skipped testcase.
    r = tdbg_rules({run.path(), "--rule", "DeadRelu", "--allow-empty", "--junit", junit});
    CHECK(r.status == 0);
    CHECK(r.out.find("DeadRelu: NothingEvaluated\n") != std::string::npos);
    CHECK(r.err.find("evaluated nothing") == std::string::npos);
    xml = tdbg::test::read_file(junit);
    CHECK(xml.find(R"(errors="0")") != std::string::npos);
    CHECK(xml.find(R"(skipped="1")") != std::string::npos);
    CHECK(xml.find("<skipped message=\"DeadRelu evaluated no step: ") != std::string::npos);

    // The right regex finds the dead units, and says why in every output.
    r = tdbg_rules({run.path(), "--rule", "DeadRelu", "--param", "tensor_regex=relu1_output", "--junit", junit});
    CHECK(r.status == 1);
    CHECK(r.out.find("DeadRelu: IssuesFound") != std::string::npos);
    CHECK(r.out.find("    step 0: ") != std::string::npos);
    CHECK(r.out.find("relu1_output_0") != std::string::npos);
    CHECK(r.out.find("  evaluated 4 of 4 steps\n") != std::string::npos);
    xml = tdbg::test::read_file(junit);
    CHECK(xml.find("<failure type=\"IssuesFound\" message=\"DeadRelu triggered at steps 0-3: step 0: ") !=
          std::string::npos);
}

TEST_CASE("tdbg rules: a rule that compared nothing is NothingEvaluated, exit 2, counting the steps of its mode") {
    tdbg::test::temp_dir dir("rules_cli_compared_nothing");
    const tdbg::test::rule_run run(dir.path() / "run");
    // A trainer's TRAIN steps, then 3 EVAL steps: too few to fill LossNotDecreasing's window of 10.
    run.collections({{"losses", "^CrossEntropyLoss_output_0$"}});
    for (std::int64_t s = 0; s < 20; ++s) {
        run.step(s, {{"CrossEntropyLoss_output_0", tdbg::test::scalar(2.0F - 0.05F * static_cast<float>(s)), {}}});
    }
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(20 + s, {{"CrossEntropyLoss_output_0", tdbg::test::scalar(1.0F), {}}}, tdbg::mode::eval, s);
    }
    run.end();

    auto r = tdbg_rules({run.path(), "--rule", "LossNotDecreasing", "--param", "mode=EVAL"});
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.find("LossNotDecreasing: NothingEvaluated  [mode=EVAL]\n") != std::string::npos);
    CHECK(r.out.find("  evaluated 23 of 23 steps; 3 EVAL steps, 0 windows of 10\n") != std::string::npos);
    CHECK(r.err.find("tdbg rules: error: LossNotDecreasing evaluated nothing: it compared nothing: 3 EVAL steps, 0 "
                     "windows of 10") != std::string::npos);
    r = tdbg_rules({run.path(), "--rule", "LossNotDecreasing", "--param", "mode=EVAL", "--json"});
    CHECK(r.status == 2);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("results")[0].at("status") == "NothingEvaluated");
    CHECK(doc.at("results")[0].at("coverage").at("compared") == 0);
    CHECK(doc.at("results")[0].at("not_triggered_steps").size() == 23); // smdebug's record, kept

    // Expected with --allow-empty; a window the EVAL steps fill compares them.
    r = tdbg_rules({run.path(), "--rule", "LossNotDecreasing", "--param", "mode=EVAL", "--allow-empty"});
    CHECK(r.status == 0);
    r = tdbg_rules({run.path(), "--rule", "LossNotDecreasing", "--param", "mode=EVAL", "--param", "num_steps=1"});
    CHECK(r.status == 1); // a flat EVAL loss does not decrease
    CHECK(r.out.find("3 EVAL steps, 2 windows of 1") != std::string::npos);
}

TEST_CASE("tdbg rules: steps a worker never wrote are said in every output and exit 2, unless --allow-partial") {
    // A live two-worker run (no end marker): worker_1 stopped after step 2, worker_0 went on to step 9.
    tdbg::test::temp_dir dir("rules_cli_partial");
    const tdbg::test::rule_run run(dir.path() / "run");
    for (const std::string worker : {"worker_0", "worker_1"}) {
        run.collections({{"weights", "^weight/"}}, worker, 2);
    }
    for (std::int64_t s = 0; s < 10; ++s) {
        for (const std::string worker : {"worker_0", "worker_1"}) {
            if (worker == "worker_0" || s <= 2) {
                run.step(s, {{"weight/fc", tdbg::test::f32({1.0F, 2.0F}), {}}}, tdbg::mode::train, std::nullopt, worker);
            }
        }
    }
    const std::string junit = (dir.path() / "rules.xml").string();
    auto r = tdbg_rules({run.path(), "--rule", "ExplodingTensor", "--junit", junit});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.find("ExplodingTensor: NoIssuesFound\n") != std::string::npos);
    CHECK(r.out.find("  evaluated 3 of 10 steps; 7 skipped: 7 StepNotYetAvailable\n") != std::string::npos);
    CHECK(r.err.find("tdbg rules: error: ExplodingTensor left 7 steps unevaluated (3-9): a worker has not written "
                     "them (StepNotYetAvailable) (--allow-partial if that is expected)") != std::string::npos);
    CHECK(tdbg::test::read_file(junit).find("evaluated 3 of 10 steps; 7 skipped: 7 StepNotYetAvailable") !=
          std::string::npos);
    r = tdbg_rules({run.path(), "--rule", "ExplodingTensor", "--json"});
    CHECK(r.status == 2);
    CHECK(nlohmann::json::parse(r.out).at("results")[0].at("coverage").at("text") ==
          "evaluated 3 of 10 steps; 7 skipped: 7 StepNotYetAvailable");
    r = tdbg_rules({run.path(), "--rule", "ExplodingTensor", "--allow-partial"});
    CHECK(r.status == 0);
    CHECK(r.err.find("unevaluated") == std::string::npos);
}

TEST_CASE("tdbg rules over a run whose index is gone while its events remain is NothingEvaluated, exit 2") {
    tdbg::test::temp_dir dir("rules_cli_no_index");
    const tdbg::test::rule_run run(dir.path() / "run");
    write_dead_relu_run(run);
    std::filesystem::remove_all(dir.path() / "run" / "index");
    REQUIRE(std::filesystem::exists(dir.path() / "run" / "events"));
    const auto r = tdbg_rules({run.path(), "--rule", "AllZero", "--param", "collection_names=gradients"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.find("AllZero: NothingEvaluated") != std::string::npos);
    CHECK(r.out.find("has no step") != std::string::npos);
    CHECK(r.err.find("AllZero evaluated nothing: ") != std::string::npos);
}

TEST_CASE("tdbg rules --sarif writes one result per trigger with its reason, and NothingEvaluated as an error notification") {
    tdbg::test::temp_dir dir("rules_cli_sarif");
    const tdbg::test::rule_run run(dir.path() / "run");
    write_dead_relu_run(run);
    const std::string sarif = (dir.path() / "rules.sarif").string();
    const auto r = tdbg_rules({run.path(), "--rule", "DeadRelu", "--param", "tensor_regex=relu1_output", "--rule",
                               "AllZero", "--param", "tensor_regex=nomatch", "--sarif", sarif, "--allow-empty"});
    INFO(r.err);
    CHECK(r.status == 1);
    const auto log = nlohmann::json::parse(tdbg::test::read_file(sarif));
    CHECK(log.at("version") == "2.1.0");
    const auto& sarif_run = log.at("runs")[0];
    CHECK(sarif_run.at("tool").at("driver").at("name") == "tdbg");
    CHECK(sarif_run.at("tool").at("driver").at("rules").size() == 2);
    for (const auto& rule : sarif_run.at("tool").at("driver").at("rules")) {
        CHECK_FALSE(rule.at("fullDescription").at("text").get<std::string>().empty()); // the rule's summary
    }
    const auto& results = sarif_run.at("results");
    REQUIRE(results.size() == 4);
    for (std::size_t i = 0; i < results.size(); ++i) {
        CHECK(results[i].at("ruleId") == "DeadRelu");
        const std::string text = results[i].at("message").at("text");
        CHECK(text.rfind("DeadRelu triggered at step " + std::to_string(i) + ": ", 0) == 0);
        CHECK(text.find("relu1_output_0") != std::string::npos);
    }
    const auto& notifications = sarif_run.at("invocations")[0].at("toolExecutionNotifications");
    REQUIRE(notifications.size() == 1);
    CHECK(notifications[0].at("level") == "error");
    CHECK(notifications[0].at("descriptor").at("id") == "NothingEvaluated");
    CHECK(notifications[0].at("message").at("text").get<std::string>().find("AllZero evaluated nothing: ") == 0);
}

TEST_CASE("tdbg rules --config --json reproduces every entry of the fixtures' rules files") {
    const auto fixtures = tdbg::test::fixtures_dir();
    tdbg::test::temp_dir dir("rules_cli_config");
    std::size_t compared_nothing_entries = 0;
    for (const char* run : tdbg::test::fixture_runs) {
        INFO(run);
        const auto expected = nlohmann::json::parse(tdbg::test::read_file(fixtures / (std::string(run) + ".rules.json")));
        // The fixture's rules as a SageMaker DebugRuleConfigurations file (parameters as strings).
        // Where AWS's defaults differ from the reference's, the reference's are given (reference_defaults.hpp).
        nlohmann::json config = nlohmann::json::array();
        std::vector<std::set<std::string>> added;
        std::size_t i = 0;
        for (const auto& entry : expected.at("results")) {
            std::map<std::string, std::string> given;
            for (const auto& [k, v] : entry.at("params").items()) {
                given[k] = v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "True" : "False") : v.dump();
            }
            added.push_back(tdbg::test::add_reference_defaults(entry.at("rule").get<std::string>(), given));
            nlohmann::json params = {{"rule_to_invoke", entry.at("rule")}};
            for (const auto& [k, v] : given) {
                params[k] = v;
            }
            config.push_back({{"RuleConfigurationName", "rule_" + std::to_string(i++)},
                              {"InstanceType", "ml.t3.medium"},
                              {"VolumeSizeInGB", 30},
                              {"RuleParameters", params}});
        }
        const auto config_file = dir.path() / (std::string(run) + "_rules.json");
        std::ofstream(config_file) << config.dump(2);

        const auto& invoked = expected.at("invoke");
        const auto r = tdbg_rules({(fixtures / run).string(), "--config", config_file.string(), "--json", "--start-step",
                                   std::to_string(invoked.at("start_step").get<int>()), "--end-step",
                                   std::to_string(invoked.at("end_step").get<int>()), "--allow-empty"});
        INFO(r.err);
        CHECK((r.status == 0 || r.status == 1));
        const auto doc = nlohmann::json::parse(r.out);
        CHECK(doc.at("format") == "smdebug-rules/1");
        CHECK(doc.at("trial_name") == run);
        CHECK(doc.at("invoke").at("end_step") == invoked.at("end_step"));
        REQUIRE(doc.at("results").size() == expected.at("results").size());
        bool any_issue = false;
        for (std::size_t k = 0; k < doc.at("results").size(); ++k) {
            auto got = doc.at("results")[k];
            const auto& want = expected.at("results")[k];
            for (const std::string& key : added[k]) {
                got.at("params").erase(key);
                if (!want.at("resolved_params").contains(key)) {
                    got.at("resolved_params").erase(key);
                }
            }
            INFO("entry " << k << ": " << want.at("rule") << " " << want.at("params").dump());
            CHECK(got.at("rule") == want.at("rule"));
            CHECK(got.at("configuration_name") == "rule_" + std::to_string(k));
            CHECK(steps_of(got.at("triggered_steps")) == steps_of(want.at("triggered_steps")));
            CHECK(steps_of(got.at("not_triggered_steps")) == steps_of(want.at("not_triggered_steps")));
            CHECK(got.at("skipped_steps") == want.at("skipped_steps"));
            CHECK(got.at("params") == want.at("params"));
            CHECK(got.at("resolved_params") == want.at("resolved_params"));
            // Where smdebug evaluated no step, or the rule compared nothing (LossNotDecreasing's window of
            // 10 over 6 or 5 EVAL steps), its status would be NoIssuesFound: tdbg says NothingEvaluated.
            const bool compared_nothing = got.at("coverage").contains("compared") && got.at("coverage").at("compared") == 0;
            compared_nothing_entries += compared_nothing ? 1 : 0;
            const char* status = !want.at("triggered_steps").empty()                           ? "IssuesFound"
                                 : want.at("not_triggered_steps").empty() || compared_nothing ? "NothingEvaluated"
                                                                                               : "NoIssuesFound";
            CHECK(got.at("status") == status);
            any_issue = any_issue || !want.at("triggered_steps").empty();
        }
        CHECK(r.status == (any_issue ? 1 : 0));
    }
    CHECK(compared_nothing_entries == 2); // as test_builtin_fixtures.cpp lists them
}

TEST_CASE("tdbg rules --junit writes one testcase per rule, failures listing the steps") {
    const auto fixtures = tdbg::test::fixtures_dir();
    tdbg::test::temp_dir dir("rules_cli_junit");
    const auto junit = dir.path() / "rules.xml";
    const auto r = tdbg_rules({(fixtures / "core_modes_workers").string(), "--rule", "ExplodingTensor", "--param",
                               "only_nan=True", "--rule", "VanishingGradient", "--junit", junit.string()});
    CHECK(r.status == 1);
    const std::string xml = tdbg::test::read_file(junit);
    CHECK(xml.find("<testsuite name=\"tdbg rules: core_modes_workers\" tests=\"2\" failures=\"2\" errors=\"0\"") !=
          std::string::npos);
    CHECK(xml.find("<testcase classname=\"tdbg.rules.ExplodingTensor\" name=\"ExplodingTensor\">") != std::string::npos);
    CHECK(xml.find("message=\"ExplodingTensor triggered at steps 4: step 4: ") != std::string::npos);
    CHECK(xml.find("message=\"VanishingGradient triggered at steps 10, 12: step 10: ") != std::string::npos);
}

TEST_CASE("tdbg rules --junit: names with characters XML cannot hold give a well-formed file") {
    if (!std::filesystem::exists(TDBG_PYTHON3)) {
        TDBG_SKIP(TDBG_PYTHON3 " not found: the file is not read by a strict XML parser");
    }
    // U+FFFE and U+FFFF (noncharacters XML 1.0 excludes), and two C0 controls: in the tensor's
    // name (the error message names it), the rule's configuration name and the run's name.
    const std::string hostile = "\xEF\xBF\xBE\xEF\xBF\xBF\x01\x1B";
    tdbg::test::temp_dir dir("rules_cli_junit_names");
    const std::filesystem::path run_dir = dir.path() / ("run" + hostile);
    tdbg::test::rule_run run(run_dir);
    run.collections({{"gradients", "^gradient/"}});
    const std::string tensor = "gradient/w" + hostile;
    run.step(0, {{tensor, tdbg::test::f32({1.0F, -1.0F}), {}}});
    run.step(1, {{tensor, tdbg::test::f32({1.0F, -1.0F}), {}}});
    run.end();
    std::filesystem::remove(run_dir / tdbg::format::event_file_key(1, "worker_0")); // an Error naming the tensor
    const auto config = dir.path() / "rules.json";
    std::ofstream(config) << R"([{"RuleConfigurationName": "VG\ufffe\uffff\u0001\u001b", "RuleParameters": )"
                             R"({"rule_to_invoke": "VanishingGradient"}}])";
    const auto junit = dir.path() / "rules.xml";
    const auto r = tdbg_rules({run.path(), "--config", config.string(), "--junit", junit.string()});
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    const std::string xml = tdbg::test::read_file(junit);
    INFO(xml);
    // None of them is written as it is; each is U+FFFD.
    for (const std::string bad : {"\xEF\xBF\xBE", "\xEF\xBF\xBF", "\x01", "\x1B"}) {
        CHECK(xml.find(bad) == std::string::npos);
    }
    CHECK(xml.find("tensor &#39;gradient/w&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;&#39;") != std::string::npos);
    CHECK(xml.find("name=\"VG&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;\"") != std::string::npos);

    // A strict parser (Python's expat, which refuses every character XML 1.0 excludes) reads it.
    const char* script = R"py(
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for suite in root.iter("testsuite"):
    print("suite", ascii(suite.get("name")))
for case in root.iter("testcase"):
    print("case", ascii(case.get("name")))
    for error in case.iter("error"):
        print("error", ascii(error.get("message")))
)py";
    const auto parsed = tdbg::test::run_shell(tdbg::test::shell_quote(TDBG_PYTHON3) + " -c " +
                                              tdbg::test::shell_quote(script) + " " +
                                              tdbg::test::shell_quote(junit.string()));
    INFO(parsed.out << parsed.err);
    CHECK(parsed.status == 0);
    CHECK(parsed.out.find("suite 'tdbg rules: run\\ufffd\\ufffd\\ufffd\\ufffd'") != std::string::npos);
    CHECK(parsed.out.find("case 'VG\\ufffd\\ufffd\\ufffd\\ufffd'") != std::string::npos);
    CHECK(parsed.out.find("tensor 'gradient/w\\ufffd\\ufffd\\ufffd\\ufffd'") != std::string::npos);
}

TEST_CASE("tdbg rules --progress writes a line per step, and a file that cannot be written is exit 2 naming it") {
    tdbg::test::temp_dir dir("rules_cli_progress");
    tdbg::test::rule_run run(dir.path() / "run");
    write_abandoned_run(run);
    run.end();
    const auto progress = dir.path() / "progress.jsonl";
    auto r = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--progress", progress.string()});
    INFO(r.out << r.err);
    CHECK(r.status == 1); // step 2 vanishes
    std::istringstream lines(tdbg::test::read_file(progress));
    std::vector<std::int64_t> steps;
    for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line);
        CHECK(j.at("rule") == "VanishingGradient");
        CHECK(j.at("outcome") == (j.at("step") == 2 ? "triggered" : "not_triggered"));
        steps.push_back(j.at("step").get<std::int64_t>());
    }
    CHECK(steps == std::vector<std::int64_t>{0, 1, 2});

    // /dev/full takes the file open, and refuses every write: an error, never the rules' own status.
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{}, std::vector<std::string>{"--json", "--junit", (dir.path() / "rules.xml").string()}}) {
        std::vector<std::string> args{run.path(), "--rule", "VanishingGradient", "--progress", "/dev/full"};
        args.insert(args.end(), extra.begin(), extra.end());
        r = tdbg_rules(args);
        INFO(r.out << r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find("tdbg rules: error: cannot write the --progress file /dev/full: " +
                         std::string(std::strerror(ENOSPC))) != std::string::npos);
        // The results are still reported whole.
        if (extra.empty()) {
            CHECK(r.out.find("VanishingGradient: IssuesFound") != std::string::npos);
        } else {
            CHECK(nlohmann::json::parse(r.out).at("results")[0].at("status") == "IssuesFound");
            CHECK(tdbg::test::read_file(dir.path() / "rules.xml").find("failures=\"1\"") != std::string::npos);
        }
    }
}

TEST_CASE("tdbg rules --follow evaluates a run while it is written, and --stop-training writes the marker") {
    tdbg::test::temp_dir dir("rules_cli_follow");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"gradients", "^gradient/"}});
    run.step(0, {{"gradient/w", tdbg::test::f32({1.0F, -1.0F}), {}}});

    // Without --follow: the steps written so far, at once.
    auto snapshot = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--json"});
    CHECK(snapshot.status == 0);
    CHECK(steps_of(nlohmann::json::parse(snapshot.out).at("results")[0].at("not_triggered_steps")) ==
          std::vector<std::int64_t>{0});

    std::thread writer([&] {
        float g = 0.1F;
        for (std::int64_t s = 1; s < 8; ++s) {
            std::this_thread::sleep_for(std::chrono::milliseconds(60));
            run.step(s, {{"gradient/w", tdbg::test::f32({g, -g}), {}}});
            g /= 10.0F;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        run.end();
    });
    const auto followed = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--param", "threshold=5e-6", "--follow",
                                      "--poll", "0.02", "--stop-training", "--json"});
    writer.join();
    CHECK(followed.status == 1);
    const auto result = nlohmann::json::parse(followed.out).at("results")[0];
    CHECK(steps_of(result.at("triggered_steps")) == std::vector<std::int64_t>{6, 7}); // 1e-6 and 1e-7 < 5e-6
    CHECK(steps_of(result.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(result.at("end") == "no_more_data");
    const auto marker = nlohmann::json::parse(tdbg::test::read_file(dir.path() / std::string(tdbg::format::stop_marker_key)));
    CHECK(marker.at("rule") == "VanishingGradient");
    CHECK(marker.at("step") == 6);
}

TEST_CASE("tdbg rules --follow: StalledTrainingRule fires by the clock on a job that stopped writing, and stops it") {
    tdbg::test::temp_dir dir("rules_cli_stalled");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"losses", "^loss$"}});
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (std::int64_t s = 0; s < 3; ++s) { // the last step 100 s ago, and nothing since
        run.step(s, {{"loss", tdbg::test::scalar(1.0F), {}}}, tdbg::mode::train, std::nullopt, "worker_0",
                 now - 102.0 + static_cast<double>(s));
    }
    const auto marker = dir.path() / std::string(tdbg::format::stop_marker_key);
    // The "job" reacts to the stop marker as a hook does: it writes one last step and ends.
    std::thread job([&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
        while (!std::filesystem::exists(marker) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        const double later = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        run.step(3, {{"loss", tdbg::test::scalar(1.0F), {}}}, tdbg::mode::train, std::nullopt, "worker_0", later);
        run.end();
    });
    const auto followed = tdbg_rules({run.path(), "--rule", "StalledTrainingRule", "--param", "threshold=60", "--follow",
                                      "--poll", "0.02", "--stop-training", "--json"});
    job.join();
    CHECK(followed.status == 1);
    const auto result = nlohmann::json::parse(followed.out).at("results")[0];
    CHECK(steps_of(result.at("triggered_steps")) == std::vector<std::int64_t>{3});
    CHECK(steps_of(result.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2});
    CHECK(result.at("end") == "no_more_data");
    REQUIRE(std::filesystem::exists(marker));
    const auto stop = nlohmann::json::parse(tdbg::test::read_file(marker));
    CHECK(stop.at("rule") == "StalledTrainingRule");
    CHECK(stop.at("step") == 3);
}

TEST_CASE("tdbg rules --follow waits for a run directory that does not exist yet") {
    tdbg::test::temp_dir dir("rules_cli_follow_later");
    const auto later = dir.path() / "not_yet";
    std::thread trainer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        tdbg::test::rule_run run(later);
        run.collections({{"gradients", "^gradient/"}});
        for (std::int64_t s = 0; s < 3; ++s) {
            run.step(s, {{"gradient/w", tdbg::test::f32({1.0F, -1.0F}), {}}});
        }
        run.end();
    });
    const auto followed =
        tdbg_rules({later.string(), "--rule", "VanishingGradient", "--follow", "--poll", "0.02", "--json"});
    trainer.join();
    CHECK(followed.status == 0);
    const auto result = nlohmann::json::parse(followed.out).at("results")[0];
    CHECK(steps_of(result.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2});

    // Without --follow a missing directory is an error at once.
    const auto missing = tdbg_rules({(dir.path() / "never").string(), "--rule", "VanishingGradient"});
    CHECK(missing.status == 2);
    CHECK_THAT(missing.err, Catch::Contains("no such directory"));
}

TEST_CASE("tdbg rules refuses negative thresholds, counts and percentages with a message naming the parameter") {
    tdbg::test::temp_dir dir("rules_cli_negative");
    const tdbg::test::rule_run run(dir.path());
    write_abandoned_run(run);
    run.end();
    const std::vector<std::vector<std::string>> refused{
        {"VanishingGradient", "threshold=-1", "rule VanishingGradient: parameter 'threshold' = '-1' must be at least 0"},
        {"AllZero", "threshold=-5", "rule AllZero: parameter 'threshold' = '-5' must be at least 0"},
        {"LossNotDecreasing", "diff_percent=-10", "rule LossNotDecreasing: parameter 'diff_percent' = '-10' must be at least 0"},
        {"UnchangedTensor", "atol=-1e-8", "rule UnchangedTensor: parameter 'atol' = '-1e-8' must be at least 0"},
        {"WeightUpdateRatio", "epsilon=0", "rule WeightUpdateRatio: parameter 'epsilon' = '0' must be more than 0"},
        {"Overtraining", "patience_train=-1", "rule Overtraining: parameter 'patience_train' = '-1' must be at least 1"},
    };
    for (const auto& c : refused) {
        INFO(c[0] << " " << c[1]);
        const auto r = tdbg_rules({run.path(), "--rule", c[0], "--param", c[1], "--param", "tensor_regex=gradient/w"});
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Contains(c[2]));
        CHECK(r.out.empty());
    }
    // Zero is a threshold like any other: the gate runs (gradient/w's mean |g| is never below 0).
    const auto zero = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--param", "threshold=0"});
    CHECK(zero.status == 0);
    CHECK_THAT(zero.out, Catch::Contains("VanishingGradient: NoIssuesFound"));
}

TEST_CASE("tdbg rules --follow on a run whose writer died: SIGINT prints the results so far, marked interrupted, exit 130") {
    tdbg::test::temp_dir dir("rules_cli_sigint");
    const tdbg::test::rule_run run(dir.path() / "run");
    write_abandoned_run(run);
    const auto junit = dir.path() / "rules.xml";
    background_rules rules({run.path(), "--rule", "VanishingGradient", "--rule", "ExplodingTensor", "--follow", "--poll",
                            "30", "--verbose", "--json", "--junit", junit.string()});
    // Both rules evaluated steps 0-2 and now wait for step 3, polling every 30 s: the signal ends the wait.
    REQUIRE(rules.wait_for_stderr("rule VanishingGradient: waiting for step 3"));
    REQUIRE(rules.wait_for_stderr("rule ExplodingTensor: waiting for step 3"));
    rules.send(SIGINT);
    const int status = rules.finish();
    INFO(rules.err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK_THAT(rules.err, Catch::Contains("tdbg rules: interrupted by SIGINT"));

    const auto doc = nlohmann::json::parse(rules.out);
    CHECK(doc.at("interrupted") == "SIGINT");
    REQUIRE(doc.at("results").size() == 2);
    const auto& vanishing = doc.at("results")[0];
    CHECK(vanishing.at("rule") == "VanishingGradient");
    CHECK(steps_of(vanishing.at("triggered_steps")) == std::vector<std::int64_t>{2});
    CHECK(steps_of(vanishing.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1});
    CHECK(vanishing.at("end") == "interrupted");
    CHECK(vanishing.at("status") == "IssuesFound"); // found before the signal: still true
    const auto& exploding = doc.at("results")[1];
    CHECK(exploding.at("rule") == "ExplodingTensor");
    CHECK(steps_of(exploding.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2});
    CHECK(exploding.at("end") == "interrupted");
    CHECK(exploding.at("status") == "Stopped"); // not NoIssuesFound: step 3 on were never looked at

    const std::string xml = tdbg::test::read_file(junit);
    CHECK_THAT(xml, Catch::Contains("<testsuite name=\"tdbg rules: run (interrupted by SIGINT)\" tests=\"2\" "
                                    "failures=\"1\" errors=\"1\""));
    CHECK_THAT(xml, Catch::Contains("<error type=\"Stopped\" message=\"ExplodingTensor was interrupted before step 3\""));
}

TEST_CASE("tdbg rules --follow interrupted by SIGTERM prints its text results and exits 143") {
    tdbg::test::temp_dir dir("rules_cli_sigterm");
    const tdbg::test::rule_run run(dir.path());
    write_abandoned_run(run);
    background_rules rules({run.path(), "--rule", "ExplodingTensor", "--follow", "--poll", "30", "--verbose"});
    REQUIRE(rules.wait_for_stderr("rule ExplodingTensor: waiting for step 3"));
    rules.send(SIGTERM);
    const int status = rules.finish();
    INFO(rules.err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 143);
    CHECK_THAT(rules.out, Catch::Contains("ExplodingTensor: Stopped\n"
                                          "  interrupted before step 3: it and later steps were not evaluated\n"
                                          "  evaluated 3 of 3 steps\n"));
}

TEST_CASE("tdbg rules --follow under a limit on threads (RLIMIT_NPROC) takes turns at its rules on the threads it gets") {
    // Where the program can run as a user whose threads are limited: the run and a copy of the
    // program in a directory that user reaches.
    const tdbg::test::unprivileged_scratch dir("rules_cli_nproc");
    if (const std::string why = dir.why_unreachable(); !why.empty()) {
        TDBG_SKIP(why);
    }
    const auto program = dir.path() / "tdbg";
    std::filesystem::copy_file(TDBG_CLI_PATH, program);
    std::filesystem::permissions(program, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                              std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                              std::filesystem::perms::others_exec);
    const auto runnable = tdbg::test::run_unprivileged([&] { return ::access(program.c_str(), X_OK) == 0 ? 0 : 1; });
    if (!runnable) {
        TDBG_SKIP("root's powers cannot be given up here, and root ignores RLIMIT_NPROC");
    }
    if (*runnable != 0) {
        TDBG_SKIP("user 65534 cannot run a program from " << dir.path().string() << " (mounted noexec?)");
    }
    const tdbg::test::rule_run run(dir.path() / "run");
    write_abandoned_run(run);
    const std::vector<std::string> three_rules{"--rule",  "VanishingGradient", "--rule",  "ExplodingTensor",
                                               "--rule",  "AllZero",           "--param", "tensor_regex=gradient/w",
                                               "--jobs",  "3",                 "--follow", "--poll",
                                               "0.02",    "--verbose",         "--json"};
    std::vector<std::string> args{run.path()};
    args.insert(args.end(), three_rules.begin(), three_rules.end());

    // One thread in all for the user: no thread can be started. The program's own thread takes
    // turns at the three rules while the run is written: each waits for step 3, which comes.
    background_rules rules(args, thread_limit{program.string(), 1});
    for (const char* rule : {"VanishingGradient", "ExplodingTensor", "AllZero"}) {
        INFO(rules.err);
        REQUIRE(rules.wait_for_stderr(std::string("rule ") + rule + ": waiting for step 3"));
    }
    run.step(3, {{"gradient/w", tdbg::test::f32({0.0F, 0.0F}), {}}});
    run.end();
    const int status = rules.finish();
    INFO(rules.err);
    REQUIRE(WIFEXITED(status)); // never SIGABRT (std::terminate)
    CHECK(WEXITSTATUS(status) == 1);
    CHECK_THAT(rules.err, Catch::Contains("tdbg rules: note: only 1 of 3 threads could be started (") &&
                              Catch::Contains("): the rules take turns on one"));
    const auto doc = nlohmann::json::parse(rules.out);
    REQUIRE(doc.at("results").size() == 3);
    const auto& vanishing = doc.at("results")[0];
    CHECK(steps_of(vanishing.at("triggered_steps")) == std::vector<std::int64_t>{2, 3});
    CHECK(steps_of(vanishing.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1});
    const auto& exploding = doc.at("results")[1];
    CHECK(steps_of(exploding.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2, 3});
    const auto& all_zero = doc.at("results")[2];
    CHECK(steps_of(all_zero.at("triggered_steps")) == std::vector<std::int64_t>{3});
    for (const auto& r : doc.at("results")) {
        CHECK(r.at("end") == "no_more_data");
    }

    // Limits that let some of the threads start (as root, user 65534 has no other process):
    // the same results, whichever thread starting fails.
    const std::string expected = rules.out;
    for (const rlim_t nproc : {2, 3, 4, 6, 8}) {
        background_rules limited(args, thread_limit{program.string(), nproc});
        const int s = limited.finish();
        INFO("RLIMIT_NPROC " << nproc << ": " << limited.err);
        REQUIRE(WIFEXITED(s));
        CHECK(WEXITSTATUS(s) == 1);
        CHECK(limited.out == expected);
    }
}

namespace {

// A run of two workers for splitting by steps: steps 0-199 but 60-64 (never saved), a "loss"
// that goes down until step 100, then stalls, with a rise at 150; a "gradient/w" whose values
// vanish at every 37th step. Both workers write the same values.
void write_split_run(const tdbg::test::rule_run& run) {
    for (const char* worker : {"worker_0", "worker_1"}) {
        run.collections({{"losses", "^loss$"}, {"gradients", "^gradient/"}}, worker, 2);
    }
    for (std::int64_t s = 0; s < 200; ++s) {
        if (s >= 60 && s < 65) {
            continue;
        }
        const float loss = s < 100 ? 10.0F - static_cast<float>(s) * 0.05F : (s == 150 ? 7.0F : 5.0F);
        const float gradient = s % 37 == 0 ? 1e-9F : 1.0F;
        for (const char* worker : {"worker_0", "worker_1"}) {
            run.step(s, {{"loss", tdbg::test::scalar(loss), {}}, {"gradient/w", tdbg::test::f32({gradient, -gradient}), {}}},
                     tdbg::mode::train, s, worker);
        }
    }
    run.end();
}

// What a result of --json says of the steps, without how it was invoked.
nlohmann::json verdict_of(const nlohmann::json& result) {
    nlohmann::json coverage = result.at("coverage");
    coverage.erase("first_step"); // a part's first step is its range's
    if (result.at("rule") != "LossNotDecreasing") {
        // What a rule that carries no state compared is said range by range (its count is the whole's).
        coverage.erase("compared_text");
        coverage.erase("text");
    }
    return {result.at("rule"),          result.at("status"),        result.at("triggered_steps"),
            result.at("not_triggered_steps"), result.at("skipped_steps"), result.at("trigger_reasons"),
            coverage};
}

} // namespace

TEST_CASE("tdbg rules: four ranges of steps evaluated apart and merged give one process's verdict") {
    tdbg::test::temp_dir dir("rules_cli_split");
    const tdbg::test::rule_run run(dir.path() / "run");
    write_split_run(run);
    const std::vector<std::string> rules{"--rule", "LossNotDecreasing", "--rule", "VanishingGradient", "--rule",
                                         "UnchangedTensor", "--param", "num_steps=4", "--param",
                                         "tensor_regex=^gradient/", "--json"};
    const auto with = [&](std::vector<std::string> args) {
        args.insert(args.begin(), run.path());
        args.insert(args.end(), rules.begin(), rules.end());
        return args;
    };
    const std::string whole_file = (dir.path() / "whole.json").string();
    auto whole_args = with({"-o", whole_file});
    const auto whole = tdbg_rules(whole_args);
    REQUIRE(whole.status == 1);

    // Ranges that cut the gap of unsaved steps, a window of LossNotDecreasing and its rise.
    const std::vector<std::pair<std::string, std::string>> ranges{{"0", "62"}, {"62", "113"}, {"113", "151"}, {"151", ""}};
    std::vector<std::string> merge_args{"--merge"};
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        const std::string part = (dir.path() / ("part" + std::to_string(i) + ".json")).string();
        std::vector<std::string> args{"--start-step", ranges[i].first, "-o", part};
        if (!ranges[i].second.empty()) {
            args.insert(args.end(), {"--end-step", ranges[i].second});
        }
        const auto r = tdbg_rules(with(args));
        INFO(r.err);
        CHECK((r.status == 0 || r.status == 1 || r.status == 2));
        merge_args.push_back(part);
    }
    const std::string merged_file = (dir.path() / "merged.json").string();
    merge_args.insert(merge_args.end(), {"--json", "-o", merged_file});
    const auto merged = tdbg_rules(merge_args);
    INFO(merged.err);
    CHECK(merged.status == whole.status);

    const auto one = nlohmann::json::parse(tdbg::test::read_file(whole_file)).at("results");
    const auto parts = nlohmann::json::parse(tdbg::test::read_file(merged_file)).at("results");
    REQUIRE(one.size() == 3);
    REQUIRE(parts.size() == 3);
    for (std::size_t i = 0; i < one.size(); ++i) {
        CHECK(verdict_of(parts[i]) == verdict_of(one[i]));
    }
    CHECK(steps_of(one[0].at("triggered_steps")).size() > 3);  // the stall and the rise
    CHECK(steps_of(one[1].at("triggered_steps")) == std::vector<std::int64_t>{0, 37, 74, 111, 148, 185});
    CHECK(one[0].at("skipped_steps").at("StepUnavailable") == nlohmann::json{60, 61, 62, 63, 64});

    // The text of the merge, and parts that overlap refused.
    const auto text = tdbg_rules({"--merge", merge_args[1], merge_args[2], merge_args[3], merge_args[4]});
    CHECK(text.status == 1);
    CHECK_THAT(text.out, Catch::Contains("VanishingGradient: IssuesFound") && Catch::Contains("merged from 4 parts"));
    const auto overlap = tdbg_rules({"--merge", merge_args[1], merge_args[1]});
    CHECK(overlap.status == 2);
    CHECK_THAT(overlap.err, Catch::Contains("overlap"));

    // --describe says what a range needs.
    CHECK_THAT(tdbg_rules({"--describe", "LossNotDecreasing"}).out, Catch::Contains("carries state from step to"));
    CHECK_THAT(tdbg_rules({"--describe", "VanishingGradient"}).out, Catch::Contains("each step is decided by its own"));
}

TEST_CASE("tdbg rules --worker reads one worker's values") {
    tdbg::test::temp_dir dir("rules_cli_worker");
    const tdbg::test::rule_run run(dir.path() / "run");
    for (const char* worker : {"worker_0", "worker_1"}) {
        run.collections({{"gradients", "^gradient/"}}, worker, 2);
    }
    // worker_1's gradient vanishes at step 1; worker_0's never does.
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(s, {{"gradient/w", tdbg::test::f32({1.0F}), {}}}, tdbg::mode::train, s, "worker_0");
        run.step(s, {{"gradient/w", tdbg::test::f32({s == 1 ? 0.0F : 1.0F}), {}}}, tdbg::mode::train, s, "worker_1");
    }
    run.end();
    const auto all = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--json"});
    const auto one = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--worker", "worker_1", "--json"});
    INFO(all.err << one.err);
    CHECK(all.status == 0); // the default worker, worker_0
    CHECK(one.status == 1);
    CHECK(steps_of(nlohmann::json::parse(one.out).at("results")[0].at("triggered_steps")) ==
          std::vector<std::int64_t>{1});
    const auto bad = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--worker", "worker_7"});
    CHECK(bad.status == 2);
    CHECK_THAT(bad.err, Catch::Contains("invalid worker 'worker_7'"));
}

TEST_CASE("tdbg rules reads only each step's first worker's index file when its rules read no other worker") {
    CHECK(tdbg::rules::registry::workers_read("VanishingGradient") == tdbg::rules::worker_reads::first_worker);
    CHECK(tdbg::rules::registry::workers_read("LossNotDecreasing") == tdbg::rules::worker_reads::first_worker);
    CHECK(tdbg::rules::registry::workers_read("ExplodingTensor") == tdbg::rules::worker_reads::every_worker);
    CHECK(tdbg::rules::registry::workers_read("NoSuchRule") == tdbg::rules::worker_reads::every_worker);

    tdbg::test::temp_dir dir("rules_cli_first_worker");
    const tdbg::test::rule_run run(dir.path() / "run");
    for (const char* worker : {"worker_0", "worker_1"}) {
        run.collections({{"gradients", "^gradient/"}}, worker, 2);
    }
    // Steps 0 and 1 by both workers, worker_1's gradient vanishing at both; step 2 by worker_1
    // alone (worker_0 stopped), where its gradient vanishes: the step's default worker.
    for (std::int64_t s = 0; s < 2; ++s) {
        run.step(s, {{"gradient/w", tdbg::test::f32({1.0F}), {}}}, tdbg::mode::train, s, "worker_0");
        run.step(s, {{"gradient/w", tdbg::test::f32({0.0F}), {}}}, tdbg::mode::train, s, "worker_1");
    }
    run.step(2, {{"gradient/w", tdbg::test::f32({0.0F}), {}}}, tdbg::mode::train, 2, "worker_1");
    run.end();
    const auto before = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--json"});
    INFO(before.err);
    CHECK(before.status == 1);
    CHECK(steps_of(nlohmann::json::parse(before.out).at("results")[0].at("triggered_steps")) ==
          std::vector<std::int64_t>{2});

    // worker_1's index files of steps 0 and 1 made unreadable: never read, the verdict is the same;
    // a rule that reads every worker's values meets them, and says which file.
    for (std::int64_t s = 0; s < 2; ++s) {
        std::ofstream(dir.path() / "run" / ("index/000000000/00000000000" + std::to_string(s) + "_worker_1.json"))
            << "not json";
    }
    const auto after = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--json"});
    INFO(after.err);
    CHECK(after.status == 1);
    CHECK(steps_of(nlohmann::json::parse(after.out).at("results")[0].at("triggered_steps")) ==
          std::vector<std::int64_t>{2});
    const auto every = tdbg_rules({run.path(), "--rule", "ExplodingTensor"});
    CHECK(every.status == 2);
    CHECK_THAT(every.err, Catch::Contains("000000000000_worker_1.json"));
}
