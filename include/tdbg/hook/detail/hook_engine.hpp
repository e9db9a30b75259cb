#pragma once
/// \file
/// What a hook is made of, behind the public class (hook/hook.hpp):
///   - collection_selection (selection.hpp): which collections save a tensor now;
///   - step_clock (step_clock.hpp): the global step and each mode's step;
///   - export_schedule (export_schedule.hpp): when the collections file is queued again;
///   - tensorboard_export.hpp: whether and where TensorBoard files go, and their tags;
///   - save_planning.hpp: what the collections save of a tensor now (shape, reductions, raw
///     value, histogram), and its reductions computed;
///   - state_keeper (state_keeper.hpp): smdebug's state store, for a resumed job;
///   - tensor_checks.hpp: the names and ranks a saved tensor may have;
///   - step_scalars (step_scalars.hpp): the step's scalars and the SageMaker metrics;
///   - selection_check (selection_check.hpp): a selection that can never save;
///   - the writer (writer.hpp): background threads, their queue and the publisher;
/// and hook_engine, which holds them and is the one place of the step
/// protocol: what begin_step, end_step and close do, in which order, with
/// the writer and with errors.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
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
#include "tdbg/hook/detail/export_schedule.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/detail/run_claim.hpp"
#include "tdbg/hook/detail/selection.hpp"
#include "tdbg/hook/detail/selection_check.hpp"
#include "tdbg/hook/detail/tensor_checks.hpp"
#include "tdbg/hook/detail/tensorboard_export.hpp"
#include "tdbg/hook/detail/save_planning.hpp"
#include "tdbg/hook/detail/state_keeper.hpp"
#include "tdbg/hook/detail/step_clock.hpp"
#include "tdbg/hook/detail/step_scalars.hpp"
#include "tdbg/hook/detail/stop_watch.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/worker.hpp"
#include "tdbg/hook/detail/writer.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Everything behind a tdbg::hook (see the file comment).
class hook_engine {
public:
    hook_engine(any_storage storage, hook_options options)
        : storage_(std::move(storage)), options_(std::move(options)), selection_(validated(options_)),
          worker_(worker_of(options_)) {
        const bool resumed = state_.open(options_, clock_);
        scalars_.open_metrics(options_);
        const bool chief = worker_.name == worker_name(0);
        if (!options_.dry_run && (options_.include_workers == workers_to_save::all || chief)) {
            writer_options w;
            w.worker = worker_.name;
            w.max_queue_bytes = options_.max_queue_bytes;
            w.on_full_queue = options_.on_full_queue;
            w.nice = options_.writer_nice;
            w.data_threads = options_.writer_threads;
            if (exports_tensorboard(options_)) {
                w.tensorboard_put = tensorboard_target(options_, storage_);
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
        scalars_.close_metrics();
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
        check_tensor_rank(name, value.shape().size());
        state_.saved_at(clock_.global());
        const std::vector<std::size_t> active = std::move(active_);
        scalars_.queue_loss_metrics(name, value, reduce, selection_, active);
        if (!writer_ || writer_->stopped()) {
            return; // nothing is saved after a write error
        }
        const double wall_time = now_seconds();
        const std::string tensor_name(name);
        const bool save_raw = saves_raw(selection_, active);
        push_shape(tensor_name, active, value.shape());
        if (value.size() != 0) {
            for (auto& [r, stored] : saved_reductions(selection_, active, value, reduce, convention)) {
                push_record(make_event(format::reduction_tensor_name(r, tensor_name), std::move(stored), wall_time));
            }
        }
        std::optional<tensor_value> owned;
        auto owned_value = [&]() -> const tensor_value& {
            if (!owned) {
                owned = value.owns_data() ? value : pool_->copy(value);
            }
            return *owned;
        };
        if (exports_tensorboard(options_) && value.nbytes() != 0 && value.type() != dtype::boolean) {
            if (const auto collection = histogram_collection(selection_, active)) {
                writer_->push(write_items::tb_histogram{clock_.current(), clock_.global(), wall_time,
                                                        clean_tensorboard_tag(*collection + "/" + tensor_name),
                                                        owned_value(), nullptr});
            }
        }
        // smdebug writes no record for an empty tensor.
        if (save_raw && value.nbytes() != 0) {
            push_record(make_event(tensor_name, owned_value(), wall_time));
        }
        if (exports_tensorboard(options_) && value.size() == 1 && in_scalar_collection(selection_, active)) {
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
        return plan_of(selection_, active, type, shape, exports_tensorboard(options_));
    }

    /// Saves `name` from a deferred save (hook/deferred.hpp): its records are queued now, their
    /// values taken from `source` by the writer. `plan` is plan_save's for this step.
    void save_deferred(std::string_view name, dtype type, const tensor_value::shape_type& shape,
                       const save_plan& plan, deferred_source source) {
        check_saving(name);
        check_tensor_rank(name, shape.size());
        const auto active = selection_.active(name, clock_.current(), clock_.mode_step());
        if (active.empty() || plan_of(selection_, active, type, shape, exports_tensorboard(options_)) != plan) {
            throw usage_error(fmt::format("tdbg::hook: save_deferred('{}') with a plan other than plan_save gives now "
                                          "(plan_save at this step, with the tensor's dtype and shape)",
                                          name));
        }
        state_.saved_at(clock_.global());
        auto cell = std::make_shared<deferred_cell>(std::string(name), type, shape, plan, std::move(source));
        scalars_.queue_deferred_metrics(name, selection_, active, plan, cell);
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
                                        clean_tensorboard_tag(*histogram_collection(selection_, active) + "/" + tensor_name),
                                        tensor_value(), cell};
            writer_->push(std::move(h));
        }
        const std::size_t count = element_count(shape);
        if (plan.raw) {
            push_record(make_event(tensor_name, tensor_value(), wall_time),
                        write_items::deferred_ref{cell, write_items::deferred_ref::raw, count * dtype_size(type)});
        }
        if (plan.raw && exports_tensorboard(options_) && count == 1 && in_scalar_collection(selection_, active)) {
            writer_->push(write_items::tb_scalar{clock_.current(), clock_.global(), wall_time,
                                                 clean_tensorboard_tag(tensor_name), 0.0F, cell});
        }
    }

    /// Queues `scalar/<name>` for the end of this step, whatever the save configs say;
    /// `timestamp` (seconds since the epoch; 0 counts as none, as in smdebug) is its wall time.
    void save_scalar(std::string_view name, double value, bool sm_metric, std::optional<double> timestamp) {
        check_saving(name);
        const double wall_time = timestamp && *timestamp != 0 ? *timestamp : now_seconds();
        scalars_.add(pending_scalar{"scalar/" + std::string(name), value, wall_time, sm_metric, true});
    }

    // ---- information -------------------------------------------------------------

    [[nodiscard]] const worker_info& worker() const noexcept { return worker_; }
    [[nodiscard]] const hook_options& options() const noexcept { return options_; }
    [[nodiscard]] const any_storage& storage() const noexcept { return storage_; }
    [[nodiscard]] async_writer* writer() const noexcept { return writer_.get(); }
    [[nodiscard]] const std::optional<stop_request>& stop() const noexcept { return stop_; }

private:
    static const hook_options& validated(const hook_options& options) {
        if (options.reduction_config) {
            options.reduction_config->validate();
        }
        return options;
    }

    // The worker this hook is: as the environment tells (hook/worker.hpp), but what the options set.
    static worker_info worker_of(const hook_options& options) {
        worker_info worker = detect_worker();
        if (options.worker) {
            worker.name = *options.worker;
            worker.source = "options";
        }
        if (options.num_workers) {
            if (*options.num_workers < 1) {
                throw config_error(
                    fmt::format("hook_options.num_workers must be at least 1, found {}", *options.num_workers));
            }
            worker.size = *options.num_workers;
        }
        format::validate_worker_name(worker.name);
        return worker;
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

    // The tensor's shape in the step's index, when a collection saves shapes (ReductionConfig save_shape).
    void push_shape(const std::string& tensor_name, const std::vector<std::size_t>& active,
                    const tensor_value::shape_type& shape) {
        if (!saves_shape(selection_, active)) {
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
        std::vector<pending_scalar> scalars = scalars_.take();
        write_metrics(scalars);
        if (!writer_) {
            return;
        }
        const bool tensorboard = exports_tensorboard(options_);
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
            scalars_.write_metrics(scalars, clock_.current(), clock_.mode_step());
        } catch (const storage_error& e) {
            if (options_.on_write_error == write_error_policy::rethrow) {
                throw;
            }
            log(fmt::format("tdbg::hook: no more SageMaker metrics: {}", e.what()));
        }
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

    // smdebug's _write_state, at the start of a step: a new state when the checkpoint files changed.
    void write_state() {
        if (!state_.due()) {
            return;
        }
        try {
            state_.write(clock_);
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
    collection_selection selection_;
    worker_info worker_;
    selection_check check_{options_};
    step_clock clock_;
    export_schedule exports_;
    bool closed_ = false;
    bool step_wrote_ = false;          // the current step queued a record or a shape
    std::int64_t prepared_step_ = -1;  // the last step whose event file the writer was told to open
    std::vector<std::size_t> active_;  // prepare_save's collections, for save_prepared
    std::set<std::string> checked_names_;
    step_scalars scalars_;
    state_keeper state_;
    std::optional<stop_request> stop_;
    std::optional<std::string> write_error_;
    std::exception_ptr start_error_; // the start's storage error, for a worker without a writer, until reported
    std::shared_ptr<buffer_pool> pool_;
    std::unique_ptr<async_writer> writer_;
    std::unique_ptr<stop_watch> stop_watch_; // started at the first begin_step
};

} // namespace tdbg::detail
