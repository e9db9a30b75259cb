#pragma once
/// \file
/// The hook's watch for the early-stop marker (format/stop_marker.hpp): a
/// background thread that looks for it, so that the training thread never waits
/// on storage for it (a `stat`, or a HEAD request on S3, which an S3 outage makes
/// a minute of retries); begin_step() only reads what the watch found. One
/// mechanism for every hook_options::stop_check_interval: the watch looks once per
/// interval, or, with 0, once for each ask() (begin_step asks at every step). An
/// ask while a look is in progress is answered by one more look after it, so a
/// marker written before an ask is found by a look that starts after it.

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Looks for the stop marker of `storage` every `interval` (0: at each ask()) until it is
/// found or the watch ends; its first look is at its start.
class stop_watch {
public:
    stop_watch(any_storage storage, std::chrono::milliseconds interval)
        : storage_(std::move(storage)), interval_(interval), thread_([this] { run(); }) {}
    stop_watch(const stop_watch&) = delete;
    stop_watch& operator=(const stop_watch&) = delete;
    stop_watch(stop_watch&&) = delete;
    stop_watch& operator=(stop_watch&&) = delete;
    ~stop_watch() { stop(); }

    /// The request, once the marker has been found.
    [[nodiscard]] std::optional<stop_request> found() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return found_;
    }

    /// Asks for a fresh look, at once or after the look in progress; never waits for it.
    TDBG_DECL void ask();

    /// Ends the watch (idempotent). Waits for a look in progress, which the storage's
    /// own deadlines bound (s3_options: its retries).
    TDBG_DECL void stop();

    /// Reads the marker if it is there: its request; none when it is not (or storage is out of reach).
    [[nodiscard]] TDBG_DECL static std::optional<stop_request> look(const any_storage& storage);

private:
    TDBG_DECL void run();

    any_storage storage_;
    std::chrono::milliseconds interval_; // 0: no look but those asked for
    mutable std::mutex mutex_;
    std::condition_variable wake_; // an ask, or the end
    bool stopping_ = false;
    bool asked_ = false; // a look was asked for since the last one started
    std::optional<stop_request> found_;
    std::thread thread_; // last: started once the members above exist
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/stop_watch.ipp"
#endif
