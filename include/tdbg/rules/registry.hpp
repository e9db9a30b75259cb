#pragma once
/// \file
/// The rule registry: rules built by name from string parameters, as
/// SageMaker builds `rule_to_invoke`. The built-in rules are registered under
/// their SageMaker names ("VanishingGradient", ...); a program adds its own:
///
///     tdbg::rules::registry::add<my_rule>("MyRule");              // at run time, or
///     inline const tdbg::rules::registrar<my_rule> my_rule_registration{"MyRule"};  // at start-up
///
///     auto r = tdbg::rules::registry::create("MyRule", trial, {{"threshold", "0.5"}});
///     auto result = r.evaluate();
///
/// A rule class is registrable when it derives from rule<Rule, Storage> and is
/// constructible from (trial_type, const rule_params&) or, for rules that
/// compare runs, (trial_type, std::vector<trial_type>, const rule_params&).
/// Names are looked up exactly, then ignoring case, '_' and '-'
/// ("vanishing_gradient" finds VanishingGradient).
///
/// Reserved parameters, handled here and not passed to the rule:
/// `rule_to_invoke` (ignored), `source_s3_uri` (a Python rule's source: not
/// runnable in C++; ignored when the name is registered), `action_str`
/// (smdebug's actions, see rules/actions.hpp).

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/builtin.hpp"
#include "tdbg/rules/config.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

/// The registry of rules over runs in `Storage` (one per process and Storage).
template <class Storage = local_storage>
class basic_registry {
public:
    using trial_type = trial<Storage>;
    using rule_type = basic_any_rule<Storage>;
    /// Builds a rule from its trials and (already context-named) parameters.
    using factory = std::function<rule_type(trial_type base, std::vector<trial_type> others, const rule_params& params)>;

    /// Registers `Rule` as `name`; a name already taken is replaced.
    template <class Rule>
    static void add(const std::string& name) {
        static_assert(std::is_base_of_v<rule<Rule, Storage>, Rule>,
                      "registry::add<Rule>: Rule must derive from tdbg::rules::rule<Rule, Storage>");
        add(name, make_factory<Rule>(), takes_other_trials<Rule>());
    }

    /// Registers `make` as `name` (`compares_runs`: it uses other trials); a name already taken is replaced.
    static void add(const std::string& name, factory make, bool compares_runs = false) {
        if (name.empty()) {
            throw config_error("registry: a rule needs a name");
        }
        auto& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        s.factories[name] = entry{std::move(make), compares_runs};
    }

    /// True when the rule registered as `name` compares runs (takes other trials).
    [[nodiscard]] static bool compares_runs(std::string_view name) {
        const auto found = lookup(name);
        if (!found) {
            return false;
        }
        auto& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        return s.factories.at(*found).compares_runs;
    }

    /// Unregisters `name`; false when it was not registered.
    static bool remove(const std::string& name) {
        auto& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        return s.factories.erase(name) != 0;
    }

    /// True when `name` (or a spelling lookup() accepts) is registered.
    [[nodiscard]] static bool contains(std::string_view name) { return lookup(name).has_value(); }

