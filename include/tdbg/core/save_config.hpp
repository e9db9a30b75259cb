#pragma once
/// \file
/// smdebug's SaveConfig: which mode steps are saved, per mode.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "tdbg/core/mode.hpp"

namespace tdbg {

/// smdebug's default save_interval.
inline constexpr std::uint64_t default_save_interval = 500;

/// smdebug's SaveConfigMode: the save schedule of one mode.
struct save_config_mode {
    std::uint64_t save_interval = default_save_interval;
    std::vector<std::uint64_t> save_steps;
    std::uint64_t start_step = 0;
    std::optional<std::uint64_t> end_step;

    /// smdebug's rule: a step listed in save_steps is saved whatever the range;
    /// otherwise it is saved when it lies in [start_step, end_step) and is a
    /// multiple of save_interval.
    [[nodiscard]] bool should_save(std::uint64_t mode_step) const noexcept {
        if (std::find(save_steps.begin(), save_steps.end(), mode_step) != save_steps.end()) {
            return true;
        }
        const bool in_range = mode_step >= start_step && (!end_step || mode_step < *end_step);
        return in_range && save_interval != 0 && mode_step % save_interval == 0;
    }

    friend bool operator==(const save_config_mode& a, const save_config_mode& b) {
        return a.save_interval == b.save_interval && a.save_steps == b.save_steps && a.start_step == b.start_step &&
               a.end_step == b.end_step;
    }
    friend bool operator!=(const save_config_mode& a, const save_config_mode& b) { return !(a == b); }
};

/// smdebug's SaveConfig: a schedule per mode; a mode without one (null in the
/// collection file) falls back to the hook's default.
class save_config {
public:
    save_config() = default;
    /// The same schedule for every mode.
    explicit save_config(const save_config_mode& every_mode) {
        for (auto& m : modes_) {
            m = every_mode;
        }
    }

    /// The schedule for `m`, if one is set.
    [[nodiscard]] const std::optional<save_config_mode>& get(mode m) const noexcept { return modes_[index(m)]; }
    /// Sets (or, with nullopt, clears) the schedule for `m`.
    save_config& set(mode m, std::optional<save_config_mode> config) {
        modes_[index(m)] = std::move(config);
        return *this;
    }
    /// Fills every mode that has no schedule from `defaults` (smdebug's merge_default_save_config).
    void merge_defaults(const save_config& defaults) {
        for (std::size_t i = 0; i < modes_.size(); ++i) {
            if (!modes_[i]) {
                modes_[i] = defaults.modes_[i];
            }
        }
    }
    /// True when `mode_step` of `m` is saved; false when `m` has no schedule.
    [[nodiscard]] bool should_save(mode m, std::uint64_t mode_step) const noexcept {
        const auto& config = get(m);
        return config && config->should_save(mode_step);
    }

    friend bool operator==(const save_config& a, const save_config& b) { return a.modes_ == b.modes_; }
    friend bool operator!=(const save_config& a, const save_config& b) { return !(a == b); }

private:
    static std::size_t index(mode m) noexcept { return static_cast<std::size_t>(m) - 1; }
    std::array<std::optional<save_config_mode>, 4> modes_{};
};

} // namespace tdbg
