#pragma once
/// \file
/// The hook's writer: background threads that encode and write what the
/// training thread queues, so that training never waits on the disk while the
/// queue has room.
///
/// - Data threads encode records and append them to event files. Steps go to
///   them in turn (step 0 to the first, step 1 to the second, ...), so that the
///   kernel's copy of one step into the page cache overlaps with the next.
/// - A publisher thread opens each step's event file ahead, commits finished
///   files and writes index, TensorBoard and other files, in the order the
///   training thread queued them: whatever the data threads' pace, index files
///   appear in step order, the collections file before the first of them and
///   the end marker after the last.
/// - The queue is bounded by the bytes of tensor data it holds. When it is
///   full, `push` blocks (full_queue_policy::block) or drops the tensor and
///   counts it (full_queue_policy::drop); step ends and files are never dropped.
/// - Per step and worker: one event file (events/), committed by its data
///   thread when the step ends, and then its index file (index/), written by
///   the publisher: an index never names records that are not complete on
///   storage, so a crash leaves every published step readable.
/// - Open files are bounded by the threads, not by the queue: one event file
///   per data thread, at most one more per data thread opened ahead, and the
///   publisher's one.
/// - The first error (a full disk, too many open files, a storage outage) stops
///   the writer: what was queued before the item it hit is still published,
///   nothing after it is (no index, no collections file, no end marker), and
///   an event file committed for a step whose index will not come is removed
///   (storage remove capability). The published steps thus stay a prefix of
///   the run, and the run stays readable. The error is kept for take_error().

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <ctime>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <unistd.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#endif

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/crc32c.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"
#include "tdbg/format/detail/event_pieces.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

/// What the training thread hands to the writer.
namespace write_items {
/// Where a record's value comes from when it arrives later (hook/deferred.hpp): one of the
/// values of a deferred save, which the data thread waits for before it encodes the record.
struct deferred_ref {
    /// `slot` of a raw value.
    static constexpr std::size_t raw = static_cast<std::size_t>(-1);

    std::shared_ptr<detail::deferred_cell> cell;
    /// The reduction's index in the save's plan, or `raw`.
    std::size_t slot = raw;
    /// The bytes the value will hold (they count against the queue's bound).
    std::size_t bytes = 0;
};
/// One tensor record of a step's event file; with `deferred`, its value arrives later.
struct tensor {
    format::tensor_event event;
    std::optional<deferred_ref> deferred;
};
/// A shape saved in the step's index file (ReductionConfig save_shape).
struct shape {
    std::int64_t step = 0;
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t mode_step = 0;
    format::shape_entry entry;
};
/// The end of a step: publish its event file, then its index file and TensorBoard files.
struct step_end {
    std::int64_t step = 0;
};
/// A TensorBoard scalar.
struct tb_scalar {
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t step = 0;
    double wall_time = 0;
    std::string tag;
    float value = 0;
    /// When set, the value is the raw value of this deferred save, once it arrives.
    std::shared_ptr<detail::deferred_cell> deferred;
};
/// A TensorBoard histogram of `values` (bucketed on a data thread).
struct tb_histogram {
    tdbg::mode mode = tdbg::mode::global;
    std::int64_t step = 0;
    double wall_time = 0;
    std::string tag;
    tensor_value values;
    /// When set, the histogram is this deferred save's, once it arrives (`values` is empty).
    std::shared_ptr<detail::deferred_cell> deferred;
};
/// A whole object written atomically (collections file, end marker).
struct object {
    std::string key;
    std::string bytes;
};
} // namespace write_items

/// Settings of the writer threads.
struct writer_options {
    std::string worker = "worker_0";
    std::size_t max_queue_bytes = std::size_t{64} << 20U;
    full_queue_policy on_full_queue = full_queue_policy::block;
    /// Writes one TensorBoard file (key, bytes); empty: TensorBoard items are ignored.
    std::function<void(const std::string&, const std::string&)> tensorboard_put;
    /// Threads writing event files, each taking whole steps in turn (0 counts as 1).
    std::size_t data_threads = 2;
    /// Event-file bytes gathered before one storage append.
    std::size_t chunk_bytes = std::size_t{1} << 20U;
    /// Queued tensor bytes that wake the writer before the step ends.
    std::size_t wake_bytes = std::size_t{256} << 10U;
    /// Added to the writer threads' nice value (Linux: per thread), so that on a
    /// busy machine the training thread gets the CPU first; 0 leaves it alone.
    int nice = 10;
};

