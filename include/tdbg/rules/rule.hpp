#pragma once
/// \file
/// `rule<Derived>`: the base users write rules on (smdebug's Rule), by CRTP,
/// over `rule_base`, the one non-template interface invoke_rule calls once per
/// step.
///
/// A rule is a class with a constructor taking the trial it watches and its
/// string parameters, and `invoke_at_step(step)`, true when its condition is
/// met at that global step:
///
///     class large_gradient : public tdbg::rules::rule<large_gradient> {
///     public:
///         static constexpr std::string_view rule_name = "LargeGradient";
///         large_gradient(tdbg::trial trial, const tdbg::rules::rule_params& params)
///             : rule(std::move(trial), params), threshold_(params.get("threshold", 20.0)) {}
///         tdbg::rules::verdict invoke_at_step(std::int64_t step) const {
///             for (const auto& name : base_trial().tensor_names(std::nullopt, tdbg::mode::global,
///                                                               std::nullopt, "gradients")) {
///                 const double mean = tdbg::rules::scalar_of(reduction_value(name, step, abs_mean));
///                 if (mean > threshold_) return tdbg::rules::condition_met(name + " is large");
///             }
///             return false;
///         }
///     private:
///         static constexpr tdbg::reduction abs_mean{tdbg::reduction_kind::mean, true};
///         double threshold_;
///     };
///
/// invoke_at_step returns a bool, as smdebug's does, or a `verdict`, which
/// also says why the condition is met (the log and the stop marker carry it).
/// What the CRTP base takes from the derived class, where it has them:
///   - `static constexpr std::string_view rule_name`: the name reports use
///     (the registry's name wins when the rule is built through it);
///   - `static constexpr bool parallel_steps = true;` when invoke_at_step only
///     reads (no state kept between steps): invoke_rule then evaluates several
///     steps at once, on several threads, and folds the outcomes in step order;
///   - `std::vector<tensor_request> required_tensors(std::int64_t step) const`:
///     what a step reads, declared once. invoke_rule waits for it and fetches it
///     up front (in parallel), and passes it to
///     `invoke_at_step(std::int64_t step, const step_inputs& inputs)`, in the
///     order declared (an optional input that is not there keeps the exception
///     its read threw, `step_inputs::error(i)`);
///   - `verdict while_waiting(std::int64_t next_step)`: called now and then while a
///     live run's next step is waited for (`tdbg rules --follow`, the watcher); met,
///     the rule fires at `next_step` without it (StalledTrainingRule: no step for
///     longer than its threshold), and that step's own evaluation, when it comes, is
///     not recorded a second time;
///   - `std::vector<const detail::tensor_selection*> tensor_selections() const`: the
///     tensor selections (rules/detail/tensor_selection.hpp) it reads, so that an evaluation
///     that evaluated no step says what they named and the run's nearest names, and
///     its coverage counts the selected tensors saved as reductions only;
///   - `static constexpr bool decides_by_reductions = true`: a selected tensor saved as
///     reductions only is decided by its stored reductions where they can decide (its
///     coverage says so, rather than that the rule reads values).
///   - `comparison_coverage comparisons() const`: for a rule that compares steps with each
///     other (a window of steps, a pair of steps, a patience), what it compared so far (asked
///     once the evaluation is over). A rule that compared nothing cannot say there is no
///     issue, though it looked at every step: the evaluation is then NothingEvaluated, and its
///     coverage says why ("3 EVAL steps, 0 windows of 10").
/// Parameters are read in the constructor with rule_params' typed getters;
/// a parameter no getter asked for is an error when the rule is invoked.
/// The helpers of rules/values.hpp (scalar_of, allclose, ...) come with this header.

#include <cstddef>
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

#include "tdbg/config.hpp"
#include "tdbg/core/detail/detection.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

