#pragma once
/// \file
/// Definitions of tdbg/rules/rule_configurations.hpp.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/config_file.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/rule_configurations.hpp"

namespace tdbg::rules {

namespace detail {

inline bool is_tolerated_sagemaker_key(const std::string& key) {
    return key == "RuleEvaluatorImage" || key == "InstanceType" || key == "VolumeSizeInGB" || key == "LocalPath" ||
           key == "S3OutputPath";
}

inline rule_configuration parse_one_configuration(const format::json_value& j, const std::string& where) {
    if (!j.is_object()) {
        throw config_error(fmt::format("{}: a rule configuration must be a JSON object, got {}", where, j.type_name()));
    }
    rule_configuration out;
    bool have_parameters = false;
    for (const auto& [key, value] : j.members()) {
        if (key == "RuleConfigurationName") {
            if (!value.is_string() || value.as_string().empty()) {
                throw config_error(fmt::format("{}: RuleConfigurationName must be a non-empty string", where));
            }
            out.configuration_name = value.as_string();
        } else if (key == "RuleParameters") {
            have_parameters = true;
            if (!value.is_object()) {
                throw config_error(fmt::format("{}: RuleParameters must be an object of strings", where));
            }
            for (const auto& [pkey, pvalue] : value.members()) {
                std::string text;
                if (pvalue.is_string()) {
                    text = pvalue.as_string();
                } else if (pvalue.is_number() || pvalue.is_bool()) {
                    text = format::dump_json(pvalue);
                } else {
                    throw config_error(fmt::format("{}: RuleParameters.{} must be a string (got {})", where, pkey,
                                                   pvalue.type_name()));
                }
                if (pkey == "rule_to_invoke") {
                    out.rule_to_invoke = text;
                } else {
                    out.parameters[pkey] = text;
                }
            }
        } else if (!is_tolerated_sagemaker_key(key)) {
            throw config_error(fmt::format("{}: unknown key '{}' (expected RuleConfigurationName, RuleParameters, "
                                           "RuleEvaluatorImage, InstanceType, VolumeSizeInGB, LocalPath, S3OutputPath)",
                                           where, key));
        }
    }
    if (!have_parameters || out.rule_to_invoke.empty()) {
        throw config_error(fmt::format(
            R"({}: RuleParameters.rule_to_invoke is required (the rule to run, e.g. "VanishingGradient"))", where));
    }
    if (out.configuration_name.empty()) {
        out.configuration_name = out.rule_to_invoke;
    }
    return out;
}

} // namespace detail

TDBG_DECL std::vector<rule_configuration> parse_rule_configurations(std::string_view json, const std::string& source) {
    format::json_value j;
    try {
        j = format::parse_json(json, source, "the rule configuration");
    } catch (const format_error& e) {
        throw config_error(fmt::format("{}: not valid JSON: {}", source, e.what()));
    }
    const format::json_value* list = &j;
    if (const format::json_value* configurations = j.is_object() ? j.find("DebugRuleConfigurations") : nullptr) {
        list = configurations;
        if (!list->is_array()) {
            throw config_error(fmt::format("{}: DebugRuleConfigurations must be an array", source));
        }
    }
    std::vector<rule_configuration> out;
    if (list->is_array()) {
        if (list->size() == 0) {
            throw config_error(fmt::format("{}: no rule configurations", source));
        }
        for (std::size_t i = 0; i < list->size(); ++i) {
            out.push_back(detail::parse_one_configuration(list->items()[i], fmt::format("{} entry {}", source, i)));
        }
    } else {
        out.push_back(detail::parse_one_configuration(*list, source));
    }
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (!seen.emplace(out[i].configuration_name, i).second) {
            throw config_error(
                fmt::format("{}: RuleConfigurationName '{}' is used twice", source, out[i].configuration_name));
        }
    }
    return out;
}

TDBG_DECL std::vector<rule_configuration> load_rule_configurations(const std::string& path) {
    const std::filesystem::path file(path);
    const std::string text = read_config_file(file, "rule configuration");
    return parse_rule_configurations(text, file.string());
}

} // namespace tdbg::rules
