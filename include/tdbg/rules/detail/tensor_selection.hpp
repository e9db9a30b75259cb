#pragma once
/// \file
/// Which tensors a built-in rule looks at (SageMaker's collection_names and
/// tensor_regex parameters), cached until the trial learns new tensor names,
/// and the evaluation pattern the built-in "any tensor" rules share.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/function_ref.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules::detail {

/// Collections and regexes naming tensors of a trial; their union is selected.
class tensor_selection {
public:
    /// The selected tensors: names (sorted) and handles, in the same order.
    struct selected {
        std::vector<std::string> names;
        std::vector<tdbg::tensor> handles;
        std::size_t known = 0; // how many tensor names the trial had
    };

    tensor_selection() = default;
    /// Selects the tensors of `collections` and those matching (searching) any of `regexes`;
    /// with neither, every tensor when `all_when_empty`, else none.
    tensor_selection(std::vector<std::string> collections, std::vector<std::string> regexes, bool all_when_empty)
        : collections_(std::move(collections)), regexes_(std::move(regexes)), all_when_empty_(all_when_empty) {}

    TDBG_DECL tensor_selection(const tensor_selection& other);
    TDBG_DECL tensor_selection& operator=(const tensor_selection& other);
    TDBG_DECL tensor_selection(tensor_selection&& other) noexcept;
    TDBG_DECL tensor_selection& operator=(tensor_selection&& other) noexcept;
    ~tensor_selection() = default;

    /// True when nothing was named (no collection, no regex).
    [[nodiscard]] bool unspecified() const noexcept { return collections_.empty() && regexes_.empty(); }
    /// The collections named.
    [[nodiscard]] const std::vector<std::string>& collections() const noexcept { return collections_; }
    /// The regexes named.
    [[nodiscard]] const std::vector<std::string>& regexes() const noexcept { return regexes_; }
    /// True when naming nothing selects every tensor.
    [[nodiscard]] bool all_when_empty() const noexcept { return all_when_empty_; }

    /// Empty when it selects some tensor of `t` or names nothing (and then selects none
    /// on purpose); otherwise what it named and why that selects nothing, with the run's
    /// nearest names: "tensor_regex '.*relu_output' matches none of the run's 4 tensors
    /// (did you mean 'layer1/relu_out'?)", "collection 'gradiens' is not in the run
    /// (did you mean 'gradients'?)".
    [[nodiscard]] TDBG_DECL std::string explain_empty(const trial& t) const;

    /// The selected tensors of `t`. Names only ever get added to a trial: the
    /// answer is kept until the trial knows more names, and for good once the
    /// run has ended (then it costs a pointer copy).
    [[nodiscard]] TDBG_DECL std::shared_ptr<const selected> snapshot(const trial& t) const;

    /// The requests `make(tensor)` makes for each tensor selected in `t`, in the selection's
    /// order, each tensor's together; those of `t` itself (trial_index 0) carry the tensor's
    /// handle (which keeps the snapshot alive), so that the engine reads each input without
    /// looking its name up again. Compiled once, whatever `make` each rule passes.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request>
    tensor_requests(const trial& t,
                    tdbg::detail::function_ref<std::vector<tensor_request>(const tdbg::tensor&)> make) const;

    /// One request per tensor selected in `t`, made by `make(name)` (see tensor_requests).
    [[nodiscard]] TDBG_DECL std::vector<tensor_request>
    requests(const trial& t, tdbg::detail::function_ref<tensor_request(const std::string&)> make) const;

    /// An optional value request at `step` for each tensor selected in `t`.
    [[nodiscard]] std::vector<tensor_request> value_requests(const trial& t, std::int64_t step) const {
        return requests(t, [step](const std::string& name) { return value_request(name, step, true); });
    }

    /// The selected tensor names of `t`, sorted.
    [[nodiscard]] std::vector<std::string> names(const trial& t) const { return snapshot(t)->names; }

private:
    std::vector<std::string> collections_;
    std::vector<std::string> regexes_;
    bool all_when_empty_ = true;
    mutable std::mutex mutex_;
    mutable std::shared_ptr<const selected> cached_;
    mutable bool cached_ended_ = false;
};

