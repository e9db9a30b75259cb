#pragma once
/// \file
/// The rule registry: rules built by name from string parameters, as
/// SageMaker builds `rule_to_invoke`. Includes the built-in rules' classes. The built-in rules are registered under
/// their SageMaker names ("VanishingGradient", ...); a program adds its own:
///
///     tdbg::rules::registry::add<my_rule>("MyRule");              // at run time, or
///     inline const tdbg::rules::registrar<my_rule> my_rule_registration{"MyRule"};  // at start-up
///
///     auto r = tdbg::rules::registry::create("MyRule", trial, {{"threshold", "0.5"}});
///     auto result = r.evaluate();
///
/// A rule class is registrable when it derives from rule<Rule> and is
/// constructible from (trial, const rule_params&) or, for rules that compare
/// runs, (trial, std::vector<trial>, const rule_params&).
/// Names are looked up exactly, then ignoring case, '_' and '-'
/// ("vanishing_gradient" finds VanishingGradient).
/// A rule class that declares `static rule_description describe()`
/// (rules/description.hpp) is registered with it: `registry::describe(name)`
/// returns it, and `tdbg rules --list` and `--describe NAME` print it.
///
/// Reserved parameters, handled here and not passed to the rule:
/// `rule_to_invoke` (ignored), `source_s3_uri` (a Python rule's source: not
/// runnable in C++; ignored when the name is registered), `action_str`
/// (smdebug's actions, see rules/actions.hpp).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/builtin.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_configurations.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

/// The registry of rules (one per process).
class registry {
public:
    /// Builds a rule from its trials and (already context-named) parameters.
    using factory = std::function<any_rule(trial base, std::vector<trial> others, const rule_params& params)>;

    /// Registers `Rule` as `name`; a name already taken is replaced. A name that differs from a
    /// built-in rule's only by case, '_' or '-' ("vanishing_gradient") is refused (config_error).
    template <class Rule>
    static void add(const std::string& name) {
        static_assert(std::is_base_of_v<rule<Rule>, Rule>, "registry::add<Rule>: Rule must derive from tdbg::rules::rule<Rule>");
        add(name, make_factory<Rule>(), takes_other_trials<Rule>(), description_of<Rule>());
    }

    /// Registers `make` as `name` (`compares_runs`: it uses other trials), described by `description`
    /// (none: listed as "(no description)"); a name already taken is replaced; a name that differs
    /// from a built-in rule's only by case, '_' or '-' is refused (config_error).
    static TDBG_DECL void add(const std::string& name, factory make, bool compares_runs = false,
                              std::optional<rule_description> description = std::nullopt);

    /// True when the rule registered as `name` compares runs (takes other trials).
    [[nodiscard]] static TDBG_DECL bool compares_runs(std::string_view name);
    /// Unregisters `name`; false when it was not registered.
    static TDBG_DECL bool remove(const std::string& name);
    /// True when `name` (or a spelling lookup() accepts) is registered.
    [[nodiscard]] static bool contains(std::string_view name) { return lookup(name).has_value(); }
    /// The registered name `name` stands for (exact, else ignoring case, '_' and '-').
    [[nodiscard]] static TDBG_DECL std::optional<std::string> lookup(std::string_view name);
    /// Every registered name, sorted.
    [[nodiscard]] static TDBG_DECL std::vector<std::string> names();
    /// The error for a rule name that is not registered: it names the nearest registered name
    /// ("did you mean ...?") and lists them all.
    [[nodiscard]] static TDBG_DECL config_error unknown_rule(std::string_view name);
    /// The description of the rule registered as `name` (a spelling lookup() accepts); nullopt
    /// when it was registered without one. Throws config_error for an unknown rule, naming the
    /// nearest registered name when one is close ("did you mean ...?").
    [[nodiscard]] static TDBG_DECL std::optional<rule_description> describe(std::string_view name);
    /// What a step's verdict of the rule registered as `name` depends on besides the step's
    /// values (its description's step_dependence): carried_state, which is always exact, for a
    /// rule that is not registered or has no description.
    [[nodiscard]] static TDBG_DECL step_dependence dependence(std::string_view name);
    /// Which workers' values the rule registered as `name` reads (its description's
    /// worker_reads): every_worker, which is always exact, for a rule that is not registered
    /// or has no description.
    [[nodiscard]] static TDBG_DECL worker_reads workers_read(std::string_view name);

    /// Builds the rule registered as `name` over `base` with `params` (and `others`
    /// for rules that compare runs). Throws config_error for an unknown rule, a
    /// parameter that does not parse or that the rule does not take.
    [[nodiscard]] static TDBG_DECL any_rule create(std::string_view name, const trial& base,
                                                   const rule_params& params = rule_params(),
                                                   std::vector<trial> others = {},
                                                   const rule_logger& logger = rule_logger());

    /// Builds the rule a DebugRuleConfigurations entry describes.
    [[nodiscard]] static TDBG_DECL any_rule create(const rule_configuration& config, const trial& base,
                                                   std::vector<trial> others = {},
                                                   const rule_logger& logger = rule_logger());

    /// True when `Rule` is built with other trials (it compares runs).
    template <class Rule>
    [[nodiscard]] static constexpr bool takes_other_trials() {
        return std::is_constructible_v<Rule, trial, std::vector<trial>, const rule_params&>;
    }

    /// The factory that builds `Rule` (what add<Rule> registers).
    template <class Rule>
    [[nodiscard]] static factory make_factory() {
        return [](trial base, std::vector<trial> others, const rule_params& params) -> any_rule {
            if constexpr (takes_other_trials<Rule>()) {
                return any_rule(Rule(std::move(base), std::move(others), params));
            } else {
                static_assert(std::is_constructible_v<Rule, trial, const rule_params&>,
                              "a registered rule is constructible from (tdbg::trial, const rule_params&) or "
                              "(tdbg::trial, std::vector<tdbg::trial>, const rule_params&)");
                if (!others.empty()) {
                    throw config_error(
                        fmt::format("rule {} does not compare runs: it takes no other trials", params.context()));
                }
                return any_rule(Rule(std::move(base), params));
            }
        };
    }
};

/// Registers `Rule` as `name` when constructed: a namespace-scope
/// `inline const registrar<my_rule> my_rule_registration{"MyRule"};` makes the
/// rule available by name from the start of the program.
template <class Rule>
class registrar {
public:
    explicit registrar(const std::string& name) { registry::add<Rule>(name); }
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/registry.ipp"
#endif
