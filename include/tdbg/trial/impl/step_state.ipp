#pragma once
/// \file
/// Definitions of tdbg/trial/step_state.hpp.

#include <cstdint>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/trial/step_state.hpp"

namespace tdbg {

TDBG_DECL void step_range::validate() const {
    const auto show = [](const std::optional<std::int64_t>& bound) {
        return bound ? std::to_string(*bound) : std::string("None");
    };
    if ((begin && *begin < 0) || (end && *end < 0)) {
        throw config_error(fmt::format("range_steps: bounds must be >= 0, got [{}, {})", show(begin), show(end)));
    }
    if (begin && end && *begin >= *end) {
        throw config_error(fmt::format("range_steps: begin must be less than end, got [{}, {})", show(begin), show(end)));
    }
}

} // namespace tdbg
