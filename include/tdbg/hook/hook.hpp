#pragma once
/// \file
/// `hook<Storage>`: saves tensors from a C++ training loop in smdebug's format,
/// so that smdebug's Python trial (and tdbg's) read them.
///
/// The flow mirrors smdebug's PyTorch hook, with the framework callbacks made
/// explicit calls:
///
///     tdbg::hook<> hook(options);              // smdebug: Hook(out_dir=..., ...)
///     hook.set_mode(tdbg::mode::train);        // between steps, as smdebug's set_mode
///     for (...) {
///         hook.begin_step();                   // smdebug's forward_pre_hook: publishes the previous
///                                              // step, then global step += 1, mode step += 1
///         hook.save_tensor("MLP_fc1.weight", w);   // smdebug's _save_for_tensor: selection by
///         hook.save_tensor("CrossEntropyLoss_output_0", loss);  // collections and save configs
///         hook.save_scalar("lr", 0.1);         // "scalar/lr", float64 (1,), at this step
///         if (hook.should_stop()) break;       // a rule asked to stop (hook/stop_marker.hpp)
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
/// threads (hook/writer.hpp).

#include <algorithm>
#include <array>
#include <chrono>
#include <complex>
#include <exception>
#include <functional>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <xtensor/xcontainer.hpp>
#include <xtensor/xexpression.hpp>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/save_config.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/detail/buffer_pool.hpp"
#include "tdbg/hook/json_config.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/reduction_config.hpp"
#include "tdbg/hook/stop_marker.hpp"
#include "tdbg/hook/worker.hpp"
#include "tdbg/hook/writer.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

namespace detail {

/// smdebug's _clean_tag for TensorBoard tags: characters other than
/// [-/\w.] become '_', leading slashes go.
inline std::string clean_tensorboard_tag(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '/' || c == '.' || u >= 0x80;
        out.push_back(ok ? c : '_');
    }
    const auto first = out.find_first_not_of('/');
    return first == std::string::npos ? std::string() : out.substr(first);
}

/// smdebug's merge_default_save_config: a mode without a schedule takes the
/// default's, or smdebug's SaveConfigMode() when the default has none either.
inline save_config merge_save_config(const save_config& own, const save_config& defaults) {
    save_config out = own;
    for (mode m : all_modes) {
        if (!out.get(m)) {
            out.set(m, defaults.get(m) ? defaults.get(m) : std::optional<save_config_mode>(save_config_mode{}));
        }
    }
    return out;
}

/// A contiguous row-major xtensor container whose memory can be borrowed.
template <class E, class = void>
struct is_borrowable_container : std::false_type {};
template <class E>
struct is_borrowable_container<E, std::void_t<decltype(std::declval<const E&>().data()), decltype(E::static_layout)>>
    : std::bool_constant<std::is_base_of_v<xt::xcontainer<E>, E> && E::static_layout == xt::layout_type::row_major> {};

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline void check_utf8_name(std::string_view name) {
    for (std::size_t i = 0; i < name.size();) {
        const auto c = static_cast<unsigned char>(name[i]);
        std::size_t length = c < 0x80 ? 1 : (c & 0xE0U) == 0xC0U ? 2 : (c & 0xF0U) == 0xE0U ? 3 : (c & 0xF8U) == 0xF0U ? 4 : 0;
        if (length == 0 || i + length > name.size()) {
            throw invalid_name("tensor name is not valid UTF-8 at byte " + std::to_string(i));
        }
        for (std::size_t k = 1; k < length; ++k) {
            if ((static_cast<unsigned char>(name[i + k]) & 0xC0U) != 0x80U) {
                throw invalid_name("tensor name is not valid UTF-8 at byte " + std::to_string(i + k));
            }
        }
        if (c == 0) {
            throw invalid_name("tensor name contains a NUL byte");
        }
        i += length;
    }
}

} // namespace detail

