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

/// What a rule's verdict at a step depends on besides the step's own values: what an
/// evaluation of a range of steps A..B apart from the rest of the run needs (`tdbg rules
/// --start-step A --end-step B`, a part of a run split across machines and merged by
/// tdbg/rules/merge.hpp), so that the parts merged give one process's verdict.
enum class step_dependence {
    /// Each step is decided by its own values: the range reads steps A..B only.
    independent,
    /// A step reads values of earlier steps (a window, a pair of steps): the range's trial
    /// holds the run's steps from its first, the evaluation starts at A.
    earlier_steps,
    /// The rule carries state from step to step (a lowest loss, a patience, counts): the
    /// evaluation starts at the run's first step and reports only A..B. What a rule that
    /// says nothing is taken to do.
    carried_state
};

/// "independent", "earlier_steps" or "carried_state".
[[nodiscard]] constexpr std::string_view step_dependence_name(step_dependence d) noexcept {
    switch (d) {
    case step_dependence::independent: return "independent";
    case step_dependence::earlier_steps: return "earlier_steps";
    case step_dependence::carried_state: return "carried_state";
    }
    return "carried_state";
}

/// Which workers' values a rule reads.
enum class worker_reads {
    /// Any worker's (each worker's value, a worker it names): the run's every worker is read.
    /// What a rule that says nothing is taken to do.
    every_worker,
    /// Only a tensor's value without a worker named: at each step, the first worker in sorted
    /// order that saved it (as smdebug's lookups). `tdbg rules` then reads each step's first
    /// worker's index file only (trial_options::first_worker_only).
    first_worker
};

/// What a rule checks, and its parameters.
struct rule_description {
    /// One line: the problem the rule finds.
    std::string summary;
    /// The whole text: what it checks and how; paragraphs separated by an empty line.
    std::string text;
    /// Its parameters, in the order worth reading them.
    std::vector<parameter_description> parameters;
    /// What a step's verdict depends on besides the step's values (the overlap a range of
    /// steps evaluated apart needs); carried_state, which is always exact, unless it says.
    step_dependence dependence = step_dependence::carried_state;
    /// Which workers' values it reads; every_worker, which is always exact, unless it says.
    worker_reads workers = worker_reads::every_worker;
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
