#pragma once
/// \file
/// Definitions of tdbg/hook/detail/stop_watch.hpp.

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "tdbg/hook/detail/stop_watch.hpp"

namespace tdbg::detail {

TDBG_DECL void stop_watch::ask() {
    {
        std::lock_guard<std::mutex> lock(mutex_); // held by the watch only between its looks
        asked_ = true;
    }
    wake_.notify_all();
}

TDBG_DECL void stop_watch::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

TDBG_DECL std::optional<stop_request> stop_watch::look(const any_storage& storage) {
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

TDBG_DECL void stop_watch::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        asked_ = false; // this look answers every ask so far
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
        const auto woken = [this] { return stopping_ || asked_; };
        if (interval_.count() > 0) {
            wake_.wait_for(lock, interval_, woken);
        } else {
            wake_.wait(lock, woken);
        }
    }
}

} // namespace tdbg::detail
