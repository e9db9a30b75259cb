#pragma once
/// \file
/// "Did you mean ...?": the edit distance between two names and the known name
/// nearest to a misspelt one, for messages about a name nothing has (a collection,
/// a rule, a parameter).

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdbg::detail {

/// The optimal string alignment distance between `a` and `b`: the fewest insertions,
/// deletions, substitutions and swaps of two adjacent bytes that turn one into the other
/// ("gradient" -> "gradients": 1, "wieghts" -> "weights": 1).
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Three rows of the dynamic programme: two before this one (for swaps) and this one.
    std::vector<std::size_t> before(b.size() + 1);
    std::vector<std::size_t> previous(b.size() + 1);
    std::vector<std::size_t> current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        previous[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                current[j] = std::min(current[j], before[j - 2] + 1);
            }
        }
        before.swap(previous);
        previous.swap(current);
    }
    return previous[b.size()];
}

/// The most edits a name is taken to be a misspelling of another by: a third of its
/// length rounded up, at least 1 ("gradient" may be 3 edits from what was meant, "loss" 2, "lr" 1).
[[nodiscard]] inline std::size_t misspelling_distance(std::string_view name) noexcept {
    return std::max<std::size_t>(1, (name.size() + 2) / 3);
}

/// Among `candidates` (a range of strings or string views), the one nearest to `name` by
/// edit_distance, the first in order on a tie; nullopt when none is within `max_distance`
/// edits, or when `name` itself is among them.
template <class Names>
[[nodiscard]] std::optional<std::string> nearest_name(std::string_view name, const Names& candidates,
                                                      std::size_t max_distance) {
    std::optional<std::string> best;
    std::size_t best_distance = max_distance + 1;
    for (const auto& candidate : candidates) {
        const std::string_view c(candidate);
        const std::size_t d = edit_distance(name, c);
        if (d == 0) {
            return std::nullopt;
        }
        if (d < best_distance) {
            best_distance = d;
            best = std::string(c);
        }
    }
    return best;
}

/// nearest_name within misspelling_distance(name).
template <class Names>
[[nodiscard]] std::optional<std::string> nearest_name(std::string_view name, const Names& candidates) {
    return nearest_name(name, candidates, misspelling_distance(name));
}

} // namespace tdbg::detail
