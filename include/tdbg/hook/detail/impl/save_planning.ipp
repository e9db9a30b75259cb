#pragma once
/// \file
/// Definitions of tdbg/hook/detail/save_planning.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/detail/error_reporter.hpp"
#include "tdbg/hook/detail/save_planning.hpp"
#include "tdbg/hook/detail/selection_check.hpp"

namespace tdbg::detail {

namespace save_planning_parts {

// Adds the reductions of collection `e` not listed yet in scratch.order (scratch.results beside
// it); its compiled kernel (numpy's convention) computes them when its configuration is the one
// it was compiled for.
TDBG_DECL void add_collection(const collection_selection::entry& e, const tensor_value& value,
                              reduction_convention convention, reduction_scratch& out) {
    const auto listed = [&](reduction r) { return std::find(out.order.begin(), out.order.end(), r) != out.order.end(); };
    const bool own_kernel = convention == reduction_convention::numpy && e.coll.kernel() &&
                            e.coll.reduction_config() && *e.coll.reduction_config() == e.reductions;
    if (!own_kernel) {
        e.reductions.for_each([&](reduction r) {
            if (!listed(r)) {
                out.order.push_back(r);
                out.results.emplace_back();
            }
        });
        return;
    }
    const auto wanted = e.reductions.all();
    std::vector<std::size_t> fresh;
    for (std::size_t k = 0; k < wanted.size(); ++k) {
        if (!listed(wanted[k])) {
            out.order.push_back(wanted[k]);
            out.results.emplace_back();
            fresh.push_back(k);
        }
    }
    if (fresh.empty()) {
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
        out.results[pos] = reduction_value::from(computed[k]);
    }
}

// Computes the reductions no kernel did in one runtime pass of `reduce`.
TDBG_DECL void add_missing(const tensor_value& value, reduction_values_function reduce,
                           reduction_convention convention, reduction_scratch& out) {
    out.missing.clear();
    for (std::size_t k = 0; k < out.order.size(); ++k) {
        if (!out.results[k]) {
            out.missing.push_back(out.order[k]);
        }
    }
    if (out.missing.empty()) {
        return;
    }
    out.computed.clear();
    reduce::options opts;
    opts.ddof = reduction_ddof(convention);
    try {
        reduce(value, out.missing, opts, out.computed);
    } catch (const dtype_mismatch&) {
        out.computed.clear();
    }
    std::size_t next = 0;
    for (std::size_t k = 0; k < out.order.size() && next < out.computed.size(); ++k) {
        if (!out.results[k]) {
            out.results[k] = out.computed[next++];
        }
    }
}

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

// The first active collection that asks for histograms and saves more than raw values.
TDBG_DECL const collection_selection::entry* histogram_collection(const collection_selection& selection,
                                                                  const active_collections& active) {
    for (const std::size_t i : active) {
        const auto& e = selection.at(i);
        if (e.histogram && !is_raw_only_collection(e.coll.name())) {
            return &e;
        }
    }
    return nullptr;
}

} // namespace save_planning_parts

TDBG_DECL save_decision decide_save(const collection_selection& selection, const active_collections& active,
                                    dtype type, const tensor_value::shape_type& shape, bool tensorboard) {
    save_decision out;
    decide_save(selection, active, type, shape, tensorboard, out);
    return out;
}

TDBG_DECL void decide_save(const collection_selection& selection, const active_collections& active, dtype type,
                           const tensor_value::shape_type& shape, bool tensorboard, save_decision& out) {
    namespace parts = save_planning_parts;
    out.plan.reductions.clear();
    out.plan.raw = false;
    out.plan.histogram = false;
    out.histogram_collection.clear();
    out.tensorboard_scalar = false;
    out.shape = parts::saves_shape(selection, active);
    const std::size_t count = element_count(shape);
    if (count == 0) {
        return; // smdebug writes no record for an empty tensor
    }
    save_plan& plan = out.plan;
    plan.raw = parts::saves_raw(selection, active);
    std::size_t listed = 0;
    for (const std::size_t i : active) {
        const auto& r = selection.at(i).reductions;
        listed += r.reductions.size() + r.norms.size() + r.abs_reductions.size() + r.abs_norms.size();
    }
    plan.reductions.reserve(listed);
    for (const std::size_t i : active) {
        const auto& e = selection.at(i);
        if (is_scalar_collection(e.coll.name())) {
            continue; // smdebug's SCALAR_COLLECTIONS get no reductions
        }
        e.reductions.for_each([&](reduction r) {
            if (std::find(plan.reductions.begin(), plan.reductions.end(), r) == plan.reductions.end()) {
                plan.reductions.push_back(r);
            }
        });
    }
    if (tensorboard && type != dtype::boolean && type != dtype::string && !is_complex(type)) {
        if (const auto* e = parts::histogram_collection(selection, active)) {
            plan.histogram = true;
            out.histogram_collection = e->coll.name();
        }
    }
    out.tensorboard_scalar = tensorboard && count == 1 && parts::in_scalar_collection(selection, active);
}

TDBG_DECL void saved_reductions(const collection_selection& selection, const active_collections& active,
                                const save_plan& plan, const tensor_value& value, reduction_values_function reduce,
                                reduction_convention convention, reduction_scratch& scratch) {
    scratch.order.clear();
    scratch.results.clear();
    for (const std::size_t i : active) {
        const auto& e = selection.at(i);
        if (!is_scalar_collection(e.coll.name())) { // smdebug's SCALAR_COLLECTIONS get no reductions
            save_planning_parts::add_collection(e, value, convention, scratch);
        }
    }
    if (scratch.order != plan.reductions) {
        throw error("tdbg::hook: the reductions computed differ from the save's plan (a bug in tdbg)");
    }
    save_planning_parts::add_missing(value, reduce, convention, scratch);
    for (std::size_t k = 0; k < scratch.order.size(); ++k) {
        if (scratch.results[k]) {
            scratch.results[k] = stored_reduction(convention, value.type(), scratch.order[k], *scratch.results[k]);
        }
    }
}

TDBG_DECL void check_tensor_name(std::string_view name) {
    if (name.empty()) {
        throw invalid_name("tdbg::hook: an empty tensor name");
    }
    if (const auto at = invalid_utf8_at(name); at != std::string_view::npos) {
        throw invalid_name(fmt::format("tensor name is not valid UTF-8 at byte {}", at));
    }
    if (name.find('\0') != std::string_view::npos) {
        throw invalid_name("tensor name contains a NUL byte");
    }
}

TDBG_DECL void check_tensor_rank(std::string_view name, std::size_t rank) {
    if (rank > max_tensor_rank) {
        throw usage_error(fmt::format("tdbg::hook: cannot save '{}': it has {} dimensions, more than the {} a "
                                      "tensor may have",
                                      name, rank, max_tensor_rank));
    }
}

TDBG_DECL save_token save_planner::prepare(std::string_view name, std::initializer_list<std::string_view> collections,
                                           const step_clock& clock, collection_selection& selection,
                                           selection_check& check, const error_reporter& errors) {
    check_name(name);
    selection.add_explicit(name, collections);
    save_token token = std::move(spare_);
    selection.active(name, clock.current(), clock.mode_step(), token.active);
    check.offer(name, !token.active.empty(), selection);
    if (token && first_save_in_step(name, clock, errors)) {
        return token;
    }
    spare_ = std::move(token); // nothing to save: its memory serves the next prepare
    return {};
}

TDBG_DECL const save_decision* save_planner::plan(std::string_view name, const save_token& token,
                                                  const tensor_value& value, reduction_values_function reduce,
                                                  reduction_convention convention,
                                                  const collection_selection& selection, bool tensorboard,
                                                  bool writes) {
    check_tensor_rank(name, value.shape().size());
    if (!writes) {
        return nullptr;
    }
    decide_save(selection, token.active, value.type(), value.shape(), tensorboard, decision_);
    if (!decision_.plan.reductions.empty()) {
        saved_reductions(selection, token.active, decision_.plan, value, reduce, convention, reductions_);
    }
    return &decision_;
}

TDBG_DECL void save_planner::check_name(std::string_view name) {
    if (checked_names_.find(name) == checked_names_.end()) {
        check_tensor_name(name);
        checked_names_.emplace(name);
    }
}

TDBG_DECL bool save_planner::first_save_in_step(std::string_view name, const step_clock& clock,
                                                const error_reporter& errors) {
    // The global step of each tensor's last save: found without allocating once a name is known,
    // and nothing to clear at each step (a step's number is never given again).
    const std::int64_t step = clock.global();
    const auto last = last_save_step_.find(name);
    if (last == last_save_step_.end()) {
        last_save_step_.emplace(std::string(name), step);
        return true;
    }
    if (last->second != step) {
        last->second = step;
        return true;
    }
    // Readers resolve a name recorded twice in a step by the last record, silently: the run keeps
    // the first (a GAN's discriminator gradients as its optimizer used them, before the
    // generator's backward pass changed them), and says so once per tensor.
    if (said_saved_twice_.emplace(name).second) {
        errors.log(fmt::format(
            "tdbg::hook: '{}' saved again in step {} ({} step {}): a step keeps the first save of a tensor and drops "
            "the later ones (said once per tensor). With several backward passes a step, give each model a hook of "
            "its own (torch_hook over one model), or save each tensor once a step",
            terminal_safe(name), clock.global(), mode_name(clock.current()), clock.mode_step()));
    }
    return false;
}

} // namespace tdbg::detail
