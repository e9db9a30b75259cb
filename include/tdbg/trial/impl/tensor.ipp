#pragma once
/// \file
/// Definitions of tdbg/trial/tensor.hpp.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/trial/detail/trial_core.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg {

namespace detail {

inline tensor_value::shape_type to_shape(const std::vector<std::int64_t>& dims) {
    tensor_value::shape_type out;
    out.reserve(dims.size());
    for (const std::int64_t d : dims) {
        out.push_back(static_cast<std::size_t>(d < 0 ? 0 : d));
    }
    return out;
}

/// What the index says about one resolved entry, as the public API gives it.
inline tensor_step_info to_step_info(const resolved_entry& e) {
    tensor_step_info info;
    info.step = e.step;
    info.step_mode = e.entry_mode;
    info.mode_step = e.mode_step;
    info.worker = *e.worker;
    info.has_value = e.value.has_value();
    info.value_record_bytes = e.value ? e.value->length : 0;
    if (e.shape) {
        info.stored_shape = to_shape(*e.shape);
    }
    for (const auto& item : e.reductions) {
        info.stored_reductions.push_back(item.first);
    }
    std::sort(info.stored_reductions.begin(), info.stored_reductions.end(),
              [](reduction a, reduction b) { return reduction_name(a) < reduction_name(b); });
    return info;
}

} // namespace detail

TDBG_DECL tensor::tensor(std::shared_ptr<detail::trial_core> core, const detail::tensor_record* record)
    : core_(std::move(core)), record_(record) {}

TDBG_DECL const std::string& tensor::name() const noexcept { return record_->name(); }

TDBG_DECL std::vector<std::int64_t> tensor::steps(mode m, bool show_incomplete_steps) const {
    core_->maybe_refresh();
    return core_->tensor_steps(*record_, m, show_incomplete_steps);
}

TDBG_DECL tensor_value tensor::value(std::int64_t step, mode m, const std::optional<std::string>& worker) const {
    return core_->fetch(value_request(step, m, worker), name(), &record_->content_hint());
}

TDBG_DECL value_layout tensor::layout(std::int64_t step, mode m, const std::optional<std::string>& worker) const {
    const detail::record_request where = value_request(step, m, worker);
    if (auto head = core_->fetch_head(where, name())) {
        return value_layout{head->type, std::move(head->shape)};
    }
    const tensor_value v = core_->fetch(where, name(), &record_->content_hint());
    return value_layout{v.type(), v.shape()};
}

TDBG_DECL value_layout tensor::read_value_in_pieces(std::int64_t step, mode m, const std::optional<std::string>& worker,
                                                    std::size_t piece_elements,
                                                    const std::function<void(const tensor_value&)>& each) const {
    const detail::record_request where = value_request(step, m, worker);
    if (auto head = core_->scan(where, name(), piece_elements, each)) {
        return value_layout{head->type, std::move(head->shape)};
    }
    // An uncommon record: read whole, then handed out in pieces all the same.
    auto whole = std::make_shared<const tensor_value>(core_->fetch(where, name(), &record_->content_hint()));
    value_layout out{whole->type(), whole->shape()};
    const std::size_t element = dtype_size(whole->type());
    if (whole->type() == dtype::string || whole->size() == 0) {
        if (whole->size() > 0) {
            each(*whole);
        }
        return out;
    }
    const std::string_view bytes = whole->bytes();
    const std::size_t piece = std::max<std::size_t>(1, piece_elements);
    for (std::size_t i = 0; i < whole->size(); i += piece) {
        const std::size_t n = std::min(piece, whole->size() - i);
        each(tensor_value::view_bytes(whole->type(), {n}, bytes.substr(i * element, n * element), whole));
    }
    return out;
}

