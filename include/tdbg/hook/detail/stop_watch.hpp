#pragma once
/// \file
/// The hook's watch for the early-stop marker (format/stop_marker.hpp): a
/// background thread that looks for it once per interval, so that the training
/// thread never waits on storage for it (a `stat`, or a HEAD request on S3);
/// begin_step() only reads what the watch found.

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "tdbg/core/error.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Looks for the stop marker of `storage` every `interval` until it is found or the watch ends.
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

    /// Ends the watch (idempotent).
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) {
            thread_.join();
        }
    }

    /// Reads the marker if it is there: its request; none when it is not (or storage is out of reach).
    [[nodiscard]] static std::optional<stop_request> look(const any_storage& storage) {
        const std::string key(format::stop_marker_key);
        try {
            if (!storage.exists(key)) {
                return std::nullopt;
            }
        } catch (const storage_error&) {
            return std::nullopt; // out of reach: no request seen this time; writing reports an outage
        }
        std::string text;
        try {
            text = storage.read(key);
        } catch (const storage_error&) { // NOLINT(bugprone-empty-catch)
            // Present but unreadable (being replaced): its presence is the request.
        }
        return parse_stop_marker(text);
    }

private:
    void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stopping_) {
            lock.unlock();
            std::optional<stop_request> request;
            try {
                request = look(storage_);
            } catch (const std::exception&) { // NOLINT(bugprone-empty-catch): a marker that cannot be read yet; next time
            }
            lock.lock();
            if (request) {
                found_ = std::move(request);
                return;
            }
            wake_.wait_for(lock, interval_, [this] { return stopping_; });
        }
    }

    any_storage storage_;
    std::chrono::milliseconds interval_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::optional<stop_request> found_;
    std::thread thread_; // last: started once the members above exist
};

} // namespace tdbg::detail
