#pragma once
/// \file
/// `rule<Derived, Storage>`: the base of every rule (smdebug's Rule), by CRTP.
///
/// A rule is a class with a constructor taking the trial it watches and its
/// string parameters, and `bool invoke_at_step(std::int64_t step)`, true when
/// its condition is met at that global step:
///
///     class large_gradient : public tdbg::rules::rule<large_gradient> {
///     public:
///         static constexpr std::string_view rule_name = "LargeGradient";
///         large_gradient(trial_type trial, const tdbg::rules::rule_params& params)
///             : rule(std::move(trial), params), threshold_(params.get("threshold", 20.0)) {}
///         bool invoke_at_step(std::int64_t step) {
///             for (const auto& name : base_trial().tensor_names(std::nullopt, tdbg::mode::global,
///                                                               std::nullopt, "gradients")) {
///                 auto mean = reduction_value(name, step, tdbg::reduction{tdbg::reduction_kind::mean, true});
///                 if (tdbg::rules::scalar_of(mean) > threshold_) return true;
///             }
///             return false;
///         }
///     private:
///         double threshold_;
///     };
///
/// invoke_rule (rules/invoke.hpp) calls invoke_at_step step after step. Optional
/// members a rule may define:
///   - `static constexpr bool parallel_steps = true;` when invoke_at_step only
///     reads (no state kept between steps): invoke_rule then evaluates several
///     steps at once, on several threads, and folds the outcomes in step order.
///   - `std::vector<tensor_request> required_tensors(std::int64_t step) const`:
///     what the step will read, which invoke_rule waits for and fetches up front
///     (in parallel); `value()` and `reduction_value()` below then serve it.
///   - `static constexpr std::string_view rule_name`: the name reports use
///     (the registry's name wins when the rule is built through it).
/// Parameters are read in the constructor with rule_params' typed getters;
/// a parameter no getter asked for is an error when the rule is invoked.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <functional>
#include <unordered_map>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"
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
    /// When true a missing value is no error: fetched() then gives nullopt.
    /// Otherwise the exception the trial throws skips the step, as smdebug's fetch does.
    bool optional = false;
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

namespace detail {

/// A request as a lookup key, viewing the strings of a request or of the caller's arguments.
struct request_key {
    std::size_t trial_index = 0;
    std::string_view name;
    std::int64_t step = 0;
    int step_mode = 0;
    std::string_view worker;
    int which = -1;

    friend bool operator==(const request_key& a, const request_key& b) noexcept {
        return a.trial_index == b.trial_index && a.step == b.step && a.step_mode == b.step_mode && a.which == b.which &&
               a.name == b.name && a.worker == b.worker;
    }
};

struct request_key_hash {
    std::size_t operator()(const request_key& k) const noexcept {
        std::size_t h = std::hash<std::string_view>()(k.name);
        auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U); };
        mix(static_cast<std::size_t>(k.step));
        mix(k.trial_index);
        mix(static_cast<std::size_t>(k.step_mode) * 31U + static_cast<std::size_t>(k.which + 1));
        mix(std::hash<std::string_view>()(k.worker));
        return h;
    }
};

inline int reduction_code(const std::optional<reduction>& r) noexcept {
    return r ? static_cast<int>(r->kind) * 2 + (r->abs ? 1 : 0) : -1;
}

inline request_key key_of(std::size_t trial_index, std::string_view name, std::int64_t step, mode m,
                          const std::optional<std::string>& worker, const std::optional<reduction>& which) noexcept {
    return request_key{trial_index, name, step, static_cast<int>(m), worker ? std::string_view(*worker) : std::string_view(),
                       reduction_code(which)};
}

inline request_key key_of(const tensor_request& q) noexcept {
    return key_of(q.trial_index, q.name, q.step, q.step_mode, q.worker, q.which);
}

/// What invoke_rule prepared for one evaluation of one rule at one step: the
/// declared requests and what was fetched for each (nullopt: optional and missing).
struct step_context {
    const void* owner = nullptr; // the rule being evaluated
    std::int64_t step = 0;
    std::vector<tensor_request> requests;
    std::vector<std::optional<tensor_value>> values;
    std::unordered_map<request_key, std::size_t, request_key_hash> index; // views into `requests`
    std::string reason;

    /// The fetched value for `key`: nullptr when not declared, else a pointer to it (nullopt when missing).
    [[nodiscard]] const std::optional<tensor_value>* find(const request_key& key) const {
        auto it = index.find(key);
        return it == index.end() ? nullptr : &values[it->second];
    }
};

/// The context of the evaluation running on this thread (invoke_rule sets it).
inline step_context*& current_step_context() noexcept {
    thread_local step_context* current = nullptr; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): per-thread by design
    return current;
}

/// Sets the current context for as long as it lives.
class context_scope {
public:
    explicit context_scope(step_context* ctx) noexcept : previous_(current_step_context()) { current_step_context() = ctx; }
    context_scope(const context_scope&) = delete;
    context_scope& operator=(const context_scope&) = delete;
    ~context_scope() { current_step_context() = previous_; }

private:
    step_context* previous_;
};

template <class T, class = void>
struct has_rule_name : std::false_type {};
template <class T>
struct has_rule_name<T, std::void_t<decltype(std::string_view(T::rule_name))>> : std::true_type {};

template <class T, class = void>
struct declares_parallel_steps : std::false_type {};
template <class T>
struct declares_parallel_steps<T, std::void_t<decltype(bool(T::parallel_steps))>> : std::bool_constant<T::parallel_steps> {};

} // namespace detail

/// True when `Rule` lets invoke_rule evaluate several steps at once.
template <class Rule>
inline constexpr bool parallel_steps_v = detail::declares_parallel_steps<Rule>::value;