TDBG_DECL detail::record_request tensor::value_request(std::int64_t step, mode m,
                                                       const std::optional<std::string>& worker) const {
    // Only what reading the value needs is copied out of the index (no resolved_entry).
    struct found_value {
        std::optional<detail::record_request> value;
        bool has_reductions = false;
    };
    const found_value found = core_->locate_with(
        *record_, step, m, worker, [&](const detail::tensor_record& r, const detail::tensor_entry& e) {
            found_value out;
            if (e.has_value()) {
                out.value = core_->value_request(r, e);
            }
            out.has_reductions = r.reductions(e).first != r.reductions(e).second;
            return out;
        });
    if (!found.value) {
        throw tensor_unavailable_for_step(fmt::format("value of tensor '{}' is not available for {} as it was not saved{} (trial {})",
                                                      name(), detail::describe_step(step, m),
                                                      found.has_reductions ? "; its reductions were saved" : "",
                                                      core_->name()),
                                          name(), step, m, found.has_reductions);
    }
    return *found.value;
}

TDBG_DECL std::map<std::int64_t, tensor_value> tensor::values(mode m, const std::optional<std::string>& worker) const {
    std::map<std::int64_t, tensor_value> out;
    for (const std::int64_t step : steps(m)) {
        if (worker) {
            const auto entries = core_->entries_at(*record_, step, m);
            const bool wrote = std::any_of(entries.begin(), entries.end(),
                                           [&](const detail::resolved_entry& e) { return *e.worker == *worker; });
            if (!wrote) {
                continue;
            }
        }
        out.emplace(step, value(step, m, worker));
    }
    return out;
}

TDBG_DECL std::vector<step_reduction> tensor::reductions(std::int64_t step, const std::vector<reduction>& wanted,
                                                         mode m, const std::optional<std::string>& worker,
                                                         const std::function<tensor_value()>& value) const {
    // What the index says, copied out under its lock: where each stored one and the value lie.
    struct found_records {
        std::vector<std::optional<detail::record_request>> stored; // by position in `wanted`
        std::optional<detail::record_request> value;
        bool has_reductions = false;
    };
    const found_records found = core_->locate_with(
        *record_, step, m, worker, [&](const detail::tensor_record& rec, const detail::tensor_entry& e) {
            found_records out;
            const auto [first, last] = rec.reductions(e);
            out.has_reductions = first != last;
            out.stored.resize(wanted.size());
            for (std::size_t i = 0; i < wanted.size(); ++i) {
                const auto* loc = std::find_if(first, last, [&](const detail::reduction_location& l) {
                    return l.which() == wanted[i];
                });
                if (loc != last) {
                    out.stored[i] = core_->reduction_request(e, *loc);
                }
            }
            if (e.has_value()) {
                out.value = core_->value_request(rec, e);
            }
            return out;
        });
    std::vector<step_reduction> out(wanted.size());
    std::vector<std::size_t> missing; // positions of those to compute
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        out[i].which = wanted[i];
        if (found.stored[i]) {
            out[i].source = reduction_source::stored;
            out[i].value = core_->fetch(*found.stored[i], format::reduction_tensor_name(wanted[i], name()));
        } else {
            missing.push_back(i);
        }
    }
    if (missing.empty()) {
        return out;
    }
    if (!found.value) {
        for (const std::size_t i : missing) {
            out[i].error = std::make_exception_ptr(tensor_unavailable_for_step(
                fmt::format("reduction {} of tensor '{}' is not available for {}: neither it nor the value was saved "
                            "(trial {})",
                            reduction_name(wanted[i]), name(), detail::describe_step(step, m), core_->name()),
                name(), step, m, found.has_reductions));
        }
        return out;
    }
    const tensor_value saved = value ? value() : core_->fetch(*found.value, name(), &record_->content_hint());
    const auto computed = [&](std::size_t i, tensor_value v) {
        out[i].source = reduction_source::computed;
        out[i].value = std::move(v);
    };
    std::vector<reduction> which;
    which.reserve(missing.size());
    for (const std::size_t i : missing) {
        which.push_back(wanted[i]);
    }
    try {
        std::vector<tensor_value> results = compute_reductions(saved, which);
        for (std::size_t k = 0; k < missing.size(); ++k) {
            computed(missing[k], std::move(results[k]));
        }
    } catch (const error&) {
        if (missing.size() == 1) {
            out[missing.front()].error = std::current_exception();
            return out;
        }
        // One at a time, so that each one that cannot be computed keeps its own error.
        for (const std::size_t i : missing) {
            try {
                computed(i, compute_reduction(saved, wanted[i]));
            } catch (const error&) {
                out[i].error = std::current_exception();
            }
        }
    }
    return out;
}

