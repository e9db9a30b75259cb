#pragma once
/// \file
/// `basic_any_rule<Storage>`: any rule over runs in `Storage`, held by value
/// behind one virtual call per evaluation (never per tensor), so that rules
/// built by name (the registry, a SageMaker configuration, the command line)
/// can be kept in one list and evaluated alike.

#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

/// A rule of any class deriving from rule<Rule, Storage>.
template <class Storage = local_storage>
class basic_any_rule {
public:
    using trial_type = trial<Storage>;

    /// Holds `r` (moved in).
    template <class Rule, class = std::enable_if_t<std::is_base_of_v<rule<Rule, Storage>, Rule>>>
    basic_any_rule(Rule r) // NOLINT(google-explicit-constructor): a rule is an any_rule
        : self_(std::make_unique<model<Rule>>(std::move(r))) {}

    /// The rule's name.
    [[nodiscard]] std::string name() const { return self_->name(); }
    /// Renames it (its name in results).
    void set_name(std::string name) { self_->set_name(std::move(name)); }
    /// SageMaker's RuleConfigurationName (results carry it); the name unless set.
    [[nodiscard]] const std::string& configuration_name() const noexcept { return configuration_name_; }
    /// Sets the configuration name.
    void set_configuration_name(std::string name) { configuration_name_ = std::move(name); }
    /// Where its messages go.
    void set_logger(rule_logger logger) { self_->set_logger(std::move(logger)); }
    /// What happens when its condition is met.
    [[nodiscard]] rule_actions& actions() { return self_->actions(); }
    /// Its parameters.
    [[nodiscard]] const rule_params& params() const { return self_->params(); }
    /// Its base trial.
    [[nodiscard]] const trial_type& base_trial() const { return self_->base_trial(); }

    /// invoke_rule on the rule: throws what invoke_rule throws.
    [[nodiscard]] evaluation_result invoke(const invoke_options& options = {}) {
        evaluation_result result;
        self_->run(options, result);
        finish(result);
        return result;
    }

    /// invoke_rule on the rule, with an error turned into status Error (what
    /// was found before it is kept). Only rule_evaluation_condition_met (with
    /// raise_eval_cond) propagates.
    [[nodiscard]] evaluation_result evaluate(const invoke_options& options = {}) noexcept(false) {
        evaluation_result result;
        try {
            self_->run(options, result);
        } catch (const rule_evaluation_condition_met&) {
            throw;
        } catch (const std::exception& e) {
            result.error = e.what();
            if (result.error.empty()) {
                result.error = "unknown error";
            }
        }
        finish(result);
        return result;
    }

    /// The held rule as `Rule`, or nullptr when it is another class.
    template <class Rule>
    [[nodiscard]] Rule* get() noexcept {
        auto* m = dynamic_cast<model<Rule>*>(self_.get());
        return m == nullptr ? nullptr : &m->rule_;
    }

private:
    struct concept_type {
        concept_type() = default;
        concept_type(const concept_type&) = delete;
        concept_type& operator=(const concept_type&) = delete;
        concept_type(concept_type&&) = delete;
        concept_type& operator=(concept_type&&) = delete;
        virtual ~concept_type() = default;
        [[nodiscard]] virtual std::string name() const = 0;
        virtual void set_name(std::string name) = 0;
        virtual void set_logger(rule_logger logger) = 0;
        virtual rule_actions& actions() = 0;
        [[nodiscard]] virtual const rule_params& params() const = 0;
        [[nodiscard]] virtual const trial_type& base_trial() const = 0;
        virtual void run(const invoke_options& options, evaluation_result& result) = 0;
    };

    template <class Rule>
    struct model final : concept_type {
        explicit model(Rule r) : rule_(std::move(r)) {}
        [[nodiscard]] std::string name() const override { return rule_.name(); }
        void set_name(std::string name) override { rule_.set_name(std::move(name)); }
        void set_logger(rule_logger logger) override { rule_.set_logger(std::move(logger)); }
        rule_actions& actions() override { return rule_.actions(); }
        [[nodiscard]] const rule_params& params() const override { return rule_.params(); }
        [[nodiscard]] const trial_type& base_trial() const override { return rule_.base_trial(); }
        void run(const invoke_options& options, evaluation_result& result) override {
            detail::run_rule(rule_, options, result);
        }
        Rule rule_;
    };

    void finish(evaluation_result& result) const {
        if (result.rule.empty()) {
            result.rule = self_->name();
        }
        result.configuration_name = configuration_name_.empty() ? result.rule : configuration_name_;
    }

    std::unique_ptr<concept_type> self_;
    std::string configuration_name_;
};

/// Any rule over local runs.
using any_rule = basic_any_rule<>;

} // namespace tdbg::rules