/// A count that steps evaluated in parallel add to (what a parallel-steps rule compared, for
/// its comparisons()); a copy of the rule starts from the count it copies.
class step_count {
public:
    step_count() = default;
    step_count(const step_count& other) noexcept : n_(other.get()) {}
    step_count& operator=(const step_count& other) noexcept {
        n_.store(other.get(), std::memory_order_relaxed);
        return *this;
    }
    step_count(step_count&& other) noexcept : n_(other.get()) {}
    step_count& operator=(step_count&& other) noexcept {
        n_.store(other.get(), std::memory_order_relaxed);
        return *this;
    }
    ~step_count() = default;
    /// Adds `k` (from any thread).
    void add(std::uint64_t k = 1) const noexcept { n_.fetch_add(k, std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t get() const noexcept { return n_.load(std::memory_order_relaxed); }

private:
    mutable std::atomic<std::uint64_t> n_{0};
};

/// Reads SageMaker's `collection_names` and `tensor_regex` (comma-separated lists, default None).
[[nodiscard]] TDBG_DECL tensor_selection selection_from(const rule_params& params, bool all_when_empty,
                                                        const std::vector<std::string>& default_regexes = {});

/// What `tdbg rules --describe` says of `collection_names` and `tensor_regex` for a rule that
/// reads them with selection_from (`required`: with required_selection_from), followed by
/// `then`, the rule's own parameters.
[[nodiscard]] TDBG_DECL std::vector<parameter_description>
selection_parameters(bool required, std::vector<parameter_description> then = {});

/// selection_from(params, false) for rule `rule_name`, which needs one of the two lists: a
/// config_error when neither is given.
[[nodiscard]] TDBG_DECL tensor_selection required_selection_from(const rule_params& params, std::string_view rule_name);

/// The value of `in`, one of `inputs`; when it is not there, throws what reading it threw
/// (inputs.error(in)), as a rule reading it at the step itself would have seen.
[[nodiscard]] TDBG_DECL const tensor_value& value_of(const step_inputs& inputs, const step_inputs::input& in);

/// The value of `in` (value_of) when it holds real-valued elements, else nullptr: a value
/// the rules that look at its numbers do not evaluate (a string, a complex or an empty one).
[[nodiscard]] TDBG_DECL const tensor_value* real_value_of(const step_inputs& inputs, const step_inputs::input& in);

/// The value of a fetched input, or nullptr when it was not saved for its step
/// (tensor_unavailable_for_step); any other reason it is not there is thrown.
[[nodiscard]] TDBG_DECL const tensor_value* value_if_saved(const step_inputs& inputs, const step_inputs::input& in);

/// The inputs [first, last) of one tensor.
struct input_range {
    std::size_t first = 0;
    std::size_t last = 0;
};

/// `inputs` cut where the tensor they name changes: a rule declares each tensor's
/// inputs together (for each worker, each step), in the order of its selection.
[[nodiscard]] TDBG_DECL std::vector<input_range> tensor_groups(const step_inputs& inputs);

/// The workers that wrote `t` at `step` of `m`; none when it cannot be evaluated there
/// (the exceptions any_tensor_index takes for "not evaluated").
[[nodiscard]] TDBG_DECL std::vector<std::string> workers_at(const tdbg::tensor& t, std::int64_t step,
                                                            mode m = mode::global);

/// For each worker that saved `t` at global step `step`: a request for its value where the
/// value was saved, else for those of its stored reductions that are among `deciding` (a rule
/// whose condition they can decide reads them instead; see worker_inputs). Every request is
/// optional, each tensor's together, by worker. None when `t` cannot be evaluated there.
[[nodiscard]] TDBG_DECL std::vector<tensor_request> value_or_reductions(const tdbg::tensor& t, std::int64_t step,
                                                                        const std::vector<reduction>& deciding);

/// What one worker saved of a tensor at a step, among a rule's inputs: its value (nullptr
/// when only reductions were saved), else its stored reductions as numbers (those of a real
/// dtype; a complex one is left out).
struct worker_inputs {
    const std::string* worker = nullptr;
    const tensor_value* value = nullptr;
    std::vector<std::pair<reduction, double>> reductions;

    /// The worker's name, "?" when the request named none.
    [[nodiscard]] std::string worker_name() const { return worker != nullptr ? *worker : std::string("?"); }
    /// The stored reduction `r`, if it is among them.
    [[nodiscard]] std::optional<double> get(reduction r) const noexcept {
        for (const auto& [which, x] : reductions) {
            if (which == r) {
                return x;
            }
        }
        return std::nullopt;
    }
};

/// The inputs `range` of one tensor (requested by value_or_reductions), by worker; workers
/// with neither a value nor a stored reduction there are left out.
[[nodiscard]] TDBG_DECL std::vector<worker_inputs> by_worker(const step_inputs& inputs, input_range range);

/// The verdict for one tensor from its inputs `range` (requested by value_or_reductions),
/// worker by worker (by_worker): `check(w)` judges one worker's (nullopt: it cannot be
/// judged). Met as soon as one worker's is; nullopt when none could be judged.
[[nodiscard]] TDBG_DECL std::optional<verdict>
any_worker(const step_inputs& inputs, input_range range,
           tdbg::detail::function_ref<std::optional<verdict>(const worker_inputs&)> check);

/// The shape the "any tensor" built-ins share: `check(i)` says whether the
/// condition holds for the i-th of `count` tensors (a verdict; nullopt: that
/// tensor cannot be evaluated at this step). Met as soon as one is;
/// tensor_unavailable_for_step when no tensor could be evaluated, so that
/// invoke_rule records the step as skipped.
[[nodiscard]] TDBG_DECL verdict any_tensor_index(std::size_t count, std::int64_t step, const std::string& rule_name,
                                                 tdbg::detail::function_ref<std::optional<verdict>(std::size_t)> check);

} // namespace tdbg::rules::detail

#if TDBG_HEADER_ONLY
#include "tdbg/rules/detail/impl/tensor_selection.ipp"
#endif
