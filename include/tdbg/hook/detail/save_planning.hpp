#pragma once
/// \file
/// What the hook writes of one tensor at a step, as smdebug's _write_for_tensor decides it from the
/// collections that save the tensor now (collection_selection::active): its shape, its reductions
/// (each once, computed by a collection's compiled kernel or one runtime pass), its raw value, a
/// TensorBoard histogram and scalar. The engine (hook/detail/hook_engine.hpp) queues the records.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/selection.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/convention.hpp"

namespace tdbg::detail {

/// The collections that save a tensor now: indices of collection_selection::active.
using active_collections = std::vector<std::size_t>;

/// The number of elements of a tensor of `shape` (1 for a scalar).
[[nodiscard]] inline std::size_t element_count(const tensor_value::shape_type& shape) noexcept {
    std::size_t count = 1;
    for (const std::size_t extent : shape) {
        count *= extent;
    }
    return count;
}

/// True when an active collection saves the tensor's shape (ReductionConfig save_shape).
[[nodiscard]] TDBG_DECL bool saves_shape(const collection_selection& selection, const active_collections& active);

/// True when an active collection saves the raw tensor.
[[nodiscard]] TDBG_DECL bool saves_raw(const collection_selection& selection, const active_collections& active);

/// True when an active collection is one of smdebug's SCALAR_COLLECTIONS.
[[nodiscard]] TDBG_DECL bool in_scalar_collection(const collection_selection& selection,
                                                  const active_collections& active);

/// The collection whose name tags the tensor's TensorBoard histogram: the first active one that
/// asks for histograms and saves more than raw values; none when no collection does.
[[nodiscard]] TDBG_DECL std::optional<std::string> histogram_collection(const collection_selection& selection,
                                                                        const active_collections& active);

/// What the active collections save of a tensor of `type` and `shape`: the reductions in
/// saved_reductions' order, the raw value, a histogram when the hook exports to TensorBoard
/// (`tensorboard`).
[[nodiscard]] TDBG_DECL save_plan plan_of(const collection_selection& selection, const active_collections& active,
                                          dtype type, const tensor_value::shape_type& shape, bool tensorboard);

/// The reductions the active collections save of `value`, each once in smdebug's order over the
/// collections, as `convention` stores them. A collection's compiled kernel computes its whole
/// list in one pass (numpy's convention only); `reduce` computes the rest in one runtime pass.
/// A reduction the dtype has none of (dtype_mismatch) is left out, as smdebug skips what numpy
/// refuses.
[[nodiscard]] TDBG_DECL std::vector<std::pair<reduction, tensor_value>>
saved_reductions(const collection_selection& selection, const active_collections& active, const tensor_value& value,
                 reductions_function reduce, reduction_convention convention);

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/impl/save_planning.ipp"
#endif