/// Saves tensors of a training loop into a run on `Storage` in smdebug's format.
template <class Storage = local_storage>
class hook {
    static_assert(is_storage_v<Storage>, "tdbg::hook<Storage>: Storage must satisfy the tdbg storage concept "
                                         "(put, open_write, read, read_range, list, exists, describe)");

public:
    /// A hook writing to `options.out_dir` (for storages built from a path, such as local_storage).
    template <class S = Storage, class = std::enable_if_t<std::is_constructible_v<S, std::filesystem::path>>>
    explicit hook(const hook_options& options) : hook(make_storage(options), options) {}

    /// A hook writing to `storage`.
    hook(Storage storage, hook_options options) : storage_(std::move(storage)), options_(std::move(options)) {
        init();
    }

    hook(const hook&) = delete;
    hook& operator=(const hook&) = delete;

    /// Closes the hook; an error is printed to stderr, never thrown (call close() to see it).
    ~hook() {
        try {
            close();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tdbg::hook: error while closing: %s\n", e.what());
        } catch (...) {
            std::fprintf(stderr, "tdbg::hook: unknown error while closing\n");
        }
    }

    /// A hook configured by a SageMaker JSON file (hook/json_config.hpp).
    template <class S = Storage, class = std::enable_if_t<std::is_constructible_v<S, std::filesystem::path>>>
    [[nodiscard]] static std::unique_ptr<hook> create_from_json_file(const std::filesystem::path& file) {
        return std::make_unique<hook>(load_hook_config(file));
    }
    /// A hook configured as SageMaker says (SMDEBUG_CONFIG_FILE_PATH); nullptr when there is no configuration.
    template <class S = Storage, class = std::enable_if_t<std::is_constructible_v<S, std::filesystem::path>>>
    [[nodiscard]] static std::unique_ptr<hook> create_from_environment() {
        auto options = hook_config_from_environment();
        return options ? std::make_unique<hook>(std::move(*options)) : nullptr;
    }

    // ---- collections -------------------------------------------------------

    /// The collection named `name`, created when missing (a created collection
    /// is not saved unless included). Configure collections before the first step:
    /// a change takes effect at the next save.
    collection& get_collection(std::string_view name) {
        dirty_ = true;
        if (entry* e = find_entry(name)) {
            return e->coll;
        }
        collections_.push_back(entry(collection(std::string(name))));
        return collections_.back().coll;
    }
    /// The collection named `name`, or nullptr.
    [[nodiscard]] const collection* find_collection(std::string_view name) const {
        for (const entry& e : collections_) {
            if (e.coll.name() == name) {
                return &e.coll;
            }
        }
        return nullptr;
    }
    /// Adds `c`, replacing a collection of the same name, and saves it (as if in include_collections).
    void add_collection(collection c) {
        include_.insert(c.name());
        dirty_ = true;
        if (entry* e = find_entry(c.name())) {
            e->coll = std::move(c);
            e->matched.clear();
            return;
        }
        collections_.push_back(entry(std::move(c)));
    }
    /// The names of every collection, in creation order.
    [[nodiscard]] std::vector<std::string> collection_names() const {
        std::vector<std::string> out;
        for (const entry& e : collections_) {
            out.push_back(e.coll.name());
        }
        return out;
    }
    /// True when collection `name` is saved (included, or "all" is).
    [[nodiscard]] bool is_collection_included(std::string_view name) const {
        return include_.count(std::string(collection_names::all)) != 0 || include_.count(std::string(name)) != 0;
    }

    // ---- modes and steps ---------------------------------------------------

    /// Sets the mode of the steps that follow; ends the current step first.
    void set_mode(tdbg::mode m) {
        check_open("set_mode");
        end_step();
        mode_ = m;
    }
    /// The current mode.
    [[nodiscard]] tdbg::mode current_mode() const noexcept { return mode_; }
    /// The global step (-1 before the first begin_step).
    [[nodiscard]] std::int64_t global_step() const noexcept { return step_; }
    /// The step of the current mode (-1 before its first step).
    [[nodiscard]] std::int64_t mode_step() const noexcept { return mode_steps_[index(mode_)]; }
    /// The step counter of mode `m`.
    [[nodiscard]] std::int64_t mode_step(tdbg::mode m) const noexcept { return mode_steps_[index(m)]; }

