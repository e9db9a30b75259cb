#pragma once
/// \file
/// `trial`: a run read with smdebug's Trial API, finished or live.
/// New index files are read as they land (only those not seen yet); values are
/// fetched by the byte ranges the index gives. `create_trial(location)` opens a
/// local run directory, or an `s3://bucket/prefix` run once the S3 backend is
/// linked in (tdbg/storage/s3.hpp); `open_trial(storage, name)` any storage.
///
/// Where smdebug's reader is wrong, tdbg reads what was written: int8 values
/// stay int8 (smdebug returns uint8); a value saved together with its shape is
/// readable (smdebug keeps only the shape); computed l1/l2 are element-wise
/// norms for every rank (smdebug uses matrix norms for 2-D values and fails for
/// 0-d and 3-D+); a tensor's complete steps follow the trial's completeness
/// rule (smdebug compares a list with a number there). Also: value() past the
/// end of a finished run throws no_more_data, as wait_for_steps does; values()
/// with a worker skips the steps that worker did not write; a refresh guard
/// restores the previous setting; workers() also lists workers seen only in
/// index files.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg {

/// What `trial::tensor_names(query)` lists: smdebug's keyword arguments of
/// `tensor_names(step=, mode=, regex=, collection=)`, named:
///
///     tdbg::tensor_name_query q;
///     q.regex = {"relu", "^gradient/"};   // any of them, searched as smdebug does
///     q.mode = tdbg::mode::train;
///     auto names = trial.tensor_names(q);
struct tensor_name_query {
    /// Only the tensors saved at this step (a mode step of `mode`, or a global step).
    std::optional<std::int64_t> step;
    /// Only the tensors saved in this mode (global: every mode).
    tdbg::mode mode = tdbg::mode::global;
    /// Only the names one of these regular expressions matches (searched, not fully matched).
    std::vector<std::string> regex;
    /// Only the tensors of this collection (its names and include patterns). Not with `regex`.
    std::optional<std::string> collection;
};

/// Turns a trial's refreshing on or off for as long as it lives, then puts
/// the previous setting back (smdebug's `refresh` / `no_refresh` blocks).
class refresh_guard {
public:
    /// Sets every flag to `on`, remembering the old values.
    refresh_guard(std::vector<std::shared_ptr<std::atomic<bool>>> flags, bool on) {
        saved_.reserve(flags.size());
        for (auto& flag : flags) {
            const bool previous = flag->exchange(on);
            saved_.emplace_back(std::move(flag), previous);
        }
    }
    refresh_guard(const refresh_guard&) = delete;
    refresh_guard& operator=(const refresh_guard&) = delete;
    refresh_guard(refresh_guard&&) noexcept = default;
    refresh_guard& operator=(refresh_guard&&) = delete;
    ~refresh_guard() {
        // Restore in reverse order, so a trial listed twice ends as it began.
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
            it->first->store(it->second);
        }
    }

private:
    std::vector<std::pair<std::shared_ptr<std::atomic<bool>>, bool>> saved_;
};

/// Holds a trial's refreshing off while it lives, whatever its setting. Pauses
/// nest and may overlap, so that rules evaluated side by side share one trial
/// (invoke_rule pauses its trials while it evaluates a step).
class refresh_pause {
public:
    explicit refresh_pause(std::shared_ptr<std::atomic<int>> pauses) : pauses_(std::move(pauses)) { ++*pauses_; }
    refresh_pause(const refresh_pause&) = delete;
    refresh_pause& operator=(const refresh_pause&) = delete;
    refresh_pause(refresh_pause&& other) noexcept = default;
    refresh_pause& operator=(refresh_pause&&) = delete;
    ~refresh_pause() {
        if (pauses_) {
            --*pauses_;
        }
    }

private:
    std::shared_ptr<std::atomic<int>> pauses_;
};

/// A training run, read with smdebug's Trial API. Copies share one state; the
/// trial is safe to query from several threads at once.
class trial {
public:
    /// Opens the run in `storage`: reads its collections and every index file
    /// published so far. Throws missing_collection_files when there is no run.
    TDBG_DECL trial(any_storage storage, std::string name, step_range range = {}, trial_options options = {});

    /// The trial's name (by default the run directory's base name).
    [[nodiscard]] TDBG_DECL const std::string& name() const noexcept;
    /// Where the run is, for messages.
    [[nodiscard]] TDBG_DECL std::string path() const;
    /// The storage the run is read from.
    [[nodiscard]] TDBG_DECL const any_storage& storage() const noexcept;
    /// The steps this trial loads (only their index files are listed and read).
    [[nodiscard]] TDBG_DECL const step_range& range_steps() const noexcept;
    /// The options it reads the run with.
    [[nodiscard]] TDBG_DECL const trial_options& options() const noexcept;

    /// The names of the tensors saved, sorted: all of them, or those saved in
    /// mode `m`, or at `step` of `m`; filtered by `regex` (searched, not fully
    /// matched, as in smdebug) or by membership in `collection` (not both).
    [[nodiscard]] TDBG_DECL std::vector<std::string>
    tensor_names(std::optional<std::int64_t> step = std::nullopt, tdbg::mode m = tdbg::mode::global,
                 const std::optional<std::string>& regex = std::nullopt,
                 const std::optional<std::string>& collection = std::nullopt) const;
    /// The same, with the filters named (and several regular expressions, any of which may match).
    [[nodiscard]] TDBG_DECL std::vector<std::string> tensor_names(const tensor_name_query& query) const;

    /// The tensor named `name`. Throws tensor_unavailable when it was not saved (yet).
    [[nodiscard]] TDBG_DECL tdbg::tensor tensor(const std::string& name) const;
    /// True when a tensor named `name` has been saved (as far as the trial knows).
    [[nodiscard]] TDBG_DECL bool has_tensor(const std::string& name) const;

