#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/publisher.hpp.

#include <exception>

#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"
#include "tdbg/hook/detail/writer/publisher.hpp"

namespace tdbg::detail {

TDBG_DECL publisher::publisher(any_storage storage, const writer_options& options, write_failure& failure,
                               const write_queue& queue)
    : storage_(std::move(storage)), worker_(options.worker), tensorboard_put_(options.tensorboard_put),
      nice_(options.nice), failure_(failure), queue_(queue) {}

TDBG_DECL void publisher::start() {
    thread_ = std::thread([this] { run(); });
}

TDBG_DECL void publisher::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closing_ = true;
    }
    work_.notify_one();
    if (thread_.joinable()) {
        thread_.join();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    prepared_.clear(); // files opened ahead and never used are removed
}

TDBG_DECL void publisher::prepare_step(std::int64_t step) {
    std::lock_guard<std::mutex> lock(mutex_);
    // At most one file ahead per data thread (and one to spare): a trainer far
    // ahead of the disk must not hold a descriptor per queued step.
    if (step <= last_prepared_ || closing_ || failure_.stopped() || prepared_.size() > queue_.lanes()) {
        return;
    }
    last_prepared_ = step;
    prepared_.try_emplace(step);
    to_open_.push_back(step);
    ++jobs_sent_;
    // Not woken for this: the publisher opens it when it next wakes (a data thread's batch),
    // or when a data thread asks for it (take_event_file). Waking it here would cost the
    // training thread a wake-up a step.
}

TDBG_DECL any_storage::writer publisher::take_event_file(std::int64_t step) {
    std::optional<any_storage::writer> ready;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        auto it = prepared_.find(step);
        // A file the publisher has not begun to open (it opens ahead when it wakes) is opened
        // here: waking it and waiting would cost two wake-ups.
        if (it != prepared_.end() && it->second.opening) {
            progress_.wait(lock, [&] { return it->second.done; });
            if (it->second.file) {
                ready.emplace(std::move(*it->second.file));
            }
        }
        if (it != prepared_.end()) {
            prepared_.erase(it);
        }
    }
    if (ready) {
        return std::move(*ready);
    }
    return storage_.open_write(format::event_file_key(step, worker_));
}

TDBG_DECL void publisher::send(std::uint64_t seq, publisher_job j) {
    std::lock_guard<std::mutex> lock(mutex_);
    ordered_.emplace(seq, std::move(j));
    ++jobs_sent_;
}

TDBG_DECL void publisher::wake() {
    {
        // Taken so that the wake-up cannot fall between the thread's check and its wait.
        std::lock_guard<std::mutex> lock(mutex_);
    }
    work_.notify_one();
}

TDBG_DECL void publisher::wait_done() {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t target = jobs_sent_;
    work_.notify_one(); // files to open ahead wait for a wake-up (prepare_step)
    progress_.wait(lock, [&] { return jobs_done_ >= target; });
}

TDBG_DECL void publisher::run_ready() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (running_) {
        return; // the thread running jobs looks for more before it stops
    }
    running_ = true;
    run_ready_locked(lock);
    running_ = false;
    if (closing_) {
        work_.notify_one(); // the publisher thread waits for running_ to run what is left
    }
}

TDBG_DECL void publisher::run() {
    lower_thread_priority(nice_);
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        work_.wait(lock, [&] { return !running_ && (work_ready() || closing_); });
        if (!work_ready()) {
            break; // closing, nothing left
        }
        running_ = true;
        run_ready_locked(lock);
        running_ = false;
    }
    lock.unlock();
    cpu_.store(thread_cpu_now());
}

TDBG_DECL bool publisher::work_ready() const {
    return !to_open_.empty() ||
           (!ordered_.empty() && (closing_ || ordered_.begin()->first < queue_.handled()));
}

// Files to open ahead go first; the rest in the order of pushes, each once the data threads
// have handled every item queued before it (all of them at closing). The readiness is checked
// and running_ given up under one hold of the lock, so that work made ready while a thread
// runs is run by that thread or by the next caller.
TDBG_DECL void publisher::run_ready_locked(std::unique_lock<std::mutex>& lock) {
    while (work_ready()) {
        std::optional<publisher_job> j;
        std::uint64_t seq = 0;
        std::optional<std::int64_t> open_ahead;
        if (!to_open_.empty()) {
            const auto it = prepared_.find(to_open_.front());
            if (it != prepared_.end()) { // else a data thread opened it itself
                it->second.opening = true;
                open_ahead = to_open_.front();
            }
            to_open_.pop_front();
        } else {
            seq = ordered_.begin()->first;
            j.emplace(std::move(ordered_.begin()->second));
            ordered_.erase(ordered_.begin());
        }
        lock.unlock();
        if (open_ahead) {
            open_file_ahead(*open_ahead);
        } else if (j) {
            std::visit([&](auto& x) { run_job(x, seq); }, *j);
            j.reset();
        }
        lock.lock();
        ++jobs_done_;
        progress_.notify_all();
    }
}

TDBG_DECL void publisher::open_file_ahead(std::int64_t step) {
    std::optional<any_storage::writer> file;
    try {
        if (!failure_.stopped()) {
            file.emplace(storage_.open_write(format::event_file_key(step, worker_)));
        }
    } catch (...) { // NOLINT(bugprone-empty-catch): the data thread opens the file itself and reports
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = prepared_.find(step);
    if (it != prepared_.end()) {
        it->second.done = true;
        if (file) {
            it->second.file.emplace(std::move(*file));
        }
    }
    // else: no longer wanted; `file` is closed uncommitted on leaving, which removes it
}

TDBG_DECL void publisher::run_job(publish_job& p, std::uint64_t seq) {
    discard_prepared_up_to(p.step);
    if (failure_.given_up(seq)) {
        withdraw(p);
        return;
    }
    try {
        // The event file is complete on storage: an index may name its records.
        if (p.index) {
            storage_.put(format::index_file_key(p.step, worker_), *p.index);
        }
    } catch (...) {
        failure_.record(std::current_exception(), seq);
        withdraw(p);
        return;
    }
    for (const auto& [key, bytes] : p.tensorboard) {
        try {
            tensorboard_put_(key, bytes);
        } catch (...) {
            failure_.record(std::current_exception(), seq);
            return;
        }
    }
}

TDBG_DECL void publisher::run_job(object_job& o, std::uint64_t seq) {
    if (failure_.given_up(seq)) {
        return; // no collections file or end marker after an error
    }
    try {
        storage_.put(o.key, o.bytes);
    } catch (...) {
        failure_.record(std::current_exception(), seq);
    }
}

// An event file whose index will not be published: nothing would read it, so it
// is removed rather than left to fill the disk (kept when the storage cannot remove).
TDBG_DECL void publisher::withdraw(const publish_job& p) {
    if (!p.event_file) {
        return;
    }
    try {
        (void)storage_.remove(*p.event_file);
    } catch (...) { // NOLINT(bugprone-empty-catch): the writer has stopped on an earlier error, reported
    }
}

// Files opened ahead for steps up to `step` that no data thread took (their
// tensors were all dropped): closed uncommitted, which removes them. Every
// item queued before this step's end is handled, so none of them is still wanted.
TDBG_DECL void publisher::discard_prepared_up_to(std::int64_t step) {
    std::vector<any_storage::writer> unused;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = prepared_.begin(); it != prepared_.end() && it->first <= step && it->second.done;) {
        if (it->second.file) {
            unused.push_back(std::move(*it->second.file));
        }
        it = prepared_.erase(it);
    }
}

} // namespace tdbg::detail
