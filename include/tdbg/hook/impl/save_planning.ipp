#pragma once
/// \file
/// Definitions of tdbg/hook/detail/save_planning.hpp.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/detail/save_planning.hpp"

namespace tdbg::detail {

namespace save_planning_parts {

// The reductions computed so far, in smdebug's order: results[k] is order[k]'s, once computed.
struct reduction_results {
    std::vector<reduction> order;
    std::vector<std::optional<tensor_value>> results;
};

// Adds the reductions of collection `e` not listed yet; its compiled kernel (numpy's convention)
// computes them when its configuration is the one it was compiled for.
TDBG_DECL void add_collection(const collection_selection::entry& e, const tensor_value& value,
                              reduction_convention convention, reduction_results& out) {
    const auto wanted = e.reductions.all();
    std::vector<std::size_t> fresh;
    for (std::size_t k = 0; k < wanted.size(); ++k) {
        if (std::find(out.order.begin(), out.order.end(), wanted[k]) == out.order.end()) {
            out.order.push_back(wanted[k]);
            out.results.emplace_back();
            fresh.push_back(k);
        }
    }
    const bool own_kernel = convention == reduction_convention::numpy && e.coll.kernel() && !fresh.empty() &&
                            e.coll.reduction_config() && *e.coll.reduction_config() == e.reductions;
    if (!own_kernel) {
        return;
    }
    std::vector<tensor_value> computed;
    try {
        computed = e.coll.kernel()(value);
    } catch (const dtype_mismatch&) {
        computed.clear(); // no reductions of this dtype
    }
    if (computed.size() != wanted.size()) {
        return;
    }
    for (const std::size_t k : fresh) {
        const auto pos =
            static_cast<std::size_t>(std::find(out.order.begin(), out.order.end(), wanted[k]) - out.order.begin());
        out.results[pos] = std::move(computed[k]);
    }
}

// Computes the reductions no kernel did in one runtime pass of `reduce`.
TDBG_DECL void add_missing(const tensor_value& value, reductions_function reduce, reduction_convention convention,
                           reduction_results& out) {
    std::vector<reduction> missing;
    for (std::size_t k = 0; k < out.order.size(); ++k) {
        if (!out.results[k]) {
            missing.push_back(out.order[k]);
        }
    }
    if (missing.empty()) {
        return;
    }
    std::vector<tensor_value> computed;
    reduce::options opts;
    opts.ddof = reduction_ddof(convention);
    try {
        computed = reduce(value, missing, opts);
    } catch (const dtype_mismatch&) {
        computed.clear();
    }
    std::size_t next = 0;
    for (std::size_t k = 0; k < out.order.size() && next < computed.size(); ++k) {
        if (!out.results[k]) {
            out.results[k] = std::move(computed[next++]);
        }
    }
}

} // namespace save_planning_parts

TDBG_DECL bool saves_shape(const collection_selection& selection, const active_collections& active) {
    return std::any_of(active.begin(), active.end(),
                       [&](std::size_t i) { return selection.at(i).reductions.save_shape; });
}

TDBG_DECL bool saves_raw(const collection_selection& selection, const active_collections& active) {
    return std::any_of(active.begin(), active.end(),
                       [&](std::size_t i) { return selection.at(i).reductions.save_raw_tensor; });
}

TDBG_DECL bool in_scalar_collection(const collection_selection& selection, const active_collections& active) {
    return std::any_of(active.begin(), active.end(),
                       [&](std::size_t i) { return is_scalar_collection(selection.at(i).coll.name()); });
}

TDBG_DECL std::optional<std::string> histogram_collection(const collection_selection& selection,
                                                          const active_collections& active) {
    for (const std::size_t i : active) {
        const auto& e = selection.at(i);
        if (e.histogram && !is_raw_only_collection(e.coll.name())) {
            return e.coll.name();
        }
    }
    return std::nullopt;
}

TDBG_DECL save_plan plan_of(const collection_selection& selection, const active_collections& active, dtype type,
                            const tensor_value::shape_type& shape, bool tensorboard) {
    save_plan plan;
    if (element_count(shape) == 0) {
        return plan; // smdebug writes no record for an empty tensor
    }
    plan.raw = saves_raw(selection, active);
    for (const std::size_t i : active) {
        const auto& e = selection.at(i);
        if (is_scalar_collection(e.coll.name())) {
            continue; // smdebug's SCALAR_COLLECTIONS get no reductions
        }
        for (const reduction r : e.reductions.all()) {
            if (std::find(plan.reductions.begin(), plan.reductions.end(), r) == plan.reductions.end()) {
                plan.reductions.push_back(r);
            }
        }
    }
    plan.histogram = tensorboard && type != dtype::boolean && type != dtype::string && !is_complex(type) &&
                     histogram_collection(selection, active).has_value();
    return plan;
}

TDBG_DECL std::vector<std::pair<reduction, tensor_value>>
saved_reductions(const collection_selection& selection, const active_collections& active, const tensor_value& value,
                 reductions_function reduce, reduction_convention convention) {
    save_planning_parts::reduction_results computed;
    for (const std::size_t i : active) {
        const auto& e = selection.at(i);
        if (!is_scalar_collection(e.coll.name())) { // smdebug's SCALAR_COLLECTIONS get no reductions
            save_planning_parts::add_collection(e, value, convention, computed);
        }
    }
    save_planning_parts::add_missing(value, reduce, convention, computed);
    std::vector<std::pair<reduction, tensor_value>> out;
    for (std::size_t k = 0; k < computed.order.size(); ++k) {
        if (!computed.results[k]) {
            continue;
        }
        // smdebug's core hook stores a reduction as shape (1,), its PyTorch hook as torch gives it.
        if (auto stored = stored_reduction(convention, value.type(), computed.order[k], *computed.results[k])) {
            out.emplace_back(computed.order[k], std::move(*stored));
        }
    }
    return out;
}

} // namespace tdbg::detail
