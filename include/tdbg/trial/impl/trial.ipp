#pragma once
/// \file
/// Definitions of tdbg/trial/trial.hpp.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/open.hpp"
#include "tdbg/trial/detail/trial_core.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg {

namespace detail {

// Python's str.strip() of whitespace, as smdebug's create_trial does to its path.
inline std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}

inline bool search_any(const std::vector<pattern>& patterns, const std::string& name) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const pattern& p) { return p.search(name); });
}

// smdebug's _tensors_in_collection: the collection's tensor names and every
// saved tensor one of its include regexes matches; tdbg's exclude regexes
// (absent from smdebug's files) then leave out what they match, except
// names listed explicitly, as the hook's collection::contains decides.
inline std::vector<std::string> in_collection(const std::vector<std::string>& names, const format::collection_spec& c) {
    const std::set<std::string> listed(c.tensor_names.begin(), c.tensor_names.end());
    const std::string origin = fmt::format("collection '{}' of the run", c.name);
    std::vector<pattern> include;
    include.reserve(c.include_regex.size());
    for (const std::string& text : c.include_regex) {
        include.emplace_back(text, origin);
    }
    std::vector<pattern> exclude;
    exclude.reserve(c.exclude_regex.size());
    for (const std::string& text : c.exclude_regex) {
        exclude.emplace_back(text, origin);
    }
    std::vector<std::string> out;
    for (const std::string& n : names) {
        if (listed.count(n) != 0 || (search_any(include, n) && !search_any(exclude, n))) {
            out.push_back(n);
        }
    }
    return out;
}

// The (mode, mode step) of global step `global_step`, if the trial knows it now.
inline std::optional<std::pair<mode, std::int64_t>> step_info_now(const trial_core& core, std::int64_t global_step) {
    return core.with_steps([&](const step_table& t) -> std::optional<std::pair<mode, std::int64_t>> {
        if (const auto* info = t.find(global_step)) {
            return std::pair<mode, std::int64_t>{info->step_mode, info->mode_step};
        }
        return std::nullopt;
    });
}

inline std::optional<std::pair<mode, std::int64_t>> step_info(trial_core& core, std::int64_t global_step) {
    if (auto info = step_info_now(core, global_step)) {
        return info;
    }
    core.maybe_refresh();
    return step_info_now(core, global_step);
}

} // namespace detail

TDBG_DECL trial::trial(any_storage storage, std::string name, step_range range, trial_options options)
    : core_(std::make_shared<detail::trial_core>(std::move(storage), std::move(name), range, std::move(options))) {}

TDBG_DECL const std::string& trial::name() const noexcept { return core_->name(); }
TDBG_DECL std::string trial::path() const { return core_->storage().describe(); }
TDBG_DECL const any_storage& trial::storage() const noexcept { return core_->storage(); }
TDBG_DECL const step_range& trial::range_steps() const noexcept { return core_->range(); }
TDBG_DECL const trial_options& trial::options() const noexcept { return core_->options(); }

TDBG_DECL std::vector<std::string> trial::tensor_names(std::optional<std::int64_t> step, tdbg::mode m,
                                                       const std::optional<std::string>& regex,
                                                       const std::optional<std::string>& collection) const {
    tensor_name_query query;
    query.step = step;
    query.mode = m;
    if (regex) {
        query.regex.push_back(*regex);
    }
    query.collection = collection;
    return tensor_names(query);
}

TDBG_DECL std::vector<std::string> trial::tensor_names(const tensor_name_query& query) const {
    const auto& [step, m, regex, collection] = query;
    if (!regex.empty() && collection) {
        throw config_error("tensor_names: pass only one of regex or collection");
    }
    core_->maybe_refresh();
    std::vector<std::string> names =
        (!step && m == tdbg::mode::global) ? core_->all_tensor_names() : core_->tensor_names_for(step, m);
    if (!regex.empty()) {
        std::vector<detail::pattern> compiled;
        compiled.reserve(regex.size());
        for (const std::string& text : regex) {
            compiled.emplace_back(text, "tensor_names");
        }
        names.erase(std::remove_if(names.begin(), names.end(),
                                   [&](const std::string& n) { return !detail::search_any(compiled, n); }),
                    names.end());
    } else if (collection) {
        const auto& all = core_->collections();
        const auto it = all.find(*collection);
        names = it == all.end() ? std::vector<std::string>{} : detail::in_collection(names, it->second);
    }
    return names;
}

TDBG_DECL tdbg::tensor trial::tensor(const std::string& name) const {
    const detail::tensor_record* record = core_->find_tensor(name);
    if (record == nullptr) {
        core_->maybe_refresh();
        record = core_->find_tensor(name);
    }
    if (record == nullptr) {
        throw tensor_unavailable(fmt::format("tensor '{}' was not saved (trial {} at {})", name, core_->name(), path()), name);
    }
    return tdbg::tensor(core_, record);
}

TDBG_DECL bool trial::has_tensor(const std::string& name) const {
    if (core_->has_tensor_now(name)) {
        return true;
    }
    core_->maybe_refresh();
    return core_->has_tensor_now(name);
}

TDBG_DECL std::vector<std::int64_t> trial::steps(tdbg::mode m, bool show_incomplete_steps) const {
    core_->maybe_refresh();
    return core_->with_steps([&](const detail::step_table& t) { return t.steps(m, show_incomplete_steps); });
}

TDBG_DECL std::vector<tdbg::mode> trial::modes() const {
    core_->maybe_refresh();
    return core_->with_steps([](const detail::step_table& t) { return t.modes(); });
}

TDBG_DECL std::optional<tdbg::mode> trial::mode_of(std::int64_t global_step) const {
    const auto info = detail::step_info(*core_, global_step);
    return info ? std::optional<tdbg::mode>(info->first) : std::nullopt;
}

