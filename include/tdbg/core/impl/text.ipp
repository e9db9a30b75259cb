#pragma once
/// \file
/// Definitions of tdbg/core/text.hpp.

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/core/detail/markup.hpp"
#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/text.hpp"

namespace tdbg {

TDBG_DECL std::string terminal_safe(std::string_view text) { return detail::terminal_safe(text); }

TDBG_DECL std::string markup_escape(std::string_view text) { return detail::markup_escape(text); }

TDBG_DECL std::string regex_literal(std::string_view regex) {
    std::string out;
    for (std::size_t i = 0; i < regex.size(); ++i) {
        const char c = regex[i];
        if (c == '\\' && i + 1 < regex.size()) {
            const char next = regex[++i];
            if (std::ispunct(static_cast<unsigned char>(next)) != 0) {
                out.push_back(next); // an escaped character stands for itself; \d, \w... for nothing
            }
        } else if (std::string_view("^$.*+?()[]{}|").find(c) == std::string_view::npos) {
            out.push_back(c);
        }
    }
    return out;
}

TDBG_DECL std::vector<std::string> nearest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                                 bool substring, std::size_t limit) {
    if (wanted.empty()) {
        return {};
    }
    const std::size_t within = std::max<std::size_t>(2, wanted.size() / 3);
    return detail::nearest_names(wanted, candidates, limit, within, [substring](std::string_view w, std::string_view c) {
        return substring ? detail::substring_edit_distance(w, c, detail::equal_ignoring_case{})
                         : detail::edit_distance(w, c, detail::equal_ignoring_case{});
    });
}

TDBG_DECL std::string shape_text(const std::vector<std::size_t>& shape, shape_style style) {
    std::string out(1, style == shape_style::list ? '[' : '(');
    for (std::size_t i = 0; i < shape.size(); ++i) {
        out += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
    }
    if (style == shape_style::tuple && shape.size() == 1) {
        out += ',';
    }
    out += style == shape_style::list ? ']' : ')';
    return out;
}

} // namespace tdbg
