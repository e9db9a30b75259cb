#pragma once
/// \file
/// What a hook is made of, behind the public class (hook/hook.hpp):
///   - collection_selection (collection_selection.hpp): which collections save a tensor now;
///   - step_clock (step_clock.hpp): the global step and each mode's step;
///   - tensorboard_export.hpp: whether and where TensorBoard files go, and their tags, and
///     export_schedule: when the collections file is queued again;
///   - save_planner (save_planning.hpp): the checks and decisions of a save, one call in each
///     half of it: the name, the collections that save it now, its rank, what it writes (shape,
///     reductions, raw value, histogram) and its reductions computed;
///   - state_keeper (state_store.hpp): smdebug's state store, for a resumed job;
///   - step_scalars (step_scalars.hpp): the step's scalars and the SageMaker metrics;
///   - selection_check (selection_check.hpp): a selection that can never save;
///   - the writer (writer/async_writer.hpp): background threads, their queue and the publisher;
///   - step_records (writer/record_block.hpp): a save's records queued for the writer, the small
///     ones encoded into the step's block;
///   - call_gate (call_gate.hpp): one call at a time, and nothing done in a forked child;
///   - error_reporter (error_reporter.hpp): the write error that stops the hook, thrown or
///     logged, the errors of the writes beside the writer's, the selection check's findings
///     and the hook's log;
/// and hook_engine, which holds them and is the one place of the step
/// protocol: what begin_step, end_step and close do, in which order, with
/// the writer and with errors. Its definitions are in hook/detail/impl/hook_engine.ipp.

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/call_gate.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"
#include "tdbg/hook/detail/error_reporter.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/detail/run_claim.hpp"
#include "tdbg/hook/detail/collection_selection.hpp"
#include "tdbg/hook/detail/selection_check.hpp"
#include "tdbg/hook/detail/tensorboard_export.hpp"
#include "tdbg/hook/detail/save_planning.hpp"
#include "tdbg/hook/detail/state_store.hpp"
#include "tdbg/hook/detail/step_clock.hpp"
#include "tdbg/hook/detail/step_scalars.hpp"
#include "tdbg/hook/detail/stop_watch.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/worker.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"
#include "tdbg/hook/detail/writer/record_block.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Everything behind a tdbg::hook (see the file comment).
class hook_engine {
public:
    TDBG_DECL hook_engine(any_storage storage, hook_options options);

    hook_engine(const hook_engine&) = delete;
    hook_engine& operator=(const hook_engine&) = delete;
    hook_engine(hook_engine&&) = delete;
    hook_engine& operator=(hook_engine&&) = delete;
    ~hook_engine() = default;

    // ---- collections --------------------------------------------------------

    [[nodiscard]] collection_selection& selection() noexcept { return selection_; }

    // ---- threads and fork (call_gate.hpp) ------------------------------------

    [[nodiscard]] call_gate& gate() noexcept { return gate_; }

    // ---- the step protocol ----------------------------------------------------

    TDBG_DECL void set_mode(mode m);

    /// Publishes the previous step, reads what the stop watch found, then advances the clock.
    TDBG_DECL void begin_step();

    /// Publishes the current step: its scalars, the collections file when due, then
    /// the step's end (its event file, index file and TensorBoard files); then
    /// reports a writer error, if one has stopped the writer.
    TDBG_DECL void end_step();

    /// Publishes the current step, the collections file and the end marker, and
    /// stops the writer; a write error is reported after all of it was tried.
    TDBG_DECL void close();

    /// Waits until the writer has written everything queued so far; reports a write error.
    TDBG_DECL void flush();

    /// The first write error, if one stopped the hook.
    [[nodiscard]] const std::optional<std::string>& write_error() const noexcept { return errors_.first_error(); }

    [[nodiscard]] const step_clock& clock() const noexcept { return clock_; }
    [[nodiscard]] bool closed() const noexcept { return closed_; }

    // ---- saving ---------------------------------------------------------------

    /// True when some saved collection saves at this step.
    [[nodiscard]] bool is_saving_step() {
        return clock_.open() && selection_.any_saves(clock_.current(), clock_.mode_step());
    }

    /// True when `name` would be saved at this step.
    [[nodiscard]] TDBG_DECL bool should_save(std::string_view name);

    /// Checks that `name` can be saved now and adds it to `collections`; returns the token
    /// save_prepared takes, true when the tensor is saved at this step.
    TDBG_DECL save_token prepare_save(std::string_view name, std::initializer_list<std::string_view> collections);