    /// The steps of `m` (mode steps; global steps for tdbg::mode::global), sorted.
    /// Only complete steps unless `show_incomplete_steps`.
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> steps(tdbg::mode m = tdbg::mode::global,
                                                            bool show_incomplete_steps = false) const;
    /// The modes that have steps (never tdbg::mode::global), in the order train, eval, predict.
    [[nodiscard]] TDBG_DECL std::vector<tdbg::mode> modes() const;
    /// The mode of global step `global_step`, if the step is known.
    [[nodiscard]] TDBG_DECL std::optional<tdbg::mode> mode_of(std::int64_t global_step) const;
    /// smdebug's name for mode_of.
    [[nodiscard]] std::optional<tdbg::mode> mode(std::int64_t global_step) const { return mode_of(global_step); }
    /// The mode step of global step `global_step`, if the step is known.
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> mode_step(std::int64_t global_step) const;
    /// smdebug's mode_modestep: the mode and mode step of `global_step`, if the step is known.
    [[nodiscard]] TDBG_DECL std::optional<std::pair<tdbg::mode, std::int64_t>> mode_modestep(std::int64_t global_step) const;
    /// The global step of (`m`, `mode_step`), if known (for tdbg::mode::global, `mode_step` itself).
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> global_step(tdbg::mode m, std::int64_t mode_step) const;
    /// The wall-clock time (seconds since the epoch) at which global step
    /// `global_step` was written: that of the first record of the step's event
    /// file, of the first worker (by name) that wrote one; nullopt when none did.
    [[nodiscard]] TDBG_DECL std::optional<double> wall_time(std::int64_t global_step) const;

    /// The workers that saved data, sorted (of those trial_options::workers names, when it does).
    [[nodiscard]] TDBG_DECL std::vector<std::string> workers() const;
    /// The number of workers the run was configured with (collections' _meta.num_workers), or
    /// of those trial_options::workers names: the workers a step needs to be complete.
    [[nodiscard]] TDBG_DECL std::size_t num_workers() const noexcept;
    /// The collections of the first worker's collection file, by name.
    [[nodiscard]] TDBG_DECL const std::map<std::string, format::collection_spec>& collections() const noexcept;
    /// The collection `name`; like smdebug, an empty collection of that name when there is none.
    [[nodiscard]] TDBG_DECL format::collection_spec collection(const std::string& name) const;

    /// Blocks until every step in `steps` of `m` is available, polling every
    /// options().poll_interval (refreshing even inside a no_refresh block).
    /// Throws step_unavailable for a step that was skipped, no_more_data for
    /// one past the end of a finished run, and step_not_yet_available when
    /// `timeout` passes first.
    TDBG_DECL void wait_for_steps(const std::vector<std::int64_t>& steps, tdbg::mode m = tdbg::mode::global,
                                  std::optional<std::chrono::milliseconds> timeout = std::nullopt) const;
    /// Whether step `step` of `m` has passed: available, not yet available, or unavailable for good.
    [[nodiscard]] TDBG_DECL step_state has_passed_step(std::int64_t step, tdbg::mode m = tdbg::mode::global) const;
    /// The last step every worker has written (-1 if none); everything up to it is final.
    [[nodiscard]] TDBG_DECL std::int64_t last_complete_step() const;
    /// The first global step after `step` that the trial has seen (complete or
    /// not), from what is loaded now; none when it has seen none. When `step`
    /// is unavailable, so is every step between it and this one.
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> step_after(std::int64_t step) const;
    /// True once the run's end marker has been seen: no new step will come.
    [[nodiscard]] TDBG_DECL bool loaded_all_steps() const noexcept;
    /// Set once a refresh of a live run found that another job now writes one of its workers, or
    /// that the run was removed: the run_changed that refresh threw (and every later one throws).
    /// What the trial read before it is the job's it opened.
    [[nodiscard]] TDBG_DECL std::optional<run_changed> run_change() const;

    /// Reads any newly published index files now, whatever the refresh setting.
    TDBG_DECL void refresh() const;
    /// True while queries refresh (the default, unless a guard or a pause holds it off).
    [[nodiscard]] TDBG_DECL bool refreshing() const noexcept;
    /// Turns refreshing off until the guard goes (smdebug's `no_refresh`).
    [[nodiscard]] refresh_guard no_refresh() const { return refresh_guard({refresh_flag()}, false); }
    /// Turns refreshing on until the guard goes (smdebug's `refresh`).
    [[nodiscard]] refresh_guard with_refresh() const { return refresh_guard({refresh_flag()}, true); }
    /// The flag a refresh_guard sets; for guards over several trials.
    [[nodiscard]] TDBG_DECL const std::shared_ptr<std::atomic<bool>>& refresh_flag() const noexcept;
    /// Holds refreshing off until the pause goes, whatever the flag says (see refresh_pause).
    [[nodiscard]] TDBG_DECL refresh_pause pause_refresh() const;

private:
    std::shared_ptr<detail::trial_core> core_;
};

/// Opens the run in `storage` (any backend satisfying the storage concept).
[[nodiscard]] TDBG_DECL trial open_trial(any_storage storage, std::string name, step_range range = {},
                                         trial_options options = {});

/// smdebug's create_trial: the run at `location`, a local directory or a URL
/// whose scheme a backend registered ("s3://bucket/prefix" with
/// tdbg/storage/s3.hpp). `name` defaults to the location's last component.
[[nodiscard]] TDBG_DECL trial create_trial(std::string_view location, const std::optional<std::string>& name = std::nullopt,
                                           step_range range_steps = {}, trial_options options = {});

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/trial/impl/trial.ipp"
#endif
