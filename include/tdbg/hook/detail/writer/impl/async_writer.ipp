#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/async_writer.hpp.

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "tdbg/format/layout.hpp"
#include "tdbg/hook/detail/writer/tensorboard_writer.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"

namespace tdbg::detail {

TDBG_DECL void write_failure::record(std::exception_ptr e, std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopped()) {
        error_ = std::move(e);
        failed_.store(true, std::memory_order_release);
    }
    // Jobs sent while closing carry no_item_seq: an error there still stops the writer.
    const std::uint64_t at = std::min(seq, no_item_seq - 1);
    if (at < seq_.load(std::memory_order_relaxed)) {
        seq_.store(at, std::memory_order_release);
    }
}

TDBG_DECL std::exception_ptr write_failure::take() {
    if (!failed_.load(std::memory_order_acquire)) {
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    failed_.store(false, std::memory_order_release);
    return std::exchange(error_, nullptr);
}

TDBG_DECL void lower_thread_priority([[maybe_unused]] int nice) noexcept {
#if defined(__linux__)
    if (nice > 0) {
        // Linux applies a thread id's nice value to that thread only. Failure changes nothing.
        const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
        errno = 0;
        const int current = ::getpriority(PRIO_PROCESS, tid);
        if (errno == 0) {
            (void)::setpriority(PRIO_PROCESS, tid, std::min(19, current + nice));
        }
    }
#endif
}

TDBG_DECL double thread_cpu_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

TDBG_DECL async_writer::async_writer(any_storage storage, const writer_options& options)
    : queue_(options.data_threads, options), publisher_(std::move(storage), options, failure_, queue_) {
    format::validate_worker_name(options.worker);
    const std::string host = tensorboard_writer::host_name();
    for (std::size_t i = 0; i < queue_.lanes(); ++i) {
        lanes_.push_back(std::make_unique<write_lane>(i, options, host, queue_, publisher_, failure_));
    }
    try {
        publisher_.start();
        for (auto& l : lanes_) {
            l->start();
        }
    } catch (...) {
        stop_lanes();
        publisher_.stop();
        throw;
    }
}

TDBG_DECL async_writer::~async_writer() {
    try {
        close();
    } catch (...) { // NOLINT(bugprone-empty-catch): a destructor must not throw; close() reports
    }
}

TDBG_DECL bool async_writer::push(item it) {
    if (stopped()) {
        return false;
    }
    return queue_.push(std::move(it));
}

TDBG_DECL void async_writer::prepare_step(std::int64_t step) { publisher_.prepare_step(step); }

TDBG_DECL void async_writer::flush() {
    queue_.wait_handled();
    publisher_.wait_done();
}

TDBG_DECL void async_writer::close() {
    stop_lanes();
    publisher_.stop();
}

TDBG_DECL void async_writer::fail(std::exception_ptr e) { failure_.record(std::move(e), 0); }

TDBG_DECL std::exception_ptr async_writer::take_error() { return failure_.take(); }

TDBG_DECL std::uint64_t async_writer::dropped() const { return queue_.dropped(); }

TDBG_DECL std::uint64_t async_writer::blocked() const { return queue_.blocked(); }

TDBG_DECL std::pair<double, double> async_writer::thread_cpu_seconds() const noexcept {
    double data = 0;
    for (const auto& l : lanes_) {
        data += l->cpu_seconds();
    }
    return {data, publisher_.cpu_seconds()};
}

TDBG_DECL std::size_t async_writer::queued_bytes() const { return queue_.queued_bytes(); }

TDBG_DECL void async_writer::stop_lanes() {
    queue_.close();
    for (auto& l : lanes_) {
        l->join();
    }
}

} // namespace tdbg::detail
