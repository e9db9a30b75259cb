#pragma once
/// \file
/// `hook`: saves tensors from a C++ training loop in smdebug's format, so that
/// smdebug's Python trial (and tdbg's) read them.
///
/// The flow mirrors smdebug's PyTorch hook, with the framework callbacks made
/// explicit calls:
///
///     tdbg::hook hook(options);                // smdebug: Hook(out_dir=..., ...)
///     hook.set_mode(tdbg::mode::train);        // between steps, as smdebug's set_mode
///     for (...) {
///         hook.begin_step();                   // smdebug's forward_pre_hook: publishes the previous
///                                              // step, then global step += 1, mode step += 1
///         hook.save_tensor("MLP_fc1.weight", w);   // smdebug's _save_for_tensor: selection by
///         hook.save_tensor("CrossEntropyLoss_output_0", loss);  // collections and save configs
///         hook.save_scalar("lr", 0.1);         // "scalar/lr", float64 (1,), at this step
///         if (hook.should_stop()) break;       // a rule asked to stop (format/stop_marker.hpp)
///     }
///     hook.close();                            // publishes the last step, the collections file
///                                              // and training_job_end.ts
///
/// Steps: the global step starts at -1 and every begin_step() adds one; each
/// mode has its own step counter, which starts at -1 and advances only in its
/// mode (smdebug's _increment_step and set_mode). A step's files are published
/// when the next step begins, at end_step(), set_mode() or close().
///
/// Files (smdebug's layout): per saved step and worker an event file
/// (events/<step>/<step>_<worker>.tfevents) and then its index file; the
/// collections file (collections/000000000/<worker>_collections.json) after the
/// first step that wrote something, as smdebug's PyTorch hook does, and again
/// at close() when collections learned tensor names since; training_job_end.ts
/// at close() (not under SageMaker, as smdebug). TensorBoard files, when asked
/// for, go to <tensorboard_dir>/<MODE>/events.out.tfevents.<time>.<host>.<pid>.<worker>.<step>.
/// A hook is driven by one thread; encoding and writing happen on the writer's
/// threads (hook/detail/writer/async_writer.hpp).
///
/// Write errors (a full disk, too many open files, a storage outage) never
/// take training down by default: at the first one the hook stops saving,
/// prints it once, and the run stays readable up to its last published step
/// (write_error() says what happened); hook_options::on_write_error = rethrow
/// throws it from the next call instead.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/xexpression.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/save_token.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

namespace detail {
class hook_engine;
} // namespace detail

class optional_hook;

/// Saves tensors of a training loop into a run, in smdebug's format.
class hook {
public:
    /// A hook writing to `options.out_dir`: a local directory, or a URL of a
    /// registered storage scheme ("s3://bucket/prefix" with tdbg/storage/s3.hpp).
    TDBG_DECL explicit hook(const hook_options& options);
    /// A hook writing to `storage`.
    TDBG_DECL hook(any_storage storage, hook_options options);

    hook(const hook&) = delete;
    hook& operator=(const hook&) = delete;
    hook(hook&&) = delete;
    hook& operator=(hook&&) = delete;
    /// Closes the hook; an error is printed to stderr, never thrown (call close() to see it with the rethrow policy).
    TDBG_DECL ~hook();

    /// A hook configured by a SageMaker JSON file (hook/json_config.hpp).
    [[nodiscard]] static TDBG_DECL std::unique_ptr<hook> create_from_json_file(const std::string& file);
    /// A hook configured as SageMaker says (hook_config_from_environment: SMDEBUG_CONFIG_FILE_PATH),
    /// or none when there is no configuration: test it (`if (hook)`) before using it; using an
    /// empty one throws config_error (optional_hook).
    [[nodiscard]] static TDBG_DECL optional_hook create_from_environment();

    // ---- collections -------------------------------------------------------