/// One thing a rule reads at a step, declared up front (required_tensors).
struct tensor_request {
    /// The tensor's name.
    std::string name;
    /// The step, in `step_mode`'s numbering (global steps for mode::global).
    std::int64_t step = 0;
    mode step_mode = mode::global;
    /// The reduction to read; none: the value.
    std::optional<reduction> which;
    /// The worker; none: the first that wrote it, as the trial's default.
    std::optional<std::string> worker;
    /// 0 for the base trial, i for other_trials()[i - 1].
    std::size_t trial_index = 0;
    /// When true a missing value is no error: the input is then nullopt, and its `error`
    /// says why. Otherwise the exception the trial throws skips the step, as smdebug's fetch does.
    bool optional = false;
    /// The tensor's handle, when the rule holds it already (a selection's snapshot does): the
    /// value is read through it rather than by looking `name` up again. It must be the handle
    /// of `name` in trial `trial_index`; it is not part of what is asked (operator== leaves it out).
    std::shared_ptr<const tdbg::tensor> handle;

    friend bool operator==(const tensor_request& a, const tensor_request& b) noexcept {
        return a.name == b.name && a.step == b.step && a.step_mode == b.step_mode && a.which == b.which &&
               a.worker == b.worker && a.trial_index == b.trial_index && a.optional == b.optional;
    }
    friend bool operator!=(const tensor_request& a, const tensor_request& b) noexcept { return !(a == b); }
};

/// A request for the value of `name` at global step `step`.
[[nodiscard]] inline tensor_request value_request(std::string name, std::int64_t step, bool optional = false) {
    tensor_request r;
    r.name = std::move(name);
    r.step = step;
    r.optional = optional;
    return r;
}

/// A request for the reduction `which` of `name` at global step `step`.
[[nodiscard]] inline tensor_request reduction_request(std::string name, std::int64_t step, reduction which,
                                                      bool optional = false) {
    tensor_request r = value_request(std::move(name), step, optional);
    r.which = which;
    return r;
}

/// What a rule found at a step: whether its condition is met, and why. A bool
/// converts to it (`return false;`); condition_met(reason) says why it is met.
class verdict {
public:
    verdict(bool met) noexcept : met_(met) {} // NOLINT(google-explicit-constructor): `return true;` reads as smdebug's
    /// True when the condition is met.
    [[nodiscard]] bool met() const noexcept { return met_; }
    explicit operator bool() const noexcept { return met_; }
    /// Why the condition is met (empty when not given).
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

private:
    friend verdict condition_met(std::string reason);
    verdict(bool met, std::string reason) : met_(met), reason_(std::move(reason)) {}
    bool met_;
    std::string reason_;
};

/// The condition is met, because of `reason` (free text for people).
[[nodiscard]] inline verdict condition_met(std::string reason) { return verdict(true, std::move(reason)); }

/// What a rule declared for a step (required_tensors) and what invoke_rule
/// fetched for it, in the order declared.
class step_inputs {
public:
    /// One declared request and its value (nullopt: optional, and not there).
    struct input {
        tensor_request request;
        std::optional<tensor_value> value;
    };

    step_inputs() = default;
    explicit step_inputs(std::vector<input> inputs) : inputs_(std::move(inputs)), errors_(inputs_.size()) {}
    /// With `errors[i]`: why optional input i is not there (null where it is).
    step_inputs(std::vector<input> inputs, std::vector<std::exception_ptr> errors)
        : inputs_(std::move(inputs)), errors_(std::move(errors)) {
        errors_.resize(inputs_.size());
    }

    [[nodiscard]] std::size_t size() const noexcept { return inputs_.size(); }
    [[nodiscard]] bool empty() const noexcept { return inputs_.empty(); }
    [[nodiscard]] const input& operator[](std::size_t i) const { return inputs_[i]; }
    [[nodiscard]] auto begin() const noexcept { return inputs_.begin(); }
    [[nodiscard]] auto end() const noexcept { return inputs_.end(); }