TDBG_DECL std::optional<std::int64_t> trial::mode_step(std::int64_t global_step) const {
    const auto info = detail::step_info(*core_, global_step);
    return info ? std::optional<std::int64_t>(info->second) : std::nullopt;
}

TDBG_DECL std::optional<std::pair<tdbg::mode, std::int64_t>> trial::mode_modestep(std::int64_t global_step) const {
    return detail::step_info(*core_, global_step);
}

TDBG_DECL std::optional<std::int64_t> trial::global_step(tdbg::mode m, std::int64_t mode_step) const {
    if (auto g = core_->to_global(mode_step, m)) {
        return g;
    }
    core_->maybe_refresh();
    return core_->to_global(mode_step, m);
}

TDBG_DECL std::optional<double> trial::wall_time(std::int64_t global_step) const { return core_->wall_time(global_step); }

TDBG_DECL std::vector<std::string> trial::workers() const {
    core_->maybe_refresh();
    return core_->workers();
}

TDBG_DECL std::size_t trial::num_workers() const noexcept { return core_->num_workers(); }

TDBG_DECL const std::map<std::string, format::collection_spec>& trial::collections() const noexcept {
    return core_->collections();
}

TDBG_DECL format::collection_spec trial::collection(const std::string& name) const {
    const auto& all = core_->collections();
    if (auto it = all.find(name); it != all.end()) {
        return it->second;
    }
    format::collection_spec empty;
    empty.name = name;
    return empty;
}

TDBG_DECL void trial::wait_for_steps(const std::vector<std::int64_t>& steps, tdbg::mode m,
                                     std::optional<std::chrono::milliseconds> timeout) const {
    // No timeout: a deadline that never comes (a plain time point: GCC's -O2 warns that an
    // optional one may be read uninitialized).
    const bool bounded = timeout.has_value();
    const auto deadline =
        bounded ? std::chrono::steady_clock::now() + *timeout : std::chrono::steady_clock::time_point::max();
    for (const std::int64_t step : steps) {
        for (;;) {
            core_->refresh_now();
            const step_state state =
                core_->with_steps([&](const detail::step_table& t) { return t.has_passed_step(step, m); });
            if (state == step_state::available) {
                break;
            }
            if (state == step_state::unavailable || (bounded && std::chrono::steady_clock::now() >= deadline)) {
                core_->throw_missing_step(step, m, state);
            }
            auto pause = core_->options().poll_interval;
            if (bounded) {
                pause = std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(
                                            deadline - std::chrono::steady_clock::now()) +
                                            std::chrono::milliseconds(1));
            }
            std::this_thread::sleep_for(pause);
        }
    }
}

TDBG_DECL step_state trial::has_passed_step(std::int64_t step, tdbg::mode m) const {
    core_->maybe_refresh();
    return core_->with_steps([&](const detail::step_table& t) { return t.has_passed_step(step, m); });
}

TDBG_DECL std::int64_t trial::last_complete_step() const {
    return core_->with_steps([](const detail::step_table& t) { return t.last_complete_step(); });
}

TDBG_DECL std::optional<std::int64_t> trial::step_after(std::int64_t step) const {
    return core_->with_steps([&](const detail::step_table& t) { return t.step_after(step); });
}

TDBG_DECL bool trial::loaded_all_steps() const noexcept { return core_->ended(); }
TDBG_DECL void trial::refresh() const { core_->refresh_now(); }
TDBG_DECL bool trial::refreshing() const noexcept { return core_->refreshing(); }

TDBG_DECL const std::shared_ptr<std::atomic<bool>>& trial::refresh_flag() const noexcept { return core_->refresh_flag(); }

TDBG_DECL refresh_pause trial::pause_refresh() const { return refresh_pause(core_->refresh_pauses()); }

TDBG_DECL trial open_trial(any_storage storage, std::string name, step_range range, trial_options options) {
    return trial(std::move(storage), std::move(name), range, std::move(options));
}

TDBG_DECL std::optional<run_changed> trial::run_change() const { return core_->run_change(); }

TDBG_DECL trial create_trial(std::string_view location, const std::optional<std::string>& name, step_range range_steps,
                             trial_options options) {
    const std::string trimmed = detail::trim(location); // as smdebug does
    if (trimmed.empty()) {
        throw config_error("create_trial: empty path");
    }
    const resolved_location where = resolve_location(trimmed);
    if (!where.url) {
        // A run that has not started may not have its directory yet: waited for as its files are.
        const detail::opening_wait wait(options);
        std::error_code ec;
        while (!std::filesystem::is_directory(where.text, ec)) {
            if (wait.over()) {
                const bool exists = std::filesystem::exists(where.text, ec);
                throw missing_collection_files(fmt::format(
                    "{}: {}", where.text,
                    exists ? "not a directory (give the run's directory, the one holding index/ and events/)"
                    : options.collection_wait.count() > 0 ? "no such directory (waited for it to appear)"
                                                          : "no such directory"));
            }
            wait.pause();
        }
        if (!wait.forever()) {
            options.collection_wait = wait.left();
        }
    }
    std::string trial_name;
    if (name) {
        trial_name = *name;
    } else {
        // The last component: "runs/a/" and "s3://bucket/runs/a" are "a".
        std::string_view base = trimmed;
        while (base.size() > 1 && base.back() == '/') {
            base.remove_suffix(1);
        }
        const auto slash = base.rfind('/');
        trial_name = std::string(slash == std::string_view::npos ? base : base.substr(slash + 1));
    }
    return trial(open_storage(where.text), std::move(trial_name), range_steps, std::move(options));
}

} // namespace tdbg