    /// Starts the next step: publishes the previous one, looks for the stop
    /// marker, and advances the global step and the current mode's step.
    void begin_step() {
        check_open("begin_step");
        end_step();
        check_stop_marker();
        ++step_;
        ++mode_steps_[index(mode_)];
        if (mode_ != mode::global) {
            mode_steps_[index(mode::global)] = step_;
        }
        step_open_ = true;
        step_wrote_ = false;
        step_selection_valid_ = false;
    }

    /// Publishes the current step now (begin_step, set_mode and close also do);
    /// saving again needs a begin_step().
    void end_step() {
        if (!step_open_) {
            return;
        }
        step_open_ = false;
        // A writer error is reported after the step is ended, so that what the step
        // queued is published in its place, before later steps and the end marker.
        std::exception_ptr pending;
        try {
            rethrow_writer_error();
        } catch (...) {
            pending = std::current_exception();
        }
        try {
            write_scalars();
            if (writer_) {
                // The collections file goes first: a run whose first index file is
                // published can then always be opened, even if the trainer dies.
                // Again after a writer error: the collections file may be what failed (a full disk).
                if (step_wrote_ && (!exported_once_ || writer_->errors_seen() != errors_at_export_)) {
                    export_collections();
                }
                writer_->push(write_items::step_end{step_});
            }
        } catch (...) {
            if (!pending) {
                throw;
            }
            // A later writer error: the earlier one is reported first (both are in errors_seen()).
        }
        if (pending) {
            std::rethrow_exception(pending);
        }
    }

    // ---- saving --------------------------------------------------------------

    /// True when some saved collection saves at this step (smdebug's _get_collections_to_save_for_step).
    [[nodiscard]] bool is_saving_step() {
        if (!step_open_) {
            return false;
        }
        prepare();
        refresh_step_selection();
        return std::any_of(step_selection_.begin(), step_selection_.end(), [](bool b) { return b; });
    }

    /// True when `name` would be saved at this step: cheap, lets a trainer skip computing a value.
    [[nodiscard]] bool should_save_tensor(std::string_view name) {
        return step_open_ && !active_collections(name).empty();
    }

    /// Saves `value` under `name` if one of its collections saves at this step.
    /// Its collections: those whose regexes match, plus `collections` (created
    /// and saved when missing; the name is added to each). A borrowed value is
    /// copied before the call returns; an owning one is shared.
    void save_tensor(std::string_view name, const tensor_value& value,
                     std::initializer_list<std::string_view> collections = {}) {
        check_saving(name);
        add_explicit(name, collections);
        const auto active = active_collections(name);
        if (!active.empty()) {
            write_tensor(name, value, active);
        }
    }

    /// Saves an xtensor expression; it is evaluated (or, for a row-major
    /// container, borrowed) only when the tensor is saved at this step.
    template <class E>
    void save_tensor(std::string_view name, const xt::xexpression<E>& expression,
                     std::initializer_list<std::string_view> collections = {}) {
        check_saving(name);
        add_explicit(name, collections);
        const auto active = active_collections(name);
        if (active.empty()) {
            return;
        }
        const E& e = expression.derived_cast();
        if constexpr (detail::is_borrowable_container<E>::value) {
            using value_type = std::decay_t<typename E::value_type>;
            write_tensor(name, tensor_value::borrow<value_type>(e.data(), {e.shape().begin(), e.shape().end()}),
                         active);
        } else {
            write_tensor(name, tensor_value(expression), active);
        }
    }

    /// Saves `shape`d C-order data at `data` (borrowed: copied only if the raw tensor is saved).
    template <class T, class = std::enable_if_t<has_dtype_v<T>>>
    void save_tensor(std::string_view name, const T* data, std::vector<std::size_t> shape,
                     std::initializer_list<std::string_view> collections = {}) {
        save_tensor(name, tensor_value::borrow<T>(data, std::move(shape)), collections);
    }

