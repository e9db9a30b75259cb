#pragma once
// Helpers shared by tdbg's tests: fixture lookup and scratch directories.

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

namespace tdbg::test {

/// ../shared/fixtures/smdebug, when present (TDBG_SHARED_DIR overrides at run time).
inline std::optional<std::filesystem::path> fixtures_dir() {
    const char* env = std::getenv("TDBG_SHARED_DIR");
    const std::filesystem::path shared = env != nullptr ? std::filesystem::path(env) : std::filesystem::path(TDBG_SHARED_DIR);
    auto dir = shared / "fixtures" / "smdebug";
    if (std::filesystem::is_directory(dir)) {
        return dir;
    }
    return std::nullopt;
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

} // namespace tdbg::test

/// Skips the current test with a message that ctest recognises as a skip.
#define TDBG_SKIP(message)                                                                                             \
    do {                                                                                                               \
        WARN("SKIPPED: " << message);                                                                                  \
        return;                                                                                                        \
    } while (false)