/// The background writer of one hook (one worker of a run).
class async_writer {
    using storage_writer = any_storage::writer;

public:
    using item = std::variant<write_items::tensor, write_items::shape, write_items::step_end, write_items::tb_scalar,
                              write_items::tb_histogram, write_items::object>;

    /// Starts the threads.
    async_writer(any_storage storage, writer_options options)
        : storage_(std::move(storage)), options_(std::move(options)), host_(host_name()) {
        format::validate_worker_name(options_.worker);
        const std::size_t n = std::max<std::size_t>(1, options_.data_threads);
        for (std::size_t i = 0; i < n; ++i) {
            lanes_.push_back(std::make_unique<lane>());
        }
        try {
            publisher_ = std::thread([this] { run_publisher(); });
            for (auto& l : lanes_) {
                l->thread = std::thread([this, p = l.get()] { run_lane(*p); });
            }
        } catch (...) {
            stop_lanes();
            stop_publisher();
            throw;
        }
    }
    async_writer(const async_writer&) = delete;
    async_writer& operator=(const async_writer&) = delete;
    /// Stops the threads after writing what is queued; errors are swallowed (call close() to see them).
    ~async_writer() {
        try {
            close();
        } catch (...) { // NOLINT(bugprone-empty-catch): a destructor must not throw; close() reports
        }
    }

    /// Queues `it`. Returns false when it was not queued: a tensor dropped (drop
    /// policy, queue full), or anything once the writer has stopped on an error.
    bool push(item it) {
        if (stopped()) {
            return false;
        }
        const std::size_t cost = cost_of(it);
        const bool droppable = std::holds_alternative<write_items::tensor>(it) ||
                               std::holds_alternative<write_items::tb_histogram>(it);
        std::unique_lock<std::mutex> lock(mutex_);
        if (closing_) {
            throw error("tdbg writer: push after close");
        }
        auto full = [&] { return queued_bytes_ > 0 && queued_bytes_ + cost > options_.max_queue_bytes; };
        if (full()) {
            if (droppable && options_.on_full_queue == full_queue_policy::drop) {
                ++dropped_;
                return false;
            }
            ++blocked_;
            wake_all_lanes();
            room_.wait(lock, [&] { return !full(); });
        }
        lane& l = route(it);
        // Small items wait for the step's end or for a batch worth writing: waking the
        // thread for each one would cost the training thread a context switch each.
        // A deferred raw value holds host memory its producer may be waiting for: it wakes the writer too.
        const bool wake = !is_data(it) || holds_lent_memory(it) || queued_bytes_ + cost >= options_.wake_bytes;
        enqueue(l, std::move(it), cost);
        lock.unlock();
        if (wake) {
            l.work.notify_one();
        }
        return true;
    }

    /// Says that `step` will have an event file: the publisher thread opens it
    /// ahead, while the data threads may still write earlier steps.
    void prepare_step(std::int64_t step) {
        std::lock_guard<std::mutex> lock(pub_mutex_);
        // At most one file ahead per data thread (and one to spare): a trainer far
        // ahead of the disk must not hold a descriptor per queued step.
        if (step <= last_prepared_ || pub_closing_ || stopped() || prepared_.size() > lanes_.size()) {
            return;
        }
        last_prepared_ = step;
        prepared_.try_emplace(step);
        to_open_.push_back(step);
        ++jobs_sent_;
        pub_work_.notify_one();
    }