    /// Saves `scalar/<name>` (float64, shape (1,)) at this step, whatever the
    /// save configs say, as smdebug's save_scalar (and to TensorBoard when exported).
    void save_scalar(std::string_view name, double value) {
        check_saving(name);
        scalars_.push_back(pending_scalar{"scalar/" + std::string(name), value, detail::now_seconds()});
    }

    // ---- lifecycle -------------------------------------------------------------

    /// Waits until the writer has written everything queued so far; rethrows its error.
    void flush() {
        rethrow_writer_error();
        if (writer_) {
            writer_->flush();
        }
    }

    /// Publishes the current step, the collections file and the end marker,
    /// and stops the writer; rethrows a writer error. Idempotent.
    void close() {
        if (closed_) {
            return;
        }
        std::exception_ptr first;
        try {
            end_step();
        } catch (...) {
            first = std::current_exception();
        }
        closed_ = true;
        try {
            if (writer_ && (!exported_once_ || exported_version_ != version_ || writer_->errors_seen() != errors_at_export_)) {
                export_collections();
            }
            if (!options_.dry_run && std::getenv("TRAINING_JOB_NAME") == nullptr) {
                // smdebug leaves the end marker to SageMaker in its jobs; every worker writes it otherwise.
                if (writer_) {
                    writer_->push(write_items::object{std::string(format::end_marker_key), std::string()});
                } else {
                    storage_.put(std::string(format::end_marker_key), std::string_view());
                }
            }
        } catch (...) {
            if (!first) {
                first = std::current_exception();
            }
        }
        if (writer_) {
            try {
                writer_->close();
            } catch (...) {
                if (!first) {
                    first = std::current_exception();
                }
            }
        }
        if (first) {
            std::rethrow_exception(first);
        }
    }

    /// True once a rule process has written the stop marker (checked in begin_step).
    [[nodiscard]] bool should_stop() const noexcept { return stop_.has_value(); }
    /// What the stop marker says, once it was found.
    [[nodiscard]] const std::optional<tdbg::stop_request>& stop_request() const noexcept { return stop_; }

    // ---- information -----------------------------------------------------------

    /// This worker's name ("worker_0").
    [[nodiscard]] const std::string& worker() const noexcept { return worker_.name; }
    /// The number of workers of the run.
    [[nodiscard]] int num_workers() const noexcept { return worker_.size; }
    /// True when this worker writes tensors (include_workers all, or it is worker_0), and not a dry run.
    [[nodiscard]] bool is_writing() const noexcept { return writer_ != nullptr; }
    /// Tensors dropped because the writer's queue was full (full_queue_policy::drop).
    [[nodiscard]] std::uint64_t dropped_tensors() const { return writer_ ? writer_->dropped() : 0; }
    /// CPU seconds of the writer's data threads (together) and publisher thread, known after close().
    [[nodiscard]] std::pair<double, double> writer_cpu_seconds() const noexcept {
        return writer_ ? writer_->thread_cpu_seconds() : std::pair<double, double>{0.0, 0.0};
    }
    /// Bytes of tensor data queued for the writer threads and not yet written.
    [[nodiscard]] std::size_t queued_bytes() const { return writer_ ? writer_->queued_bytes() : 0; }
    /// The storage the run is written to.
    [[nodiscard]] Storage& storage() noexcept { return storage_; }
    /// The options the hook was built with.
    [[nodiscard]] const hook_options& options() const noexcept { return options_; }

private:
    struct entry {
        explicit entry(collection c) : coll(std::move(c)) {}
        collection coll;
        // Names the hook matched by regex (exported with the explicit ones).
        std::set<std::string> matched;
        // Effective configuration, set by prepare().
        save_config save;
        reduction_config reductions;
        bool histogram = true;
        bool included = false;
    };

    struct pending_scalar {
        std::string name;
        double value = 0;
        double wall_time = 0;
    };

    static std::size_t index(tdbg::mode m) noexcept { return static_cast<std::size_t>(m) - 1; }

