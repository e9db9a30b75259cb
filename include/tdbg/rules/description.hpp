#pragma once
/// \file
/// What a rule says of itself: a one-line summary, the whole text, and each
/// parameter with its default and meaning, as `tdbg rules --list` and
/// `tdbg rules --describe NAME` print them. A rule class declares it with a
/// static member, which the registry keeps (registry::describe):
///
///     class large_gradient : public tdbg::rules::rule<large_gradient> {
///     public:
///         static tdbg::rules::rule_description describe() {
///             return {"A gradient's mean |value| is above a threshold.",
///                     "Met at a step when, for some tensor of the gradients collection, ...",
///                     {{"threshold", "20", "the largest mean |value| allowed"}}};
///         }
///         ...
///     };
///
/// The declaration is optional: a rule without one is listed with
/// "(no description)" and its parameters unknown.

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"

namespace tdbg::rules {

/// One parameter of a rule.
struct parameter_description {
    /// Its name, as given in a rule configuration ("threshold").
    std::string name;
    /// Its default, written as it would be given ("1e-07", "True", ".*relu_output");
    /// "None" when it has none (it is then absent, or required, as `meaning` says).
    std::string default_text;
    /// What it means, in one line.
    std::string meaning;
};

/// What a rule checks, and its parameters.
struct rule_description {
    /// One line: the problem the rule finds.
    std::string summary;
    /// The whole text: what it checks and how; paragraphs separated by an empty line.
    std::string text;
    /// Its parameters, in the order worth reading them.
    std::vector<parameter_description> parameters;
};

namespace detail {

template <class T, class = void>
struct has_description : std::false_type {};
template <class T>
struct has_description<T, std::void_t<decltype(rule_description(T::describe()))>> : std::true_type {};

} // namespace detail

/// True when the rule class `Rule` declares `static rule_description describe()`.
template <class Rule>
inline constexpr bool has_description_v = detail::has_description<Rule>::value;

/// `Rule::describe()`, or nullopt when the class declares none.
template <class Rule>
[[nodiscard]] std::optional<rule_description> description_of() {
    if constexpr (has_description_v<Rule>) {
        return rule_description(Rule::describe());
    } else {
        return std::nullopt;
    }
}

/// The block `tdbg rules --list` prints for the rule registered as `name`: the name and
/// the summary on one line (the name at column 0), then one line per parameter,
/// `  name=default  meaning` aligned; "(no description)" and "  parameters unknown" when
/// `description` is nullopt.
[[nodiscard]] TDBG_DECL std::string format_rule_summary(std::string_view name,
                                                        const std::optional<rule_description>& description);

/// What `tdbg rules --describe NAME` prints: the name and summary, the text wrapped at
/// 80 columns, and the parameters as format_rule_summary lists them.
[[nodiscard]] TDBG_DECL std::string format_rule_description(std::string_view name,
                                                            const std::optional<rule_description>& description);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/description.ipp"
#endif