/// The base of a rule `Derived` over runs in `Storage` (see the file comment).
template <class Derived, class Storage = local_storage>
class rule {
public:
    using storage_type = Storage;
    using trial_type = ::tdbg::trial<Storage>;
    using tensor_type = ::tdbg::tensor<Storage>;
    using derived_type = Derived;

    /// The rule as its own class.
    [[nodiscard]] Derived& derived() noexcept { return static_cast<Derived&>(*this); }
    /// The rule as its own class.
    [[nodiscard]] const Derived& derived() const noexcept { return static_cast<const Derived&>(*this); }

    /// The trial the rule watches.
    [[nodiscard]] const trial_type& base_trial() const noexcept { return base_trial_; }
    /// The other trials it compares with (none for most rules).
    [[nodiscard]] const std::vector<trial_type>& other_trials() const noexcept { return other_trials_; }

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

    /// Its name: the one set, else Derived::rule_name, else "Rule".
    [[nodiscard]] std::string name() const {
        if (!name_.empty()) {
            return name_;
        }
        if constexpr (detail::has_rule_name<Derived>::value) {
            return std::string(Derived::rule_name);
        } else {
            return "Rule";
        }
    }
    /// Names it (the registry uses its registered name).
    void set_name(std::string name) { name_ = std::move(name); }

    /// What the rule reads at `step`: nothing declared unless Derived says so.
    [[nodiscard]] std::vector<tensor_request> required_tensors(std::int64_t /*step*/) const { return {}; }

    /// The tensor `name` of the base trial.
    [[nodiscard]] tensor_type tensor(const std::string& name) const { return base_trial_.tensor(name); }

    /// The value of `name` at `step` of `m` in the base trial: what invoke_rule
    /// fetched for this step when it was declared, else read now.
    [[nodiscard]] tensor_value value(const std::string& name, std::int64_t step, mode m = mode::global,
                                     const std::optional<std::string>& worker = std::nullopt) const {
        if (const auto* v = prefetched(detail::key_of(0, name, step, m, worker, std::nullopt)); v != nullptr && *v) {
            return **v;
        }
        return base_trial_.tensor(name).value(step, m, worker);
    }

    /// The reduction `r` of `name` at `step` (stored, else computed), fetched
    /// ahead when declared, else read now.
    [[nodiscard]] tensor_value reduction_value(const std::string& name, std::int64_t step, reduction r,
                                               mode m = mode::global,
                                               const std::optional<std::string>& worker = std::nullopt) const {
        if (const auto* v = prefetched(detail::key_of(0, name, step, m, worker, r)); v != nullptr && *v) {
            return **v;
        }
        return base_trial_.tensor(name).reduction_value(step, r, m, worker);
    }

    /// The declared request `request` as fetched: nullopt when it was optional and missing.
    /// Reads it now when it was not declared for this step.
    [[nodiscard]] std::optional<tensor_value> fetched(const tensor_request& request) const {
        if (const auto* found = prefetched(detail::key_of(request))) {
            return *found;
        }
        return read_request(request);
    }

    /// Gives the reason of the current step's trigger (the stop marker and log carry it).
    void set_reason(std::string reason) const {
        if (detail::step_context* ctx = detail::current_step_context(); ctx != nullptr && ctx->owner == this) {
            ctx->reason = std::move(reason);
        }
    }

    /// Reads `request` through its trial (no prefetch).
    [[nodiscard]] tensor_value read_request(const tensor_request& request) const {
        const trial_type& t = trial_at(request.trial_index);
        auto handle = t.tensor(request.name);
        if (request.which) {
            return handle.reduction_value(request.step, *request.which, request.step_mode, request.worker);
        }
        return handle.value(request.step, request.step_mode, request.worker);
    }

    /// The trial of a request: 0 the base trial, i other_trials()[i - 1].
    [[nodiscard]] const trial_type& trial_at(std::size_t index) const {
        if (index == 0) {
            return base_trial_;
        }
        if (index > other_trials_.size()) {
            throw config_error("rule " + name() + ": trial index " + std::to_string(index) + " but only " +
                               std::to_string(other_trials_.size()) + " other trial(s)");
        }
        return other_trials_[index - 1];
    }

protected:
    /// A rule over `base_trial` with `params` (shared: the getters' record reaches this base).
    explicit rule(trial_type base_trial, rule_params params = rule_params())
        : base_trial_(std::move(base_trial)), params_(std::move(params)) {
        name_params();
    }
    /// A rule over `base_trial` that also reads `other_trials`.
    rule(trial_type base_trial, std::vector<trial_type> other_trials, rule_params params = rule_params())
        : base_trial_(std::move(base_trial)), other_trials_(std::move(other_trials)), params_(std::move(params)) {
        name_params();
    }

    rule(const rule&) = default;
    rule(rule&&) noexcept = default;
    rule& operator=(const rule&) = default;
    rule& operator=(rule&&) noexcept = default;
    ~rule() = default;

private:
    // Parameter errors raised by the derived constructor name the rule.
    void name_params() {
        if (params_.context().empty()) {
            params_.set_context(name());
        }
    }

    [[nodiscard]] const std::optional<tensor_value>* prefetched(const detail::request_key& key) const {
        const detail::step_context* ctx = detail::current_step_context();
        if (ctx == nullptr || ctx->owner != this || ctx->index.empty()) {
            return nullptr;
        }
        return ctx->find(key);
    }

    trial_type base_trial_;
    std::vector<trial_type> other_trials_;
    rule_params params_;
    rule_logger logger_;
    rule_actions actions_;
    std::string name_;
};

} // namespace tdbg::rules
