#pragma once
/// \file
/// Definitions of tdbg/hook/detail/step_clock.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "tdbg/hook/detail/step_clock.hpp"

namespace tdbg::detail {

TDBG_DECL std::vector<std::pair<mode, std::int64_t>> step_clock::known_mode_steps() const {
    std::vector<std::pair<mode, std::int64_t>> out;
    for (std::size_t i = 0; i < known_count_; ++i) {
        out.emplace_back(known_[i], mode_step(known_[i]));
    }
    return out;
}

TDBG_DECL void step_clock::resume(std::int64_t seen, const std::vector<std::pair<mode, std::int64_t>>& modes) noexcept {
    step_.store(seen, std::memory_order_relaxed);
    for (auto& step : mode_steps_) {
        step.store(seen, std::memory_order_relaxed);
    }
    for (const auto& [m, step] : modes) {
        mode_steps_[index(m)].store(step, std::memory_order_relaxed);
        remember(m);
    }
    mode_steps_[index(mode::global)].store(seen, std::memory_order_relaxed);
}

TDBG_DECL void step_clock::begin() noexcept {
    const std::int64_t global = step_.load(std::memory_order_relaxed) + 1;
    const mode m = current();
    step_.store(global, std::memory_order_relaxed);
    mode_steps_[index(m)].store(mode_steps_[index(m)].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (m != mode::global) {
        mode_steps_[index(mode::global)].store(global, std::memory_order_relaxed);
    }
    open_ = true;
}

TDBG_DECL void step_clock::remember(mode m) noexcept {
    const auto known_end = known_.begin() + static_cast<std::ptrdiff_t>(known_count_);
    if (std::find(known_.begin(), known_end, m) == known_end) {
        known_[known_count_++] = m;
    }
}

} // namespace tdbg::detail