    static Storage make_storage(const hook_options& options) {
        if (options.out_dir.empty()) {
            throw config_error("hook_options.out_dir is empty: the hook needs a run directory");
        }
        std::string dir = options.out_dir;
        if (dir.size() >= 2 && dir[0] == '~' && dir[1] == '/') {
            if (const char* home = std::getenv("HOME")) {
                dir = std::string(home) + dir.substr(1);
            }
        }
        return Storage(std::filesystem::path(dir));
    }

    void init() {
        if (options_.reduction_config) {
            options_.reduction_config->validate();
        }
        // Worker: the options win; the environment fills what they leave out.
        const worker_info detected = detect_worker();
        worker_ = detected;
        if (options_.worker) {
            worker_.name = *options_.worker;
            worker_.source = "options";
        }
        if (options_.num_workers) {
            if (*options_.num_workers < 1) {
                throw config_error("hook_options.num_workers must be at least 1, found " +
                                   std::to_string(*options_.num_workers));
            }
            worker_.size = *options_.num_workers;
        }
        format::validate_worker_name(worker_.name);
        if (storage_.exists(std::string(format::end_marker_key))) {
            throw config_error("the run at " + storage_.describe() + " has ended already (it holds " +
                               std::string(format::end_marker_key) + "); write to a new directory");
        }

        for (const auto& [name, regex] : builtin_collections()) {
            collection c{std::string(name)};
            if (!regex.empty()) {
                c.include(std::string(regex));
            }
            collections_.push_back(entry(std::move(c)));
        }
        include_.insert(std::string(collection_names::losses));
        for (const auto& name : options_.include_collections) {
            include_.insert(name);
        }
        if (!options_.include_regex.empty()) {
            get_collection(collection_names::default_collection).include(options_.include_regex);
            include_.insert(std::string(collection_names::default_collection));
        }
        if (options_.save_all) {
            get_collection(collection_names::all).include(".*");
            include_.insert(std::string(collection_names::all));
        }
        for (const collection& c : options_.collections) {
            get_collection(c.name()).merge(c);
            include_.insert(c.name());
        }
        dirty_ = true;

        const bool chief = worker_.name == worker_name(0);
        if (!options_.dry_run && (options_.include_workers == workers_to_save::all || chief)) {
            writer_options w;
            w.worker = worker_.name;
            w.max_queue_bytes = options_.max_queue_bytes;
            w.on_full_queue = options_.on_full_queue;
            w.nice = options_.writer_nice;
            w.data_threads = options_.writer_threads;
            if (options_.export_tensorboard || !options_.tensorboard_dir.empty()) {
                w.tensorboard_put = tensorboard_target();
            }
            pool_ = std::make_shared<detail::buffer_pool>(options_.max_queue_bytes);
            writer_ = std::make_unique<async_writer<Storage>>(storage_, std::move(w));
        }
    }

    // TensorBoard files go inside the run for a relative (or empty) directory,
    // and to the local filesystem for an absolute one.
    std::function<void(const std::string&, const std::string&)> tensorboard_target() {
        const std::string dir = options_.tensorboard_dir.empty() ? std::string("tensorboard") : options_.tensorboard_dir;
        if (std::filesystem::path(dir).is_absolute()) {
            auto local = std::make_shared<local_storage>(std::filesystem::path(dir));
            return [local](const std::string& key, const std::string& bytes) { local->put(key, bytes); };
        }
        std::string prefix = dir;
        while (!prefix.empty() && prefix.back() == '/') {
            prefix.pop_back();
        }
        validate_key(prefix);
        Storage* storage = &storage_;
        return [storage, prefix](const std::string& key, const std::string& bytes) {
            storage->put(prefix + "/" + key, bytes);
        };
    }

    entry* find_entry(std::string_view name) {
        for (entry& e : collections_) {
            if (e.coll.name() == name) {
                return &e;
            }
        }
        return nullptr;
    }

    void check_open(const char* what) const {
        if (closed_) {
            throw error(std::string("tdbg::hook::") + what + " after close()");
        }
    }