    /// Why input `i` is not there: the exception its read threw (tensor_unavailable_for_step,
    /// ...), to rethrow where reading it would have thrown; null when the value is there.
    [[nodiscard]] const std::exception_ptr& error(std::size_t i) const { return errors_.at(i); }
    /// error() of `in`, one of these inputs (an element of this object, not a copy).
    [[nodiscard]] const std::exception_ptr& error(const input& in) const {
        const bool inside = !inputs_.empty() && std::less_equal<>()(inputs_.data(), &in) &&
                            std::less<>()(&in, inputs_.data() + inputs_.size());
        if (!inside) {
            throw usage_error("step_inputs::error: the input is not one of these (a copy?): pass an element or its index");
        }
        return error(static_cast<std::size_t>(&in - inputs_.data()));
    }

private:
    std::vector<input> inputs_;
    std::vector<std::exception_ptr> errors_;
};

namespace detail {
class rule_runner;
class tensor_selection;
/// What `selections` name over `t` and, where one selects nothing, the run's nearest
/// tensor or collection names (defined with tensor_selection, rules/detail/tensor_selection.hpp).
[[nodiscard]] TDBG_DECL std::string explain_selections(const trial& t,
                                                       const std::vector<const tensor_selection*>& selections);
/// Of the tensors `selections` select over `t`, those saved as reductions only (no value at
/// any step), and what rule `rule_name` did with them: decided them by their stored reductions
/// (`reads_reductions`) or not evaluated them. Empty when none are.
[[nodiscard]] TDBG_DECL std::string explain_reductions_only(const trial& t,
                                                            const std::vector<const tensor_selection*>& selections,
                                                            std::string_view rule_name, bool reads_reductions);
} // namespace detail

/// The interface invoke_rule evaluates rules through: one virtual call per
/// step, never per tensor. Rules derive from rule<Derived>, which implements it.
class rule_base {
public:
    rule_base(const rule_base&) = default;
    rule_base(rule_base&&) noexcept = default;
    rule_base& operator=(const rule_base&) = delete;
    rule_base& operator=(rule_base&&) = delete;
    TDBG_DECL virtual ~rule_base();

    /// The trial the rule watches.
    [[nodiscard]] const trial& base_trial() const noexcept { return base_trial_; }
    /// The other trials it compares with (none for most rules).
    [[nodiscard]] const std::vector<trial>& other_trials() const noexcept { return other_trials_; }
    /// The trial of a request: 0 the base trial, i other_trials()[i - 1].
    [[nodiscard]] TDBG_DECL const trial& trial_at(std::size_t index) const;

    /// Its name: the one set, else Derived::rule_name, else "Rule".
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    /// Names it (the registry uses its registered name).
    void set_name(std::string name) { name_ = std::move(name); }
    /// SageMaker's RuleConfigurationName (results carry it); the name unless set.
    [[nodiscard]] const std::string& configuration_name() const noexcept {
        return configuration_name_.empty() ? name_ : configuration_name_;
    }
    /// Sets the configuration name.
    void set_configuration_name(std::string name) { configuration_name_ = std::move(name); }

    /// Where its messages go (stderr unless set).
    [[nodiscard]] const rule_logger& logger() const noexcept { return logger_; }
    /// Sends its messages to `logger`.
    void set_logger(rule_logger logger) { logger_ = std::move(logger); }
    /// What happens when its condition is met (a log message unless changed).
    [[nodiscard]] rule_actions& actions() noexcept { return actions_; }
    /// What happens when its condition is met.
    [[nodiscard]] const rule_actions& actions() const noexcept { return actions_; }
    /// The parameters it was built with.
    [[nodiscard]] const rule_params& params() const noexcept { return params_; }