    /// The collection named `name`, created when missing (a created collection
    /// is not saved unless included). Configure collections before the first step:
    /// a change takes effect at the next save.
    TDBG_DECL collection& get_collection(std::string_view name);
    /// The collection named `name`, or nullptr.
    [[nodiscard]] TDBG_DECL const collection* find_collection(std::string_view name) const;
    /// Adds `c`, replacing a collection of the same name, and saves it (as if in include_collections).
    TDBG_DECL void add_collection(collection c);
    /// The names of every collection, in creation order.
    [[nodiscard]] TDBG_DECL std::vector<std::string> collection_names() const;
    /// True when collection `name` is saved (included, or "all" is).
    [[nodiscard]] TDBG_DECL bool is_collection_included(std::string_view name) const;

    // ---- modes and steps ---------------------------------------------------

    /// Sets the mode of the steps that follow; ends the current step first.
    TDBG_DECL void set_mode(tdbg::mode m);
    /// The current mode.
    [[nodiscard]] TDBG_DECL tdbg::mode current_mode() const noexcept;
    /// The global step (-1 before the first begin_step).
    [[nodiscard]] TDBG_DECL std::int64_t global_step() const noexcept;
    /// The step of the current mode (-1 before its first step).
    [[nodiscard]] TDBG_DECL std::int64_t mode_step() const noexcept;
    /// The step counter of mode `m`.
    [[nodiscard]] TDBG_DECL std::int64_t mode_step(tdbg::mode m) const noexcept;

    /// Starts the next step: publishes the previous one, looks for the stop
    /// marker, and advances the global step and the current mode's step.
    TDBG_DECL void begin_step();
    /// Publishes the current step now (begin_step, set_mode and close also do);
    /// saving again needs a begin_step().
    TDBG_DECL void end_step();

    // ---- saving --------------------------------------------------------------

    /// True when some saved collection saves at this step (smdebug's _get_collections_to_save_for_step).
    [[nodiscard]] TDBG_DECL bool is_saving_step();
    /// True when `name` would be saved at this step: cheap, lets a trainer skip computing a value.
    [[nodiscard]] TDBG_DECL bool should_save_tensor(std::string_view name);

    /// Saves `value` under `name` if one of its collections saves at this step.
    /// Its collections: those whose regexes match, plus `collections` (created when
    /// missing, saved from now on; the name is added to each). A borrowed value is
    /// copied before the call returns; an owning one is shared.
    ///
    /// Without `collections` this is what smdebug's framework hooks do with each tensor
    /// (`_save_for_tensor`): a name no saved collection selects is not saved. smdebug's
    /// public `save_tensor(name, value)` puts the name in "default": here that is
    /// `save_tensor(name, value, {"default"})`.
    TDBG_DECL void save_tensor(std::string_view name, const tensor_value& value,
                               std::initializer_list<std::string_view> collections = {});

    /// save_tensor with the reductions stored by `convention`'s rules (reduce/convention.hpp):
    /// the plain overload stores numpy's (smdebug's core hook), tdbg::torch_hook PyTorch's.
    TDBG_DECL void save_tensor(std::string_view name, const tensor_value& value,
                               std::initializer_list<std::string_view> collections, reduction_convention convention);

    /// Saves an xtensor expression; it is evaluated (or, for a row-major
    /// container, borrowed) only when the tensor is saved at this step.
    template <class E>
    void save_tensor(std::string_view name, const xt::xexpression<E>& expression,
                     std::initializer_list<std::string_view> collections = {}) {
        detail::save_token token = prepare_save(name, collections);
        if (!token) {
            return;
        }
        const E& e = expression.derived_cast();
        using value_type = std::decay_t<typename E::value_type>;
        if constexpr (detail::is_borrowable_container<E>::value) {
            save_prepared(name, std::move(token),
                          tensor_value::borrow<value_type>(e.data(), {e.shape().begin(), e.shape().end()}),
                          &compute_reduction_values_of<value_type>);
        } else {
            save_prepared(name, std::move(token), to_tensor_value(expression),
                          &compute_reduction_values_of<value_type>);
        }
    }

