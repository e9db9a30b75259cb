#pragma once
/// \file
/// One run's evaluation split by steps, merged: each part evaluates the same rules over a range
/// of global steps A..B (`tdbg rules RUN --start-step A --end-step B --json -o part.json`, a
/// task of a Slurm array each), and the merge gives the verdict of one process evaluating every
/// step (`tdbg rules --merge part*.json`):
///
///     std::vector<tdbg::rules::rules_part> parts;
///     for (const std::string& file : files) {
///         parts.push_back(tdbg::rules::read_rules_part(tdbg::format::parse_json(text_of(file), file), file));
///     }
///     const auto whole = tdbg::rules::merge_parts(std::move(parts), tdbg::rules::registry::dependence);
///
/// The merge is exact for rules whose steps are independent; for the others when each part was
/// evaluated as the rule's step_dependence says (tdbg/rules/description.hpp; the command line
/// does): a rule that reads earlier steps finds them in its part's trial, a rule that carries
/// state is evaluated from the run's first step and reports its part's steps only. The steps of
/// the parts are unioned, the comparisons added; the parts must not overlap. The steps between
/// a part's last step and the next part's first, which neither looked at, were never saved (a
/// part whose range has no more steps ends there): they are recorded as one process records
/// them, StepUnavailable and unsaved.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::rules {

/// One part: an "smdebug-rules/1" document read back.
struct rules_part {
    /// Where it came from (a file name), for messages.
    std::string origin;
    /// The trial evaluated.
    std::string trial_name;
    /// The steps it was invoked with.
    invoke_record invoked;
    /// Its results, one per rule, in the order the rules were given.
    std::vector<evaluation_result> results;
};

/// One entry of a document's "results" read back (what to_json wrote); format_error naming
/// `origin` and the member for one that is not.
[[nodiscard]] TDBG_DECL evaluation_result result_from_json(const format::json_value& j, std::string_view origin);

/// An "smdebug-rules/1" document read back; format_error naming `origin` for one that is not.
[[nodiscard]] TDBG_DECL rules_part read_rules_part(const format::json_value& doc, std::string origin);

/// The evaluations of one rule over ranges of steps that do not overlap, merged (see the file
/// comment); config_error when they are not of one rule and configuration. What the rule
/// compared is added; its text is the last range's for a rule that carries state (counted from
/// the run's first step), else each range's.
[[nodiscard]] TDBG_DECL evaluation_result merge_results(std::vector<evaluation_result> parts,
                                                        step_dependence dependence = step_dependence::carried_state);

/// The parts of one run merged: its rules' results each merged, invoked from the first part's
/// start to the last one's end, each rule's step_dependence from `dependence_of` (none: carried
/// state; registry::dependence knows the registered rules'). config_error, naming the parts, when
/// they are of different trials or rules, or when their ranges overlap.
[[nodiscard]] TDBG_DECL rules_part merge_parts(
    std::vector<rules_part> parts, const std::function<step_dependence(std::string_view rule)>& dependence_of = {});

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/merge.ipp"
#endif
