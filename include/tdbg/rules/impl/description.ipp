#pragma once
/// \file
/// Definitions of tdbg/rules/description.hpp.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/rules/description.hpp"

namespace tdbg::rules {

namespace detail {

/// The columns a description's text is wrapped at.
inline constexpr std::size_t description_width = 80;

/// `text`'s words, separated by white space.
inline std::vector<std::string> words_of(std::string_view text) {
    std::vector<std::string> out;
    std::istringstream in{std::string(text)};
    std::string word;
    while (in >> word) {
        out.push_back(word);
    }
    return out;
}

/// `words` as lines of at most `width` columns (a longer word has a line of its own), the
/// first line after `first_indent`, the others after `indent`.
inline void wrap_words(std::string& out, const std::vector<std::string>& words, std::string_view first_indent,
                       std::string_view indent, std::size_t width) {
    std::string line(first_indent);
    bool line_empty = true;
    for (const std::string& word : words) {
        if (!line_empty && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = std::string(indent);
            line_empty = true;
        }
        line += (line_empty ? "" : " ") + word;
        line_empty = false;
    }
    if (!line_empty) {
        out += line + "\n";
    }
}

/// One paragraph of a description wrapped: its lines joined, except that a line starting
/// with "- " starts an item of a list, wrapped under its first word.
inline void wrap_paragraph(std::string& out, std::string_view paragraph, std::size_t width) {
    std::vector<std::string> items(1);
    std::istringstream in{std::string(paragraph)};
    std::string line;
    while (std::getline(in, line)) {
        const auto start = line.find_first_not_of(" \t");
        if (start != std::string::npos && line.compare(start, 2, "- ") == 0 && !items.back().empty()) {
            items.emplace_back();
        }
        items.back() += " " + line;
    }
    for (const std::string& item : items) {
        const auto words = words_of(item);
        const bool listed = !words.empty() && words.front() == "-";
        wrap_words(out, words, "", listed ? "  " : "", width);
    }
}

/// The parameter lines of `description`, `  name=default  meaning`, the meanings aligned.
inline std::string parameter_lines(const rule_description& description) {
    if (description.parameters.empty()) {
        return "  (no parameters)\n";
    }
    std::size_t width = 0;
    for (const parameter_description& p : description.parameters) {
        width = std::max(width, p.name.size() + 1 + p.default_text.size());
    }
    std::string out;
    for (const parameter_description& p : description.parameters) {
        std::string setting = p.name + "=" + p.default_text;
        setting.resize(width, ' ');
        out += "  " + setting + "  " + p.meaning;
        // No trailing blanks when a parameter has no meaning written.
        out.erase(out.find_last_not_of(' ') + 1);
        out += "\n";
    }
    return out;
}

/// The first line of a rule's block: its name, and its summary or "(no description)".
inline std::string summary_line(std::string_view name, const std::optional<rule_description>& description) {
    const bool described = description && !description->summary.empty();
    return std::string(name) + "  " + (described ? description->summary : std::string("(no description)")) + "\n";
}

/// What a range of steps evaluated apart needs of the steps before it (`--describe`).
inline std::string_view overlap_text(step_dependence dependence) {
    switch (dependence) {
    case step_dependence::independent:
        return "Split by steps (--start-step, --end-step): each step is decided by its own values; a range "
               "reads its own steps only, and ranges merged (tdbg rules --merge) give the whole run's verdict.";
    case step_dependence::earlier_steps:
        return "Split by steps (--start-step, --end-step): a step reads earlier steps' values; a range reads the "
               "run from its first step up to the range's end, is evaluated from --start-step, and ranges merged "
               "(tdbg rules --merge) give the whole run's verdict.";
    case step_dependence::carried_state:
        break;
    }
    return "Split by steps (--start-step, --end-step): the rule carries state from step to step; a range is "
           "evaluated from the run's first step and reports its own steps only, so ranges merged (tdbg rules "
           "--merge) give the whole run's verdict, each range reading the run up to its end.";
}

} // namespace detail

TDBG_DECL std::string format_rule_summary(std::string_view name, const std::optional<rule_description>& description) {
    std::string out = detail::summary_line(name, description);
    out += description ? detail::parameter_lines(*description) : std::string("  parameters unknown\n");
    return out;
}

TDBG_DECL std::string format_rule_description(std::string_view name,
                                              const std::optional<rule_description>& description) {
    std::string out = detail::summary_line(name, description);
    if (!description) {
        out += "\nIts class declares no description (a static describe() member, see\n"
               "tdbg/rules/description.hpp): its parameters are unknown.\n";
        return out;
    }
    std::string_view text = description->text;
    while (!text.empty()) {
        const auto end = text.find("\n\n");
        const std::string_view paragraph = text.substr(0, end);
        if (!detail::words_of(paragraph).empty()) {
            out += "\n";
            detail::wrap_paragraph(out, paragraph, detail::description_width);
        }
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 2);
    }
    out += "\n";
    detail::wrap_paragraph(out, detail::overlap_text(description->dependence), detail::description_width);
    out += "\nParameters:\n" + detail::parameter_lines(*description);
    return out;
}

} // namespace tdbg::rules
