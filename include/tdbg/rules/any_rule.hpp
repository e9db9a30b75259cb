#pragma once
/// \file
/// `any_rule`: a rule of any class, owned, so that rules built by name (the
/// registry, a SageMaker configuration, the command line) can be kept in one
/// list and evaluated alike. It holds the rule through rule_base, the
/// interface invoke_rule already calls: no second layer of type erasure.

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// A rule of any class deriving from rule<Rule>.
class any_rule {
public:
    /// Holds `r` (moved in).
    template <class Rule, class = std::enable_if_t<std::is_base_of_v<rule_base, Rule> && !std::is_same_v<Rule, any_rule>>>
    any_rule(Rule r) // NOLINT(google-explicit-constructor): a rule is an any_rule
        : self_(std::make_unique<Rule>(std::move(r))) {}
    /// Holds `r`.
    explicit any_rule(std::unique_ptr<rule_base> r) : self_(std::move(r)) {}

    /// The rule.
    [[nodiscard]] rule_base& get() noexcept { return *self_; }
    /// The rule.
    [[nodiscard]] const rule_base& get() const noexcept { return *self_; }
    /// The held rule as `Rule`, or nullptr when it is another class.
    template <class Rule>
    [[nodiscard]] Rule* get() noexcept {
        return dynamic_cast<Rule*>(self_.get());
    }
    rule_base* operator->() noexcept { return self_.get(); }
    const rule_base* operator->() const noexcept { return self_.get(); }

    /// The rule's name.
    [[nodiscard]] const std::string& name() const noexcept { return self_->name(); }
    /// Renames it (its name in results).
    void set_name(std::string name) { self_->set_name(std::move(name)); }
    /// SageMaker's RuleConfigurationName (results carry it); the name unless set.
    [[nodiscard]] const std::string& configuration_name() const noexcept { return self_->configuration_name(); }
    /// Sets the configuration name.
    void set_configuration_name(std::string name) { self_->set_configuration_name(std::move(name)); }
    /// Where its messages go.
    void set_logger(rule_logger logger) { self_->set_logger(std::move(logger)); }
    /// What happens when its condition is met.
    [[nodiscard]] rule_actions& actions() { return self_->actions(); }
    /// Its parameters.
    [[nodiscard]] const rule_params& params() const { return self_->params(); }
    /// Its base trial.
    [[nodiscard]] const trial& base_trial() const { return self_->base_trial(); }

    /// invoke_rule on the rule: throws what invoke_rule throws.
    [[nodiscard]] evaluation_result invoke(const invoke_options& options = {}) { return invoke_rule(*self_, options); }

    /// invoke_rule on the rule, with an error turned into status Error (what
    /// was found before it is kept). Only rule_evaluation_condition_met (with
    /// raise_eval_cond) propagates.
    [[nodiscard]] TDBG_DECL evaluation_result evaluate(const invoke_options& options = {});

private:
    std::unique_ptr<rule_base> self_;
};

/// Evaluates `rules` one after the other over the steps their runs hold now: each as
/// any_rule::evaluate with `options` and invoke_options::snapshot set (nothing waited for; a
/// rule's error is its status Error, and the next rule is evaluated). What `tdbg report` shows,
/// and `tdbg rules` without --follow finds. The results, in the rules' order.
[[nodiscard]] TDBG_DECL std::vector<evaluation_result> evaluate_snapshot(std::vector<any_rule>& rules,
                                                                         const invoke_options& options = {});

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/any_rule.ipp"
#endif