    /// The tensor `name` of the base trial.
    [[nodiscard]] TDBG_DECL tdbg::tensor tensor(const std::string& name) const;
    /// The value of `name` at `step` of `m` in the base trial.
    [[nodiscard]] TDBG_DECL tensor_value value(const std::string& name, std::int64_t step, mode m = mode::global,
                                               const std::optional<std::string>& worker = std::nullopt) const;
    /// The reduction `r` of `name` at `step` in the base trial (stored, else computed).
    [[nodiscard]] TDBG_DECL tensor_value reduction_value(const std::string& name, std::int64_t step, reduction r,
                                                         mode m = mode::global,
                                                         const std::optional<std::string>& worker = std::nullopt) const;
    /// Reads `request` through its trial now.
    [[nodiscard]] TDBG_DECL tensor_value read(const tensor_request& request) const;

protected:
    TDBG_DECL rule_base(trial base, std::vector<trial> others, rule_params params, std::string_view default_name);

private:
    friend class detail::rule_runner;

    // What invoke_rule calls (rule<Derived> implements them from the derived class).
    [[nodiscard]] virtual bool do_parallel_steps() const noexcept = 0;
    [[nodiscard]] virtual std::vector<tensor_request> do_required_tensors(std::int64_t step) const = 0;
    [[nodiscard]] virtual verdict do_invoke_at_step(std::int64_t step, const step_inputs& inputs) = 0;
    [[nodiscard]] virtual verdict do_while_waiting(std::int64_t next_step) = 0;
    [[nodiscard]] virtual std::string do_explain_selection() const = 0;
    [[nodiscard]] virtual std::string do_explain_reductions_only() const = 0;
    [[nodiscard]] virtual std::optional<comparison_coverage> do_comparisons() const = 0;

    trial base_trial_;
    std::vector<trial> other_trials_;
    rule_params params_;
    rule_logger logger_;
    rule_actions actions_;
    std::string name_;
    std::string configuration_name_;
};

namespace detail {

// What the CRTP base takes from the derived class (see the file comment): each alias is a
// valid type exactly when the class declares that member (a flag's alias has its value).
template <class T>
using rule_name_member = decltype(std::string_view(T::rule_name));
template <class T>
using parallel_steps_member = std::bool_constant<bool(T::parallel_steps)>;
template <class T>
using required_tensors_member = decltype(std::declval<const T&>().required_tensors(std::int64_t{}));
template <class T>
using invoke_with_step_member = decltype(verdict(std::declval<T&>().invoke_at_step(std::int64_t{})));
template <class T>
using invoke_with_inputs_member =
    decltype(verdict(std::declval<T&>().invoke_at_step(std::int64_t{}, std::declval<const step_inputs&>())));
template <class T>
using while_waiting_member = decltype(verdict(std::declval<T&>().while_waiting(std::int64_t{})));
template <class T>
using tensor_selections_member =
    decltype(std::vector<const tensor_selection*>(std::declval<const T&>().tensor_selections()));
template <class T>
using comparisons_member = decltype(comparison_coverage(std::declval<const T&>().comparisons()));
template <class T>
using decides_by_reductions_member = std::bool_constant<bool(T::decides_by_reductions)>;

/// True when T declares the member that `Member<T>` names.
template <template <class> class Member, class T>
inline constexpr bool declares_v = tdbg::detail::is_detected<Member, T>::value;

/// True when T declares `rule_name`.
template <class T>
using has_rule_name = tdbg::detail::is_detected<rule_name_member, T>;

/// `Flag<T>::value` where T declares the flag (`Flag<T>` is valid), else false.
template <template <class> class Flag, class T>
[[nodiscard]] constexpr bool declared_flag() noexcept {
    if constexpr (tdbg::detail::is_detected<Flag, T>::value) {
        return Flag<T>::value;
    } else {
        return false;
    }
}

template <class T>
[[nodiscard]] constexpr std::string_view default_rule_name() noexcept {
    if constexpr (has_rule_name<T>::value) {
        return T::rule_name;
    } else {
        return "Rule";
    }
}

} // namespace detail

/// True when `Rule` lets invoke_rule evaluate several steps at once.
template <class Rule>
inline constexpr bool parallel_steps_v = detail::declared_flag<detail::parallel_steps_member, Rule>();