    void check_saving(std::string_view name) {
        check_open("save");
        rethrow_writer_error();
        if (!step_open_) {
            throw error("tdbg::hook: cannot save '" + std::string(name) + "': no step is open (call begin_step() " +
                        (step_ < 0 ? "before saving)" : "at the start of each step)"));
        }
        if (name.empty()) {
            throw invalid_name("tdbg::hook: an empty tensor name");
        }
        if (membership_.find(std::string(name)) == membership_.end()) {
            detail::check_utf8_name(name); // names go into JSON files, which hold UTF-8 only
        }
    }

    void rethrow_writer_error() {
        if (writer_) {
            writer_->rethrow_if_failed();
        }
    }

    // smdebug's _prepare_collections: effective save and reduction configs.
    void prepare() {
        if (!dirty_) {
            return;
        }
        dirty_ = false;
        ++version_;
        const reduction_config hook_reductions = options_.reduction_config.value_or(reduction_config::raw_only());
        for (entry& e : collections_) {
            const collection& c = e.coll;
            e.included = is_collection_included(c.name());
            e.save = c.save_config() ? detail::merge_save_config(*c.save_config(), options_.save_config)
                                     : options_.save_config;
            if (is_raw_only_collection(c.name())) {
                e.reductions = reduction_config::raw_only();
                e.histogram = false;
            } else {
                e.reductions = c.reduction_config() ? *c.reduction_config() : hook_reductions;
                e.histogram = c.save_histogram();
            }
        }
        membership_.clear();
        step_selection_valid_ = false;
    }

    void refresh_step_selection() {
        if (step_selection_valid_) {
            return;
        }
        step_selection_.assign(collections_.size(), false);
        const auto ms = mode_steps_[index(mode_)];
        for (std::size_t i = 0; i < collections_.size(); ++i) {
            const entry& e = collections_[i];
            if (!e.included || ms < 0) {
                continue;
            }
            if ((mode_ == mode::eval || mode_ == mode::predict) && is_training_only_collection(e.coll.name())) {
                continue;
            }
            step_selection_[i] = e.save.should_save(mode_, static_cast<std::uint64_t>(ms));
        }
        step_selection_valid_ = true;
    }

    // The saved collections `name` belongs to (smdebug's _get_collections_with_tensor), cached.
    const std::vector<std::size_t>& membership(std::string_view name) {
        prepare();
        const std::string key(name);
        auto it = membership_.find(key);
        if (it != membership_.end()) {
            return it->second;
        }
        detail::check_utf8_name(name);
        std::vector<std::size_t> members;
        for (std::size_t i = 0; i < collections_.size(); ++i) {
            entry& e = collections_[i];
            if (!e.included) {
                continue;
            }
            if (e.coll.has_tensor_name(name)) {
                members.push_back(i);
            } else if (e.coll.matches_regex(name)) {
                members.push_back(i);
                if (e.matched.insert(key).second) {
                    ++version_;
                }
            }
        }
        return membership_.emplace(key, std::move(members)).first->second;
    }

    std::vector<std::size_t> active_collections(std::string_view name) {
        const auto& members = membership(name);
        refresh_step_selection();
        std::vector<std::size_t> active;
        for (std::size_t i : members) {
            if (step_selection_[i]) {
                active.push_back(i);
            }
        }
        return active;
    }

    void add_explicit(std::string_view name, std::initializer_list<std::string_view> collections) {
        for (std::string_view c : collections) {
            entry* e = find_entry(c);
            if (e == nullptr) {
                collections_.push_back(entry(collection(std::string(c))));
                include_.insert(std::string(c));
                e = &collections_.back();
                dirty_ = true;
            }
            if (!e->coll.has_tensor_name(name)) {
                e->coll.add_tensor_name(std::string(name));
                membership_.erase(std::string(name));
                ++version_;
            }
        }
    }

    format::tensor_event make_event(std::string tag, tensor_value value, double wall_time) const {
        format::tensor_event ev;
        ev.step = step_;
        ev.wall_time = wall_time;
        ev.tag = std::move(tag);
        ev.value = std::move(value);
        ev.mode = mode_;
        ev.mode_step = mode_steps_[index(mode_)];
        return ev;
    }

