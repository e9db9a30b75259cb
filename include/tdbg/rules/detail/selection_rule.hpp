#pragma once
/// \file
/// The bases of the built-in rules that read the tensors of one selection (SageMaker's
/// collection_names and tensor_regex, a regex parameter of their own, or a fixed
/// collection), so that a rule class declares only what is its own:
///   - `selection_rule<Derived>` holds the selection and declares it to the engine
///     (tensor_selections(), see rule.hpp);
///   - `any_tensor_rule<Derived>` adds the step loop of the "any tensor" rules: a step
///     reads each selected tensor's inputs and is met as soon as one tensor meets the
///     condition (any_tensor_index).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules::detail {

/// A rule<Derived> that reads the tensors one tensor_selection selects.
template <class Derived>
class selection_rule : public rule<Derived> {
public:
    /// The selection of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const tensor_selection*> tensor_selections() const { return {&selection_}; }

protected:
    /// A rule over `base`, configured by `params`, that reads the tensors `selection` selects.
    selection_rule(trial base, const rule_params& params, tensor_selection selection)
        : rule<Derived>(std::move(base), params), selection_(std::move(selection)) {}
    /// The same, comparing with `others` too.
    selection_rule(trial base, std::vector<trial> others, const rule_params& params, tensor_selection selection)
        : rule<Derived>(std::move(base), std::move(others), params), selection_(std::move(selection)) {}

    /// The tensors it reads.
    [[nodiscard]] const tensor_selection& selection() const noexcept { return selection_; }

private:
    tensor_selection selection_;
};

/// A selection_rule whose steps are judged tensor by tensor, each step on its own values
/// (parallel steps). Derived declares, public:
///   - `std::optional<verdict> check_tensor(const step_inputs& inputs, input_range tensor_inputs, std::int64_t step)
///   const`:
///     the verdict for one tensor from its inputs `tensor_inputs` (nullopt: it cannot be evaluated);
///   - where a step reads more of a tensor than the value or the one reduction given at
///     construction, `std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const`:
///     what a step reads of the selected tensor `t` (none: `t` is not evaluated there).
/// A step is met as soon as one tensor is, and skipped (tensor_unavailable_for_step) when
/// none can be evaluated.
template <class Derived>
class any_tensor_rule : public selection_rule<Derived> {
public:
    static constexpr bool parallel_steps = true;

    /// What `step` reads of every selected tensor, each tensor's requests together.
    [[nodiscard]] std::vector<tensor_request> required_tensors(std::int64_t step) const {
        return this->selection().tensor_requests(
            this->base_trial(), [&](const tdbg::tensor& t) { return this->derived().tensor_requests(t, step); });
    }

    /// What `step` reads of the selected tensor `t` unless Derived says otherwise: the reduction
    /// given at construction, else the value (optional: a tensor without it is not evaluated).
    [[nodiscard]] std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const {
        if (reads_) {
            return {reduction_request(t.name(), step, *reads_, true)};
        }
        return {value_request(t.name(), step, true)};
    }

    /// Met when one tensor's inputs at `step` meet the condition.
    [[nodiscard]] verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
        const std::vector<input_range> tensors = tensor_groups(inputs);
        return any_tensor_index(tensors.size(), step, this->name(), [&](std::size_t i) -> std::optional<verdict> {
            return this->derived().check_tensor(inputs, tensors[i], step);
        });
    }

protected:
    /// A rule over `base`, configured by `params`, that reads, of each tensor `selection`
    /// selects, the reduction `reads` (none: its value) unless Derived says otherwise.
    any_tensor_rule(trial base, const rule_params& params, tensor_selection selection,
                    std::optional<reduction> reads = std::nullopt)
        : selection_rule<Derived>(std::move(base), params, std::move(selection)), reads_(reads) {}
    /// A rule over `base` that compares with `others` too, reading each selected tensor's value
    /// unless Derived says otherwise.
    any_tensor_rule(trial base, std::vector<trial> others, const rule_params& params, tensor_selection selection)
        : selection_rule<Derived>(std::move(base), std::move(others), params, std::move(selection)) {}

private:
    std::optional<reduction> reads_;
};

} // namespace tdbg::rules::detail

// `instantiation` is `template` or `extern template`: words, which parentheses cannot enclose.
// NOLINTBEGIN(bugprone-macro-parentheses)
/// TDBG_DETAIL_RULE_BASES (rule.hpp) for a built-in selection_rule.
#define TDBG_DETAIL_SELECTION_RULE_BASES(instantiation, name)                                                          \
    TDBG_DETAIL_RULE_BASES(instantiation, name)                                                                        \
    instantiation class tdbg::rules::detail::selection_rule<tdbg::rules::name>;
/// TDBG_DETAIL_RULE_BASES (rule.hpp) for a built-in any_tensor_rule.
#define TDBG_DETAIL_ANY_TENSOR_RULE_BASES(instantiation, name)                                                         \
    TDBG_DETAIL_SELECTION_RULE_BASES(instantiation, name)                                                              \
    instantiation class tdbg::rules::detail::any_tensor_rule<tdbg::rules::name>;
// NOLINTEND(bugprone-macro-parentheses)
