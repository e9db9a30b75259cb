#pragma once
/// \file
/// The hook's step clock: the global step, the current mode and each mode's step, as smdebug's
/// _increment_step and set_mode keep them, and the state a resumed job goes on from. It decides
/// no saving: which collections save at the clock's step is the selection's
/// (hook/detail/collection_selection.hpp).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"

namespace tdbg::detail {

/// The global step and each mode's step: every counter starts at -1 (a resumed job's at the last
/// step seen); begin() advances the global step and the current mode's, and GLOBAL's follows the
/// global step. The hook's calls change it one at a time (call_gate.hpp); the counters and the
/// mode are atomics, so the hook's getters (global_step(), mode_step(), current_mode()) may read
/// them from any thread at any time, getting the value of a recent call.
class step_clock {
public:
    [[nodiscard]] mode current() const noexcept { return mode_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::int64_t global() const noexcept { return step_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::int64_t mode_step(mode m) const noexcept {
        return mode_steps_[index(m)].load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::int64_t mode_step() const noexcept { return mode_step(current()); }
    /// True between begin() and end().
    [[nodiscard]] bool open() const noexcept { return open_; }

    /// The modes met so far, GLOBAL first, in the order smdebug's mode_steps dict keeps them.
    [[nodiscard]] TDBG_DECL std::vector<std::pair<mode, std::int64_t>> known_mode_steps() const;

    /// Makes `m` the current mode (the step it counts goes on from where it was).
    void set_mode(mode m) noexcept {
        mode_.store(m, std::memory_order_relaxed);
        remember(m);
    }

    /// Goes on from a saved state (smdebug's _initialize_to_last_saved_state): the global step is
    /// `seen`, each listed mode's step its own, and a mode met later starts at `seen` (smdebug's
    /// set_mode gives it init_step).
    TDBG_DECL void resume(std::int64_t seen, const std::vector<std::pair<mode, std::int64_t>>& modes) noexcept;

    /// Opens the next step.
    TDBG_DECL void begin() noexcept;

    /// Closes the step; false when none was open.
    bool end() noexcept { return std::exchange(open_, false); }

private:
    static std::size_t index(mode m) noexcept { return static_cast<std::size_t>(m) - 1; }

    TDBG_DECL void remember(mode m) noexcept;

    std::atomic<mode> mode_{mode::global};
    std::array<mode, 4> known_{mode::global, mode::global, mode::global, mode::global};
    std::size_t known_count_ = 1;
    std::atomic<std::int64_t> step_{-1};
    std::array<std::atomic<std::int64_t>, 4> mode_steps_{-1, -1, -1, -1};
    bool open_ = false;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/step_clock.ipp"
#endif
