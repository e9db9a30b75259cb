#pragma once
// Runs the reliability trainer (tests/reliability/trainer.cpp) as a child
// process, so that a test can kill it with SIGKILL at any moment or read the
// run it writes from another process.

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere in a header

namespace tdbg::test {

/// A child process running the trainer; killed and reaped when the object goes.
class child_process {
public:
    /// Starts `program` with `args` (argv[1]...).
    child_process(const std::string& program, const std::vector<std::string>& args) {
        std::vector<std::string> storage;
        storage.push_back(program);
        storage.insert(storage.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& s : storage) {
            argv.push_back(s.data());
        }
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, program.c_str(), nullptr, nullptr, argv.data(), environ);
        if (rc != 0) {
            throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
        }
    }
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;
    ~child_process() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            (void)wait();
        }
    }

    /// Sends SIGKILL (a no-op when the child has already exited and been reaped).
    void kill() const {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
        }
    }

    /// Waits for the child; its wait status.
    int wait() {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0) {
            if (errno != EINTR) {
                throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
            }
        }
        pid_ = -1;
        return status;
    }

    /// True while the child runs (reaps it when it has exited; `status` then holds its wait status).
    bool running(int& status) {
        if (pid_ <= 0) {
            return false;
        }
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            return false;
        }
        return true;
    }

private:
    pid_t pid_ = -1;
};

/// A wait status, for messages: "exit 0", "signal 9".
inline std::string describe_status(int status) {
    if (WIFEXITED(status)) {
        return "exit " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        return "signal " + std::to_string(WTERMSIG(status));
    }
    return "status " + std::to_string(status);
}

} // namespace tdbg::test
