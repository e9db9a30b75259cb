#pragma once
// Steps as a person reads them, shared by `tdbg ls` and `tdbg report`: an evenly spaced list
// of steps in a few words.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace tdbg::cli {

/// "0-14 (15 steps)" or "0-35 every 5 (8 steps)" for two or more evenly spaced steps;
/// nothing for fewer steps or uneven ones.
inline std::optional<std::string> describe_progression(const std::vector<std::int64_t>& steps) {
    if (steps.size() < 2) {
        return std::nullopt;
    }
    const std::int64_t stride = steps[1] - steps[0];
    for (std::size_t i = 2; i < steps.size(); ++i) {
        if (steps[i] - steps[i - 1] != stride) {
            return std::nullopt;
        }
    }
    const std::string count = fmt::format(" ({} steps)", steps.size());
    return stride == 1 ? fmt::format("{}-{}{}", steps.front(), steps.back(), count)
                       : fmt::format("{}-{} every {}{}", steps.front(), steps.back(), stride, count);
}

} // namespace tdbg::cli
