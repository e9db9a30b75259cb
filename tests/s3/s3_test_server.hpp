#pragma once
// The loopback S3 server of the S3 tests: started once per test process by
// scripts/s3-server.sh on a free port, data in the build tree, stopped at exit.
// Tests skip with a message only when python3-swift is not installed; with
// TDBG_S3_REQUIRE_SERVER=1 in the environment (CI) they fail instead.

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <chrono>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "support.hpp"
#include "tdbg/storage/s3.hpp"

namespace tdbg::test {

/// The server of this test process.
class s3_test_server {
public:
    static constexpr const char* access_key_id = "test:tester";
    static constexpr const char* secret_access_key = "testing";

    /// The process's server, started on first use.
    static s3_test_server& instance() {
        static s3_test_server server;
        return server;
    }

    s3_test_server(const s3_test_server&) = delete;
    s3_test_server& operator=(const s3_test_server&) = delete;
    ~s3_test_server() {
        if (running_) {
            stop();
        }
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    /// True when the server runs; otherwise `problem()` says why.
    [[nodiscard]] bool available() const noexcept { return running_; }
    /// Why the server is not available.
    [[nodiscard]] const std::string& problem() const noexcept { return problem_; }
    /// True when the server is unavailable only because python3-swift is missing (skip, don't fail).
    [[nodiscard]] bool skippable() const noexcept { return skippable_; }
    /// "http://127.0.0.1:<port>".
    [[nodiscard]] const std::string& endpoint() const noexcept { return endpoint_; }

    /// Options for the server, ignoring the process environment.
    [[nodiscard]] s3_options options() const {
        s3_options o;
        o.use_environment = false;
        o.endpoint_url = endpoint_;
        o.access_key_id = access_key_id;
        o.secret_access_key = secret_access_key;
        o.region = "us-east-1";
        return o;
    }

    /// A fresh bucket (created) and an `s3://bucket/prefix` URL in it.
    [[nodiscard]] std::string new_run(const std::string& prefix = "run") {
        static std::atomic<int> counter{0};
        const std::string bucket = "tdbg-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        s3_storage("s3://" + bucket, options()).create_bucket();
        return "s3://" + bucket + "/" + prefix;
    }

    /// options() with short waits and many attempts: a client that rides out an outage()
    /// and resumes soon after the server is back.
    [[nodiscard]] s3_options patient_options() const {
        s3_options o = options();
        o.retry.max_delay = std::chrono::milliseconds(500);
        o.retry.max_attempts = 200;
        o.retry.max_elapsed = std::chrono::milliseconds(90'000);
        return o;
    }

    /// Waits until `ready()` (a writer got far enough, or gave up), then SIGKILLs the
    /// server, calls `killed()` (a writer that waits for it then meets the dead server,
    /// however slowly the kill went), keeps the server down for `down` and starts it again.
    template <class Ready, class Killed>
    void outage(Ready&& ready, Killed&& killed, std::chrono::milliseconds down = std::chrono::milliseconds(1500)) {
        while (!ready()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        kill();
        killed();
        std::this_thread::sleep_for(down);
        restart();
    }

    /// SIGKILLs the server, as a crash would.
    void kill() {
        run_shell(script() + " kill " + shell_quote(dir_.string()));
        running_ = false;
    }

    /// Starts the server again on the same port, with the same data.
    void restart() {
        const std::string port = endpoint_.substr(endpoint_.rfind(':') + 1);
        start(port);
    }

    /// Stops the server.
    void stop() {
        run_shell(script() + " stop " + shell_quote(dir_.string()));
        running_ = false;
    }

private:
    s3_test_server() {
        dir_ = std::filesystem::path(TDBG_S3_DATA_DIR) / ("server_" + std::to_string(::getpid()));
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
        std::filesystem::create_directories(dir_);
        const auto [status, output, errors] = run_shell(script() + " check 2>&1");
        if (status == 3) {
            skippable_ = std::getenv("TDBG_S3_REQUIRE_SERVER") == nullptr;
            problem_ = output;
            return;
        }
        start("0");
    }

    static std::string script() { return shell_quote(TDBG_S3_SERVER_SCRIPT); }

    void start(const std::string& port) {
        // the server exits by itself if this process dies without stopping it
        const std::string command = "S3_PARENT_PID=" + std::to_string(::getpid()) + " " + script() + " start " +
                                    shell_quote(dir_.string()) + " " + port + " 2>&1";
        const auto [status, output, errors] = run_shell(command);
        if (status != 0) {
            problem_ = "cannot start the S3 server: " + output;
            running_ = false;
            return;
        }
        endpoint_ = output.substr(0, output.find('\n'));
        running_ = true;
    }

    std::filesystem::path dir_;
    std::string endpoint_;
    std::string problem_;
    bool running_ = false;
    bool skippable_ = false;
};

} // namespace tdbg::test

/// Skips (python3-swift missing) or fails (server broken) unless the S3 server runs.
#define TDBG_REQUIRE_S3_SERVER(server)                                                                                 \
    do {                                                                                                               \
        if (!(server).available()) {                                                                                   \
            if ((server).skippable()) {                                                                                \
                TDBG_SKIP("no S3 server: " << (server).problem());                                                     \
            }                                                                                                          \
            FAIL((server).problem());                                                                                  \
        }                                                                                                              \
    } while (false)