    /// Saves `value` as `name` in the collections prepare_save found (its `token`; smdebug's
    /// _write_for_tensor: shape, reductions, histogram, raw tensor, scalar summary); `reduce`
    /// computes the reductions no collection's compiled kernel does.
    TDBG_DECL void save_prepared(std::string_view name, save_token token, const tensor_value& value,
                                 reduction_values_function reduce,
                                 reduction_convention convention = reduction_convention::numpy);

    /// What saving `name`, a tensor of `type` and `shape`, writes at this step; nullopt when
    /// nothing (not even its shape). Checks and adds `name` to `collections` as prepare_save.
    TDBG_DECL std::optional<save_plan> plan_save(std::string_view name, dtype type,
                                                 const tensor_value::shape_type& shape,
                                                 std::initializer_list<std::string_view> collections);

    /// Saves `name` from a deferred save (hook/deferred.hpp): its records are queued now, their
    /// values taken from `source` by the writer. `plan` is plan_save's for this step.
    TDBG_DECL void save_deferred(std::string_view name, dtype type, const tensor_value::shape_type& shape,
                                 const save_plan& plan, deferred_source source);

    /// Queues `scalar/<name>` for the end of this step, whatever the save configs say;
    /// `timestamp` (seconds since the epoch; 0 counts as none, as in smdebug) is its wall time.
    TDBG_DECL void save_scalar(std::string_view name, double value, bool sm_metric, std::optional<double> timestamp);

    // ---- information -------------------------------------------------------------

    [[nodiscard]] const worker_info& worker() const noexcept { return worker_; }
    [[nodiscard]] const hook_options& options() const noexcept { return options_; }
    [[nodiscard]] const any_storage& storage() const noexcept { return storage_; }
    [[nodiscard]] async_writer* writer() const noexcept { return writer_.get(); }
    [[nodiscard]] const std::optional<stop_request>& stop() const noexcept { return stop_; }

private:
    TDBG_DECL static const hook_options& validated(const hook_options& options);

    // The worker this hook is: as the environment tells (hook/worker.hpp), but what the options set.
    TDBG_DECL static worker_info worker_of(const hook_options& options);

    TDBG_DECL void check_open(const char* what) const;

    // A save of `name` now: the hook open, no write error to report, a step open.
    TDBG_DECL void check_step_open(std::string_view name);
    // check_step_open, and a name that can name a tensor.
    TDBG_DECL void check_saving(std::string_view name);
    // existing_run_policy::resume without a state store: the clock goes on after the published steps;
    // the last of them (none: the worker published none).
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> resume_after_published_steps();

    // Reports the error that stopped the writer, once: thrown (rethrow policy) or
    // printed (disable policy, smdebug's: training goes on without the hook).
    void report_write_error() { errors_.report(writer_.get(), clock_.global()); }

    // The end marker of a worker that writes nothing else (no writer thread).
    TDBG_DECL void put_end_marker();

    // smdebug's _write_scalars: at the end of the step, into the step's files.
    TDBG_DECL void write_scalars();

    // smdebug's metrics_writer.log_metric calls: "<name>_<MODE>" at the mode's step.
    TDBG_DECL void write_metrics(const std::vector<pending_scalar>& scalars);

    // The run's start (hook/detail/run_claim.hpp), before the writer exists: a worker that
    // `writes` claims itself in the run, and a run that is another job's is a config_error; a
    // worker that writes nothing only checks that the run has not ended. A storage that fails
    // here (an outage) is returned, to be a write error under the policy as later ones are: the
    // hook saves nothing, and training goes on by default.
    [[nodiscard]] TDBG_DECL std::exception_ptr start_run(bool resumed, bool writes);

    // smdebug's _write_state, at the start of a step: a new state when the checkpoint files changed.
    TDBG_DECL void write_state();

    TDBG_DECL void queue_collections_file();

    // The stop marker, as the watch (stop_watch.hpp) found it, never waited for; with a check interval
    // of 0, the watch is asked for a fresh look at every step, whose result a later step reads.
    TDBG_DECL void check_stop_marker();

    call_gate gate_; // first: a forked child's hook is known before anything else is touched
    any_storage storage_;
    hook_options options_;
    collection_selection selection_;
    worker_info worker_;
    selection_check check_{options_};
    error_reporter errors_{options_, storage_};
    step_clock clock_;
    export_schedule exports_;
    bool closed_ = false;
    save_planner planner_;
    step_scalars scalars_;
    state_keeper state_;
    std::optional<stop_request> stop_;
    std::unique_ptr<async_writer> writer_;
    std::optional<step_records> records_; // with the writer: the records queued for it
    std::unique_ptr<stop_watch> stop_watch_; // started at the first begin_step
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/hook_engine.ipp"
#endif
