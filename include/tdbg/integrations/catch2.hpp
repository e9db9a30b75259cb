#pragma once
/// \file
/// Catch2 matchers that run rules over a trial inside a unit test:
///
///     auto trial = tdbg::create_trial(run_dir);
///     REQUIRE_THAT(trial, tdbg::no_issues<tdbg::rules::vanishing_gradient>({{"threshold", "1e-6"}}));
///     REQUIRE_THAT(trial, tdbg::no_issues<my_rule>());                  // a user's rule class
///     REQUIRE_THAT(trial, tdbg::no_issues("LossNotDecreasing", {{"num_steps", "5"}}));  // by registered name
///     CHECK_THAT(trial, tdbg::issues_found<tdbg::rules::exploding_tensor>());
///     CHECK_THAT(trial, tdbg::triggers_at<tdbg::rules::all_zero>({26, 27}, {{"tensor_regex", ".*"}}));
///
/// On failure the description names the rule, its parameters and the status,
/// and lists the steps where the condition was met with why (or the error). A
/// rule that evaluated no step (NothingEvaluated: a tensor_regex that matches
/// nothing, a run without the steps asked for) fails every matcher, saying why:
/// checking nothing is no pass. Catch2 prints a trial as its name and path.
///
/// Works with Catch2 v2 (`catch2/catch.hpp`, Catch::MatcherBase) and v3
/// (`catch2/matchers/...`, Catch::Matchers::MatcherGenericBase): include your
/// Catch2 first, or let this header include whichever is installed. Link the
/// test with Catch2 as usual; tdbg adds no dependency of its own.

#include "tdbg/integrations/detail/catch2_matcher.hpp"

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg {

namespace detail {

/// What a rule matcher expects of the evaluation.
enum class rule_expectation { no_issues, issues, issues_at };

/// The part of a rule matcher that does not depend on the Catch2 version.
class rule_check {
public:
    using factory = std::function<rules::any_rule(const trial&)>;

    rule_check(factory make, std::string rule, rules::rule_params params, rule_expectation expect,
               std::vector<std::int64_t> steps, rules::invoke_options options)
        : state_(std::make_shared<state>(state{std::move(make), std::move(rule), std::move(params), expect,
                                               std::move(steps), std::move(options), std::nullopt})) {}

    /// Evaluates the rule over `t` and compares with the expectation.
    [[nodiscard]] bool check(const trial& t) const {
        try {
            auto r = state_->make(t);
            r.set_logger(rules::rule_logger::silent());
            state_->result = r.evaluate(state_->options);
        } catch (const std::exception& e) { // a rule that cannot be built: bad parameters, unknown name
            rules::evaluation_result failed;
            failed.rule = state_->rule;
            failed.error = e.what();
            state_->result = std::move(failed);
        }
        const rules::evaluation_result& res = *state_->result;
        if (res.status() == rules::evaluation_status::error ||
            res.status() == rules::evaluation_status::nothing_evaluated) {
            return false; // an error, or nothing checked: neither is a pass
        }
        switch (state_->expect) {
        case rule_expectation::no_issues: return res.triggered_steps.empty();
        case rule_expectation::issues: return !res.triggered_steps.empty();
        case rule_expectation::issues_at: return res.triggered_steps == state_->steps;
        }
        return false;
    }

    /// What is expected and, after check(), what was found.
    [[nodiscard]] std::string describe() const {
        std::string out;
        switch (state_->expect) {
        case rule_expectation::no_issues: out = "has no issues found by "; break;
        case rule_expectation::issues: out = "has issues found by "; break;
        case rule_expectation::issues_at:
            out = fmt::format("has issues found at steps [{}] by ", join(state_->steps));
            break;
        }
        out += state_->result && !state_->result->rule.empty() ? state_->result->rule : state_->rule;
        const auto given = state_->params.items();
        if (!given.empty()) {
            out += " {";
            bool first = true;
            for (const auto& [k, v] : given) {
                out.append(first ? "" : ", ").append(k).append("=").append(v);
                first = false;
            }
            out += "}";
        }
        if (const auto& res = state_->result) {
            out += fmt::format(" ({}", rules::status_name(res->status()));
            if (!res->error.empty()) {
                out += fmt::format(": {}", res->error);
            } else if (res->status() == rules::evaluation_status::nothing_evaluated) {
                out += fmt::format(": {}", res->nothing_evaluated_reason);
            } else if (!res->triggered_steps.empty()) {
                out += fmt::format(": triggered at steps [{}]", join(res->triggered_steps));
                for (const std::string& line : rules::trigger_reason_lines(*res, 3)) {
                    out += fmt::format("; {}", line);
                }
            }
            out += fmt::format("; {} steps evaluated)", res->triggered_steps.size() + res->not_triggered_steps.size());
        }
        return out;
    }

    /// The evaluation's result after check().
    [[nodiscard]] const std::optional<rules::evaluation_result>& result() const noexcept { return state_->result; }

private:
    static std::string join(const std::vector<std::int64_t>& steps) {
        std::string out;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            out += fmt::format("{}{}", i ? ", " : "", steps[i]);
        }
        return out;
    }

    struct state {
        factory make;
        std::string rule;
        rules::rule_params params;
        rule_expectation expect = rule_expectation::no_issues;
        std::vector<std::int64_t> steps;
        rules::invoke_options options;
        std::optional<rules::evaluation_result> result;
    };
    // Shared: Catch2 copies matchers, and describes the copy after matching the original.
    std::shared_ptr<state> state_;
};

template <class Rule>
std::string rule_display_name() {
    if constexpr (rules::detail::has_rule_name<Rule>::value) {
        return std::string(Rule::rule_name);
    } else {
        return "the rule";
    }
}

template <class Rule>
rule_check make_rule_check(rules::rule_params params, rule_expectation expect, std::vector<std::int64_t> steps,
                           rules::invoke_options options) {
    auto make = [params](const trial& t) -> rules::any_rule {
        const rules::rule_params own = params.clone();
        if constexpr (std::is_constructible_v<Rule, trial, std::vector<trial>, const rules::rule_params&>) {
            return Rule(t, std::vector<trial>{}, own);
        } else {
            return Rule(t, own);
        }
    };
    return rule_check(std::move(make), rule_display_name<Rule>(), std::move(params), expect, std::move(steps),
                      std::move(options));
}

inline rule_check make_named_check(std::string_view name, rules::rule_params params, rule_expectation expect,
                                   std::vector<std::int64_t> steps, rules::invoke_options options) {
    auto make = [rule = std::string(name), params](const trial& t) {
        return rules::registry::create(rule, t, params.clone(), {}, rules::rule_logger::silent());
    };
    return rule_check(std::move(make), std::string(name), std::move(params), expect, std::move(steps),
                      std::move(options));
}

} // namespace detail

