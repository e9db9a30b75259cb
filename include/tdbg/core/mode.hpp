#pragma once
/// \file
/// Training modes, numbered as smdebug numbers them on disk.

#include <array>
#include <optional>
#include <string_view>

#include "tdbg/core/error.hpp"

namespace tdbg {

/// smdebug's ModeKeys. The values are the ones written in event metadata.
enum class mode : int { train = 1, eval = 2, predict = 3, global = 4 };

/// Every mode, in smdebug's order.
inline constexpr std::array<mode, 4> all_modes{mode::train, mode::eval, mode::predict, mode::global};

/// "TRAIN", "EVAL", "PREDICT" or "GLOBAL", as written in index and collection files.
[[nodiscard]] constexpr std::string_view mode_name(mode m) noexcept {
    switch (m) {
    case mode::train: return "TRAIN";
    case mode::eval: return "EVAL";
    case mode::predict: return "PREDICT";
    case mode::global: return "GLOBAL";
    }
    return "GLOBAL";
}

/// The mode named `name` ("TRAIN", "train", "ModeKeys.TRAIN", ...), if any.
[[nodiscard]] inline std::optional<mode> try_parse_mode(std::string_view name) noexcept {
    constexpr std::string_view prefix = "ModeKeys.";
    if (name.substr(0, prefix.size()) == prefix) {
        name.remove_prefix(prefix.size());
    }
    for (mode m : all_modes) {
        const std::string_view want = mode_name(m);
        if (want.size() != name.size()) {
            continue;
        }
        bool same = true;
        for (std::size_t i = 0; i < want.size() && same; ++i) {
            const char c = name[i];
            same = (c == want[i]) || (c >= 'a' && c <= 'z' && static_cast<char>(c - 'a' + 'A') == want[i]);
        }
        if (same) {
            return m;
        }
    }
    return std::nullopt;
}

/// Like try_parse_mode, but throws config_error naming the bad text.
[[nodiscard]] inline mode parse_mode(std::string_view name) {
    if (auto m = try_parse_mode(name)) {
        return *m;
    }
    throw config_error("unknown mode '" + std::string(name) + "' (expected TRAIN, EVAL, PREDICT or GLOBAL)");
}

/// The mode for smdebug's on-disk number (1..4).
[[nodiscard]] inline std::optional<mode> mode_from_int(long long value) noexcept {
    if (value >= 1 && value <= 4) {
        return static_cast<mode>(value);
    }
    return std::nullopt;
}

} // namespace tdbg
