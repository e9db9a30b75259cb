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

#include "tdbg/config.hpp"
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
    TDBG_DECL void add(std::int64_t step, mode m, std::int64_t mode_step, worker_id worker);

    /// Records that `worker` wrote global step `step`, already known from another worker's
    /// index file (trial_options::first_worker_only: a file counted, not read). Returns false,
    /// recording nothing, when the step is not known.
    TDBG_DECL bool add_worker(std::int64_t step, worker_id worker);

    /// smdebug's INCOMPLETE_STEP_WAIT_WINDOW: when more than `window` steps
    /// after the last complete one wait for a worker, the older half of them
    /// is declared complete, so that one dead worker cannot stall a reader forever.
    TDBG_DECL void apply_wait_window(std::size_t window);

    /// The run has ended and every step has been read: all steps are final.
    TDBG_DECL void mark_ended() noexcept;
    [[nodiscard]] bool ended() const noexcept { return ended_; }
    /// Steps up to `step` were complete in a listing that ended before the
    /// latest one began: a step missing before them can no longer arrive.
    void confirm(std::int64_t step) noexcept { confirmed_complete_step_ = std::max(confirmed_complete_step_, step); }
    /// The greatest step every worker has written (or declared complete), -1 if none.
    [[nodiscard]] std::int64_t last_complete_step() const noexcept { return last_complete_step_; }

    /// True when global step `step` is known and complete.
    [[nodiscard]] TDBG_DECL bool is_complete(std::int64_t step) const;

    /// is_complete for a step known to be in the table (one a tensor entry names): no lookup
    /// unless the step is after the last complete one of a run that has not ended.
    [[nodiscard]] bool is_complete_known(std::int64_t step) const {
        return ended_ || step <= last_complete_step_ || is_complete(step);
    }

    /// The global step's record, if the step is known.
    [[nodiscard]] TDBG_DECL const step_info* find(std::int64_t step) const;

    /// The global step of (`m`, `mode_step`); for mode::global the step itself.
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> global_step(mode m, std::int64_t mode_step) const;

    /// The steps of `m` (mode steps; global steps for mode::global), sorted.
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> steps(mode m, bool show_incomplete) const;

    /// The modes that have at least one step (never mode::global), in smdebug's order.
    [[nodiscard]] TDBG_DECL std::vector<mode> modes() const;

    /// The last step of `m` seen (complete or not), -1 if none.
    [[nodiscard]] TDBG_DECL std::int64_t last_step(mode m) const;

    /// The first global step greater than `step`, if any.
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> step_after(std::int64_t step) const;

    /// smdebug's has_passed_step on what is loaded now (the caller refreshes first).
    [[nodiscard]] TDBG_DECL step_state has_passed_step(std::int64_t step, mode m) const;

private:
    // Adds `worker` to the workers of `step` (`info`), which may make it the last complete step.
    TDBG_DECL void note_worker(std::int64_t step, step_info& info, worker_id worker);

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

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/step_table.ipp"
#endif