/// A Catch2 matcher over trials that evaluates a rule (v3's or v2's, detail/catch2_matcher.hpp).
class rule_matcher : public detail::trial_matcher<detail::rule_check> {
public:
    using trial_matcher::trial_matcher;
};

/// Matches a trial over which `Rule` finds no issue (status NoIssuesFound).
template <class Rule>
[[nodiscard]] rule_matcher no_issues(rules::rule_params params = rules::rule_params(),
                                     rules::invoke_options options = {}) {
    return rule_matcher(
        detail::make_rule_check<Rule>(std::move(params), detail::rule_expectation::no_issues, {}, std::move(options)));
}

/// Matches a trial over which `Rule` finds issues (its condition is met at some step).
template <class Rule>
[[nodiscard]] rule_matcher issues_found(rules::rule_params params = rules::rule_params(),
                                        rules::invoke_options options = {}) {
    return rule_matcher(
        detail::make_rule_check<Rule>(std::move(params), detail::rule_expectation::issues, {}, std::move(options)));
}

/// Matches a trial over which `Rule`'s condition is met at exactly `steps`.
template <class Rule>
[[nodiscard]] rule_matcher triggers_at(std::vector<std::int64_t> steps,
                                       rules::rule_params params = rules::rule_params(),
                                       rules::invoke_options options = {}) {
    return rule_matcher(detail::make_rule_check<Rule>(std::move(params), detail::rule_expectation::issues_at,
                                                      std::move(steps), std::move(options)));
}

/// no_issues for the rule registered as `name`.
[[nodiscard]] inline rule_matcher no_issues(std::string_view name, rules::rule_params params = rules::rule_params(),
                                            rules::invoke_options options = {}) {
    return rule_matcher(
        detail::make_named_check(name, std::move(params), detail::rule_expectation::no_issues, {}, std::move(options)));
}

/// issues_found for the rule registered as `name`.
[[nodiscard]] inline rule_matcher issues_found(std::string_view name, rules::rule_params params = rules::rule_params(),
                                               rules::invoke_options options = {}) {
    return rule_matcher(
        detail::make_named_check(name, std::move(params), detail::rule_expectation::issues, {}, std::move(options)));
}

/// triggers_at for the rule registered as `name`.
[[nodiscard]] inline rule_matcher triggers_at(std::string_view name, std::vector<std::int64_t> steps,
                                              rules::rule_params params = rules::rule_params(),
                                              rules::invoke_options options = {}) {
    return rule_matcher(detail::make_named_check(name, std::move(params), detail::rule_expectation::issues_at,
                                                 std::move(steps), std::move(options)));
}

} // namespace tdbg

/// Catch2 prints a trial in an assertion (`REQUIRE_THAT(trial, ...)`) as its name and where it is.
namespace Catch {
template <>
struct StringMaker<tdbg::trial> {
    static std::string convert(const tdbg::trial& t) { return fmt::format("trial '{}' at {}", t.name(), t.path()); }
};
} // namespace Catch