    /// Waits until everything queued so far is written and its files are
    /// published (or, after an error, given up).
    void flush() {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_all_lanes();
            const std::uint64_t target = pushed_;
            room_.wait(lock, [&] { return processed_ >= target; });
        }
        {
            std::unique_lock<std::mutex> lock(pub_mutex_);
            const std::uint64_t target = jobs_sent_;
            pub_progress_.wait(lock, [&] { return jobs_done_ >= target; });
        }
    }

    /// Writes what is queued and stops the threads. Idempotent.
    void close() {
        stop_lanes();
        stop_publisher();
    }

    /// Stops the writer on an error met outside it (the hook's start failing on storage): nothing
    /// queued is published, and take_error() gives `e` as it gives the writer's own errors.
    void fail(std::exception_ptr e) { record_error(std::move(e), 0); }

    /// True once an error has stopped the writer.
    [[nodiscard]] bool stopped() const noexcept { return fail_seq_.load(std::memory_order_acquire) != no_seq; }

    /// The error that stopped the writer, the first time it is asked for; nullptr otherwise.
    [[nodiscard]] std::exception_ptr take_error() {
        if (!failed_.load(std::memory_order_acquire)) {
            return nullptr;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        failed_.store(false, std::memory_order_release);
        return std::exchange(error_, nullptr);
    }

    /// Tensors dropped because the queue was full (drop policy).
    [[nodiscard]] std::uint64_t dropped() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return dropped_;
    }
    /// How many pushes had to wait for room (block policy).
    [[nodiscard]] std::uint64_t blocked() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return blocked_;
    }
    /// CPU seconds the data threads (together) and the publisher thread used, once they have stopped (after close()).
    [[nodiscard]] std::pair<double, double> thread_cpu_seconds() const noexcept {
        double data = 0;
        for (const auto& l : lanes_) {
            data += l->cpu.load();
        }
        return {data, publisher_cpu_.load()};
    }
    /// Bytes of tensor data waiting in the queue.
    [[nodiscard]] std::size_t queued_bytes() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return queued_bytes_;
    }