    // smdebug's _write_for_tensor: shape, reductions, histogram, raw tensor, scalar summary.
    void write_tensor(std::string_view name, const tensor_value& value, const std::vector<std::size_t>& active) {
        if (!writer_) {
            return;
        }
        const double wall_time = detail::now_seconds();
        const std::string tensor_name(name);
        bool save_raw = false;
        bool save_shape = false;
        for (std::size_t i : active) {
            save_raw = save_raw || collections_[i].reductions.save_raw_tensor;
            save_shape = save_shape || collections_[i].reductions.save_shape;
        }
        if (save_shape) {
            format::shape_entry s;
            s.tensorname = tensor_name;
            s.originalname = tensor_name;
            s.shape.assign(value.shape().begin(), value.shape().end());
            writer_->push(write_items::shape{step_, mode_, mode_steps_[index(mode_)], std::move(s)});
            step_wrote_ = true;
        }
        if (value.size() != 0) {
            write_reductions(tensor_name, value, active, wall_time);
        }
        std::optional<tensor_value> owned;
        auto owned_value = [&]() -> const tensor_value& {
            if (!owned) {
                owned = value.owns_data() ? value : pool_->copy(value);
            }
            return *owned;
        };
        const bool tensorboard = options_.export_tensorboard || !options_.tensorboard_dir.empty();
        if (tensorboard && value.nbytes() != 0 && value.type() != dtype::boolean) {
            for (std::size_t i : active) {
                const entry& e = collections_[i];
                if (e.histogram && !is_raw_only_collection(e.coll.name())) {
                    writer_->push(write_items::tb_histogram{
                        mode_, step_, wall_time, detail::clean_tensorboard_tag(e.coll.name() + "/" + tensor_name),
                        owned_value()});
                    break;
                }
            }
        }
        // smdebug writes no record for an empty tensor.
        if (save_raw && value.nbytes() != 0) {
            push_record(make_event(tensor_name, owned_value(), wall_time));
        }
        if (tensorboard && value.size() == 1) {
            for (std::size_t i : active) {
                if (is_scalar_collection(collections_[i].coll.name())) {
                    writer_->push(write_items::tb_scalar{mode_, step_, wall_time,
                                                         detail::clean_tensorboard_tag(tensor_name),
                                                         static_cast<float>(scalar_as_double(value))});
                    break;
                }
            }
        }
    }