TDBG_DECL tensor_value tensor::reduction_value(std::int64_t step, reduction r, mode m,
                                               const std::optional<std::string>& worker) const {
    step_reduction found = std::move(reductions(step, {r}, m, worker).front());
    if (!found.value) {
        std::rethrow_exception(found.error);
    }
    return *std::move(found.value);
}

TDBG_DECL tensor_value tensor::reduction_value(std::int64_t step, std::string_view reduction_name_text, mode m,
                                               const std::optional<std::string>& worker, bool abs) const {
    auto r = parse_reduction(reduction_name_text);
    if (!r) {
        throw config_error(fmt::format("unknown reduction '{}' (expected min, max, mean, std, variance, sum, prod, l1 or l2)",
                                       reduction_name_text));
    }
    r->abs = r->abs || abs;
    return reduction_value(step, *r, m, worker);
}

TDBG_DECL std::map<reduction, tensor_value> tensor::reduction_values(std::int64_t step, mode m,
                                                                     const std::optional<std::string>& worker) const {
    const detail::resolved_entry found = core_->locate(*record_, step, m, worker);
    std::map<reduction, tensor_value> out;
    for (const auto& [which, where] : found.reductions) {
        out.emplace(which, core_->fetch(where, format::reduction_tensor_name(which, name())));
    }
    return out;
}

TDBG_DECL tensor_value::shape_type tensor::shape(std::int64_t step, mode m, const std::optional<std::string>& worker) const {
    const detail::resolved_entry found = core_->locate(*record_, step, m, worker);
    if (found.shape) {
        return detail::to_shape(*found.shape);
    }
    if (!found.value) {
        throw shape_unavailable_for_step(fmt::format("shape of tensor '{}' is not available for {} as it was not saved (trial {})",
                                                     name(), detail::describe_step(step, m), core_->name()),
                                         name(), step, m);
    }
    if (auto head = core_->fetch_head(*found.value, name())) {
        return std::move(head->shape);
    }
    return core_->fetch(*found.value, name(), &record_->content_hint()).shape();
}

TDBG_DECL std::vector<std::string> tensor::workers(std::int64_t step, mode m) const {
    std::vector<std::string> out;
    for (const auto& e : core_->entries_at(*record_, step, m)) {
        out.push_back(*e.worker);
    }
    if (out.empty()) {
        throw tensor_unavailable_for_step(fmt::format("tensor '{}' was not saved for {} (trial {})", name(),
                                                      detail::describe_step(step, m), core_->name()),
                                          name(), step, m);
    }
    return out;
}

TDBG_DECL std::vector<std::int64_t> tensor::prev_steps(std::int64_t step, std::optional<std::size_t> n, mode m) const {
    std::vector<std::int64_t> all = steps(m);
    all.erase(std::upper_bound(all.begin(), all.end(), step), all.end());
    if (n && *n > 0 && all.size() > *n) {
        all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(*n));
    }
    return all;
}

TDBG_DECL std::vector<tensor_step_info> tensor::entries_at(std::int64_t step, mode m) const {
    std::vector<tensor_step_info> out;
    for (const auto& e : core_->entries_at(*record_, step, m)) {
        out.push_back(detail::to_step_info(e));
    }
    return out;
}

TDBG_DECL std::vector<tensor_step_info> tensor::entries(mode m, bool show_incomplete_steps) const {
    std::vector<tensor_step_info> out;
    for (const std::int64_t step : steps(m, show_incomplete_steps)) {
        for (const auto& e : core_->entries_at(*record_, step, m)) {
            out.push_back(detail::to_step_info(e));
        }
    }
    return out;
}

TDBG_DECL tensor_summary tensor::summary() const {
    core_->maybe_refresh();
    const auto found = core_->summarize(*record_);
    tensor_summary out;
    out.steps = found.totals.steps;
    out.modes = found.modes;
    out.has_value = found.totals.any_value;
    out.has_shape = found.totals.any_shape;
    out.stored_reductions = found.totals.stored_reductions();
    if (found.last) {
        out.last = detail::to_step_info(*found.last);
    }
    return out;
}

} // namespace tdbg
