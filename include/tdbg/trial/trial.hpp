#pragma once
/// \file
/// `trial<Storage>`: a run read with smdebug's Trial API, finished or live.
/// New index files are read as they land (only those not seen yet); values are
/// fetched by the byte ranges the index gives. `create_trial(path)` opens a
/// local run; `open_trial(storage)` any storage backend (an S3 run:
/// `open_trial(s3_storage("s3://bucket/prefix"), name)` with tdbg/storage/s3.hpp).
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

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/detail/trial_core.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg {

/// Turns a trial's refreshing on or off for as long as it lives, then puts
/// the previous setting back (smdebug's `refresh` / `no_refresh` blocks).
class refresh_guard {
public:
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

    /// Sets every flag to `on`, remembering the old values.
    refresh_guard(std::vector<std::shared_ptr<std::atomic<bool>>> flags, bool on) {
        saved_.reserve(flags.size());
        for (auto& flag : flags) {
            const bool previous = flag->exchange(on);
            saved_.emplace_back(std::move(flag), previous);
        }
    }

private:
    std::vector<std::pair<std::shared_ptr<std::atomic<bool>>, bool>> saved_;
};

/// A training run, read with smdebug's Trial API. Copies share one state; the
/// trial is safe to query from several threads at once.
template <class Storage>
class trial {
    static_assert(is_storage_v<Storage>, "trial<Storage>: Storage must satisfy the storage concept (see tdbg/storage/storage.hpp)");

public:
    using storage_type = Storage;
    using tensor_type = tdbg::tensor<Storage>;

    /// Opens the run in `storage`: reads its collections and every index file
    /// published so far. Throws missing_collection_files when there is no run.
    trial(Storage storage, std::string name, step_range range = {}, trial_options options = {})
        : core_(std::make_shared<detail::trial_core<Storage>>(std::move(storage), std::move(name), range, options)) {}

    /// The trial's name (by default the run directory's base name).
    [[nodiscard]] const std::string& name() const noexcept { return core_->name(); }
    /// Where the run is, for messages.
    [[nodiscard]] std::string path() const { return core_->storage().describe(); }
    /// The storage the run is read from.
    [[nodiscard]] const Storage& storage() const noexcept { return core_->storage(); }
    /// The steps this trial loads.
    [[nodiscard]] const step_range& range_steps() const noexcept { return core_->range(); }

    /// The names of the tensors saved, sorted: all of them, or those saved in
    /// mode `m`, or at `step` of `m`; filtered by `regex` (searched, not fully
    /// matched, as in smdebug) or by membership in `collection` (not both).
    [[nodiscard]] std::vector<std::string> tensor_names(std::optional<std::int64_t> step = std::nullopt,
                                                        tdbg::mode m = tdbg::mode::global,
                                                        const std::optional<std::string>& regex = std::nullopt,
                                                        const std::optional<std::string>& collection = std::nullopt) const {
        if (regex && collection) {
            throw config_error("tensor_names: pass only one of regex or collection");
        }
        core_->maybe_refresh();
        std::vector<std::string> names = (!step && m == tdbg::mode::global) ? core_->all_tensor_names()
                                                                     : core_->tensor_names_for(step, m);
        if (regex) {
            const std::vector<std::regex> compiled{compile(*regex, "regex")};
            names.erase(std::remove_if(names.begin(), names.end(),
                                       [&](const std::string& n) { return !search_any(compiled, n); }),
                        names.end());
        } else if (collection) {
            names = in_collection(names, *collection);
        }
        return names;
    }

    /// The tensor named `name`. Throws tensor_unavailable when it was not saved (yet).
    [[nodiscard]] tensor_type tensor(const std::string& name) const {
        const detail::tensor_record* record = core_->find_tensor(name);
        if (record == nullptr) {
            core_->maybe_refresh();
            record = core_->find_tensor(name);
        }
        if (record == nullptr) {
            throw tensor_unavailable("tensor '" + name + "' was not saved (trial " + core_->name() + " at " + path() + ")");
        }
        return tensor_type(core_, record);
    }

    /// True when a tensor named `name` has been saved (as far as the trial knows).
    [[nodiscard]] bool has_tensor(const std::string& name) const {
        if (core_->has_tensor_now(name)) {
            return true;
        }
        core_->maybe_refresh();
        return core_->has_tensor_now(name);
    }

    /// The steps of `m` (mode steps; global steps for tdbg::mode::global), sorted.
    /// Only complete steps unless `show_incomplete_steps`.
    [[nodiscard]] std::vector<std::int64_t> steps(tdbg::mode m = tdbg::mode::global, bool show_incomplete_steps = false) const {
        core_->maybe_refresh();
        return core_->with_steps([&](const detail::step_table& t) { return t.steps(m, show_incomplete_steps); });
    }

    /// The modes that have steps (never tdbg::mode::global), in the order train, eval, predict.
    [[nodiscard]] std::vector<tdbg::mode> modes() const {
        core_->maybe_refresh();
        return core_->with_steps([](const detail::step_table& t) { return t.modes(); });
    }

    /// The mode of global step `global_step`, if the step is known.
    [[nodiscard]] std::optional<tdbg::mode> mode_of(std::int64_t global_step) const {
        auto info = step_info(global_step);
        return info ? std::optional<tdbg::mode>(info->first) : std::nullopt;
    }
    /// smdebug's name for mode_of.
    [[nodiscard]] std::optional<tdbg::mode> mode(std::int64_t global_step) const { return mode_of(global_step); }

    /// The mode step of global step `global_step`, if the step is known.
    [[nodiscard]] std::optional<std::int64_t> mode_step(std::int64_t global_step) const {
        auto info = step_info(global_step);
        return info ? std::optional<std::int64_t>(info->second) : std::nullopt;
    }

    /// The global step of (`m`, `mode_step`), if known (for tdbg::mode::global, `mode_step` itself).
    [[nodiscard]] std::optional<std::int64_t> global_step(tdbg::mode m, std::int64_t mode_step) const {
        if (auto g = core_->to_global(mode_step, m)) {
            return g;
        }
        core_->maybe_refresh();
        return core_->to_global(mode_step, m);
    }

    /// The workers that saved data, sorted.
    [[nodiscard]] std::vector<std::string> workers() const {
        core_->maybe_refresh();
        return core_->workers();
    }

    /// The number of workers the run was configured with (collections' _meta.num_workers).
    [[nodiscard]] std::size_t num_workers() const noexcept { return core_->num_workers(); }

    /// The collections of the first worker's collection file, by name.
    [[nodiscard]] const std::map<std::string, format::collection_spec>& collections() const noexcept {
        return core_->collections();
    }

    /// The collection `name`; like smdebug, an empty collection of that name when there is none.
    [[nodiscard]] format::collection_spec collection(const std::string& name) const {
        const auto& all = core_->collections();
        if (auto it = all.find(name); it != all.end()) {
            return it->second;
        }
        format::collection_spec empty;
        empty.name = name;
        return empty;
    }

    /// Blocks until every step in `steps` of `m` is available, polling every
    /// options.poll_interval (refreshing even inside a no_refresh block).
    /// Throws step_unavailable for a step that was skipped, no_more_data for
    /// one past the end of a finished run, and step_not_yet_available when
    /// `timeout` passes first.
    void wait_for_steps(const std::vector<std::int64_t>& steps, tdbg::mode m = tdbg::mode::global,
                        std::optional<std::chrono::milliseconds> timeout = std::nullopt) const {
        const auto deadline = timeout ? std::optional(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
        for (const std::int64_t step : steps) {
            for (;;) {
                core_->refresh_now();
                const step_state state = core_->with_steps([&](const detail::step_table& t) { return t.has_passed_step(step, m); });
                if (state == step_state::available) {
                    break;
                }
                if (state == step_state::unavailable || (deadline && std::chrono::steady_clock::now() >= *deadline)) {
                    core_->throw_missing_step(step, m, state);
                }
                auto pause = core_->options().poll_interval;
                if (deadline) {
                    pause = std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                *deadline - std::chrono::steady_clock::now()) +
                                                std::chrono::milliseconds(1));
                }
                std::this_thread::sleep_for(pause);
            }
        }
    }

    /// Whether step `step` of `m` has passed: available, not yet available, or unavailable for good.
    [[nodiscard]] step_state has_passed_step(std::int64_t step, tdbg::mode m = tdbg::mode::global) const {
        core_->maybe_refresh();
        return core_->with_steps([&](const detail::step_table& t) { return t.has_passed_step(step, m); });
    }

    /// The last step every worker has written (-1 if none); everything up to it is final.
    [[nodiscard]] std::int64_t last_complete_step() const {
        return core_->with_steps([](const detail::step_table& t) { return t.last_complete_step(); });
    }

    /// True once the run's end marker has been seen: no new step will come.
    [[nodiscard]] bool loaded_all_steps() const noexcept { return core_->ended(); }

    /// Reads any newly published index files now, whatever the refresh setting.
    void refresh() const { core_->refresh_now(); }

    /// True while queries refresh (the default).
    [[nodiscard]] bool refreshing() const noexcept { return core_->refresh_flag()->load(); }

    /// Turns refreshing off until the guard goes (smdebug's `no_refresh`).
    [[nodiscard]] refresh_guard no_refresh() const { return refresh_guard({core_->refresh_flag()}, false); }
    /// Turns refreshing on until the guard goes (smdebug's `refresh`).
    [[nodiscard]] refresh_guard with_refresh() const { return refresh_guard({core_->refresh_flag()}, true); }

    /// The flag a refresh_guard sets; for guards over several trials.
    [[nodiscard]] const std::shared_ptr<std::atomic<bool>>& refresh_flag() const noexcept { return core_->refresh_flag(); }

private:
    [[nodiscard]] std::optional<std::pair<tdbg::mode, std::int64_t>> step_info_now(std::int64_t global_step) const {
        return core_->with_steps([&](const detail::step_table& t) -> std::optional<std::pair<tdbg::mode, std::int64_t>> {
            if (const auto* info = t.find(global_step)) {
                return std::pair<tdbg::mode, std::int64_t>{info->step_mode, info->mode_step};
            }
            return std::nullopt;
        });
    }

    [[nodiscard]] std::optional<std::pair<tdbg::mode, std::int64_t>> step_info(std::int64_t global_step) const {
        if (auto info = step_info_now(global_step)) {
            return info;
        }
        core_->maybe_refresh();
        return step_info_now(global_step);
    }

    static std::regex compile(const std::string& pattern, const char* what) {
        try {
            return std::regex(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw config_error(std::string("invalid ") + what + " '" + pattern + "': " + e.what());
        }
    }

    static bool search_any(const std::vector<std::regex>& patterns, const std::string& name) {
        return std::any_of(patterns.begin(), patterns.end(), [&](const std::regex& r) { return std::regex_search(name, r); });
    }

    // smdebug's _tensors_in_collection: the collection's tensor names and every
    // saved tensor one of its include regexes matches; tdbg's exclude regexes
    // (absent from smdebug's files) then leave out what they match, except
    // names listed explicitly, as the hook's collection::contains decides.
    [[nodiscard]] std::vector<std::string> in_collection(const std::vector<std::string>& names,
                                                         const std::string& collection_name) const {
        const auto& all = core_->collections();
        auto it = all.find(collection_name);
        if (it == all.end()) {
            return {};
        }
        const format::collection_spec& c = it->second;
        const std::set<std::string> listed(c.tensor_names.begin(), c.tensor_names.end());
        std::vector<std::regex> include;
        include.reserve(c.include_regex.size());
        for (const std::string& pattern : c.include_regex) {
            include.push_back(compile(pattern, "include_regex of a collection"));
        }
        std::vector<std::regex> exclude;
        exclude.reserve(c.exclude_regex.size());
        for (const std::string& pattern : c.exclude_regex) {
            exclude.push_back(compile(pattern, "exclude_regex of a collection"));
        }
        std::vector<std::string> out;
        for (const std::string& n : names) {
            if (listed.count(n) != 0 || (search_any(include, n) && !search_any(exclude, n))) {
                out.push_back(n);
            }
        }
        return out;
    }

    std::shared_ptr<detail::trial_core<Storage>> core_;
};

/// Opens the run in `storage` (any backend satisfying the storage concept).
template <class Storage>
[[nodiscard]] trial<Storage> open_trial(Storage storage, std::string name, step_range range = {},
                                        trial_options options = {}) {
    return trial<Storage>(std::move(storage), std::move(name), range, options);
}

namespace detail {
inline std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}
} // namespace detail

