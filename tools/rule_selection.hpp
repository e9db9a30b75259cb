#pragma once
// The rules a subcommand was asked to run (--rule NAME [--param KEY=VALUE ...],
// --config FILE, --other DIR), declared and built the same way by `tdbg rules`
// and `tdbg report` (their options' rules and others, tdbg/cli/commands.hpp).

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_configurations.hpp"

namespace tdbg::cli {

/// Declares --rule, --param, --config and --other on `args`, in a section titled `title`,
/// filling `rules`, `config_files` and `others` as they are parsed (in order: a --param belongs
/// to the --rule before it). `brief`: one-line help texts (for a command where rules are secondary).
inline void declare_rule_selection(arguments& args, std::vector<commands::rule_request>& rules,
                                   std::vector<std::string>& config_files, std::vector<std::string>& others,
                                   std::string title, bool brief = false) {
    args.section(std::move(title));
    args.option("--rule", "NAME",
                brief ? "a rule to run (tdbg rules --list); repeatable"
                      : "a rule to run: a built-in rule by its SageMaker name (VanishingGradient, "
                        "LossNotDecreasing, ...; see --list) or a rule the program registered; repeatable",
                [&rules](const std::string&, const std::string& value) {
                    rules.push_back(commands::rule_request{value, {}, {}});
                });
    args.option("--param", "KEY=VALUE",
                brief ? "a parameter of the --rule before it"
                      : "a parameter of the --rule before it, a string as SageMaker passes it "
                        "(--param threshold=1e-5)",
                [&rules](const std::string&, const std::string& value) {
                    const auto eq = value.find('=');
                    if (rules.empty()) {
                        throw argument_error(fmt::format("--param {} comes before any --rule", value));
                    }
                    if (eq == std::string::npos || eq == 0) {
                        throw argument_error(fmt::format("--param expects KEY=VALUE, got '{}'", value));
                    }
                    rules.back().params[value.substr(0, eq)] = value.substr(eq + 1);
                });
    args.option("--config", "FILE",
                brief ? "rules from a SageMaker DebugRuleConfigurations JSON file"
                      : "rules from a SageMaker DebugRuleConfigurations JSON file "
                        "([{\"RuleConfigurationName\": ..., \"RuleParameters\": {\"rule_to_invoke\": ..., ...}}])",
                [&rules, &config_files](const std::string&, const std::string& value) {
                    config_files.push_back(value);
                    for (auto& c : tdbg::rules::load_rule_configurations(value)) {
                        rules.push_back(
                            commands::rule_request{c.rule_to_invoke, std::move(c.parameters), c.configuration_name});
                    }
                });
    args.option("--other", "DIR",
                brief ? "another run, for rules that compare runs"
                      : "another run, for rules that compare runs (SimilarAcrossRuns)",
                [&others](const std::string&, const std::string& value) { others.push_back(value); });
}

/// Builds the rule `request` asks for over `trial`; the `others` runs are opened with
/// `options` (and `wait`, see open_run) when the rule compares runs.
[[nodiscard]] inline tdbg::rules::any_rule build_rule(const commands::rule_request& request,
                                                      const std::vector<std::string>& others, const tdbg::trial& trial,
                                                      const tdbg::rules::rule_logger& logger,
                                                      const trial_options& options = {},
                                                      const wait_function& wait = {}) {
    std::vector<tdbg::trial> other_trials;
    if (tdbg::rules::registry::compares_runs(request.name)) {
        for (const auto& path : others) {
            other_trials.push_back(open_run(path, options, wait));
        }
    }
    auto rule = tdbg::rules::registry::create(request.name, trial, tdbg::rules::rule_params(request.params),
                                              std::move(other_trials), logger);
    if (!request.configuration_name.empty()) {
        rule.set_configuration_name(request.configuration_name);
    }
    return rule;
}

} // namespace tdbg::cli
