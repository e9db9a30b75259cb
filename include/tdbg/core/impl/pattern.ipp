#pragma once
/// \file
/// Definitions of tdbg/core/detail/pattern.hpp.

#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg::detail {

class compiled_pattern {
public:
    explicit compiled_pattern(const std::string& text) : regex_(text, std::regex::ECMAScript | std::regex::optimize) {}
    [[nodiscard]] bool search(std::string_view subject) const {
        return std::regex_search(subject.begin(), subject.end(), regex_);
    }

private:
    std::regex regex_;
};

TDBG_DECL pattern::pattern(std::string text, std::string_view origin) : text_(std::move(text)) {
    try {
        compiled_ = std::make_shared<const compiled_pattern>(text_);
    } catch (const std::regex_error& e) {
        throw config_error(fmt::format("{}: bad regex '{}': {} (tdbg uses ECMAScript regexes: no lookbehind, no "
                                       "(?P<name>...))",
                                       origin, text_, e.what()));
    }
}

TDBG_DECL bool pattern::search(std::string_view subject) const { return compiled_->search(subject); }

} // namespace tdbg::detail
