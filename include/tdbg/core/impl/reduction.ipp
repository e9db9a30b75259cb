#pragma once
/// \file
/// Definitions of tdbg/core/reduction.hpp.

#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"

namespace tdbg {

TDBG_DECL std::vector<std::string_view> split_list(std::string_view text) {
    std::vector<std::string_view> items;
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        std::string_view item = text.substr(start, comma - start);
        while (!item.empty() && blank(item.front())) {
            item.remove_prefix(1);
        }
        while (!item.empty() && blank(item.back())) {
            item.remove_suffix(1);
        }
        if (!item.empty()) {
            items.push_back(item);
        }
        start = comma + 1;
    }
    return items;
}

TDBG_DECL std::vector<reduction> parse_reduction_list(std::string_view text) {
    std::vector<reduction> out;
    for (const std::string_view item : split_list(text)) {
        const auto r = parse_reduction(item);
        if (!r) {
            throw config_error(fmt::format("unknown reduction '{}' in '{}': expected min, max, mean, std, variance, "
                                           "sum, prod, l1_norm or l2_norm, each optionally prefixed with abs_",
                                           item, text));
        }
        out.push_back(*r);
    }
    return out;
}

} // namespace tdbg
