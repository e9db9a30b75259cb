#pragma once
// The rules a subcommand was asked to run (--rule NAME [--param KEY=VALUE ...],
// --config FILE, --other DIR), parsed and built the same way by `tdbg rules`
// and `tdbg report`.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "commands.hpp"
#include "open_run.hpp"
#include "tdbg/rules/config.hpp"
#include "tdbg/rules/registry.hpp"

namespace tdbg::cli {

/// One rule to build: its registered name, its parameters as strings, and the
/// RuleConfigurationName of a --config entry (empty for --rule).
struct rule_request {
    std::string name;
    std::map<std::string, std::string> params;
    std::string configuration_name;
};

/// The rules and the other runs (for rules that compare runs) of a command line.
struct rule_selection {
    std::vector<rule_request> rules;
    std::vector<std::string> others;

    /// Consumes args[i] (and its value) when it is --rule, --param, --config or
    /// --other; returns false, leaving `i` alone, for any other argument.
    bool parse(const std::vector<std::string>& args, std::size_t& i) {
        const std::string& a = args[i];
        if (a != "--rule" && a != "--param" && a != "--config" && a != "--other") {
            return false;
        }
        if (i + 1 >= args.size()) {
            throw usage_error(fmt::format("{} needs a value", a));
        }
        const std::string& value = args[++i];
        if (a == "--rule") {
            rules.push_back(rule_request{value, {}, {}});
        } else if (a == "--param") {
            const auto eq = value.find('=');
            if (rules.empty()) {
                throw usage_error(fmt::format("--param {} comes before any --rule", value));
            }
            if (eq == std::string::npos || eq == 0) {
                throw usage_error(fmt::format("--param expects KEY=VALUE, got '{}'", value));
            }
            rules.back().params[value.substr(0, eq)] = value.substr(eq + 1);
        } else if (a == "--config") {
            for (auto& c : tdbg::rules::load_rule_configurations(value)) {
                rules.push_back(rule_request{c.rule_to_invoke, std::move(c.parameters), c.configuration_name});
            }
        } else {
            others.push_back(value);
        }
        return true;
    }

    /// Builds rule `index` over `trial`; the --other runs are opened with `options`
    /// (and `wait`, see open_run) when the rule compares runs.
    [[nodiscard]] tdbg::rules::any_rule build(std::size_t index, const tdbg::trial& trial,
                                              const tdbg::rules::rule_logger& logger, const trial_options& options = {},
                                              const wait_function& wait = {}) const {
        const rule_request& request = rules.at(index);
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
};

} // namespace tdbg::cli
