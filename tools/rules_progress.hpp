#pragma once
// How far `tdbg rules` is (cmd_rules.cpp): a status line on stderr for a terminal, and the
// --progress file of one JSON line per step evaluated. Each is safe to call from the threads
// that take the rules' turns.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/invoke.hpp"

#include "output_file.hpp"

namespace tdbg::cli {

// One status line on stderr, redrawn at most every 100 ms, for a terminal only.
class progress_line {
public:
    progress_line(bool enabled, std::size_t rules, std::ostream& err) : enabled_(enabled), states_(rules), err_(&err) {}
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;
    ~progress_line() { finish(); }

    void start(std::size_t index, std::string name, std::optional<std::int64_t> first, std::optional<std::int64_t> end) {
        std::lock_guard<std::mutex> lock(mutex_);
        states_[index] = state{std::move(name), first, end, std::nullopt, true};
        draw(true);
    }
    void step(std::size_t index, std::int64_t step) {
        std::lock_guard<std::mutex> lock(mutex_);
        states_[index].step = step;
        if (!states_[index].first) {
            states_[index].first = step;
        }
        draw(false);
    }
    void done(std::size_t index) {
        std::lock_guard<std::mutex> lock(mutex_);
        states_[index].running = false;
        draw(true);
    }
    void finish() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (enabled_ && drawn_) {
            *err_ << "\r\033[K" << std::flush;
            drawn_ = false;
        }
    }

private:
    struct state {
        std::string name;
        std::optional<std::int64_t> first;
        std::optional<std::int64_t> end;
        std::optional<std::int64_t> step;
        bool running = false;
    };

    void draw(bool force) {
        if (!enabled_) {
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!force && now - last_ < std::chrono::milliseconds(100)) {
            return;
        }
        last_ = now;
        std::string line;
        for (const state& s : states_) {
            if (!s.running) {
                continue;
            }
            if (!line.empty()) {
                line += " | ";
            }
            line += tdbg::terminal_safe(s.name); // a rule's name may come from a configuration file
            if (s.end && s.first && s.step) {
                const auto total = static_cast<double>(*s.end - *s.first);
                const auto done = static_cast<double>(*s.step - *s.first + 1);
                const double fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 1.0;
                const int width = 24;
                const int filled = static_cast<int>(fraction * width);
                fmt::format_to(std::back_inserter(line), " [{}{}] {}% step {}",
                               std::string(static_cast<std::size_t>(filled), '#'),
                               std::string(static_cast<std::size_t>(width - filled), ' '),
                               static_cast<int>(fraction * 100), *s.step);
            } else if (s.step) {
                fmt::format_to(std::back_inserter(line), " step {}", *s.step);
            } else {
                line += " waiting for steps";
            }
        }
        *err_ << "\r\033[K" << line << std::flush;
        drawn_ = true;
    }

    bool enabled_;
    std::vector<state> states_;
    std::ostream* err_;
    std::mutex mutex_;
    std::chrono::steady_clock::time_point last_{};
    bool drawn_ = false;
};

// The --progress file: a JSON line per step evaluated, flushed as it is written, so
// that a program following the evaluation (benchmarks/bench_follow.cpp) sees each step
// when it is done. A write that fails does not stop the evaluation, but it is an error:
// close() throws it (exit status 2, naming the file), as for the -o and --junit files.
class progress_file {
public:
    explicit progress_file(const std::optional<std::string>& path) {
        if (path) {
            path_ = *path;
            // Links followed as for the other outputs (output_file.hpp): never another user's
            // in a sticky, world-writable directory.
            try {
                file_ = open_output_stream(*path);
            } catch (const tdbg::error& e) {
                const std::string what = e.what(); // "cannot write FILE: reason"
                const std::string lead = "cannot write ";
                throw tdbg::error(what.rfind(lead, 0) == 0 ? "cannot write the --progress file " + what.substr(lead.size())
                                                           : what);
            }
        }
    }
    progress_file(const progress_file&) = delete;
    progress_file& operator=(const progress_file&) = delete;
    ~progress_file() {
        if (file_ != nullptr) {
            std::fclose(file_);
        }
    }

    /// Closes the file; throws tdbg::error naming it when a line could not be written.
    void close() {
        if (file_ == nullptr) {
            return;
        }
        errno = 0;
        if (std::fclose(std::exchange(file_, nullptr)) != 0 && failure_ == 0) {
            failure_ = errno != 0 ? errno : EIO;
        }
        if (failure_ != 0) {
            throw tdbg::error(fmt::format("cannot write the --progress file {}: {} (the file is incomplete)", path_,
                                          std::strerror(failure_)));
        }
    }

    void step(const std::string& rule, std::int64_t step, tdbg::rules::step_outcome what) {
        if (file_ == nullptr) {
            return;
        }
        const double now =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        std::string line = "{\"rule\": ";
        tdbg::format::append_json_string(line, rule, true);
        fmt::format_to(std::back_inserter(line), ", \"step\": {}, \"outcome\": \"{}\", \"time\": {:.6f}}}\n", step,
                       what == tdbg::rules::step_outcome::triggered       ? "triggered"
                       : what == tdbg::rules::step_outcome::not_triggered ? "not_triggered"
                                                                          : "skipped",
                       now);
        std::lock_guard<std::mutex> lock(mutex_); // rules evaluated side by side share the file
        if (failure_ != 0) {
            return; // the first error is the one reported; the lines after it are lost anyway
        }
        errno = 0;
        if (std::fputs(line.c_str(), file_) == EOF || std::fflush(file_) == EOF) {
            failure_ = errno != 0 ? errno : EIO;
        }
    }

private:
    std::string path_;
    std::FILE* file_ = nullptr;
    int failure_ = 0; // errno of the first write that failed
    std::mutex mutex_;
};

} // namespace tdbg::cli