    /// Saves `shape`d C-order data at `data` (borrowed: copied only if the raw tensor is saved).
    template <class T, class = std::enable_if_t<has_dtype_v<T>>>
    void save_tensor(std::string_view name, const T* data, std::vector<std::size_t> shape,
                     std::initializer_list<std::string_view> collections = {}) {
        if (detail::save_token token = prepare_save(name, collections)) {
            save_prepared(name, std::move(token), tensor_value::borrow<T>(data, std::move(shape)),
                          &compute_reduction_values_of<T>);
        }
    }

    /// What saving `name`, a tensor of `type` and `shape`, writes at this step: its reductions,
    /// the raw value, a TensorBoard histogram; nullopt when its collections do not save it now.
    /// Checks `name` and adds it to `collections` as save_tensor does. The first half of a
    /// deferred save (hook/deferred.hpp).
    [[nodiscard]] TDBG_DECL std::optional<save_plan>
    plan_save(std::string_view name, dtype type, const std::vector<std::size_t>& shape,
              std::initializer_list<std::string_view> collections = {});

    /// Saves `name`, a tensor of `type` and `shape` whose values are computed elsewhere and
    /// arrive later (hook/deferred.hpp): `plan` is plan_save's at this step; `source` runs once
    /// on a writer thread, waits for the values and returns them, or throws (a write error).
    /// Never waits for the values here, except for a SageMaker metric of a loss (its mean).
    TDBG_DECL void save_deferred(std::string_view name, dtype type, const std::vector<std::size_t>& shape,
                                 const save_plan& plan, deferred_source source);

    /// Saves `scalar/<name>` (float64, shape (1,)) at this step, whatever the
    /// save configs say, as smdebug's save_scalar (and to TensorBoard when exported).
    /// With `sm_metric`, also a SageMaker metric "scalar/<name>_<MODE>" (hook_options::
    /// sagemaker_metrics_dir); `timestamp` (seconds since the epoch) is its wall time, else now.
    TDBG_DECL void save_scalar(std::string_view name, double value, bool sm_metric = false,
                               std::optional<double> timestamp = std::nullopt);

    /// The index of the next tensor named `<prefix><i>` in this step: 0 at the first call for
    /// `prefix` in a step, then 1, 2, ...; it restarts at every step (smdebug's
    /// written_tensor_name_for_step). One count per hook, whoever asks, so that the torch_hooks
    /// of a GAN (one per model, over this hook) number "BCELoss_output_" as one torch_hook over
    /// both models would, and a second model's loss does not take the first model's name.
    [[nodiscard]] TDBG_DECL std::size_t next_index_in_step(std::string_view prefix);

    // ---- lifecycle -------------------------------------------------------------

    /// Waits until the writer has written everything queued so far; reports a write error.
    TDBG_DECL void flush();
    /// Publishes the current step, the collections file and the end marker,
    /// and stops the writer; reports a write error. Idempotent.
    TDBG_DECL void close();

    /// True once a rule process has written the stop marker (as the hook's stop watch found
    /// it, read in begin_step; hook_options::stop_check_interval).
    [[nodiscard]] TDBG_DECL bool should_stop() const noexcept;
    /// What the stop marker says, once it was found.
    [[nodiscard]] TDBG_DECL const std::optional<tdbg::stop_request>& stop_request() const noexcept;

    // ---- information -----------------------------------------------------------

