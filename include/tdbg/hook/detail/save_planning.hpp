#pragma once
/// \file
/// What the hook writes of one tensor at a step, as smdebug's _write_for_tensor decides it from the
/// collections that save the tensor now (collection_selection::active): its shape, its reductions
/// (each once, computed by a collection's compiled kernel or one runtime pass), its raw value, a
/// TensorBoard histogram and scalar. The engine (hook/detail/hook_engine.hpp) queues the records.
/// Also what a saved tensor must be: a name that can name it in the run's files, and no more
/// dimensions than a reader takes. `save_planner` makes all of it one call in each half of a save
/// (hook_engine::prepare_save, which hands a `save_token` to hook_engine::save_prepared).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/collection_selection.hpp"
#include "tdbg/hook/detail/save_token.hpp"
#include "tdbg/hook/detail/step_clock.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg::detail {

/// The number of elements of a tensor of `shape` (1 for a scalar).
[[nodiscard]] inline std::size_t element_count(const tensor_value::shape_type& shape) noexcept {
    std::size_t count = 1;
    for (const std::size_t extent : shape) {
        count *= extent;
    }
    return count;
}

/// Everything one save of a tensor writes at a step, decided here and nowhere else: the plan
/// (reductions, raw value, histogram) and what goes beside the event file's records. The engine
/// emits it (step_records::emit, writer/record_block.hpp) with the values at hand or deferred.
struct save_decision {
    save_plan plan;
    /// Its shape in the step's index (ReductionConfig save_shape).
    bool shape = false;
    /// The collection whose name tags its TensorBoard histogram, when plan.histogram.
    std::string histogram_collection;
    /// A TensorBoard scalar of its element: a one-element tensor of one of smdebug's
    /// SCALAR_COLLECTIONS when the hook exports to TensorBoard (a deferred save's scalar is its
    /// raw value, so it has one when plan.raw only).
    bool tensorboard_scalar = false;
};

/// What the active collections save of a tensor of `type` and `shape`: each reduction once, in
/// smdebug's order over the collections (none for SCALAR_COLLECTIONS), the raw value, a histogram
/// (numbers only: not bool, string or complex) tagged by the first collection that asks for one
/// and saves more than raw values, the shape and the scalar, with TensorBoard's parts only when
/// the hook exports to it (`tensorboard`). An empty tensor saves nothing but its shape, as in smdebug.
[[nodiscard]] TDBG_DECL save_decision decide_save(const collection_selection& selection,
                                                  const active_collections& active, dtype type,
                                                  const tensor_value::shape_type& shape, bool tensorboard);
/// decide_save into `out`, whose memory is reused (the hook decides at every save).
TDBG_DECL void decide_save(const collection_selection& selection, const active_collections& active, dtype type,
                           const tensor_value::shape_type& shape, bool tensorboard, save_decision& out);

/// The memory saved_reductions works in, kept by the hook from one save to the next so that a
/// tensor's reductions cost no allocation once it has room.
struct reduction_scratch {
    /// The results: one per plan.reductions, as the convention stores them (nullopt where the
    /// dtype has no such reduction).
    std::vector<std::optional<reduction_value>> results;
    std::vector<reduction> order;   // the reductions listed so far, in smdebug's order
    std::vector<reduction> missing; // those no collection's kernel computed
    std::vector<reduction_value> computed;
};

/// The reductions `plan` saves of `value`, into scratch.results, one per plan.reductions
/// (decide_save's plan for these collections), as `convention` stores them (their shape is the
/// convention's: stored_reduction_rank). A collection's compiled kernel computes its whole list
/// in one pass (numpy's convention only); `reduce` computes the rest in one runtime pass. A
/// reduction the dtype has none of (dtype_mismatch) is nullopt, as smdebug skips what numpy
/// refuses.
TDBG_DECL void saved_reductions(const collection_selection& selection, const active_collections& active,
                                const save_plan& plan, const tensor_value& value, reduction_values_function reduce,
                                reduction_convention convention, reduction_scratch& scratch);

/// Throws invalid_name unless `name` can name a tensor: not empty, UTF-8 (names go into JSON
/// files, which hold UTF-8 only), no NUL byte.
TDBG_DECL void check_tensor_name(std::string_view name);

/// Throws usage_error when a tensor `name` of `rank` dimensions has more than max_tensor_rank:
/// neither smdebug (numpy) nor tdbg could read it back.
TDBG_DECL void check_tensor_rank(std::string_view name, std::size_t rank);

class selection_check; // selection_check.hpp
class error_reporter;  // error_reporter.hpp

/// The checks and decisions of the hook's saves, one call in each half of a save, and what they
/// keep from one save to the next: the names checked, each tensor's last step saved, and memory
/// reused (a saved tensor then costs no allocation here).
class save_planner {
public:
    /// The first half of a save of `name` at `clock`'s open step: checks the name (once per name),
    /// adds it to `collections` (created when missing), finds the collections that save it now,
    /// offers it to `check`, and keeps the step's first save of a tensor only (a later one is
    /// dropped, said once per tensor through `errors`).
    TDBG_DECL save_token prepare(std::string_view name, std::initializer_list<std::string_view> collections,
                                 const step_clock& clock, collection_selection& selection, selection_check& check,
                                 const error_reporter& errors);

    /// The second half's checks and decisions for `value` saved as `name` with `token`
    /// (prepare's): its rank (usage_error beyond max_tensor_rank), then, when the hook still
    /// `writes`, what the save writes (decide_save; `tensorboard`: the hook exports to it) and
    /// its reductions, computed as saved_reductions does (reduction_results()). nullptr when it
    /// does not write.
    TDBG_DECL const save_decision* plan(std::string_view name, const save_token& token, const tensor_value& value,
                                        reduction_values_function reduce, reduction_convention convention,
                                        const collection_selection& selection, bool tensorboard, bool writes);

    /// The reductions of plan's last decision, one per plan.reductions.
    [[nodiscard]] const std::vector<std::optional<reduction_value>>& reduction_results() const noexcept {
        return reductions_.results;
    }

    /// Throws invalid_name unless `name` can name a tensor (check_tensor_name), checked once per name.
    TDBG_DECL void check_name(std::string_view name);

    /// Takes back a token's memory for the next prepare.
    void recycle(save_token&& token) noexcept { spare_ = std::move(token); }

private:
    // True the first time `name` is saved in `clock`'s step; a later save of it is dropped (said once).
    TDBG_DECL bool first_save_in_step(std::string_view name, const step_clock& clock, const error_reporter& errors);

    std::set<std::string, std::less<>> checked_names_;
    std::map<std::string, std::int64_t, std::less<>> last_save_step_; // each tensor's last step saved
    std::set<std::string, std::less<>> said_saved_twice_; // the tensors a second save of a step was said of
    save_decision decision_;     // plan's, its memory reused
    reduction_scratch reductions_; // saved_reductions' memory, reused
    save_token spare_;            // a recycled token's memory, for the next prepare
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/save_planning.ipp"
#endif