private:
    static constexpr std::uint64_t no_seq = std::numeric_limits<std::uint64_t>::max();

    // A queued item and its place in the order of pushes.
    struct entry {
        item it;
        std::size_t cost = 0;
        std::uint64_t seq = 0;
    };

    // The open step of a data thread: its event file and index.
    struct open_step {
        std::int64_t step = 0;
        std::optional<storage_writer> file;
        std::string buffer;
        std::uint64_t written = 0;
        format::index_file index;
        bool has_meta = false;
        bool failed = false;
    };

    struct tb_file {
        std::int64_t step = 0;
        std::string bytes;
    };

    // One data thread and the steps it is given.
    struct lane {
        // Under mutex_:
        std::deque<entry> queue;
        std::condition_variable work;
        std::uint64_t in_hand = no_seq; // the first item taken from `queue` and not yet handled
        // The thread's own:
        std::uint64_t seq = 0; // of the item being handled
        bool sent = false;     // a job was sent for it
        std::optional<open_step> step;
        std::map<tdbg::mode, tb_file> tensorboard;
        std::thread thread;
        std::atomic<double> cpu{0};
    };

    // Which data thread the training thread's current step goes to.
    struct route_state {
        std::int64_t step = 0;
        std::size_t lane = 0;
        bool ended = false;
    };

    // Publisher jobs (besides opening files ahead).
    struct publish_job {
        std::int64_t step = 0;
        std::optional<std::string> event_file; // committed; removed if its index cannot be published
        std::optional<format::index_file> index;
        std::vector<std::pair<std::string, std::string>> tensorboard;
    };
    struct object_job {
        std::string key;
        std::string bytes;
    };
    using job = std::variant<publish_job, object_job>;

    // An event file the publisher opens ahead for a data thread.
    struct prepared_file {
        bool done = false;
        std::optional<storage_writer> file; // empty when done and the open failed
    };

    // Data items (tensors, shapes, TensorBoard values) may wait in the queue; the rest wake the writer.
    static bool is_data(const item& it) {
        return std::holds_alternative<write_items::tensor>(it) || std::holds_alternative<write_items::shape>(it) ||
               std::holds_alternative<write_items::tb_scalar>(it) || std::holds_alternative<write_items::tb_histogram>(it);
    }

    static bool holds_lent_memory(const item& it) {
        const auto* t = std::get_if<write_items::tensor>(&it);
        return t != nullptr && t->deferred && t->deferred->slot == write_items::deferred_ref::raw;
    }

    static std::size_t cost_of(const item& it) {
        constexpr std::size_t overhead = 256;
        if (const auto* t = std::get_if<write_items::tensor>(&it)) {
            return overhead + (t->deferred ? t->deferred->bytes : t->event.value.nbytes()) + t->event.tag.size();
        }
        if (const auto* h = std::get_if<write_items::tb_histogram>(&it)) {
            return overhead + h->values.nbytes();
        }
        if (const auto* o = std::get_if<write_items::object>(&it)) {
            return overhead + o->bytes.size();
        }
        return overhead;
    }

    // The step an item belongs to; none for whole objects.
    static std::optional<std::int64_t> step_of(const item& it) {
        return std::visit(
            [](const auto& x) -> std::optional<std::int64_t> {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, write_items::tensor>) {
                    return x.event.step;
                } else if constexpr (std::is_same_v<T, write_items::object>) {
                    return std::nullopt;
                } else {
                    return x.step;
                }
            },
            it);
    }

    static std::string host_name() {
        char buffer[256] = {};
        if (::gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') {
            return "localhost";
        }
        std::string host(buffer);
        for (char& c : host) {
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_';
            c = ok ? c : '_';
        }
        return host;
    }

    static double thread_cpu_now() noexcept {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    }

    void lower_priority() const {
#if defined(__linux__)
        if (options_.nice > 0) {
            // Linux applies a thread id's nice value to that thread only. Failure changes nothing.
            const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
            errno = 0;
            const int current = ::getpriority(PRIO_PROCESS, tid);
            if (errno == 0) {
                (void)::setpriority(PRIO_PROCESS, tid, std::min(19, current + options_.nice));
            }
        }
#endif
    }

    // Keeps the first error; from the item at `seq` on, nothing is published.
    void record_error(std::exception_ptr e, std::uint64_t seq) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!stopped()) {
            error_ = std::move(e);
            failed_.store(true, std::memory_order_release);
        }
        // Jobs sent while closing carry no_seq: an error there still stops the writer.
        const std::uint64_t at = std::min(seq, no_seq - 1);
        if (at < fail_seq_.load(std::memory_order_relaxed)) {
            fail_seq_.store(at, std::memory_order_release);
        }
    }

    // True when the item at `seq` (or the job queued in its place) comes after the error.
    [[nodiscard]] bool given_up(std::uint64_t seq) const noexcept {
        const std::uint64_t failed_at = fail_seq_.load(std::memory_order_acquire);
        return failed_at != no_seq && seq >= failed_at;
    }

    // ---- the training thread's side (under mutex_) ---------------------------

    // The data thread for `it`: a step stays with one thread; the next step goes to
    // the next thread. A step the hook left without an end is ended here, in its
    // thread, before the next one starts, so that its index keeps its place in the order.
    lane& route(const item& it) {
        const std::optional<std::int64_t> step = step_of(it);
        if (step && (!route_ || route_->step != *step)) {
            std::size_t next = 0;
            if (route_) {
                if (!route_->ended) {
                    enqueue(*lanes_[route_->lane], write_items::step_end{route_->step}, 0);
                    lanes_[route_->lane]->work.notify_one();
                }
                next = (route_->lane + 1) % lanes_.size();
            }
            route_ = route_state{*step, next, false};
        }
        if (route_ && step && std::holds_alternative<write_items::step_end>(it)) {
            route_->ended = true;
        }
        return *lanes_[route_ ? route_->lane : 0];
    }

    void enqueue(lane& l, item it, std::size_t cost) {
        queued_bytes_ += cost;
        l.queue.push_back(entry{std::move(it), cost, next_seq_++});
        ++pushed_;
    }

    void wake_all_lanes() {
        for (auto& l : lanes_) {
            l->work.notify_one();
        }
    }

    // Every item queued before `handled_` has been handled; publisher jobs wait for it.
    void update_handled() {
        std::uint64_t h = next_seq_;
        for (const auto& l : lanes_) {
            if (l->in_hand != no_seq) {
                h = std::min(h, l->in_hand);
            } else if (!l->queue.empty()) {
                h = std::min(h, l->queue.front().seq);
            }
        }
        handled_.store(h, std::memory_order_release);
    }

    // ---- a data thread ------------------------------------------------------------

    void run_lane(lane& l) {
        lower_priority();
        for (;;) {
            // Take everything queued at once: the training thread then meets the lock
            // once per batch, not once per item (a preempted writer holding it would stall training).
            std::deque<entry> batch;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                l.work.wait(lock, [&] { return !l.queue.empty() || closing_; });
                if (l.queue.empty()) {
                    break;
                }
                batch.swap(l.queue);
                l.in_hand = batch.front().seq;
            }
            std::size_t done_bytes = 0;
            std::uint64_t done_items = 0;
            auto report = [&](std::uint64_t next) {
                {
                    std::lock_guard<std::mutex> lock(mutex_);
                    queued_bytes_ -= done_bytes;
                    processed_ += done_items;
                    l.in_hand = next;
                    update_handled();
                }
                done_bytes = 0;
                done_items = 0;
                room_.notify_all();
                l.sent = false;
                {
                    // Taken so that the wake-up cannot fall between the publisher's check and its wait.
                    std::lock_guard<std::mutex> lock(pub_mutex_);
                }
                pub_work_.notify_one();
            };
            for (std::size_t i = 0; i < batch.size(); ++i) {
                entry& e = batch[i];
                l.seq = e.seq;
                try {
                    std::visit([&](auto& x) { handle(l, x); }, e.it);
                } catch (...) {
                    data_failed(l, std::current_exception());
                }
                e.it = write_items::step_end{}; // release the tensor's memory before counting it done
                done_bytes += e.cost;
                ++done_items;
                // A job sent waits until the items before it are handled: say so at once.
                if (l.sent || done_bytes >= options_.wake_bytes * 4) {
                    report(i + 1 < batch.size() ? batch[i + 1].seq : no_seq);
                }
            }
            report(no_seq);
        }
        // Closing: publish what a step_end did not (possible only when the hook left a step open).
        l.seq = no_seq;
        try {
            if (l.step) {
                finish_step(l);
            }
            finish_tensorboard(l, std::nullopt);
        } catch (...) {
            data_failed(l, std::current_exception());
        }
        l.cpu.store(thread_cpu_now());
    }

    void data_failed(lane& l, std::exception_ptr e) {
        if (l.step) {
            l.step->failed = true;
        }
        record_error(std::move(e), l.seq);
    }

    open_step& step_for(lane& l, std::int64_t step) {
        if (l.step && l.step->step != step) {
            finish_step(l);
        }
        if (!l.step) {
            open_step opened;
            opened.step = step;
            l.step = std::move(opened);
        }
        return *l.step;
    }

    // The event file for `step`: opened ahead by the publisher when the hook
    // said it would be needed, else opened here.
    storage_writer open_event_file(std::int64_t step) {
        std::optional<storage_writer> ready;
        {
            std::unique_lock<std::mutex> lock(pub_mutex_);
            auto it = prepared_.find(step);
            if (it != prepared_.end()) {
                pub_progress_.wait(lock, [&] { return it->second.done; });
                if (it->second.file) {
                    ready.emplace(std::move(*it->second.file));
                }
                prepared_.erase(it);
            }
        }
        if (ready) {
            return std::move(*ready);
        }
        return storage_.open_write(format::event_file_key(step, options_.worker));
    }

    void handle(lane& l, write_items::tensor& t) {
        open_step& s = step_for(l, t.event.step);
        if (s.failed || given_up(l.seq)) {
            s.failed = true; // its file, if open, is discarded
            return;
        }
        if (t.deferred && !take_deferred(t)) {
            return; // no such reduction for this dtype: no record
        }
        if (!s.file) {
            s.file.emplace(open_event_file(s.step));
        }
        const format::detail::event_pieces payload = format::detail::encode_tensor_event_pieces(t.event);
        const std::uint64_t start = s.written + s.buffer.size();
        write_record(s, payload);
        if (!s.has_meta || s.index.event_file_name.empty()) {
            s.index.mode = t.event.mode.value_or(mode::global);
            s.index.mode_step = t.event.mode_step.value_or(t.event.step);
            s.index.event_file_name = format::event_file_key(s.step, options_.worker);
            s.has_meta = true;
        }
        s.index.tensor_payload.push_back(
            format::tensor_location{t.event.tag, start, payload.size() + format::record_overhead});
    }

    // Waits for a deferred record's value and puts it in the event; false when the save
    // delivers none for it. Throws the save's error (a device error), which stops the writer.
    static bool take_deferred(write_items::tensor& t) {
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

    // Appends one record with smdebug's constant footer, framed by format::frame_record.
    // Small pieces gather in the chunk buffer; large ones (tensor contents) go to
    // storage straight from the tensor's memory.
    void write_record(open_step& s, const format::detail::event_pieces& payload) const {
        struct chunk_sink {
            open_step* step;
            std::size_t direct_from; // pieces this large bypass the buffer
            void append(const char* p, std::size_t n) const {
                if (n >= direct_from) {
                    drain(*step);
                    step->file->append(std::string_view(p, n));
                    step->written += n;
                } else {
                    step->buffer.append(p, n);
                }
            }
        } sink{&s, options_.chunk_bytes / 4};
        format::frame_record(
            sink, payload.size(),
            [&](const chunk_sink& to) { payload.for_each([&](std::string_view piece) { to.append(piece.data(), piece.size()); }); },
            format::smdebug_footer_crc);
        if (s.buffer.size() >= options_.chunk_bytes) {
            drain(s);
        }
    }

    static void drain(open_step& s) {
        if (!s.buffer.empty()) {
            s.file->append(s.buffer);
            s.written += s.buffer.size();
            s.buffer.clear();
        }
    }

    void handle(lane& l, write_items::shape& sh) {
        open_step& s = step_for(l, sh.step);
        if (!s.has_meta) {
            s.index.mode = sh.mode;
            s.index.mode_step = sh.mode_step;
            s.has_meta = true;
        }
        s.index.shape_payload.push_back(std::move(sh.entry));
    }

    void handle(lane& l, write_items::step_end& e) {
        if (l.step && l.step->step == e.step) {
            finish_step(l);
        }
        finish_tensorboard(l, e.step);
    }

    // Commits the step's event file, then hands its index to the publisher.
    void finish_step(lane& l) {
        open_step s = std::move(*l.step);
        l.step.reset();
        if (s.failed || given_up(l.seq)) {
            return; // the uncommitted event file is discarded; no index names it
        }
        publish_job job;
        job.step = s.step;
        if (s.file) {
            drain(s);
            s.file->commit(); // on failure the file is discarded and the error stops the writer
            job.event_file = format::event_file_key(s.step, options_.worker);
        }
        if (!s.index.tensor_payload.empty() || !s.index.shape_payload.empty()) {
            job.index = std::move(s.index);
        }
        send(l, std::move(job));
    }

    tb_file& tensorboard_for(lane& l, tdbg::mode m, std::int64_t step, double wall_time) {
        auto it = l.tensorboard.find(m);
        if (it != l.tensorboard.end() && it->second.step != step) {
            publish_job job;
            job.step = it->second.step;
            job.tensorboard.emplace_back(tensorboard_key(m, it->second.step), std::move(it->second.bytes));
            send(l, std::move(job));
            l.tensorboard.erase(it);
            it = l.tensorboard.end();
        }
        if (it == l.tensorboard.end()) {
            tb_file f;
            f.step = step;
            format::append_record(f.bytes, format::encode_file_version_event(wall_time),
                                  format::footer_kind::payload_crc);
            it = l.tensorboard.emplace(m, std::move(f)).first;
        }
        return it->second;
    }

    void handle(lane& l, write_items::tb_scalar& t) {
        if (!options_.tensorboard_put) {
            return;
        }
        if (t.deferred) {
            const std::optional<tensor_value>& raw = t.deferred->get().raw;
            if (!raw || raw->size() != 1) {
                return;
            }
            t.value = static_cast<float>(detail::scalar_as_double(*raw));
        }
        tb_file& f = tensorboard_for(l, t.mode, t.step, t.wall_time);
        format::append_record(f.bytes, format::encode_scalar_event(t.wall_time, t.step, t.tag, t.value),
                              format::footer_kind::payload_crc);
    }

    void handle(lane& l, write_items::tb_histogram& h) {
        if (!options_.tensorboard_put) {
            return;
        }
        std::optional<format::histogram> histo;
        if (h.deferred) {
            const std::optional<histogram_counts>& counts = h.deferred->get().histogram;
            if (counts) {
                histo = detail::histogram_from_counts(*counts);
            }
        } else if (const auto values = detail::histogram_values(h.values)) {
            histo = detail::make_histogram(*values);
        }
        if (!histo) {
            return;
        }
        tb_file& f = tensorboard_for(l, h.mode, h.step, h.wall_time);
        format::append_record(f.bytes, format::encode_histogram_event(h.wall_time, h.step, h.tag, *histo),
                              format::footer_kind::payload_crc);
    }

    void handle(lane& l, write_items::object& o) { send(l, object_job{std::move(o.key), std::move(o.bytes)}); }

    // Hands the TensorBoard files of `step` (every open one when nullopt) to the publisher.
    void finish_tensorboard(lane& l, std::optional<std::int64_t> step) {
        publish_job job;
        for (auto it = l.tensorboard.begin(); it != l.tensorboard.end();) {
            if (!step || it->second.step == *step) {
                job.step = it->second.step;
                job.tensorboard.emplace_back(tensorboard_key(it->first, it->second.step), std::move(it->second.bytes));
                it = l.tensorboard.erase(it);
            } else {
                ++it;
            }
        }
        if (!job.tensorboard.empty()) {
            send(l, std::move(job));
        }
    }

    // TensorBoard's own naming, one file per mode and step as smdebug writes
    // them: <MODE>/events.out.tfevents.<unix time>.<host>.<pid>.<worker>.<step>
    // (the worker keeps two hooks of one process apart).
    std::string tensorboard_key(tdbg::mode m, std::int64_t step) const {
        return fmt::format("{}/events.out.tfevents.{:010}.{}.{}.{}.{}", mode_name(m),
                           static_cast<long long>(std::time(nullptr)), host_, ::getpid(), options_.worker,
                           format::step_string(step));
    }

    // Queues a job in the place of the item being handled (the publisher runs it
    // once every item queued before that one is handled).
    void send(lane& l, job j) {
        {
            std::lock_guard<std::mutex> lock(pub_mutex_);
            ordered_.emplace(l.seq, std::move(j));
            ++jobs_sent_;
        }
        l.sent = true;
    }

    void stop_lanes() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closing_ = true;
            wake_all_lanes();
        }
        for (auto& l : lanes_) {
            if (l->thread.joinable()) {
                l->thread.join();
            }
        }
    }

    // ---- the publisher thread --------------------------------------------------

    void run_publisher() {
        lower_priority();
        for (;;) {
            std::optional<job> j;
            std::uint64_t seq = 0;
            std::optional<std::int64_t> open_ahead;
            {
                std::unique_lock<std::mutex> lock(pub_mutex_);
                // Files to open ahead go first; the rest in the order of pushes, each once
                // the data threads have handled every item queued before it (all of them at closing).
                auto next_ordered = [&] {
                    return !ordered_.empty() &&
                           (pub_closing_ || ordered_.begin()->first < handled_.load(std::memory_order_acquire));
                };
                pub_work_.wait(lock, [&] { return !to_open_.empty() || next_ordered() || pub_closing_; });
                if (!to_open_.empty()) {
                    open_ahead = to_open_.front();
                    to_open_.pop_front();
                } else if (next_ordered()) {
                    seq = ordered_.begin()->first;
                    j.emplace(std::move(ordered_.begin()->second));
                    ordered_.erase(ordered_.begin());
                } else {
                    break; // closing, nothing left
                }
            }
            if (open_ahead) {
                open_file_ahead(*open_ahead);
            } else {
                std::visit([&](auto& x) { run_job(x, seq); }, *j);
                j.reset();
            }
            {
                std::lock_guard<std::mutex> lock(pub_mutex_);
                ++jobs_done_;
            }
            pub_progress_.notify_all();
        }
        publisher_cpu_.store(thread_cpu_now());
    }

    void open_file_ahead(std::int64_t step) {
        std::optional<storage_writer> file;
        try {
            if (!stopped()) {
                file.emplace(storage_.open_write(format::event_file_key(step, options_.worker)));
            }
        } catch (...) { // NOLINT(bugprone-empty-catch): the data thread opens the file itself and reports
        }
        std::lock_guard<std::mutex> lock(pub_mutex_);
        auto it = prepared_.find(step);
        if (it != prepared_.end()) {
            it->second.done = true;
            if (file) {
                it->second.file.emplace(std::move(*file));
            }
        }
        // else: no longer wanted; `file` is closed uncommitted on leaving, which removes it
    }

    void run_job(publish_job& p, std::uint64_t seq) {
        discard_prepared_up_to(p.step);
        if (given_up(seq)) {
            withdraw(p);
            return;
        }
        try {
            // The event file is complete on storage: an index may name its records.
            if (p.index) {
                storage_.put(format::index_file_key(p.step, options_.worker), format::to_json(*p.index));
            }
        } catch (...) {
            record_error(std::current_exception(), seq);
            withdraw(p);
            return;
        }
        for (const auto& [key, bytes] : p.tensorboard) {
            try {
                options_.tensorboard_put(key, bytes);
            } catch (...) {
                record_error(std::current_exception(), seq);
                return;
            }
        }
    }

    // An event file whose index will not be published: nothing would read it, so it
    // is removed rather than left to fill the disk (kept when the storage cannot remove).
    void withdraw(const publish_job& p) {
        if (!p.event_file) {
            return;
        }
        try {
            (void)storage_.remove(*p.event_file);
        } catch (...) { // NOLINT(bugprone-empty-catch): the writer has stopped on an earlier error, reported
        }
    }

    void run_job(object_job& o, std::uint64_t seq) {
        if (given_up(seq)) {
            return; // no collections file or end marker after an error
        }
        try {
            storage_.put(o.key, o.bytes);
        } catch (...) {
            record_error(std::current_exception(), seq);
        }
    }

    // Files opened ahead for steps up to `step` that no data thread took (their
    // tensors were all dropped): closed uncommitted, which removes them. Every
    // item queued before this step's end is handled, so none of them is still wanted.
    void discard_prepared_up_to(std::int64_t step) {
        std::vector<storage_writer> unused;
        std::lock_guard<std::mutex> lock(pub_mutex_);
        for (auto it = prepared_.begin(); it != prepared_.end() && it->first <= step && it->second.done;) {
            if (it->second.file) {
                unused.push_back(std::move(*it->second.file));
            }
            it = prepared_.erase(it);
        }
    }

    void stop_publisher() {
        {
            std::lock_guard<std::mutex> lock(pub_mutex_);
            pub_closing_ = true;
        }
        pub_work_.notify_one();
        if (publisher_.joinable()) {
            publisher_.join();
        }
        std::lock_guard<std::mutex> lock(pub_mutex_);
        prepared_.clear(); // files opened ahead and never used are removed
    }

    any_storage storage_;
    writer_options options_;
    std::string host_;

    // Training thread <-> data threads.
    mutable std::mutex mutex_;
    std::condition_variable room_;
    std::vector<std::unique_ptr<lane>> lanes_;
    std::optional<route_state> route_;
    std::uint64_t next_seq_ = 0;
    std::size_t queued_bytes_ = 0;
    std::uint64_t pushed_ = 0;
    std::uint64_t processed_ = 0;
    std::uint64_t dropped_ = 0;
    std::uint64_t blocked_ = 0;
    bool closing_ = false;
    std::exception_ptr error_;            // the first error, until taken
    std::atomic<bool> failed_{false};     // error_ is waiting to be taken
    std::atomic<std::uint64_t> fail_seq_{no_seq}; // the item the first error hit; no_seq: none
    std::atomic<std::uint64_t> handled_{0};
    std::atomic<double> publisher_cpu_{0};

    // Data threads (and the training thread's hints) <-> publisher thread.
    std::mutex pub_mutex_;
    std::condition_variable pub_work_;
    std::condition_variable pub_progress_;
    std::deque<std::int64_t> to_open_; // steps whose event files to open ahead
    std::multimap<std::uint64_t, job> ordered_;
    std::map<std::int64_t, prepared_file> prepared_;
    std::int64_t last_prepared_ = -1;
    std::uint64_t jobs_sent_ = 0;
    std::uint64_t jobs_done_ = 0;
    bool pub_closing_ = false;

    std::thread publisher_;
};

} // namespace tdbg
