#pragma once
// SIGINT and SIGTERM as a request to stop and report, for a subcommand that
// may wait a long time (`tdbg rules --follow` on a run whose writer died).

#include <chrono>
#include <string_view>

namespace tdbg::cli {

/// While it lives, SIGINT and SIGTERM are recorded instead of ending the
/// program: the handler only stores the signal and writes a byte to a pipe
/// that wait() watches, so a waiting loop notices at once and the command can
/// print what it found. A second signal ends the program as the first would
/// have. A signal the program was started ignoring stays ignored. One at a time.
class interruption {
public:
    interruption();
    ~interruption();
    interruption(const interruption&) = delete;
    interruption& operator=(const interruption&) = delete;

    /// The signal received (SIGINT or SIGTERM), 0 while none was.
    [[nodiscard]] int signal() const noexcept;
    /// True once a signal was received.
    [[nodiscard]] bool requested() const noexcept { return signal() != 0; }
    /// Waits up to `timeout` for a signal; true when one was received (before or during).
    [[nodiscard]] bool wait(std::chrono::milliseconds timeout) const;
    /// "SIGINT" or "SIGTERM" ("" while none was received).
    [[nodiscard]] std::string_view signal_name() const noexcept;
    /// The exit status a shell reports for the signal: 128 + its number (130, 143).
    [[nodiscard]] int exit_status() const noexcept { return 128 + signal(); }
};

/// True once a signal was received while an interruption lives: for checks that
/// cannot reach the object, such as the S3 storage's cancellation (s3_scheme.cpp),
/// which ends a transfer in progress. Async-signal-safe and thread-safe.
[[nodiscard]] bool interrupted() noexcept;

} // namespace tdbg::cli
