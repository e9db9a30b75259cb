#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/async_writer.hpp.

#include <string>

#include "tdbg/format/layout.hpp"
#include "tdbg/hook/detail/writer/tensorboard_writer.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"

namespace tdbg::detail {

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
