#pragma once
/// \file
/// `rule_logger`: where a rule's messages go. A small sink, stderr by default;
/// tests capture it with `log_capture`. Sinks may be called from several
/// threads (rules evaluate steps in parallel): the provided ones lock.

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/detail/utf8.hpp"

namespace tdbg::rules {

/// How important a message is.
enum class log_level { debug = 0, info = 1, warning = 2, error = 3 };

/// "DEBUG", "INFO", "WARNING" or "ERROR".
[[nodiscard]] constexpr std::string_view log_level_name(log_level level) noexcept {
    switch (level) {
    case log_level::debug: return "DEBUG";
    case log_level::info: return "INFO";
    case log_level::warning: return "WARNING";
    case log_level::error: return "ERROR";
    }
    return "INFO";
}

/// A message sink with a minimum level. Copies share the sink.
class rule_logger {
public:
    /// Receives every message at or above the logger's level.
    using sink_type = std::function<void(log_level, std::string_view)>;

    /// Writes messages of level info and above to stderr.
    rule_logger() : rule_logger(stderr_sink(), log_level::info) {}
    /// Sends messages of level `min_level` and above to `sink` (none: discards them).
    explicit rule_logger(sink_type sink, log_level min_level = log_level::info)
        : sink_(std::make_shared<sink_type>(std::move(sink))), min_level_(min_level) {}

    /// A logger that writes to stderr from `min_level` on.
    [[nodiscard]] static rule_logger to_stderr(log_level min_level = log_level::info) {
        return rule_logger(stderr_sink(), min_level);
    }
    /// A logger that discards everything.
    [[nodiscard]] static rule_logger silent() { return rule_logger(sink_type(), log_level::error); }

    /// The lowest level passed on.
    [[nodiscard]] log_level level() const noexcept { return min_level_; }
    /// True when a message of `level` would be passed on (to skip building it otherwise).
    [[nodiscard]] bool enabled(log_level level) const noexcept {
        return level >= min_level_ && sink_ && *sink_;
    }

    /// Passes `message` on at `level`.
    void log(log_level level, std::string_view message) const {
        if (enabled(level)) {
            (*sink_)(level, message);
        }
    }
    /// log(log_level::debug, message).
    void debug(std::string_view message) const { log(log_level::debug, message); }
    /// log(log_level::info, message).
    void info(std::string_view message) const { log(log_level::info, message); }
    /// log(log_level::warning, message).
    void warning(std::string_view message) const { log(log_level::warning, message); }
    /// log(log_level::error, message).
    void error(std::string_view message) const { log(log_level::error, message); }

private:
    static sink_type stderr_sink() {
        return [](log_level level, std::string_view message) {
            const std::string safe = tdbg::detail::terminal_safe(message); // names come from runs
            static std::mutex mutex; // one line at a time from parallel evaluations
            std::lock_guard<std::mutex> lock(mutex);
            std::fprintf(stderr, "[tdbg rules %s] %.*s\n", std::string(log_level_name(level)).c_str(),
                         static_cast<int>(safe.size()), safe.data());
        };
    }

    std::shared_ptr<sink_type> sink_;
    log_level min_level_ = log_level::info;
};

/// Collects messages in memory: `capture.logger()` goes to a rule, the test reads `entries()`.
class log_capture {
public:
    /// One captured message.
    struct entry {
        log_level level = log_level::info;
        std::string message;
    };

    log_capture() = default;

    /// A logger that appends to this capture (it keeps the capture's buffer alive).
    [[nodiscard]] rule_logger logger(log_level min_level = log_level::debug) const {
        auto buffer = buffer_;
        return rule_logger(
            [buffer](log_level level, std::string_view message) {
                std::lock_guard<std::mutex> lock(buffer->mutex);
                buffer->entries.push_back(entry{level, std::string(message)});
            },
            min_level);
    }

    /// Every message so far, in order.
    [[nodiscard]] std::vector<entry> entries() const {
        std::lock_guard<std::mutex> lock(buffer_->mutex);
        return buffer_->entries;
    }

    /// True when some message at or above `min_level` contains `text`.
    [[nodiscard]] bool contains(std::string_view text, log_level min_level = log_level::debug) const {
        std::lock_guard<std::mutex> lock(buffer_->mutex);
        for (const entry& e : buffer_->entries) {
            if (e.level >= min_level && e.message.find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

private:
    struct shared_buffer {
        std::mutex mutex;
        std::vector<entry> entries;
    };
    std::shared_ptr<shared_buffer> buffer_ = std::make_shared<shared_buffer>();
};

} // namespace tdbg::rules
