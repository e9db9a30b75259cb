#pragma once
/// \file
/// The publisher thread of the hook's writer (hook/detail/writer/async_writer.hpp): it opens each step's
/// event file ahead for the data threads, and publishes what they finish, whole, in the
/// order the training thread queued it:
///
/// - a step's index file once its event file is committed, so that an index never names
///   records that are not complete on storage, and its TensorBoard files;
/// - whole objects (the collections file, the end marker);
/// - each job once the data threads have handled every item queued before it, so that index
///   files appear in step order whatever the data threads' pace;
/// - after the writer's first error, nothing queued from the item it hit on; an event file
///   committed for a step whose index will not come is removed.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"
#include "tdbg/hook/detail/writer/write_queue.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

class write_failure; // the writer's first error (async_writer.hpp)

/// What a step's end publishes.
struct publish_job {
    std::int64_t step = 0;
    std::optional<std::string> event_file; // committed; removed if its index cannot be published
    std::optional<std::string> index; // the index file's JSON
    std::vector<std::pair<std::string, std::string>> tensorboard;
};
/// A whole object to publish.
struct object_job {
    std::string key;
    std::string bytes;
};
/// A job of the publisher (besides opening files ahead).
using publisher_job = std::variant<publish_job, object_job>;

/// The publisher thread and its jobs.
class publisher {
public:
    /// Publishes on `storage` the files of `options.worker`, TensorBoard files through
    /// `options.tensorboard_put`; a job waits until `queue` has handled the items before it,
    /// and is given up after `failure`.
    TDBG_DECL publisher(any_storage storage, const writer_options& options, write_failure& failure,
                        const write_queue& queue);

    /// Starts the thread.
    TDBG_DECL void start();
    /// Runs what is left and stops the thread; event files opened ahead and never used are removed.
    TDBG_DECL void stop();

    /// Says that `step` will have an event file: the thread opens it ahead when it next wakes,
    /// at most one file ahead per lane (and one to spare).
    TDBG_DECL void prepare_step(std::int64_t step);
    /// The event file for `step`: opened ahead when prepare_step said it would be needed, else opened here.
    TDBG_DECL any_storage::writer take_event_file(std::int64_t step);

    /// Queues `j` in the place of the item at `seq`: it runs once every item queued before that one is handled.
    TDBG_DECL void send(std::uint64_t seq, publisher_job j);
    /// Says that the data threads have handled more items.
    TDBG_DECL void wake();
    /// Runs on the calling data thread, at the end of its batch, what is ready: the files to
    /// open ahead and the jobs whose items are all handled, in order, unless another thread is
    /// running them (which then runs these too). Spares the publisher thread's wake-up a step.
    TDBG_DECL void run_ready();
    /// Waits until every job sent so far has run.
    TDBG_DECL void wait_done();

    /// CPU seconds the thread used, once it has stopped.
    [[nodiscard]] double cpu_seconds() const noexcept { return cpu_.load(); }

private:
    // An event file opened ahead for a data thread.
    struct prepared_file {
        bool opening = false; // the publisher has begun opening it: a data thread waits for it
        bool done = false;
        std::optional<any_storage::writer> file; // empty when done and the open failed
    };

    TDBG_DECL void run();
    // Under mutex_: whether a file is to be opened ahead or a job's items are all handled.
    [[nodiscard]] TDBG_DECL bool work_ready() const;
    // Runs what is ready, by the thread that set running_, with `lock` held on entry and exit.
    TDBG_DECL void run_ready_locked(std::unique_lock<std::mutex>& lock);
    TDBG_DECL void open_file_ahead(std::int64_t step);
    TDBG_DECL void run_job(publish_job& p, std::uint64_t seq);
    TDBG_DECL void run_job(object_job& o, std::uint64_t seq);
    TDBG_DECL void withdraw(const publish_job& p);
    TDBG_DECL void discard_prepared_up_to(std::int64_t step);

    any_storage storage_;
    std::string worker_;
    std::function<void(const std::string&, const std::string&)> tensorboard_put_;
    int nice_;
    write_failure& failure_;
    const write_queue& queue_;

    std::mutex mutex_;
    std::condition_variable work_;
    std::condition_variable progress_;
    std::deque<std::int64_t> to_open_; // steps whose event files to open ahead
    std::multimap<std::uint64_t, publisher_job> ordered_;
    std::map<std::int64_t, prepared_file> prepared_;
    std::int64_t last_prepared_ = -1;
    std::uint64_t jobs_sent_ = 0;
    std::uint64_t jobs_done_ = 0;
    bool closing_ = false;
    bool running_ = false; // a thread (the publisher's or a data thread) runs jobs: one at a time, in order

    std::thread thread_;
    std::atomic<double> cpu_{0};
};

} // namespace tdbg::detail

// Definitions: hook/detail/writer/impl/publisher.ipp, included by async_writer.hpp when header-only (they use
// its write_failure whole).
