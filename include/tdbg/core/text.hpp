#pragma once
/// \file
/// Text read from a run (tensor, collection and worker names, messages that quote them) made
/// fit to show: on a terminal (terminal_safe), in XML or HTML (markup_escape); and the names
/// a misspelt one may have been meant for, for "did you mean ...?" (nearest_names,
/// regex_literal).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"

namespace tdbg {

/// `text` as it may be printed for a person (a terminal, a log): C0 control bytes, DEL, the C1
/// controls U+0080..U+009F, the bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
/// U+2066..U+2069) and bytes that are not UTF-8 become \\xNN escapes, a byte each, so that a
/// name read from a run cannot move the cursor, rewrite a line, ring the bell or reverse the
/// text after it. Everything else, UTF-8 characters included, is kept as it is.
[[nodiscard]] TDBG_DECL std::string terminal_safe(std::string_view text);

/// `text` fit for XML and HTML character data and quoted attribute values: & < > " ' as
/// character references, and every character XML 1.0 cannot hold as U+FFFD (the C0 control
/// characters but tab, newline and carriage return, the noncharacters U+FFFE and U+FFFF, and
/// each byte that does not begin a valid UTF-8 character). Everything else is kept as it is.
[[nodiscard]] TDBG_DECL std::string markup_escape(std::string_view text);

/// Up to `limit` of `candidates` close to `wanted`, nearest first, ties in their order: within
/// a third of its length (at least 2) edits, letters compared ignoring their case; `substring`:
/// compared with any part of a candidate ("relu_out" is near "layer1/relu_output"). None when
/// `wanted` is empty.
[[nodiscard]] TDBG_DECL std::vector<std::string> nearest_names(std::string_view wanted,
                                                               const std::vector<std::string>& candidates,
                                                               bool substring, std::size_t limit = 3);

/// The literal text of a regex: anchors, wildcards, groups and classes left out
/// (".*relu_output$" gives "relu_output"), to compare with names (nearest_names).
[[nodiscard]] TDBG_DECL std::string regex_literal(std::string_view regex);

/// How shape_text writes a shape.
enum class shape_style {
    list,  ///< "[3, 4]", "[]": as the command line and the reports show shapes
    tuple, ///< "(3, 4)", "(3,)", "()": as Python and numpy write them
};

/// A tensor's shape as text, for a person.
[[nodiscard]] TDBG_DECL std::string shape_text(const std::vector<std::size_t>& shape,
                                               shape_style style = shape_style::list);

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/text.ipp"
#endif