/// The base of a rule class `Derived` (see the file comment).
template <class Derived>
class rule : public rule_base {
public:
    using derived_type = Derived;

    /// The rule as its own class.
    [[nodiscard]] Derived& derived() noexcept { return static_cast<Derived&>(*this); }
    /// The rule as its own class.
    [[nodiscard]] const Derived& derived() const noexcept { return static_cast<const Derived&>(*this); }

    rule& operator=(const rule&) = delete;
    rule& operator=(rule&&) = delete;
    ~rule() override = default;

protected:
    /// A rule over `base_trial` with `params`.
    explicit rule(trial base_trial, rule_params params = rule_params())
        : rule_base(std::move(base_trial), {}, std::move(params), detail::default_rule_name<Derived>()) {}
    /// A rule over `base_trial` that also reads `other_trials`.
    rule(trial base_trial, std::vector<trial> other_trials, rule_params params = rule_params())
        : rule_base(std::move(base_trial), std::move(other_trials), std::move(params),
                    detail::default_rule_name<Derived>()) {}

    rule(const rule&) = default;
    rule(rule&&) noexcept = default;

private:
    [[nodiscard]] bool do_parallel_steps() const noexcept final { return parallel_steps_v<Derived>; }

    [[nodiscard]] std::vector<tensor_request> do_required_tensors(std::int64_t step) const final {
        if constexpr (detail::declares_v<detail::required_tensors_member, Derived>) {
            return derived().required_tensors(step);
        } else {
            (void)step;
            return {};
        }
    }

    [[nodiscard]] verdict do_invoke_at_step(std::int64_t step, const step_inputs& inputs) final {
        if constexpr (detail::declares_v<detail::required_tensors_member, Derived>) {
            static_assert(detail::declares_v<detail::invoke_with_inputs_member, Derived>,
                          "a rule that declares required_tensors(step) reads them in "
                          "invoke_at_step(std::int64_t step, const step_inputs& inputs)");
            return derived().invoke_at_step(step, inputs);
        } else {
            static_assert(detail::declares_v<detail::invoke_with_step_member, Derived>,
                          "a rule defines invoke_at_step(std::int64_t step), returning bool or tdbg::rules::verdict");
            (void)inputs;
            return derived().invoke_at_step(step);
        }
    }

    [[nodiscard]] verdict do_while_waiting(std::int64_t next_step) final {
        if constexpr (detail::declares_v<detail::while_waiting_member, Derived>) {
            return derived().while_waiting(next_step);
        } else {
            (void)next_step;
            return false;
        }
    }

    [[nodiscard]] std::string do_explain_selection() const final {
        if constexpr (detail::declares_v<detail::tensor_selections_member, Derived>) {
            return detail::explain_selections(base_trial(), derived().tensor_selections());
        } else {
            return {};
        }
    }

    [[nodiscard]] std::optional<comparison_coverage> do_comparisons() const final {
        if constexpr (detail::declares_v<detail::comparisons_member, Derived>) {
            return derived().comparisons();
        } else {
            return std::nullopt;
        }
    }

    [[nodiscard]] std::string do_explain_reductions_only() const final {
        if constexpr (detail::declares_v<detail::tensor_selections_member, Derived>) {
            return detail::explain_reductions_only(
                base_trial(), derived().tensor_selections(), name(),
                detail::declared_flag<detail::decides_by_reductions_member, Derived>());
        } else {
            return {};
        }
    }
};

} // namespace tdbg::rules

/// The explicit instantiation, declaration (`extern template`) or definition (`template`), of
/// the bases of a built-in rule class `name`. Its header declares them and its definitions
/// (builtin/impl/) define them, so that under TDBG_SEPARATE_COMPILATION a program's file does
/// not compile a built-in rule's bases again (their virtual functions and tables).
/// (`instantiation` is words, which parentheses cannot enclose.)
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define TDBG_DETAIL_RULE_BASES(instantiation, name) instantiation class tdbg::rules::rule<tdbg::rules::name>;

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/rule.ipp"
#endif