    /// The registered name `name` stands for (exact, else ignoring case, '_' and '-').
    [[nodiscard]] static std::optional<std::string> lookup(std::string_view name) {
        auto& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.factories.count(std::string(name)) != 0) {
            return std::string(name);
        }
        const std::string wanted = normalize(name);
        for (const auto& item : s.factories) {
            if (normalize(item.first) == wanted) {
                return item.first;
            }
        }
        return std::nullopt;
    }

    /// Every registered name, sorted.
    [[nodiscard]] static std::vector<std::string> names() {
        auto& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        std::vector<std::string> out;
        for (const auto& item : s.factories) {
            out.push_back(item.first);
        }
        return out;
    }

    /// Builds the rule registered as `name` over `base` with `params` (and `others`
    /// for rules that compare runs). Throws config_error for an unknown rule, a
    /// parameter that does not parse or that the rule does not take.
    [[nodiscard]] static rule_type create(std::string_view name, const trial_type& base, const rule_params& params = rule_params(),
                                          std::vector<trial_type> others = {}, const rule_logger& logger = rule_logger()) {
        const auto found = lookup(name);
        if (!found) {
            std::string known;
            for (const auto& n : names()) {
                known += (known.empty() ? "" : ", ") + n;
            }
            throw config_error("unknown rule '" + std::string(name) + "'; registered rules: " + known);
        }
        factory make;
        {
            auto& s = state();
            std::lock_guard<std::mutex> lock(s.mutex);
            make = s.factories.at(*found).make;
        }
        std::map<std::string, std::string> given = params.items();
        std::optional<std::string> action_str;
        for (const char* reserved : {"rule_to_invoke", "source_s3_uri", "action_str", "action_json_str"}) {
            auto it = given.find(reserved);
            if (it == given.end()) {
                continue;
            }
            if (std::string_view(reserved).substr(0, 6) == "action") {
                action_str = it->second;
            } else if (std::string_view(reserved) == "source_s3_uri") {
                logger.info("rule " + *found + ": source_s3_uri (a Python rule source) ignored; running the registered C++ rule");
            }
            given.erase(it);
        }
        rule_params own(given);
        own.set_context(*found);
        rule_type r = make(base, std::move(others), own);
        own.check_unknown();
        r.set_name(*found);
        r.set_logger(logger);
        if (action_str) {
            add_actions_from_string(r.actions(), *action_str, base.storage(), logger);
        }
        return r;
    }

    /// Builds the rule a DebugRuleConfigurations entry describes.
    [[nodiscard]] static rule_type create(const rule_configuration& config, const trial_type& base,
                                          std::vector<trial_type> others = {}, const rule_logger& logger = rule_logger()) {
        rule_type r = create(config.rule_to_invoke, base, rule_params(config.parameters), std::move(others), logger);
        r.set_configuration_name(config.configuration_name);
        return r;
    }

    /// True when `Rule` is built with other trials (it compares runs).
    template <class Rule>
    [[nodiscard]] static constexpr bool takes_other_trials() {
        return std::is_constructible_v<Rule, trial_type, std::vector<trial_type>, const rule_params&>;
    }

    /// The factory that builds `Rule` (what add<Rule> registers).
    template <class Rule>
    [[nodiscard]] static factory make_factory() {
        return [](trial_type base, std::vector<trial_type> others, const rule_params& params) -> rule_type {
            if constexpr (std::is_constructible_v<Rule, trial_type, std::vector<trial_type>, const rule_params&>) {
                return rule_type(Rule(std::move(base), std::move(others), params));
            } else {
                static_assert(std::is_constructible_v<Rule, trial_type, const rule_params&>,
                              "a registered rule is constructible from (trial_type, const rule_params&) or "
                              "(trial_type, std::vector<trial_type>, const rule_params&)");
                if (!others.empty()) {
                    throw config_error("rule " + params.context() + " does not compare runs: it takes no other trials");
                }
                return rule_type(Rule(std::move(base), params));
            }
        };
    }

private:
    struct entry {
        factory make;
        bool compares_runs = false;
    };
    struct registry_state {
        std::mutex mutex;
        std::map<std::string, entry> factories;
    };

    static registry_state& state() {
        static registry_state s;
        static const bool builtins_added = [] {
            for_each_builtin_rule<Storage>([](std::string_view name, auto tag) {
                using rule_class = typename decltype(tag)::type;
                s.factories[std::string(name)] = entry{make_factory<rule_class>(), takes_other_trials<rule_class>()};
            });
            return true;
        }();
        (void)builtins_added;
        return s;
    }

    static std::string normalize(std::string_view name) {
        std::string out;
        for (char c : name) {
            if (c != '_' && c != '-' && c != ' ') {
                out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
            }
        }
        return out;
    }
};

/// The registry of rules over local runs.
using registry = basic_registry<>;

/// Registers `Rule` as `name` when constructed: a namespace-scope
/// `inline const registrar<my_rule> my_rule_registration{"MyRule"};` makes the
/// rule available by name from the start of the program.
template <class Rule, class Storage = typename Rule::storage_type>
class registrar {
public:
    explicit registrar(const std::string& name) { basic_registry<Storage>::template add<Rule>(name); }
};

} // namespace tdbg::rules
