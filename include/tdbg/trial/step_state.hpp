#pragma once
/// \file
/// The vocabulary of a trial's steps: whether a step has passed
/// (smdebug's StepState) and the range of steps a trial loads.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"

namespace tdbg {

/// smdebug's StepState: what a trial knows about a step right now.
enum class step_state {
    unavailable,      ///< the step was not saved and never will be
    available,        ///< every worker has written it (or it can no longer change)
    not_yet_available ///< it may still arrive: the run is live
};

/// "UNAVAILABLE", "AVAILABLE" or "NOT_YET_AVAILABLE", as smdebug prints them.
[[nodiscard]] constexpr std::string_view step_state_name(step_state s) noexcept {
    switch (s) {
    case step_state::unavailable: return "UNAVAILABLE";
    case step_state::available: return "AVAILABLE";
    case step_state::not_yet_available: return "NOT_YET_AVAILABLE";
    }
    return "UNAVAILABLE";
}

/// smdebug's range_steps: the global steps [begin, end) a trial loads; an
/// absent bound is open. The default loads every step.
struct step_range {
    std::optional<std::int64_t> begin;
    std::optional<std::int64_t> end;

    /// Throws config_error unless both bounds are >= 0 and begin < end.
    TDBG_DECL void validate() const;

    /// True when global step `step` is inside the range.
    [[nodiscard]] constexpr bool contains(std::int64_t step) const noexcept {
        return (!begin || step >= *begin) && (!end || step < *end);
    }
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/trial/impl/step_state.ipp"
#endif
