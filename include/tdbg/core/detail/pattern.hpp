#pragma once
/// \file
/// A regular expression as a user wrote it (a collection's include regex, a
/// rule's tensor_regex), compiled once with PCRE2 (core/detail/impl/pattern.ipp).
/// The syntax is Python's `re` (PCRE2 reads it), and matching is `re.search`:
/// the pattern may match anywhere in the name.

#include <memory>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"

namespace tdbg::detail {

class compiled_pattern;

/// A compiled regular expression; copies share the compiled form.
class pattern {
public:
    /// Compiles `text`; throws config_error saying where it came from (`origin`,
    /// e.g. "collection 'weights'") when it does not compile.
    TDBG_DECL pattern(std::string text, std::string_view origin);

    /// The pattern as written.
    [[nodiscard]] const std::string& text() const noexcept { return text_; }
    /// True when the pattern matches somewhere in `subject`. Throws config_error
    /// when the match exceeds PCRE2's limits (a pattern that backtracks without end).
    [[nodiscard]] TDBG_DECL bool search(std::string_view subject) const;

private:
    std::string text_;
    std::shared_ptr<const compiled_pattern> compiled_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/core/detail/impl/pattern.ipp"
#endif
