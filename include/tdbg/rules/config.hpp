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

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/rule_params.hpp"

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

namespace detail {

inline bool is_tolerated_sagemaker_key(const std::string& key) {
    return key == "RuleEvaluatorImage" || key == "InstanceType" || key == "VolumeSizeInGB" || key == "LocalPath" ||
           key == "S3OutputPath";
}

inline rule_configuration parse_one_configuration(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) {
        throw config_error(where + ": a rule configuration must be a JSON object, got " + std::string(j.type_name()));
    }
    rule_configuration out;
    bool have_parameters = false;
    for (const auto& [key, value] : j.items()) {
        if (key == "RuleConfigurationName") {
            if (!value.is_string() || value.get<std::string>().empty()) {
                throw config_error(where + ": RuleConfigurationName must be a non-empty string");
            }
            out.configuration_name = value.get<std::string>();
        } else if (key == "RuleParameters") {
            have_parameters = true;
            if (!value.is_object()) {
                throw config_error(where + ": RuleParameters must be an object of strings");
            }
            for (const auto& [pkey, pvalue] : value.items()) {
                std::string text;
                if (pvalue.is_string()) {
                    text = pvalue.get<std::string>();
                } else if (pvalue.is_number() || pvalue.is_boolean()) {
                    text = pvalue.dump();
                } else {
                    throw config_error(detail::concat(where, ": RuleParameters.", pkey, " must be a string (got ",
                                                      pvalue.type_name(), ")"));
                }
                if (pkey == "rule_to_invoke") {
                    out.rule_to_invoke = text;
                } else {
                    out.parameters[pkey] = text;
                }
            }
        } else if (!is_tolerated_sagemaker_key(key)) {
            throw config_error(detail::concat(where, ": unknown key '", key,
                                              "' (expected RuleConfigurationName, RuleParameters, RuleEvaluatorImage, "
                                              "InstanceType, VolumeSizeInGB, LocalPath, S3OutputPath)"));
        }
    }
    if (!have_parameters || out.rule_to_invoke.empty()) {
        throw config_error(where + ": RuleParameters.rule_to_invoke is required (the rule to run, e.g. \"VanishingGradient\")");
    }
    if (out.configuration_name.empty()) {
        out.configuration_name = out.rule_to_invoke;
    }
    return out;
}

} // namespace detail

/// Parses DebugRuleConfigurations from `json`; `source` names it in errors.
/// Throws config_error naming the entry and the problem.
[[nodiscard]] inline std::vector<rule_configuration> parse_rule_configurations(std::string_view json,
                                                                               const std::string& source = "rule configuration") {
    const auto j = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
    if (j.is_discarded()) {
        throw config_error(source + ": not valid JSON");
    }
    const nlohmann::json* list = &j;
    if (j.is_object() && j.contains("DebugRuleConfigurations")) {
        list = &j["DebugRuleConfigurations"];
        if (!list->is_array()) {
            throw config_error(source + ": DebugRuleConfigurations must be an array");
        }
    }
    std::vector<rule_configuration> out;
    if (list->is_array()) {
        if (list->empty()) {
            throw config_error(source + ": no rule configurations");
        }
        for (std::size_t i = 0; i < list->size(); ++i) {
            out.push_back(detail::parse_one_configuration((*list)[i], source + " entry " + std::to_string(i)));
        }
    } else {
        out.push_back(detail::parse_one_configuration(*list, source));
    }
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (!seen.emplace(out[i].configuration_name, i).second) {
            throw config_error(source + ": RuleConfigurationName '" + out[i].configuration_name + "' is used twice");
        }
    }
    return out;
}

/// Reads and parses a DebugRuleConfigurations file (at most 16 MiB).
[[nodiscard]] inline std::vector<rule_configuration> load_rule_configurations(const std::filesystem::path& file) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) {
        throw config_error("cannot read rule configuration " + file.string() + ": " + ec.message());
    }
    if (size > (std::uintmax_t{16} << 20U)) {
        throw config_error("rule configuration " + file.string() + " is larger than 16 MiB");
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        throw config_error("cannot open rule configuration " + file.string());
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parse_rule_configurations(text, file.string());
}

} // namespace tdbg::rules
