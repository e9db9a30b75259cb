#pragma once
/// \file
/// SageMaker's `DebugRuleConfigurations`: which rules to run and with what
/// parameters, as the CreateTrainingJob request spells it:
///
///     [{"RuleConfigurationName": "VGRule",
///       "RuleEvaluatorImage": "...", "InstanceType": "ml.t3.medium", "VolumeSizeInGB": 30,
///       "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "20.0"}}]
///
/// Accepted: that array, an object holding it under "DebugRuleConfigurations"
/// (a whole request), or a single configuration object. Each configuration
/// needs RuleParameters.rule_to_invoke; RuleConfigurationName defaults to it.
/// The other SageMaker keys (RuleEvaluatorImage, InstanceType, VolumeSizeInGB,
/// LocalPath, S3OutputPath) are accepted and ignored; any other key is an
/// error (a misspelt key should not be silently dropped). Parameter values are
/// strings, as SageMaker requires; numbers and booleans are taken as their
/// JSON text for convenience.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"

namespace tdbg::rules {

/// One entry of DebugRuleConfigurations.
struct rule_configuration {
    /// RuleConfigurationName: the name results and reports use.
    std::string configuration_name;
    /// RuleParameters.rule_to_invoke: the registered rule to build.
    std::string rule_to_invoke;
    /// The other RuleParameters, as strings.
    std::map<std::string, std::string> parameters;
};

/// Parses DebugRuleConfigurations from `json`; `source` names it in errors.
/// Throws config_error naming the entry and the problem.
[[nodiscard]] TDBG_DECL std::vector<rule_configuration>
parse_rule_configurations(std::string_view json, const std::string& source = "rule configuration");

/// Reads and parses a DebugRuleConfigurations file (at most 16 MiB).
[[nodiscard]] TDBG_DECL std::vector<rule_configuration> load_rule_configurations(const std::string& file);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/rule_configurations.ipp"
#endif
