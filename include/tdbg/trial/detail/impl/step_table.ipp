#pragma once
/// \file
/// Definitions of tdbg/trial/detail/step_table.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "tdbg/trial/detail/step_table.hpp"

namespace tdbg::detail {

TDBG_DECL void step_table::add(std::int64_t step, mode m, std::int64_t mode_step, worker_id worker) {
    // Steps arrive in order nearly always: appending is the common case.
    auto pos = steps_.end();
    if (!steps_.empty() && step <= steps_.back().first) {
        pos = std::lower_bound(steps_.begin(), steps_.end(), step,
                               [](const auto& item, std::int64_t s) { return item.first < s; });
    }
    if (pos == steps_.end() || pos->first != step) {
        step_info fresh;
        fresh.step_mode = m;
        fresh.mode_step = mode_step;
        pos = steps_.insert(pos, {step, std::move(fresh)});
        if (m != mode::global) {
            auto& table = mode_to_global_[mode_index(m)];
            auto at = table.end();
            if (!table.empty() && mode_step <= table.back().first) {
                at = std::lower_bound(table.begin(), table.end(), mode_step,
                                      [](const auto& item, std::int64_t s) { return item.first < s; });
            }
            if (at == table.end() || at->first != mode_step) {
                table.insert(at, {mode_step, step});
            }
        }
    } else if (m != mode::global && pos->second.step_mode != m) {
        // The step is known under another mode; smdebug still maps this mode step to it.
        auto& table = mode_to_global_[mode_index(m)];
        auto at = std::lower_bound(table.begin(), table.end(), mode_step,
                                   [](const auto& item, std::int64_t s) { return item.first < s; });
        if (at == table.end() || at->first != mode_step) {
            table.insert(at, {mode_step, step});
        }
    }
    note_worker(step, pos->second, worker);
}

TDBG_DECL bool step_table::add_worker(std::int64_t step, worker_id worker) {
    auto pos = std::lower_bound(steps_.begin(), steps_.end(), step,
                                [](const auto& item, std::int64_t s) { return item.first < s; });
    if (pos == steps_.end() || pos->first != step) {
        return false;
    }
    note_worker(step, pos->second, worker);
    return true;
}

TDBG_DECL void step_table::note_worker(std::int64_t step, step_info& info, worker_id worker) {
    auto w = std::lower_bound(info.workers.begin(), info.workers.end(), worker);
    if (w == info.workers.end() || *w != worker) {
        info.workers.insert(w, worker);
    }
    if (info.workers.size() >= num_workers_ && step > last_complete_step_) {
        last_complete_step_ = step;
    }
}

TDBG_DECL void step_table::apply_wait_window(std::size_t window) {
    if (window == 0) {
        return;
    }
    auto first_waiting = std::upper_bound(steps_.begin(), steps_.end(), last_complete_step_,
                                          [](std::int64_t s, const auto& item) { return s < item.first; });
    const auto waiting = static_cast<std::size_t>(std::distance(first_waiting, steps_.end()));
    if (waiting > window) {
        std::advance(first_waiting, static_cast<std::ptrdiff_t>(window / 2 == 0 ? 0 : window / 2 - 1));
        last_complete_step_ = first_waiting->first;
    }
}

TDBG_DECL void step_table::mark_ended() noexcept {
    ended_ = true;
    if (!steps_.empty()) {
        last_complete_step_ = std::max(last_complete_step_, steps_.back().first);
    }
}

TDBG_DECL bool step_table::is_complete(std::int64_t step) const {
    const step_info* info = find(step);
    return info != nullptr && is_complete(step, *info);
}

TDBG_DECL const step_table::step_info* step_table::find(std::int64_t step) const {
    auto it = std::lower_bound(steps_.begin(), steps_.end(), step,
                               [](const auto& item, std::int64_t s) { return item.first < s; });
    return it == steps_.end() || it->first != step ? nullptr : &it->second;
}

TDBG_DECL std::optional<std::int64_t> step_table::global_step(mode m, std::int64_t mode_step) const {
    if (m == mode::global) {
        return mode_step;
    }
    const auto& table = mode_to_global_[mode_index(m)];
    auto it = std::lower_bound(table.begin(), table.end(), mode_step,
                               [](const auto& item, std::int64_t s) { return item.first < s; });
    if (it == table.end() || it->first != mode_step) {
        return std::nullopt;
    }
    return it->second;
}

TDBG_DECL std::vector<std::int64_t> step_table::steps(mode m, bool show_incomplete) const {
    std::vector<std::int64_t> out;
    if (m == mode::global) {
        out.reserve(steps_.size());
        for (const auto& [step, info] : steps_) {
            if (show_incomplete || is_complete(step, info)) {
                out.push_back(step);
            }
        }
        return out;
    }
    const auto& table = mode_to_global_[mode_index(m)];
    out.reserve(table.size());
    for (const auto& [mode_step, global] : table) {
        if (show_incomplete || is_complete(global)) {
            out.push_back(mode_step);
        }
    }
    return out;
}

TDBG_DECL std::vector<mode> step_table::modes() const {
    std::vector<mode> out;
    for (mode m : {mode::train, mode::eval, mode::predict}) {
        if (!mode_to_global_[mode_index(m)].empty()) {
            out.push_back(m);
        }
    }
    return out;
}

TDBG_DECL std::int64_t step_table::last_step(mode m) const {
    if (m == mode::global) {
        return steps_.empty() ? -1 : steps_.back().first;
    }
    const auto& table = mode_to_global_[mode_index(m)];
    return table.empty() ? -1 : table.back().first;
}

TDBG_DECL std::optional<std::int64_t> step_table::step_after(std::int64_t step) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), step,
                               [](std::int64_t s, const auto& item) { return s < item.first; });
    return it == steps_.end() ? std::nullopt : std::optional<std::int64_t>(it->first);
}

TDBG_DECL step_state step_table::has_passed_step(std::int64_t step, mode m) const {
    // The first known step at or after `step`, as (step in m's numbering, global step).
    std::optional<std::pair<std::int64_t, std::int64_t>> next;
    const auto before = [](const auto& item, std::int64_t s) { return item.first < s; };
    if (m == mode::global) {
        auto it = std::lower_bound(steps_.begin(), steps_.end(), step, before);
        if (it != steps_.end()) {
            next.emplace(it->first, it->first);
        }
    } else {
        const auto& table = mode_to_global_[mode_index(m)];
        auto it = std::lower_bound(table.begin(), table.end(), step, before);
        if (it != table.end()) {
            next.emplace(it->first, it->second);
        }
    }
    if (next) {
        const auto [found, global] = *next;
        if (found > step) {
            // A later step exists; once it is complete and confirmed by a later
            // listing (see confirm), `step` can no longer arrive.
            return confirmed_complete_step_ >= global || ended_ ? step_state::unavailable
                                                                : step_state::not_yet_available;
        }
        return is_complete(global) ? step_state::available : step_state::not_yet_available;
    }
    return ended_ ? step_state::unavailable : step_state::not_yet_available;
}

} // namespace tdbg::detail
