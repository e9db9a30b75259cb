#pragma once
/// \file
/// A data thread of the hook's writer (hook/detail/writer/async_writer.hpp), a lane: it takes the items
/// the queue gives it (whole steps), encodes tensor records into the step's event file, builds
/// the index and the TensorBoard files, and at each step's end commits the event file and
/// sends the rest to the publisher, in the place of the item that finished it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <optional>
#include <string>
#include <thread>

#include "tdbg/config.hpp"
#include "tdbg/hook/detail/writer/publisher.hpp"
#include "tdbg/hook/detail/writer/step_file.hpp"
#include "tdbg/hook/detail/writer/tensorboard_writer.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"
#include "tdbg/hook/detail/writer/write_queue.hpp"

namespace tdbg::detail {

class write_failure; // the writer's first error (async_writer.hpp)

/// One data thread and the steps it is given.
class write_lane {
public:
    /// Lane `index` of `queue`, writing the files of `options.worker` (TensorBoard files named
    /// with `host`), sending to `publisher`; stops after `failure`.
    TDBG_DECL write_lane(std::size_t index, const writer_options& options, std::string host, write_queue& queue,
                         publisher& publisher, write_failure& failure);

    /// Starts the thread.
    TDBG_DECL void start();
    /// Waits for the thread to end (after the queue is closed).
    TDBG_DECL void join();

    /// CPU seconds the thread used, once it has stopped.
    [[nodiscard]] double cpu_seconds() const noexcept { return cpu_.load(); }

private:
    TDBG_DECL void run();
    TDBG_DECL void handle_batch(std::deque<write_entry>& batch);
    TDBG_DECL void finish_at_close();
    TDBG_DECL void data_failed(std::exception_ptr e);

    TDBG_DECL void handle(write_items::tensor& t);
    TDBG_DECL void handle(write_items::records& r);
    TDBG_DECL void handle(write_items::shape& sh);
    TDBG_DECL void handle(write_items::step_end& e);
    TDBG_DECL void handle(write_items::tb_scalar& t);
    TDBG_DECL void handle(write_items::tb_histogram& h);
    TDBG_DECL void handle(write_items::object& o);

    // Waits for a deferred record's value and puts it in the event; false when the save
    // delivers none for it. Throws the save's error (a device error), which stops the writer.
    TDBG_DECL static bool take_deferred(write_items::tensor& t);

    TDBG_DECL step_file& step_for(std::int64_t step);
    TDBG_DECL void finish_step();
    TDBG_DECL void send_tensorboard(tensorboard_files files);
    TDBG_DECL void send(publisher_job j);

    std::size_t index_;
    std::string worker_;
    std::size_t chunk_bytes_;
    std::size_t wake_bytes_;
    int nice_;
    write_queue& queue_;
    publisher& publisher_;
    write_failure& failure_;

    std::uint64_t seq_ = 0; // of the item being handled
    bool sent_ = false;     // a job was sent for it
    std::optional<step_file> step_;
    std::optional<step_file> spare_; // the last finished step's, its memory for the next one
    tensorboard_writer tensorboard_;
    std::thread thread_;
    std::atomic<double> cpu_{0};
};

} // namespace tdbg::detail

// Definitions: hook/detail/writer/impl/write_lane.ipp, included by async_writer.hpp when header-only (they use
// its write_failure whole).
