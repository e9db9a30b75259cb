#pragma once
/// \file
/// Rule results as JUnit XML, the report format CI systems (Jenkins, GitLab,
/// GitHub Actions' test reporters) read: one testsuite for the run, one
/// testcase per rule; a rule whose condition was met is a <failure> listing
/// the triggered steps and why (the first reasons in its message), a rule that
/// could not be evaluated, was stopped, or evaluated no step (NothingEvaluated,
/// with the reason) an <error>.

#include <string>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::rules {

/// The JUnit XML document for `results` of the run `suite_name`
/// (`seconds`: the time the evaluation took, reported on the suite). `allow_empty`: a rule
/// that evaluated nothing was expected to (`tdbg rules --allow-empty`): a <skipped> testcase
/// saying why, not an error.
[[nodiscard]] TDBG_DECL std::string to_junit_xml(const std::vector<evaluation_result>& results,
                                                 const std::string& suite_name, double seconds = 0.0,
                                                 bool allow_empty = false);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/junit.ipp"
#endif
