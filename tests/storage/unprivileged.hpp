#pragma once
// Runs a check where file permissions apply: in this process when it is not root, else in a
// child process that has given up root (user and group 65534, "nobody"). Root reads any
// directory, so a test of "this directory cannot be read" needs someone who cannot.

#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include <grp.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tdbg::test {

/// The exit status `check` returned, run without root's powers; nullopt when they cannot be
/// given up here (the caller skips with a message). `check` must not leave the child by an
/// exception: it returns 0 for success, anything else for a failure it explains on stderr.
inline std::optional<int> run_unprivileged(const std::function<int()>& check) {
    if (::geteuid() != 0) {
        return check();
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        return std::nullopt;
    }
    if (pid == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0 || ::geteuid() == 0) {
            ::_exit(77);
        }
        int status = 99;
        try {
            status = check();
        } catch (...) {
            status = 98;
        }
        ::_exit(status);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    if (WEXITSTATUS(status) == 77) {
        return std::nullopt;
    }
    return WEXITSTATUS(status);
}

// For a check run by run_unprivileged: 0 when the error message `what` names `path`
// and says "Permission denied", else 2 (the message printed).
inline int permission_denied_status(const std::string& what, const std::string& path) {
    if (what.find(path) == std::string::npos || what.find("Permission denied") == std::string::npos) {
        std::fprintf(stderr, "unexpected message: %s\n", what.c_str());
        return 2;
    }
    return 0;
}

} // namespace tdbg::test
