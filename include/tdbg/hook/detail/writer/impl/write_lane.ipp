#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/write_lane.hpp.

#include <memory>
#include <utility>
#include <variant>

#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/writer/record_spares.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"
#include "tdbg/hook/detail/writer/write_lane.hpp"

namespace tdbg::detail {

TDBG_DECL write_lane::write_lane(std::size_t index, const writer_options& options, std::string host,
                                 write_queue& queue, publisher& publisher, write_failure& failure)
    : index_(index), worker_(options.worker), chunk_bytes_(options.chunk_bytes), wake_bytes_(options.wake_bytes),
      nice_(options.nice), queue_(queue), publisher_(publisher), failure_(failure),
      tensorboard_(static_cast<bool>(options.tensorboard_put), std::move(host), options.worker) {}

TDBG_DECL void write_lane::start() {
    thread_ = std::thread([this] { run(); });
}

TDBG_DECL void write_lane::join() {
    if (thread_.joinable()) {
        thread_.join();
    }
}

TDBG_DECL void write_lane::run() {
    lower_thread_priority(nice_);
    for (;;) {
        std::deque<write_entry> batch;
        if (!queue_.take(index_, batch)) {
            break;
        }
        handle_batch(batch);
    }
    finish_at_close();
    cpu_.store(thread_cpu_now());
}

TDBG_DECL void write_lane::handle_batch(std::deque<write_entry>& batch) {
    std::size_t done_bytes = 0;
    std::uint64_t done_items = 0;
    // Much written in a batch wakes the publisher, which publishes while this thread writes on;
    // at the batch's end this thread publishes what is ready itself: each wake-up of an idle
    // thread costs the waker, and its cold caches the woken.
    auto report = [&](std::uint64_t next, bool wake) {
        queue_.done(index_, done_bytes, done_items, next);
        done_bytes = 0;
        done_items = 0;
        sent_ = false;
        if (wake) {
            publisher_.wake();
        }
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
        write_entry& e = batch[i];
        seq_ = e.seq;
        try {
            std::visit([&](auto& x) { handle(x); }, e.it);
        } catch (...) {
            data_failed(std::current_exception());
        }
        e.it = write_items::step_end{}; // release the tensor's memory before counting it done
        done_bytes += e.cost;
        ++done_items;
        // A job sent waits until the items before it are handled: say so at once.
        if (sent_ || done_bytes >= wake_bytes_ * 4) {
            report(i + 1 < batch.size() ? batch[i + 1].seq : no_item_seq, done_bytes >= wake_bytes_ * 4);
        }
    }
    report(no_item_seq, false);
    publisher_.run_ready();
}

// Closing: publish what a step_end did not (possible only when the hook left a step open).
TDBG_DECL void write_lane::finish_at_close() {
    seq_ = no_item_seq;
    try {
        if (step_) {
            finish_step();
        }
        send_tensorboard(tensorboard_.finish(std::nullopt));
    } catch (...) {
        data_failed(std::current_exception());
    }
}

TDBG_DECL void write_lane::data_failed(std::exception_ptr e) {
    if (step_) {
        step_->fail();
    }
    failure_.record(std::move(e), seq_);
}

TDBG_DECL void write_lane::handle(write_items::tensor& t) {
    step_file& s = step_for(t.event.step);
    if (s.failed() || failure_.given_up(seq_)) {
        s.fail(); // its file, if open, is discarded
        return;
    }
    if (t.deferred && !take_deferred(t)) {
        return; // no such reduction for this dtype: no record
    }
    if (!s.is_open()) {
        s.open(publisher_.take_event_file(s.step()));
    }
    s.add_tensor(t.event);
}

TDBG_DECL void write_lane::handle(write_items::records& r) {
    step_file& s = step_for(r.step);
    if (s.failed() || failure_.given_up(seq_)) {
        s.fail();
        return;
    }
    if (!s.is_open()) {
        s.open(publisher_.take_event_file(s.step()));
    }
    s.add_records(r);
    if (const std::shared_ptr<record_spares> spares = r.spares) {
        spares->give_back(std::move(r)); // the memory the step file handed back, for another block
    }
}

TDBG_DECL void write_lane::handle(write_items::shape& sh) { step_for(sh.step).add_shape(sh); }

TDBG_DECL void write_lane::handle(write_items::step_end& e) {
    if (step_ && step_->step() == e.step) {
        finish_step();
    }
    send_tensorboard(tensorboard_.finish(e.step));
}

TDBG_DECL void write_lane::handle(write_items::tb_scalar& t) {
    tensorboard_.add(t, [this](tensorboard_files files) { send_tensorboard(std::move(files)); });
}

TDBG_DECL void write_lane::handle(write_items::tb_histogram& h) {
    tensorboard_.add(h, [this](tensorboard_files files) { send_tensorboard(std::move(files)); });
}

TDBG_DECL void write_lane::handle(write_items::object& o) { send(object_job{std::move(o.key), std::move(o.bytes)}); }

TDBG_DECL bool write_lane::take_deferred(write_items::tensor& t) {
    const write_items::deferred_ref ref = std::move(*t.deferred);
    t.deferred.reset();
    const deferred_values& values = ref.cell->get();
    const std::optional<tensor_value>& value =
        ref.slot == write_items::deferred_ref::raw ? values.raw : values.reductions.at(ref.slot);
    if (!value) {
        return false;
    }
    t.event.value = *value;
    return true;
}

TDBG_DECL step_file& write_lane::step_for(std::int64_t step) {
    if (step_ && step_->step() != step) {
        finish_step();
    }
    if (!step_ && spare_) {
        step_ = std::move(spare_);
        spare_.reset();
        step_->restart(step);
    } else if (!step_) {
        step_.emplace(step, worker_, chunk_bytes_);
    }
    return *step_;
}

// Commits the step's event file, then hands its index to the publisher.
TDBG_DECL void write_lane::finish_step() {
    step_file s = std::move(*step_);
    step_.reset();
    if (s.failed() || failure_.given_up(seq_)) {
        return; // the uncommitted event file is discarded; no index names it
    }
    publish_job job;
    job.step = s.step();
    job.event_file = s.commit(); // on failure the file is discarded and the error stops the writer
    job.index = s.take_index();
    send(std::move(job));
    spare_ = std::move(s);
}

TDBG_DECL void write_lane::send_tensorboard(tensorboard_files files) {
    if (files.files.empty()) {
        return;
    }
    publish_job job;
    job.step = files.step;
    job.tensorboard = std::move(files.files);
    send(std::move(job));
}

// Queues a job in the place of the item being handled (the publisher runs it
// once every item queued before that one is handled).
TDBG_DECL void write_lane::send(publisher_job j) {
    publisher_.send(seq_, std::move(j));
    sent_ = true;
}

} // namespace tdbg::detail
