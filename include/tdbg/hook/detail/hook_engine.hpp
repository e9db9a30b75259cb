#pragma once
/// \file
/// What a hook is made of, behind the public class (hook/hook.hpp):
///   - collection_selection (selection.hpp): which collections save a tensor now;
///   - step_clock: the global step and each mode's step;
///   - export_schedule: when the collections file is queued again;
///   - selection_check (selection_check.hpp): a selection that can never save;
///   - the writer (writer.hpp): background threads, their queue and the publisher;
/// and hook_engine, which holds them and is the one place of the step
/// protocol: what begin_step, end_step and close do, in which order, with
/// the writer and with errors.

#include <algorithm>
#include <array>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/buffer_pool.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/detail/metrics_writer.hpp"
#include "tdbg/hook/detail/run_claim.hpp"
#include "tdbg/hook/detail/selection.hpp"
#include "tdbg/hook/detail/selection_check.hpp"
#include "tdbg/hook/detail/state_store.hpp"
#include "tdbg/hook/detail/stop_watch.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/worker.hpp"
#include "tdbg/hook/detail/writer.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"
#include "tdbg/storage/open.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// smdebug's _clean_tag for TensorBoard tags: characters other than
/// [-/\w.] become '_', leading slashes go.
inline std::string clean_tensorboard_tag(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '/' || c == '.' || u >= 0x80;
        out.push_back(ok ? c : '_');
    }
    const auto first = out.find_first_not_of('/');
    return first == std::string::npos ? std::string() : out.substr(first);
}

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Throws invalid_name unless `name` can name a tensor: not empty, UTF-8 (names go
/// into JSON files, which hold UTF-8 only), no NUL byte.
inline void check_tensor_name(std::string_view name) {
    if (name.empty()) {
        throw invalid_name("tdbg::hook: an empty tensor name");
    }
    if (const auto at = invalid_utf8_at(name); at != std::string_view::npos) {
        throw invalid_name(fmt::format("tensor name is not valid UTF-8 at byte {}", at));
    }
    if (name.find('\0') != std::string_view::npos) {
        throw invalid_name("tensor name contains a NUL byte");
    }
}

/// The global step and each mode's step, as smdebug's _increment_step and
/// set_mode keep them: every counter starts at -1 (a resumed job's at the last
/// step seen); begin() advances the global step and the current mode's, and
/// GLOBAL's follows the global step.
class step_clock {
public:
    [[nodiscard]] mode current() const noexcept { return mode_; }
    [[nodiscard]] std::int64_t global() const noexcept { return step_; }
    [[nodiscard]] std::int64_t mode_step(mode m) const noexcept { return mode_steps_[index(m)]; }
    [[nodiscard]] std::int64_t mode_step() const noexcept { return mode_step(mode_); }
    /// True between begin() and end().
    [[nodiscard]] bool open() const noexcept { return open_; }

    /// The modes met so far, GLOBAL first, in the order smdebug's mode_steps dict keeps them.
    [[nodiscard]] std::vector<std::pair<mode, std::int64_t>> known_mode_steps() const {
        std::vector<std::pair<mode, std::int64_t>> out;
        for (std::size_t i = 0; i < known_count_; ++i) {
            out.emplace_back(known_[i], mode_step(known_[i]));
        }
        return out;
    }

    void set_mode(mode m) noexcept {
        mode_ = m;
        remember(m);
    }

    /// Goes on from a saved state (smdebug's _initialize_to_last_saved_state): the
    /// global step is `seen`, each listed mode's step its own, and a mode met later
    /// starts at `seen` (smdebug's set_mode gives it init_step).
    void resume(std::int64_t seen, const std::vector<std::pair<mode, std::int64_t>>& modes) noexcept {
        step_ = seen;
        mode_steps_.fill(seen);
        for (const auto& [m, step] : modes) {
            mode_steps_[index(m)] = step;
            remember(m);
        }
        mode_steps_[index(mode::global)] = seen;
    }
    void begin() noexcept {
        ++step_;
        ++mode_steps_[index(mode_)];
        if (mode_ != mode::global) {
            mode_steps_[index(mode::global)] = step_;
        }
        open_ = true;
    }
    /// Closes the step; false when none was open.
    bool end() noexcept { return std::exchange(open_, false); }

private:
    static std::size_t index(mode m) noexcept { return static_cast<std::size_t>(m) - 1; }

    void remember(mode m) noexcept {
        if (std::find(known_.begin(), known_.begin() + static_cast<std::ptrdiff_t>(known_count_), m) ==
            known_.begin() + static_cast<std::ptrdiff_t>(known_count_)) {
            known_[known_count_++] = m;
        }
    }

    mode mode_ = mode::global;
    std::array<mode, 4> known_{mode::global, mode::global, mode::global, mode::global};
    std::size_t known_count_ = 1;
    std::int64_t step_ = -1;
    std::array<std::int64_t, 4> mode_steps_{-1, -1, -1, -1};
    bool open_ = false;
};

/// When the collections file is queued: before the first index file (a run whose
/// first index file is published can always be opened), and at close when the
/// collections learned names since. (After a write error nothing is queued: the
/// writer has stopped.)
class export_schedule {
public:
    [[nodiscard]] bool due_at_step_end(bool step_wrote) const noexcept { return step_wrote && !exported_; }
    [[nodiscard]] bool due_at_close(std::uint64_t version) const noexcept {
        return !exported_ || version != version_at_export_;
    }
    /// The file of `version` was queued.
    void queued(std::uint64_t version) noexcept {
        exported_ = true;
        version_at_export_ = version;
    }

private:
    bool exported_ = false;
    std::uint64_t version_at_export_ = 0;
};

/// Everything behind a tdbg::hook (see the file comment).
class hook_engine {
public:
    hook_engine(any_storage storage, hook_options options)
        : storage_(std::move(storage)), options_(std::move(options)), selection_(validated(options_)) {
        worker_ = detect_worker();
        if (options_.worker) {
            worker_.name = *options_.worker;
            worker_.source = "options";
        }
        if (options_.num_workers) {
            if (*options_.num_workers < 1) {
                throw config_error(
                    fmt::format("hook_options.num_workers must be at least 1, found {}", *options_.num_workers));
            }
            worker_.size = *options_.num_workers;
        }
        format::validate_worker_name(worker_.name);
        const bool resumed = resume_from_state_store();
        if (!options_.dry_run) {
            if (auto dir = metrics_dir()) {
                metrics_ = std::make_unique<metrics_writer>(*dir);
            }
        }
        const bool chief = worker_.name == worker_name(0);
        if (!options_.dry_run && (options_.include_workers == workers_to_save::all || chief)) {
            writer_options w;
            w.worker = worker_.name;
            w.max_queue_bytes = options_.max_queue_bytes;
            w.on_full_queue = options_.on_full_queue;
            w.nice = options_.writer_nice;
            w.data_threads = options_.writer_threads;
            if (exports_tensorboard()) {
                w.tensorboard_put = tensorboard_target();
            }
            pool_ = std::make_shared<buffer_pool>(options_.max_queue_bytes);
            writer_ = std::make_unique<async_writer>(storage_, std::move(w));
        }
        start_run(resumed); // last: a hook whose options are refused has claimed nothing
    }

    hook_engine(const hook_engine&) = delete;
    hook_engine& operator=(const hook_engine&) = delete;
    hook_engine(hook_engine&&) = delete;
    hook_engine& operator=(hook_engine&&) = delete;
    ~hook_engine() = default;

    // ---- collections --------------------------------------------------------

    [[nodiscard]] collection_selection& selection() noexcept { return selection_; }

    // ---- the step protocol ----------------------------------------------------

    void set_mode(mode m) {
        check_open("set_mode");
        end_step();
        clock_.set_mode(m);
    }

    /// Publishes the previous step, looks for the stop marker, then advances the clock.
    void begin_step() {
        check_open("begin_step");
        end_step();
        report_write_error(); // also when no step was open: an error of the hook's start
        write_state();
        check_stop_marker();
        clock_.begin();
        step_wrote_ = false;
    }

    /// Publishes the current step: its scalars, the collections file when due, then
    /// the step's end (its event file, index file and TensorBoard files); then
    /// reports a writer error, if one has stopped the writer.
    void end_step() {
        if (!clock_.end()) {
            return;
        }
        write_scalars();
        if (writer_ && !writer_->stopped()) {
            if (exports_.due_at_step_end(step_wrote_)) {
                queue_collections_file();
            }
            writer_->push(write_items::step_end{clock_.global()});
        }
        report_write_error();
        report_selection(check_.step_ended(selection_)); // last: the step is queued whole first
    }

    /// Publishes the current step, the collections file and the end marker, and
    /// stops the writer; a write error is reported after all of it was tried.
    void close() {
        if (closed_) {
            return;
        }
        std::exception_ptr first;
        auto keep_first = [&] {
            if (!first) {
                first = std::current_exception();
            }
        };
        try {
            end_step();
        } catch (...) {
            keep_first();
        }
        closed_ = true;
        if (stop_watch_) {
            stop_watch_->stop();
        }
        if (metrics_) {
            metrics_->close();
        }
        try {
            if (writer_ && !writer_->stopped() && exports_.due_at_close(selection_.version())) {
                queue_collections_file();
            }
            if (!options_.dry_run && std::getenv("TRAINING_JOB_NAME") == nullptr) {
                // smdebug leaves the end marker to SageMaker in its jobs; every worker writes it otherwise.
                if (writer_) {
                    writer_->push(write_items::object{std::string(format::end_marker_key), std::string()});
                } else if (!write_error_ && !start_error_) {
                    put_end_marker();
                }
            }
        } catch (...) {
            keep_first();
        }
        if (writer_) {
            writer_->close();
        }
        try {
            report_write_error();
        } catch (...) {
            keep_first();
        }
        if (first) {
            std::rethrow_exception(first);
        }
    }

    /// Waits until the writer has written everything queued so far; reports a write error.
    void flush() {
        if (writer_) {
            writer_->flush();
        }
        report_write_error();
    }

    /// The first write error, if one stopped the hook.
    [[nodiscard]] const std::optional<std::string>& write_error() const noexcept { return write_error_; }

    [[nodiscard]] const step_clock& clock() const noexcept { return clock_; }
    [[nodiscard]] bool closed() const noexcept { return closed_; }

    // ---- saving ---------------------------------------------------------------

    /// True when some saved collection saves at this step.
    [[nodiscard]] bool is_saving_step() {
        return clock_.open() && selection_.any_saves(clock_.current(), clock_.mode_step());
    }

    /// True when `name` would be saved at this step.
    [[nodiscard]] bool should_save(std::string_view name) {
        if (!clock_.open()) {
            return false;
        }
        const bool saved = !selection_.active(name, clock_.current(), clock_.mode_step()).empty();
        check_.offer(name, false, selection_);
        return saved;
    }

    /// Checks that `name` can be saved now and adds it to `collections`; returns
    /// true when it is saved at this step (save_prepared then saves it).
    bool prepare_save(std::string_view name, std::initializer_list<std::string_view> collections) {
        check_saving(name);
        selection_.add_explicit(name, collections);
        active_ = selection_.active(name, clock_.current(), clock_.mode_step());
        check_.offer(name, !active_.empty(), selection_);
        return !active_.empty();
    }

    /// Saves `value` as `name` in the collections prepare_save found (smdebug's
    /// _write_for_tensor: shape, reductions, histogram, raw tensor, scalar summary); `reduce`
    /// computes the reductions no collection's compiled kernel does.
    void save_prepared(std::string_view name, const tensor_value& value, reductions_function reduce,
                       reduction_convention convention = reduction_convention::numpy) {
        check_rank(name, value.shape().size());
        last_saved_step_ = clock_.global();
        const std::vector<std::size_t> active = std::move(active_);
        queue_loss_metrics(name, value, reduce, active);
        if (!writer_ || writer_->stopped()) {
            return; // nothing is saved after a write error
        }
        const double wall_time = now_seconds();
        const std::string tensor_name(name);
        bool save_raw = false;
        for (const std::size_t i : active) {
            save_raw = save_raw || selection_.at(i).reductions.save_raw_tensor;
        }
        push_shape(tensor_name, active, value.shape());
        if (value.size() != 0) {
            write_reductions(tensor_name, value, active, wall_time, reduce, convention);
        }
        std::optional<tensor_value> owned;
        auto owned_value = [&]() -> const tensor_value& {
            if (!owned) {
                owned = value.owns_data() ? value : pool_->copy(value);
            }
            return *owned;
        };
        if (exports_tensorboard() && value.nbytes() != 0 && value.type() != dtype::boolean) {
            if (const auto collection = histogram_collection(active)) {
                writer_->push(write_items::tb_histogram{clock_.current(), clock_.global(), wall_time,
                                                        clean_tensorboard_tag(*collection + "/" + tensor_name),
                                                        owned_value(), nullptr});
            }
        }
        // smdebug writes no record for an empty tensor.
        if (save_raw && value.nbytes() != 0) {
            push_record(make_event(tensor_name, owned_value(), wall_time));
        }
        if (exports_tensorboard() && value.size() == 1 && in_scalar_collection(active)) {
            writer_->push(write_items::tb_scalar{clock_.current(), clock_.global(), wall_time,
                                                 clean_tensorboard_tag(tensor_name),
                                                 static_cast<float>(scalar_as_double(value)), nullptr});
        }
    }

    /// What saving `name`, a tensor of `type` and `shape`, writes at this step; nullopt when
    /// nothing (not even its shape). Checks and adds `name` to `collections` as prepare_save.
    std::optional<save_plan> plan_save(std::string_view name, dtype type, const tensor_value::shape_type& shape,
                                       std::initializer_list<std::string_view> collections) {
        check_saving(name);
        selection_.add_explicit(name, collections);
        const auto active = selection_.active(name, clock_.current(), clock_.mode_step());
        check_.offer(name, !active.empty(), selection_);
        if (active.empty()) {
            return std::nullopt;
        }
        return plan_of(active, type, shape);
    }

    /// Saves `name` from a deferred save (hook/deferred.hpp): its records are queued now, their
    /// values taken from `source` by the writer. `plan` is plan_save's for this step.
    void save_deferred(std::string_view name, dtype type, const tensor_value::shape_type& shape,
                       const save_plan& plan, deferred_source source) {
        check_saving(name);
        check_rank(name, shape.size());
        const auto active = selection_.active(name, clock_.current(), clock_.mode_step());
        if (active.empty() || plan_of(active, type, shape) != plan) {
            throw usage_error(fmt::format("tdbg::hook: save_deferred('{}') with a plan other than plan_save gives now "
                                          "(plan_save at this step, with the tensor's dtype and shape)",
                                          name));
        }
        last_saved_step_ = clock_.global();
        auto cell = std::make_shared<deferred_cell>(std::string(name), type, shape, plan, std::move(source));
        queue_deferred_metrics(name, active, plan, cell);
        if (!writer_ || writer_->stopped()) {
            return; // nothing is saved after a write error
        }
        const double wall_time = now_seconds();
        const std::string tensor_name(name);
        push_shape(tensor_name, active, shape);
        for (std::size_t k = 0; k < plan.reductions.size(); ++k) {
            format::tensor_event ev = make_event(format::reduction_tensor_name(plan.reductions[k], tensor_name),
                                                 tensor_value(), wall_time);
            push_record(std::move(ev), write_items::deferred_ref{cell, k, 16});
        }
        if (plan.histogram) {
            write_items::tb_histogram h{clock_.current(), clock_.global(), wall_time,
                                        clean_tensorboard_tag(*histogram_collection(active) + "/" + tensor_name),
                                        tensor_value(), cell};
            writer_->push(std::move(h));
        }
        std::size_t count = 1;
        for (const std::size_t extent : shape) {
            count *= extent;
        }
        if (plan.raw) {
            push_record(make_event(tensor_name, tensor_value(), wall_time),
                        write_items::deferred_ref{cell, write_items::deferred_ref::raw, count * dtype_size(type)});
        }
        if (plan.raw && exports_tensorboard() && count == 1 && in_scalar_collection(active)) {
            writer_->push(write_items::tb_scalar{clock_.current(), clock_.global(), wall_time,
                                                 clean_tensorboard_tag(tensor_name), 0.0F, cell});
        }
    }

    /// Queues `scalar/<name>` for the end of this step, whatever the save configs say;
    /// `timestamp` (seconds since the epoch; 0 counts as none, as in smdebug) is its wall time.
    void save_scalar(std::string_view name, double value, bool sm_metric, std::optional<double> timestamp) {
        check_saving(name);
        const double wall_time = timestamp && *timestamp != 0 ? *timestamp : now_seconds();
        scalars_.push_back(pending_scalar{"scalar/" + std::string(name), value, wall_time, sm_metric, true});
    }

    // ---- information -------------------------------------------------------------

    [[nodiscard]] const worker_info& worker() const noexcept { return worker_; }
    [[nodiscard]] const hook_options& options() const noexcept { return options_; }
    [[nodiscard]] const any_storage& storage() const noexcept { return storage_; }
    [[nodiscard]] async_writer* writer() const noexcept { return writer_.get(); }
    [[nodiscard]] const std::optional<stop_request>& stop() const noexcept { return stop_; }

private:
    // smdebug's ScalarCache: a save_scalar (written to the step's files, and as a
    // metric with sm_metric) or a loss (a metric only).
    struct pending_scalar {
        std::string name;
        double value = 0;
        double wall_time = 0;
        bool sm_metric = false;
        bool write_event = true;
    };

    static const hook_options& validated(const hook_options& options) {
        if (options.reduction_config) {
            options.reduction_config->validate();
        }
        return options;
    }

    [[nodiscard]] bool exports_tensorboard() const noexcept {
        return options_.export_tensorboard || !options_.tensorboard_dir.empty();
    }

    // TensorBoard files go inside the run for a relative (or empty) directory,
    // and to the local filesystem for an absolute one.
    std::function<void(const std::string&, const std::string&)> tensorboard_target() {
        const std::string dir = options_.tensorboard_dir.empty() ? std::string("tensorboard") : options_.tensorboard_dir;
        if (!dir.empty() && dir.front() == '/') {
            const any_storage local = open_storage(dir); // a local directory: the path is absolute
            return [local](const std::string& key, const std::string& bytes) { local.put(key, bytes); };
        }
        std::string prefix = dir;
        while (!prefix.empty() && prefix.back() == '/') {
            prefix.pop_back();
        }
        validate_key(prefix);
        const any_storage run = storage_;
        return [run, prefix](const std::string& key, const std::string& bytes) { run.put(prefix + "/" + key, bytes); };
    }

    void check_open(const char* what) const {
        if (closed_) {
            throw usage_error(fmt::format("tdbg::hook::{} after close()", what));
        }
    }

    void check_saving(std::string_view name) {
        check_open("save");
        report_write_error();
        if (!clock_.open()) {
            throw usage_error(fmt::format("tdbg::hook: cannot save '{}': no step is open (call begin_step() {})", name,
                                          clock_.global() < 0 ? "before saving)" : "at the start of each step)"));
        }
        if (checked_names_.count(std::string(name)) == 0) {
            check_tensor_name(name);
            checked_names_.emplace(name);
        }
    }

    // Reports the error that stopped the writer, once: thrown (rethrow policy) or
    // printed (disable policy, smdebug's: training goes on without the hook).
    void report_write_error() {
        if (start_error_) {
            write_failed(std::exchange(start_error_, nullptr));
        }
        if (writer_) {
            if (std::exception_ptr e = writer_->take_error()) {
                write_failed(e);
            }
        }
    }

    void write_failed(const std::exception_ptr& e) {
        std::string what = "unknown error";
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            what = x.what();
        } catch (...) { // NOLINT(bugprone-empty-catch): described as an unknown error
        }
        if (!write_error_) {
            write_error_ = what;
        }
        if (options_.on_write_error == write_error_policy::rethrow) {
            std::rethrow_exception(e);
        }
        log(fmt::format("tdbg::hook: saving stopped at step {}: {}; training goes on, and the run at {} stays "
                        "readable up to its last published step",
                        clock_.global(), what, storage_.describe()));
    }

    // One line to the hook's log (hook_options::log, else standard error), made safe for a terminal.
    void log(const std::string& line) const {
        const std::string safe = terminal_safe(line);
        if (options_.log) {
            options_.log(safe);
        } else {
            std::fprintf(stderr, "%s\n", safe.c_str());
        }
    }

    // What the selection check found at a step's end: logged, or thrown (a config_error) by
    // the error policy once the step is queued whole.
    void report_selection(const std::vector<std::string>& found) const {
        if (found.empty()) {
            return;
        }
        if (options_.selection_check == selection_check_policy::error) {
            std::string what;
            for (const std::string& f : found) {
                what += (what.empty() ? "" : "; ") + f;
            }
            throw config_error(what);
        }
        for (const std::string& f : found) {
            log(f);
        }
    }

    // The end marker of a worker that writes nothing else (no writer thread).
    void put_end_marker() {
        try {
            storage_.put(std::string(format::end_marker_key), std::string_view());
        } catch (const storage_error&) {
            write_failed(std::current_exception());
        }
    }

    static void check_rank(std::string_view name, std::size_t rank) {
        if (rank > max_tensor_rank) { // neither smdebug (numpy) nor tdbg could read it back
            throw usage_error(fmt::format("tdbg::hook: cannot save '{}': it has {} dimensions, more than the {} a "
                                          "tensor may have",
                                          name, rank, max_tensor_rank));
        }
    }

    // What the active collections save of a tensor of `type` and `shape` (smdebug's
    // _write_for_tensor): the reductions in write_reductions' order, the raw value, a histogram.
    [[nodiscard]] save_plan plan_of(const std::vector<std::size_t>& active, dtype type,
                                    const tensor_value::shape_type& shape) const {
        std::size_t count = 1;
        for (const std::size_t extent : shape) {
            count *= extent;
        }
        save_plan plan;
        if (count == 0) {
            return plan; // smdebug writes no record for an empty tensor
        }
        for (const std::size_t i : active) {
            const auto& e = selection_.at(i);
            plan.raw = plan.raw || e.reductions.save_raw_tensor;
            if (is_scalar_collection(e.coll.name())) {
                continue; // smdebug's SCALAR_COLLECTIONS get no reductions
            }
            for (const reduction r : e.reductions.all()) {
                if (std::find(plan.reductions.begin(), plan.reductions.end(), r) == plan.reductions.end()) {
                    plan.reductions.push_back(r);
                }
            }
        }
        plan.histogram = exports_tensorboard() && type != dtype::boolean && type != dtype::string &&
                         !is_complex(type) && histogram_collection(active).has_value();
        return plan;
    }

    // The collection whose name tags the tensor's TensorBoard histogram: the first active one
    // that asks for histograms and saves more than raw values; none when no collection does.
    [[nodiscard]] std::optional<std::string> histogram_collection(const std::vector<std::size_t>& active) const {
        for (const std::size_t i : active) {
            const auto& e = selection_.at(i);
            if (e.histogram && !is_raw_only_collection(e.coll.name())) {
                return e.coll.name();
            }
        }
        return std::nullopt;
    }

    [[nodiscard]] bool in_scalar_collection(const std::vector<std::size_t>& active) const {
        return std::any_of(active.begin(), active.end(),
                           [&](std::size_t i) { return is_scalar_collection(selection_.at(i).coll.name()); });
    }

    // The tensor's shape in the step's index, when a collection saves shapes (ReductionConfig save_shape).
    void push_shape(const std::string& tensor_name, const std::vector<std::size_t>& active,
                    const tensor_value::shape_type& shape) {
        const bool save_shape = std::any_of(active.begin(), active.end(),
                                            [&](std::size_t i) { return selection_.at(i).reductions.save_shape; });
        if (!save_shape) {
            return;
        }
        format::shape_entry s;
        s.tensorname = tensor_name;
        s.originalname = tensor_name;
        s.shape.assign(shape.begin(), shape.end());
        writer_->push(write_items::shape{clock_.global(), clock_.current(), clock_.mode_step(), std::move(s)});
        step_wrote_ = true;
    }

    format::tensor_event make_event(std::string tag, tensor_value value, double wall_time) const {
        format::tensor_event ev;
        ev.step = clock_.global();
        ev.wall_time = wall_time;
        ev.tag = std::move(tag);
        ev.value = std::move(value);
        ev.mode = clock_.current();
        ev.mode_step = clock_.mode_step();
        return ev;
    }

    // Each reduction once, in smdebug's order over the collections; a
    // collection's compiled kernel computes its whole list in one pass, the
    // rest goes through one runtime pass.
    void write_reductions(const std::string& name, const tensor_value& value, const std::vector<std::size_t>& active,
                          double wall_time, reductions_function reduce, reduction_convention convention) {
        std::vector<reduction> order;
        std::vector<std::optional<tensor_value>> results;
        for (const std::size_t i : active) {
            const auto& e = selection_.at(i);
            if (is_scalar_collection(e.coll.name())) {
                continue; // smdebug's SCALAR_COLLECTIONS get no reductions
            }
            const auto wanted = e.reductions.all();
            std::vector<std::size_t> fresh;
            for (std::size_t k = 0; k < wanted.size(); ++k) {
                if (std::find(order.begin(), order.end(), wanted[k]) == order.end()) {
                    order.push_back(wanted[k]);
                    results.emplace_back();
                    fresh.push_back(k);
                }
            }
            // A collection's compiled kernel computes numpy's conventions.
            const bool own_kernel = convention == reduction_convention::numpy && e.coll.kernel() && !fresh.empty() &&
                                    e.coll.reduction_config() &&
                                    *e.coll.reduction_config() == e.reductions;
            if (own_kernel) {
                std::vector<tensor_value> computed;
                try {
                    computed = e.coll.kernel()(value);
                } catch (const dtype_mismatch&) {
                    computed.clear(); // no reductions of this dtype, as smdebug skips what numpy refuses
                }
                if (computed.size() == wanted.size()) {
                    for (const std::size_t k : fresh) {
                        const auto pos =
                            static_cast<std::size_t>(std::find(order.begin(), order.end(), wanted[k]) - order.begin());
                        results[pos] = std::move(computed[k]);
                    }
                }
            }
        }
        if (order.empty()) {
            return;
        }
        std::vector<reduction> missing;
        for (std::size_t k = 0; k < order.size(); ++k) {
            if (!results[k]) {
                missing.push_back(order[k]);
            }
        }
        if (!missing.empty()) {
            std::vector<tensor_value> computed;
            reduce::options opts;
            opts.ddof = reduction_ddof(convention);
            try {
                computed = reduce(value, missing, opts);
            } catch (const dtype_mismatch&) {
                computed.clear();
            }
            std::size_t next = 0;
            for (std::size_t k = 0; k < order.size() && next < computed.size(); ++k) {
                if (!results[k]) {
                    results[k] = std::move(computed[next++]);
                }
            }
        }
        for (std::size_t k = 0; k < order.size(); ++k) {
            if (!results[k]) {
                continue;
            }
            // smdebug's core hook stores a reduction as shape (1,), its PyTorch hook as torch gives it.
            if (auto stored = stored_reduction(convention, value.type(), order[k], *results[k])) {
                push_record(make_event(format::reduction_tensor_name(order[k], name), std::move(*stored), wall_time));
            }
        }
    }

    // Queues one record of this step's event file; the first one lets the
    // writer open the file ahead, while it may still write the previous step.
    void push_record(format::tensor_event ev, std::optional<write_items::deferred_ref> deferred = std::nullopt) {
        if (prepared_step_ != clock_.global()) {
            writer_->prepare_step(clock_.global());
            prepared_step_ = clock_.global();
        }
        if (writer_->push(write_items::tensor{std::move(ev), std::move(deferred)})) {
            step_wrote_ = true;
        }
    }

    // smdebug's _write_scalars: at the end of the step, into the step's files.
    void write_scalars() {
        std::vector<pending_scalar> scalars = std::move(scalars_);
        scalars_.clear();
        if (metrics_) {
            write_metrics(scalars);
        }
        if (!writer_) {
            return;
        }
        const bool tensorboard = exports_tensorboard();
        for (pending_scalar& s : scalars) {
            if (!s.write_event) {
                continue;
            }
            if (tensorboard) {
                writer_->push(write_items::tb_scalar{clock_.current(), clock_.global(), s.wall_time,
                                                     clean_tensorboard_tag(s.name), static_cast<float>(s.value),
                                                     nullptr});
            }
            push_record(make_event(s.name, tensor_value(std::vector<double>{s.value}), s.wall_time));
        }
    }

    // smdebug's metrics_writer.log_metric calls: "<name>_<MODE>" at the mode's step.
    void write_metrics(const std::vector<pending_scalar>& scalars) {
        try {
            for (const pending_scalar& s : scalars) {
                if (s.sm_metric) {
                    metrics_->log(s.name + "_" + std::string(mode_name(clock_.current())), s.value, s.wall_time,
                                  clock_.mode_step());
                }
            }
        } catch (const storage_error& e) {
            metrics_.reset();
            if (options_.on_write_error == write_error_policy::rethrow) {
                throw;
            }
            log(fmt::format("tdbg::hook: no more SageMaker metrics: {}", e.what()));
        }
    }

    // smdebug's _save_for_tensor: a tensor saved in "losses", "metrics" or "sm_metrics"
    // is also a SageMaker metric, its mean, once per such collection.
    void queue_loss_metrics(std::string_view name, const tensor_value& value, reductions_function reduce,
                            const std::vector<std::size_t>& active) {
        if (!metrics_ || value.size() == 0) {
            return;
        }
        for (const std::size_t i : active) {
            const std::string& c = selection_.at(i).coll.name();
            if (c != collection_names::losses && c != collection_names::metrics && c != collection_names::sm_metrics) {
                continue;
            }
            double mean = 0;
            try {
                mean = scalar_as_double(reduce(value, {reduction{reduction_kind::mean, false}}, {}).front());
            } catch (const dtype_mismatch&) {
                return; // no mean of strings
            }
            scalars_.push_back(pending_scalar{std::string(name), mean, now_seconds(), true, false});
        }
    }

    // queue_loss_metrics for a deferred save: the metric is the value's mean, so it waits for
    // the value here (a SageMaker metric of a device tensor costs the training thread that wait).
    void queue_deferred_metrics(std::string_view name, const std::vector<std::size_t>& active, const save_plan& plan,
                                const std::shared_ptr<deferred_cell>& cell) {
        if (!metrics_ || !plan.raw) {
            return;
        }
        const bool metric = std::any_of(active.begin(), active.end(), [&](std::size_t i) {
            const std::string& c = selection_.at(i).coll.name();
            return c == collection_names::losses || c == collection_names::metrics || c == collection_names::sm_metrics;
        });
        if (!metric) {
            return;
        }
        try {
            queue_loss_metrics(name, *cell->get().raw, &compute_reductions, active);
        } catch (const error&) {
            // The writer meets the same error at this tensor's records and reports it by the policy.
        }
    }

    // The metrics directory: the option, else $SAGEMAKER_METRICS_DIRECTORY.
    [[nodiscard]] std::optional<std::string> metrics_dir() const {
        if (options_.sagemaker_metrics_dir) {
            return options_.sagemaker_metrics_dir->empty() ? std::nullopt : options_.sagemaker_metrics_dir;
        }
        if (const char* env = std::getenv(sagemaker_metrics_env); env != nullptr && *env != '\0') {
            return std::string(env);
        }
        return std::nullopt;
    }

    // The run's start (hook/detail/run_claim.hpp): a writing worker claims itself in the run, and
    // a run that is another job's is a config_error; a worker that writes nothing only checks that
    // the run has not ended. A storage that fails here (an outage) is a write error under the
    // policy, as later ones are: the hook saves nothing, and training goes on by default.
    void start_run(bool resumed) {
        try {
            if (writer_) {
                claim_run(storage_, worker_.name, options_.existing_run, resumed);
            } else if (storage_.exists(std::string(format::end_marker_key))) {
                throw config_error(fmt::format("the run at {} has ended already (it holds {}); write to a new directory",
                                               storage_.describe(), format::end_marker_key));
            }
        } catch (const storage_error&) {
            if (writer_) {
                writer_->fail(std::current_exception());
            } else {
                start_error_ = std::current_exception();
            }
            if (options_.on_write_error == write_error_policy::disable) {
                report_write_error(); // printed now; with rethrow, thrown by the next call
            }
        }
    }

    // smdebug's _initialize_to_last_saved_state: the state store's last state, if any; true when
    // there was one (the job is resumed).
    bool resume_from_state_store() {
        std::string config;
        if (options_.checkpoint_config_file) {
            config = *options_.checkpoint_config_file;
        } else if (const char* env = std::getenv(checkpoint_config_env); env != nullptr) {
            config = env;
        } else {
            config = default_checkpoint_config_file;
        }
        state_store_ = std::make_unique<state_store>(config);
        if (auto last = state_store_->last_state()) {
            last_saved_step_ = last->last_saved_step;
            training_run_ = last->training_run + 1;
            clock_.resume(last->last_seen_step, last->mode_steps);
            return true;
        }
        return false;
    }

    // smdebug's _write_state, at the start of a step: a new state when the checkpoint files changed.
    void write_state() {
        if (!state_store_->checkpoint_updated()) {
            return;
        }
        training_state state;
        state.training_run = training_run_;
        state.last_saved_step = last_saved_step_;
        state.last_seen_step = clock_.global();
        state.mode_steps = clock_.known_mode_steps();
        try {
            state_store_->update(state);
        } catch (const storage_error& e) {
            if (options_.on_write_error == write_error_policy::rethrow) {
                throw;
            }
            log(fmt::format("tdbg::hook: {}", e.what()));
        }
    }

    void queue_collections_file() {
        const int workers = options_.include_workers == workers_to_save::all ? worker_.size : 1;
        const std::uint64_t version = selection_.version();
        const std::string text = format::to_json(selection_.to_file(workers));
        writer_->push(write_items::object{format::collections_file_key(worker_.name), text});
        exports_.queued(version);
    }

    // The stop marker, as the watch found it; with a check interval of 0, looked for here at every step.
    void check_stop_marker() {
        if (stop_) {
            return;
        }
        if (options_.stop_check_interval.count() <= 0) {
            stop_ = stop_watch::look(storage_);
            return;
        }
        if (!stop_watch_) {
            stop_watch_ = std::make_unique<stop_watch>(storage_, options_.stop_check_interval);
        }
        stop_ = stop_watch_->found();
    }

    any_storage storage_;
    hook_options options_;
    worker_info worker_;
    collection_selection selection_;
    selection_check check_{options_};
    step_clock clock_;
    export_schedule exports_;
    bool closed_ = false;
    bool step_wrote_ = false;          // the current step queued a record or a shape
    std::int64_t prepared_step_ = -1;  // the last step whose event file the writer was told to open
    std::vector<std::size_t> active_;  // prepare_save's collections, for save_prepared
    std::set<std::string> checked_names_;
    std::vector<pending_scalar> scalars_;
    std::unique_ptr<state_store> state_store_;
    std::optional<std::int64_t> last_saved_step_; // smdebug's last_saved_step, for the state store
    std::int64_t training_run_ = 0;
    std::unique_ptr<metrics_writer> metrics_;
    std::optional<stop_request> stop_;
    std::optional<std::string> write_error_;
    std::exception_ptr start_error_; // the start's storage error, for a worker without a writer, until reported
    std::shared_ptr<buffer_pool> pool_;
    std::unique_ptr<async_writer> writer_;
    std::unique_ptr<stop_watch> stop_watch_; // started at the first begin_step
};

} // namespace tdbg::detail