    /// This worker's name ("worker_0").
    [[nodiscard]] TDBG_DECL const std::string& worker() const noexcept;
    /// The number of workers of the run.
    [[nodiscard]] TDBG_DECL int num_workers() const noexcept;
    /// True when this worker writes tensors (include_workers all, or it is worker_0), and not a dry run.
    [[nodiscard]] TDBG_DECL bool is_writing() const noexcept;
    /// Tensors dropped because the writer's queue was full (full_queue_policy::drop).
    [[nodiscard]] TDBG_DECL std::uint64_t dropped_tensors() const;
    /// The write error that stopped saving (a full disk, too many open files, a storage
    /// outage), once a hook call has met it; none while all is well (hook_options::on_write_error).
    [[nodiscard]] TDBG_DECL std::optional<std::string> write_error() const;
    /// CPU seconds of the writer's data threads (together) and publisher thread, known after close().
    [[nodiscard]] TDBG_DECL std::pair<double, double> writer_cpu_seconds() const noexcept;
    /// Bytes of tensor data queued for the writer threads and not yet written.
    [[nodiscard]] TDBG_DECL std::size_t queued_bytes() const;
    /// The storage the run is written to.
    [[nodiscard]] TDBG_DECL const any_storage& storage() const noexcept;
    /// The options the hook was built with.
    [[nodiscard]] TDBG_DECL const hook_options& options() const noexcept;

private:
    // The non-template half of save_tensor: checks, adds `name` to `collections`, and says
    // whether the tensor is saved at this step: a true token, which save_prepared then takes.
    TDBG_DECL detail::save_token prepare_save(std::string_view name,
                                              std::initializer_list<std::string_view> collections);
    // `reduce` computes its reductions: compute_reduction_values_of<T> where the element type is known at
    // compile time, so that a file saving float tensors compiles float's kernels only.
    TDBG_DECL void save_prepared(std::string_view name, detail::save_token token, const tensor_value& value,
                                 reduction_values_function reduce);

    std::unique_ptr<detail::hook_engine> engine_;
    // next_index_in_step's count: the global step it counts in, and the next index per prefix.
    std::int64_t indexed_step_ = -1;
    std::unordered_map<std::string, std::size_t> next_indices_;
};

/// What hook::create_from_environment() returns: a hook, or none when the environment holds no
/// hook configuration. Used as the std::unique_ptr<hook> it replaces (`if (h) h->begin_step();`,
/// `h == nullptr`, `h.get()`), except that reaching the hook of an empty one (`*h`, `h->`,
/// `h.value()`) throws a config_error saying why there is none, instead of dereferencing null.
class optional_hook {
public:
    /// No hook; `why_none` is what using it throws ("no hook configuration: ...").
    explicit optional_hook(std::string why_none) : why_none_(std::move(why_none)) {}
    /// `h`, which must not be null.
    explicit optional_hook(std::unique_ptr<hook> h) noexcept : hook_(std::move(h)) {}

    /// True when there is a hook.
    [[nodiscard]] bool has_value() const noexcept { return hook_ != nullptr; }
    /// True when there is a hook.
    explicit operator bool() const noexcept { return has_value(); }

    /// The hook; throws config_error when there is none.
    [[nodiscard]] TDBG_DECL hook& value() const;
    /// The hook; throws config_error when there is none.
    hook& operator*() const { return value(); }
    /// The hook; throws config_error when there is none.
    hook* operator->() const { return &value(); }
    /// The hook, or nullptr.
    [[nodiscard]] hook* get() const noexcept { return hook_.get(); }
    /// Why there is no hook (empty when there is one).
    [[nodiscard]] const std::string& why_none() const noexcept { return why_none_; }

    /// The hook as a std::unique_ptr (null when none): `std::unique_ptr<hook> h = hook::create_from_environment();`
    // NOLINTNEXTLINE(google-explicit-constructor,hicpp-explicit-conversions): as the unique_ptr it replaces
    operator std::unique_ptr<hook>() && noexcept { return std::move(hook_); }

    friend bool operator==(const optional_hook& h, std::nullptr_t) noexcept { return !h.has_value(); }
    friend bool operator==(std::nullptr_t, const optional_hook& h) noexcept { return !h.has_value(); }
    friend bool operator!=(const optional_hook& h, std::nullptr_t) noexcept { return h.has_value(); }
    friend bool operator!=(std::nullptr_t, const optional_hook& h) noexcept { return h.has_value(); }

private:
    std::unique_ptr<hook> hook_;
    std::string why_none_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/hook/impl/hook.ipp"
#endif
