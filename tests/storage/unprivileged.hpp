#pragma once
// Runs a check where file permissions apply: in this process when it is not root, else in a
// child process that has given up root (user and group 65534, "nobody"). Root reads any
// directory, so a test of "this directory cannot be read" needs someone who cannot; and that
// someone must reach the test's run: unprivileged_scratch is a directory it can reach.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

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

/// A scratch directory that the user run_unprivileged becomes can reach, removed with its
/// contents when the object goes. Not as root, permissions apply to the test itself: the
/// tests' scratch area (as temp_dir). As root, that area lies in the build tree, which may be
/// below a directory other users cannot enter (a checkout in a 0700 home), so the directory is
/// made in the system's temporary directory instead (mkdtemp, then opened to others: 0755).
/// why_unreachable() says whether that user can enter it after all (a test skips if not).
class unprivileged_scratch {
public:
    explicit unprivileged_scratch(const std::string& tag) {
        static std::atomic<int> counter{0};
        if (::geteuid() != 0) {
            path_ = std::filesystem::path(TDBG_TEST_TMP) /
                    (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
            std::filesystem::remove_all(path_);
            std::filesystem::create_directories(path_);
            return;
        }
        std::string pattern = (std::filesystem::temp_directory_path() / ("tdbg_" + tag + "_XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("cannot create a directory like " + pattern);
        }
        path_ = pattern;
        namespace fs = std::filesystem;
        fs::permissions(path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
    }
    unprivileged_scratch(const unprivileged_scratch&) = delete;
    unprivileged_scratch& operator=(const unprivileged_scratch&) = delete;
    ~unprivileged_scratch() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

    /// Empty when the user run_unprivileged becomes can enter and read path(); else why not, for
    /// the message of a skip, which a test decides before its first assertion: root's powers
    /// cannot be given up here, or a directory above path() is closed to other users.
    [[nodiscard]] std::string why_unreachable() const {
        const auto status = run_unprivileged([&] { return ::access(path_.c_str(), R_OK | X_OK) == 0 ? 0 : 1; });
        if (!status) {
            return "running as root, and root's powers cannot be given up here (setuid to 65534 refused)";
        }
        if (*status != 0) {
            return "user 65534 cannot enter " + path_.string() + " (a directory above it is closed to other users)";
        }
        return {};
    }

private:
    std::filesystem::path path_;
};

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