/// smdebug's create_trial for a local run directory. `name` defaults to the
/// directory's base name. S3 runs ("s3://bucket/prefix") are opened with
/// open_trial over the S3 storage (tdbg/storage/s3.hpp, target tdbg::s3).
[[nodiscard]] inline trial<local_storage> create_trial(std::string_view path,
                                                       const std::optional<std::string>& name = std::nullopt,
                                                       step_range range_steps = {}, trial_options options = {}) {
    const std::string trimmed = detail::trim(path); // as smdebug does
    if (trimmed.rfind("s3://", 0) == 0) {
        throw config_error("create_trial: " + trimmed +
                           " is an S3 URL; open it with open_trial(s3_storage(...)) from tdbg/storage/s3.hpp");
    }
    if (trimmed.empty()) {
        throw config_error("create_trial: empty path");
    }
    std::filesystem::path dir(trimmed);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        throw missing_collection_files("create_trial: " + trimmed + " is not a directory");
    }
    std::string trial_name;
    if (name) {
        trial_name = *name;
    } else {
        auto base = dir;
        while (!base.empty() && base.filename().empty()) {
            base = base.parent_path(); // "runs/a/" -> "runs/a"
            if (base == base.root_path()) {
                break;
            }
        }
        trial_name = base.filename().string();
    }
    return trial<local_storage>(local_storage(dir), std::move(trial_name), range_steps, options);
}

} // namespace tdbg
