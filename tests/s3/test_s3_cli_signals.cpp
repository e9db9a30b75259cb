// The `tdbg` program reading an s3:// run from a server that sends its objects
// 2 bytes a second: the first SIGTERM ends it at once, while it opens the run
// or while a rule reads a step. The
// test signals the program once the server has received the request for the
// object (no sleep), and bounds the wait for its end generously.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fake_http_server.hpp"
#include "support.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere in a header

using tdbg::test::fake_http_server;
using tdbg::test::fake_reply;
using tdbg::test::recorded_request;
using namespace std::chrono_literals;

namespace {

// The collections file the dripping server's listings name (the first object a trial reads).
const std::string dripped_key = "run/collections/000000000/worker_0_collections.json";

// A server whose run has one collections file, sent 2 bytes a second; no end marker.
fake_reply dripping_run_reply(const recorded_request& r) {
    if (r.method == "HEAD") {
        return {404, "", {}, false};
    }
    if (r.target.find("list-type=2") != std::string::npos) {
        return {200,
                "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>" + dripped_key +
                    "</Key></Contents></ListBucketResult>",
                {},
                false};
    }
    fake_reply drip{200, "{\"collections\": {}}" + std::string(4000, ' '), {}, false};
    drip.drip_interval = 500ms;
    return drip;
}

// `tdbg ARGS` started in the background with the server's endpoint and credentials in its
// environment (no other AWS_* variable), SIGINT and SIGTERM as a shell's foreground job has
// them, its output in files of `dir`. Killed with SIGKILL and reaped if still running at the end.
class signalled_cli {
public:
    signalled_cli(const std::string& endpoint, const std::vector<std::string>& args, const std::filesystem::path& dir)
        : out_path_(dir / "stdout.txt"), err_path_(dir / "stderr.txt") {
        std::vector<std::string> env;
        for (char** e = environ; *e != nullptr; ++e) {
            if (std::strncmp(*e, "AWS_", 4) != 0) {
                env.emplace_back(*e);
            }
        }
        env.insert(env.end(), {"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_REGION=us-east-1",
                               "AWS_ENDPOINT_URL=" + endpoint});
        std::vector<std::string> argv_text{TDBG_CLI_PATH};
        argv_text.insert(argv_text.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& a : argv_text) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        std::vector<char*> envp;
        for (std::string& e : env) {
            envp.push_back(e.data());
        }
        envp.push_back(nullptr);

        posix_spawn_file_actions_t files;
        posix_spawnattr_t attributes;
        ::posix_spawn_file_actions_init(&files);
        ::posix_spawnattr_init(&attributes);
        ::posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
        ::posix_spawn_file_actions_addopen(&files, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::posix_spawn_file_actions_addopen(&files, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        sigset_t signals;
        sigemptyset(&signals);
        ::posix_spawnattr_setsigmask(&attributes, &signals); // a test runner may block them
        sigaddset(&signals, SIGINT);
        sigaddset(&signals, SIGTERM);
        ::posix_spawnattr_setsigdefault(&attributes, &signals); // or ignore them
        ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        const int rc = ::posix_spawn(&pid_, argv[0], &files, &attributes, argv.data(), envp.data());
        ::posix_spawn_file_actions_destroy(&files);
        ::posix_spawnattr_destroy(&attributes);
        if (rc != 0) {
            throw std::runtime_error(std::string("cannot start tdbg: ") + std::strerror(rc));
        }
        ended_ = std::async(std::launch::async, [pid = pid_] {
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return status;
        });
    }
    signalled_cli(const signalled_cli&) = delete;
    signalled_cli& operator=(const signalled_cli&) = delete;
    ~signalled_cli() {
        if (ended_.valid() && ended_.wait_for(0s) != std::future_status::ready) {
            ::kill(pid_, SIGKILL);
        }
    }

    void send(int sig) const { ::kill(pid_, sig); }

    /// Its wait status, once it ended within `limit` (a bound, not a pace); nullopt if it did not.
    std::optional<int> end_within(std::chrono::seconds limit) {
        if (ended_.wait_for(limit) != std::future_status::ready) {
            return std::nullopt;
        }
        return ended_.get();
    }

    [[nodiscard]] std::string out() const { return tdbg::test::read_file(out_path_); }
    [[nodiscard]] std::string err() const { return tdbg::test::read_file(err_path_); }

private:
    std::filesystem::path out_path_;
    std::filesystem::path err_path_;
    pid_t pid_ = -1;
    std::future<int> ended_;
};

bool requested_dripped_object(const recorded_request& r) {
    return r.method == "GET" && r.target == "/bkt/" + dripped_key;
}

// "%2F" and the like decoded (the listing's prefix as the client encoded it).
std::string percent_decoded(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size()) {
            out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

// The run `local` served below bucket "bkt", prefix "run": listings and small files at
// once, every event file 2 bytes a second (a server that ignores Range, as S3 allows).
tdbg::test::fake_responder dripping_events_responder(const std::filesystem::path& local) {
    return [local](const recorded_request& r) {
        if (r.target.find("list-type=2") != std::string::npos) {
            const std::size_t at = r.target.find("prefix=");
            const std::size_t end = r.target.find('&', at);
            const std::string prefix =
                percent_decoded(r.target.substr(at + 7, end == std::string::npos ? end : end - at - 7));
            std::vector<std::string> keys;
            for (const auto& entry : std::filesystem::recursive_directory_iterator(local)) {
                const std::string key = "run/" + std::filesystem::relative(entry.path(), local).generic_string();
                if (entry.is_regular_file() && key.compare(0, prefix.size(), prefix) == 0) {
                    keys.push_back(key);
                }
            }
            std::sort(keys.begin(), keys.end());
            std::string body = "<ListBucketResult><IsTruncated>false</IsTruncated>";
            for (const std::string& key : keys) {
                body += "<Contents><Key>" + key + "</Key></Contents>";
            }
            return fake_reply{200, body + "</ListBucketResult>", {}, false};
        }
        const std::string key = r.target.substr(std::string("/bkt/run/").size());
        const std::filesystem::path file = local / key;
        if (!std::filesystem::is_regular_file(file)) {
            return fake_reply{404, "<Error><Code>NoSuchKey</Code></Error>", {}, false};
        }
        fake_reply reply{200, tdbg::test::read_file(file), {}, false};
        if (key.compare(0, 7, "events/") == 0) {
            reply.drip_interval = 500ms;
        }
        return reply;
    };
}

bool requested_event_file(const recorded_request& r) {
    return r.method == "GET" && r.target.find("/bkt/run/events/") == 0;
}

} // namespace

TEST_CASE("tdbg rules reading an S3 object that drips ends at the first SIGTERM, exit 143") {
    fake_http_server server(&dripping_run_reply);
    tdbg::test::temp_dir dir("s3_cli_sigterm");
    signalled_cli rules(server.endpoint(), {"rules", "s3://bkt/run", "--rule", "VanishingGradient"}, dir.path());
    REQUIRE(server.wait_for_request(&requested_dripped_object, 120s));
    rules.send(SIGTERM);
    const auto status = rules.end_within(60s); // the read would last half an hour
    INFO(rules.err());
    REQUIRE(status.has_value());
    REQUIRE(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 143);
    CHECK_THAT(rules.err(), Catch::Contains("tdbg rules: s3://bkt/run: interrupted while reading the run (SIGTERM)"));
}

TEST_CASE("tdbg ls and dump reading an S3 object that drips end at the first SIGTERM") {
    for (const std::string& command : {std::string("ls"), std::string("dump")}) {
        INFO(command);
        fake_http_server server(&dripping_run_reply);
        tdbg::test::temp_dir dir("s3_cli_sigterm_" + command);
        signalled_cli cli(server.endpoint(), {command, "s3://bkt/run"}, dir.path());
        REQUIRE(server.wait_for_request(&requested_dripped_object, 120s));
        cli.send(SIGTERM);
        const auto status = cli.end_within(60s);
        REQUIRE(status.has_value());
        // Ended by the signal (status 143 in a shell), or having caught it, with exit status 143.
        const bool by_signal = WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM;
        const bool exit_143 = WIFEXITED(*status) && WEXITSTATUS(*status) == 143;
        CHECK((by_signal || exit_143));
    }
}

TEST_CASE("tdbg rules evaluating a rule over an S3 run whose event files drip ends at the first SIGTERM, exit 143") {
    const auto fixtures = tdbg::test::fixtures_dir();
    fake_http_server server(dripping_events_responder(fixtures / "vanishing_run"));
    tdbg::test::temp_dir dir("s3_cli_sigterm_rule");
    signalled_cli rules(server.endpoint(), {"rules", "s3://bkt/run", "--rule", "VanishingGradient", "--json"},
                        dir.path());
    REQUIRE(server.wait_for_request(&requested_event_file, 120s)); // the run is open, the rule reads a step
    rules.send(SIGTERM);
    const auto status = rules.end_within(60s);
    INFO(rules.err());
    REQUIRE(status.has_value());
    REQUIRE(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 143);
    CHECK_THAT(rules.err(), Catch::Contains("tdbg rules: interrupted by SIGTERM"));
    const auto doc = nlohmann::json::parse(rules.out());
    CHECK(doc.at("interrupted") == "SIGTERM");
    REQUIRE(doc.at("results").size() == 1);
    CHECK(doc["results"][0].at("end") == "interrupted");
    CHECK(doc["results"][0].at("status") == "Stopped");
}