    // Each reduction once, in smdebug's order over the collections; a
    // collection's compiled kernel computes its whole list in one pass, the
    // rest goes through one runtime pass.
    void write_reductions(const std::string& name, const tensor_value& value, const std::vector<std::size_t>& active,
                          double wall_time) {
        std::vector<reduction> order;
        std::vector<std::optional<tensor_value>> results;
        for (std::size_t i : active) {
            const entry& e = collections_[i];
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
            const bool own_kernel = e.coll.kernel() && !fresh.empty() && e.coll.reduction_config() &&
                                    *e.coll.reduction_config() == e.reductions;
            if (own_kernel) {
                std::vector<tensor_value> computed;
                try {
                    computed = e.coll.kernel()(value);
                } catch (const dtype_mismatch&) {
                    computed.clear(); // no reductions of this dtype, as smdebug skips what numpy refuses
                }
                if (computed.size() == wanted.size()) {
                    for (std::size_t k : fresh) {
                        const auto pos = static_cast<std::size_t>(
                            std::find(order.begin(), order.end(), wanted[k]) - order.begin());
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
            try {
                computed = compute_reductions(value, missing);
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
            // smdebug's core hook stores a reduction as shape (1,).
            const tensor_value& r = *results[k];
            tensor_value stored = tensor_value::from_bytes(r.type(), {1}, r.bytes());
            push_record(make_event(format::reduction_tensor_name(order[k], name), std::move(stored), wall_time));
        }
    }

    // Queues one record of this step's event file; the first one lets the
    // writer open the file ahead, while it may still write the previous step.
    void push_record(format::tensor_event ev) {
        if (prepared_step_ != step_) {
            writer_->prepare_step(step_);
            prepared_step_ = step_;
        }
        if (writer_->push(write_items::tensor{std::move(ev)})) {
            step_wrote_ = true;
        }
    }

    static double scalar_as_double(const tensor_value& value) {
        return visit_dtype(value.type(), [&](auto tag) -> double {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::complex<float>> ||
                          std::is_same_v<T, std::complex<double>>) {
                return 0.0;
            } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
                return static_cast<double>(value.data_as<T>()[0].value());
            } else {
                return static_cast<double>(value.data_as<T>()[0]);
            }
        });
    }

    // smdebug's _write_scalars: at the end of the step, into the step's files.
    void write_scalars() {
        std::vector<pending_scalar> scalars = std::move(scalars_);
        scalars_.clear();
        if (!writer_) {
            return;
        }
        const bool tensorboard = options_.export_tensorboard || !options_.tensorboard_dir.empty();
        for (pending_scalar& s : scalars) {
            if (tensorboard) {
                writer_->push(write_items::tb_scalar{mode_, step_, s.wall_time, detail::clean_tensorboard_tag(s.name),
                                                     static_cast<float>(s.value)});
            }
            push_record(make_event(s.name, tensor_value(std::vector<double>{s.value}), s.wall_time));
        }
    }

    void export_collections() {
        prepare();
        format::collections_file file;
        file.num_workers = options_.include_workers == workers_to_save::all ? worker_.size : 1;
        for (const entry& e : collections_) {
            format::collection_spec spec;
            spec.name = e.coll.name();
            spec.include_regex = e.coll.include_regex();
            spec.exclude_regex = e.coll.exclude_regex();
            std::set<std::string> names = e.coll.tensor_names();
            names.insert(e.matched.begin(), e.matched.end());
            spec.tensor_names.assign(names.begin(), names.end());
            spec.reduction_config.save_raw_tensor = e.reductions.save_raw_tensor;
            spec.reduction_config.save_shape = e.reductions.save_shape;
            spec.reduction_config.reductions = e.reductions.all();
            spec.save_config = e.save;
            spec.save_histogram = e.histogram;
            file.collections.push_back(std::move(spec));
        }
        // Counted before the push: should this very file fail, the count moves on and the next step exports again.
        const std::uint64_t errors_before = writer_->errors_seen();
        writer_->push(write_items::object{format::collections_file_key(worker_.name), format::to_json(file)});
        exported_once_ = true;
        exported_version_ = version_;
        errors_at_export_ = errors_before;
    }

    void check_stop_marker() {
        if (stop_) {
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (last_stop_check_ && now - *last_stop_check_ < options_.stop_check_interval) {
            return;
        }
        last_stop_check_ = now;
        const std::string key(format::stop_marker_key);
        if (!storage_.exists(key)) {
            return;
        }
        std::string text;
        try {
            text = storage_.read(key);
        } catch (const storage_error&) {
            // Present but unreadable (being replaced): its presence is the request.
        }
        stop_ = parse_stop_marker(text);
    }

    Storage storage_;
    hook_options options_;
    worker_info worker_;
    std::deque<entry> collections_;
    std::set<std::string> include_;
    bool dirty_ = true;
    std::uint64_t version_ = 0;
    std::uint64_t exported_version_ = 0;
    bool exported_once_ = false;
    std::uint64_t errors_at_export_ = 0; // the writer's error count when the collections file was last queued
    std::unordered_map<std::string, std::vector<std::size_t>> membership_;
    std::vector<bool> step_selection_;
    bool step_selection_valid_ = false;

    tdbg::mode mode_ = mode::global;
    std::int64_t step_ = -1;
    std::array<std::int64_t, 4> mode_steps_{-1, -1, -1, -1};
    bool step_open_ = false;
    std::int64_t prepared_step_ = -1;
    bool step_wrote_ = false;
    bool closed_ = false;
    std::vector<pending_scalar> scalars_;

    std::optional<std::chrono::steady_clock::time_point> last_stop_check_;
    std::optional<tdbg::stop_request> stop_;

    std::shared_ptr<detail::buffer_pool> pool_;
    std::unique_ptr<async_writer<Storage>> writer_;
};

} // namespace tdbg
