#pragma once
/// \file
/// "Did you mean ...?": the edit distance between two names and the known name
/// nearest to a misspelt one, for messages about a name nothing has (a collection,
/// a rule, a parameter).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace tdbg::detail {

/// Two bytes equal but for the case of ASCII letters.
struct equal_ignoring_case {
    [[nodiscard]] bool operator()(char x, char y) const noexcept {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        return lower(x) == lower(y);
    }
};

/// The optimal string alignment distance between `a` and `b`: the fewest insertions,
/// deletions, substitutions and swaps of two adjacent bytes that turn one into the other
/// ("gradient" -> "gradients": 1, "wieghts" -> "weights": 1); bytes compared with `equal`.
template <class Equal = std::equal_to<char>>
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b, Equal equal = {}) {
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
            const std::size_t substitution = previous[j - 1] + (equal(a[i - 1], b[j - 1]) ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
            if (i > 1 && j > 1 && equal(a[i - 1], b[j - 2]) && equal(a[i - 2], b[j - 1])) {
                current[j] = std::min(current[j], before[j - 2] + 1);
            }
        }
        before.swap(previous);
        previous.swap(current);
    }
    return previous[b.size()];
}

/// The fewest edits (insertions, deletions, substitutions) that turn `pattern` into some
/// part of `text`, bytes compared with `equal` ("relu_output" is 3 edits from "layer1/relu_out").
template <class Equal = std::equal_to<char>>
[[nodiscard]] std::size_t substring_edit_distance(std::string_view pattern, std::string_view text, Equal equal = {}) {
    // As edit_distance, with the pattern free to start anywhere in the text (a first row
    // of zeros) and to end anywhere (the smallest of the last row).
    std::vector<std::size_t> row(text.size() + 1, 0);
    for (std::size_t i = 1; i <= pattern.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= text.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (equal(pattern[i - 1], text[j - 1]) ? 0 : 1)});
            diagonal = above;
        }
    }
    return *std::min_element(row.begin(), row.end());
}

/// Up to `limit` of `candidates` (a range of strings or string views) whose `distance` from
/// `wanted` is at most `max_distance`, nearest first, ties in their order.
template <class Names, class Distance>
[[nodiscard]] std::vector<std::string> nearest_names(std::string_view wanted, const Names& candidates, std::size_t limit,
                                                     std::size_t max_distance, Distance distance) {
    // The nearest `limit` so far, nearest first: each name goes after those as near as it (ties
    // keep their order), so no sort of all the near names is needed.
    std::vector<std::pair<std::size_t, std::string_view>> nearest;
    for (const auto& candidate : candidates) {
        const std::string_view c(candidate);
        const std::size_t d = distance(wanted, c);
        if (d > max_distance) {
            continue;
        }
        const auto at = std::find_if(nearest.begin(), nearest.end(), [d](const auto& n) { return n.first > d; });
        if (static_cast<std::size_t>(at - nearest.begin()) < limit) {
            nearest.emplace(at, d, c);
            if (nearest.size() > limit) {
                nearest.pop_back();
            }
        }
    }
    std::vector<std::string> out;
    out.reserve(nearest.size());
    for (const auto& n : nearest) {
        out.emplace_back(n.second);
    }
    return out;
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
