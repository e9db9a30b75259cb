#pragma once
/// \file
/// A trial's bookkeeping of global steps: their mode and mode step, which
/// workers have written them, and smdebug's completeness rule across workers.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/trial/step_state.hpp"

namespace tdbg::detail {

/// A worker, numbered in the order the trial met it.
using worker_id = std::uint32_t;

/// Global steps seen so far, and when each becomes complete. A step is
/// complete when every worker has written it, when a later step is complete
/// (a lagging worker skipped it), or when the run has ended.
class step_table {
public:
    /// One global step.
    struct step_info {
        mode step_mode = mode::global;
        std::int64_t mode_step = 0;
        std::vector<worker_id> workers; // sorted, unique
    };

    /// The number of workers a step needs to be complete (at least 1).
    void set_num_workers(std::size_t n) noexcept { num_workers_ = n == 0 ? 1 : n; }
    [[nodiscard]] std::size_t num_workers() const noexcept { return num_workers_; }

    /// Records that `worker` wrote global step `step` as (`m`, `mode_step`).
    /// The first (mode, mode step) recorded for a step wins, as in smdebug.
    void add(std::int64_t step, mode m, std::int64_t mode_step, worker_id worker) {
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
        step_info& info = pos->second;
        auto w = std::lower_bound(info.workers.begin(), info.workers.end(), worker);
        if (w == info.workers.end() || *w != worker) {
            info.workers.insert(w, worker);
        }
        if (info.workers.size() >= num_workers_ && step > last_complete_step_) {
            last_complete_step_ = step;
        }
    }

    /// smdebug's INCOMPLETE_STEP_WAIT_WINDOW: when more than `window` steps
    /// after the last complete one wait for a worker, the older half of them
    /// is declared complete, so that one dead worker cannot stall a reader forever.
    void apply_wait_window(std::size_t window) {
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

    /// The run has ended and every step has been read: all steps are final.
    void mark_ended() noexcept {
        ended_ = true;
        if (!steps_.empty()) {
            last_complete_step_ = std::max(last_complete_step_, steps_.back().first);
        }
    }
    [[nodiscard]] bool ended() const noexcept { return ended_; }
    /// Steps up to `step` were complete in a listing that ended before the
    /// latest one began: a step missing before them can no longer arrive.
    void confirm(std::int64_t step) noexcept { confirmed_complete_step_ = std::max(confirmed_complete_step_, step); }
    /// The greatest step every worker has written (or declared complete), -1 if none.
    [[nodiscard]] std::int64_t last_complete_step() const noexcept { return last_complete_step_; }

    /// True when global step `step` is known and complete.
    [[nodiscard]] bool is_complete(std::int64_t step) const {
        const step_info* info = find(step);
        return info != nullptr && is_complete(step, *info);
    }

    /// The global step's record, if the step is known.
    [[nodiscard]] const step_info* find(std::int64_t step) const {
        auto it = std::lower_bound(steps_.begin(), steps_.end(), step,
                                   [](const auto& item, std::int64_t s) { return item.first < s; });
        return it == steps_.end() || it->first != step ? nullptr : &it->second;
    }

    /// The global step of (`m`, `mode_step`); for mode::global the step itself.
    [[nodiscard]] std::optional<std::int64_t> global_step(mode m, std::int64_t mode_step) const {
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

    /// The steps of `m` (mode steps; global steps for mode::global), sorted.
    [[nodiscard]] std::vector<std::int64_t> steps(mode m, bool show_incomplete) const {
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

    /// The modes that have at least one step (never mode::global), in smdebug's order.
    [[nodiscard]] std::vector<mode> modes() const {
        std::vector<mode> out;
        for (mode m : {mode::train, mode::eval, mode::predict}) {
            if (!mode_to_global_[mode_index(m)].empty()) {
                out.push_back(m);
            }
        }
        return out;
    }

    /// The last step of `m` seen (complete or not), -1 if none.
    [[nodiscard]] std::int64_t last_step(mode m) const {
        if (m == mode::global) {
            return steps_.empty() ? -1 : steps_.back().first;
        }
        const auto& table = mode_to_global_[mode_index(m)];
        return table.empty() ? -1 : table.back().first;
    }

    /// The first global step greater than `step`, if any.
    [[nodiscard]] std::optional<std::int64_t> step_after(std::int64_t step) const {
        auto it = std::upper_bound(steps_.begin(), steps_.end(), step,
                                   [](std::int64_t s, const auto& item) { return s < item.first; });
        return it == steps_.end() ? std::nullopt : std::optional<std::int64_t>(it->first);
    }

    /// smdebug's has_passed_step on what is loaded now (the caller refreshes first).
    [[nodiscard]] step_state has_passed_step(std::int64_t step, mode m) const {
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

private:
    static std::size_t mode_index(mode m) noexcept { return static_cast<std::size_t>(m) - 1; }

    [[nodiscard]] bool is_complete(std::int64_t step, const step_info& info) const noexcept {
        return ended_ || step <= last_complete_step_ || info.workers.size() >= num_workers_;
    }

    // Sorted by step; flat, because steps arrive in order and lookups dominate.
    std::vector<std::pair<std::int64_t, step_info>> steps_;
    // Mode step -> global step for train, eval and predict (index 3, global, stays empty), sorted.
    std::array<std::vector<std::pair<std::int64_t, std::int64_t>>, 4> mode_to_global_{};
    std::size_t num_workers_ = 1;
    std::int64_t last_complete_step_ = -1;
    std::int64_t confirmed_complete_step_ = -1;
    bool ended_ = false;
};

} // namespace tdbg::detail
