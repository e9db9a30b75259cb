#pragma once
// Helpers shared by tdbg's tests: fixture lookup, scratch directories, files, and
// running a program (the tdbg command line, scripts) as a shell would.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "skip.hpp"

namespace tdbg::test {

/// The message of what `f` throws (a std::exception), or "" when it returns.
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

/// Waits until `done()` holds, looking every millisecond; false if it still does not after
/// `limit`. The limit bounds a failing test, it is no pace: give the slowest machine minutes.
template <class Condition>
bool wait_until(Condition&& done, std::chrono::milliseconds limit = std::chrono::minutes(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

/// The reference runs written by Python smdebug, kept in the repository (tests/fixtures/smdebug;
/// see its README). They are part of every clone: a missing directory is an error, never a skip.
inline std::filesystem::path fixtures_dir() {
    const std::filesystem::path dir(TDBG_FIXTURES_DIR);
    if (!std::filesystem::is_directory(dir / "core_modes_workers")) {
        throw std::runtime_error("the reference runs are missing from " + dir.string() +
                                 " (tests/fixtures/smdebug belongs to every clone of tdbg)");
    }
    return dir;
}

/// The names of the reference runs in the fixtures.
inline const char* const fixture_runs[] = {"core_modes_workers", "pytorch_mlp", "vanishing_run"};

/// A fresh directory, removed with its contents when the object goes.
class temp_dir {
public:
    explicit temp_dir(const std::string& tag = "t") {
        static std::atomic<int> counter{0};
        path_ = std::filesystem::path(TDBG_TEST_TMP) /
                (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

/// The bytes of the file at `path`; throws when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path.string());
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// How many times `what` occurs in `text`, without overlaps.
// Temporary files (*.tmp) left anywhere below `dir`.
inline std::size_t temporary_files(const std::filesystem::path& dir) {
    std::size_t n = 0;
    if (std::filesystem::exists(dir)) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
            n += entry.path().extension() == ".tmp" ? 1 : 0;
        }
    }
    return n;
}

inline std::size_t count_of(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) {
        ++n;
    }
    return n;
}

/// A byte string from small integers: bytes({0x0a, 0x01}).
inline std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (const int v : values) {
        out.push_back(static_cast<char>(v));
    }
    return out;
}

/// Replaces the file at `path` with `bytes`.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw std::runtime_error("cannot write " + path.string());
    }
}

/// `text` single-quoted for the shell.
inline std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (const char c : text) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

/// What a command printed, and how it ended: its exit status, or 128 + the signal that killed it.
struct command_result {
    int status = -1;
    std::string out;
    std::string err;
};

/// Runs `command` with the shell, with no standard input, capturing its standard output and
/// standard error apart (a command that redirects its own stderr to stdout keeps doing so).
inline command_result run_shell(const std::string& command) {
    static std::atomic<int> counter{0};
    const auto err_file = std::filesystem::path(TDBG_TEST_TMP) /
                          ("stderr_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".txt");
    std::filesystem::create_directories(err_file.parent_path());
    FILE* pipe = ::popen(("( " + command + " ) 2>" + shell_quote(err_file.string()) + " </dev/null").c_str(), "r");
    if (pipe == nullptr) {
        throw std::runtime_error("cannot run " + command);
    }
    command_result r;
    char buffer[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) {
        r.out.append(buffer, n);
    }
    const int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    std::error_code ignored;
    if (std::filesystem::exists(err_file, ignored)) {
        r.err = read_file(err_file);
        std::filesystem::remove(err_file, ignored);
    }
    return r;
}

/// Runs `program` with `args` (each quoted for the shell), as run_shell does.
inline command_result run_program(const std::string& program, const std::vector<std::string>& args) {
    std::string command = shell_quote(program);
    for (const auto& a : args) {
        command += " " + shell_quote(a);
    }
    return run_shell(command);
}

} // namespace tdbg::test
