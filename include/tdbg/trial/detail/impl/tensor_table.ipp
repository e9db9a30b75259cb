#pragma once
/// \file
/// Definitions of tdbg/trial/detail/tensor_table.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <tuple>
#include <utility>
#include <vector>

#include "tdbg/trial/detail/tensor_table.hpp"

namespace tdbg::detail {

TDBG_DECL std::vector<reduction> tensor_totals::stored_reductions() const {
    std::vector<reduction> out;
    for (const bool abs : {false, true}) {
        for (const reduction_kind k : all_reduction_kinds) {
            if ((reductions & bit(reduction{k, abs})) != 0) {
                out.push_back(reduction{k, abs});
            }
        }
    }
    return out;
}

TDBG_DECL bool step_set::insert(std::int64_t step) {
    if (runs_.empty() || step > runs_.back().last()) {
        progression* last = runs_.empty() ? nullptr : &runs_.back();
        if (last != nullptr && last->count == 1) {
            last->stride = step - last->first;
            last->count = 2;
        } else if (last != nullptr && step - last->last() == last->stride) {
            ++last->count;
        } else {
            runs_.push_back(progression{step, 0, 1});
        }
        return true;
    }
    if (contains(step)) {
        return false;
    }
    apart_.insert(std::upper_bound(apart_.begin(), apart_.end(), step), step);
    return true;
}

TDBG_DECL bool step_set::contains(std::int64_t step) const noexcept {
    const auto after = std::upper_bound(runs_.begin(), runs_.end(), step,
                                        [](std::int64_t s, const progression& p) { return s < p.first; });
    if (after != runs_.begin()) {
        const progression& p = *std::prev(after);
        if (step == p.first || (p.stride != 0 && step <= p.last() && (step - p.first) % p.stride == 0)) {
            return true;
        }
    }
    return std::binary_search(apart_.begin(), apart_.end(), step);
}

TDBG_DECL tensor_entry& tensor_record::at(std::int64_t step, worker_id worker, mode m, std::uint32_t source) {
    modes_[static_cast<std::size_t>(m) - 1] = true;
    if (summarised_) {
        totals_.steps += seen_steps_.insert(step) ? 1 : 0;
        if (!entries_.empty() && entries_.back().step < step) {
            keep_last_described();
        }
    }
    if (entries_.empty() || key(entries_.back()) < std::make_tuple(step, worker)) {
        if (!summarised_ && (entries_.empty() || entries_.back().step != step)) {
            ++totals_.steps;
        }
        entries_.push_back(make(step, worker, m, source));
        return entries_.back();
    }
    auto pos = std::lower_bound(entries_.begin(), entries_.end(), std::make_tuple(step, worker),
                                [](const tensor_entry& e, const auto& k) { return key(e) < k; });
    if (pos != entries_.end() && key(*pos) == std::make_tuple(step, worker)) {
        return *pos;
    }
    const bool new_step = (pos == entries_.begin() || std::prev(pos)->step != step) &&
                          (pos == entries_.end() || pos->step != step);
    if (new_step && !summarised_) {
        ++totals_.steps;
    }
    return *entries_.insert(pos, make(step, worker, m, source));
}

TDBG_DECL void tensor_record::expect(std::size_t more, std::uint64_t refresh) {
    if (sized_in_ == refresh || summarised_) {
        return;
    }
    sized_in_ = refresh;
    const std::size_t per_entry = entries_.empty() ? 0 : entries_.back().reduction_count;
    grow(entries_, entries_.size() + more);
    if (per_entry != 0) {
        grow(reductions_, reductions_.size() + more * per_entry);
    }
}

TDBG_DECL void tensor_record::set_value(tensor_entry& e, const record_span& at) {
    totals_.any_value = true;
    if (at.offset < max_narrow_offset && at.length < max_narrow_offset) {
        e.wide_value = false;
        e.value_offset = at.offset;
        e.value_length_low = static_cast<std::uint32_t>(at.length);
        e.value_length_high = static_cast<std::uint8_t>(at.length >> 32U);
    } else if (e.wide_value) {
        wide_values_[e.value_length_low] = at;
    } else {
        e.wide_value = true;
        e.value_length_low = static_cast<std::uint32_t>(wide_values_.size());
        wide_values_.push_back(at);
    }
}

TDBG_DECL value_location tensor_record::value(const tensor_entry& e, std::uint32_t file) const noexcept {
    if (e.wide_value) {
        const record_span& at = wide_values_[e.value_length_low];
        return {file, at.offset, at.length};
    }
    return {file, e.value_offset, e.value_length()};
}

TDBG_DECL void tensor_record::set_reduction(tensor_entry& e, reduction r, const record_span& at) {
    totals_.reductions |= tensor_totals::bit(r);
    const reduction_location loc(r, at);
    for (std::uint32_t i = e.first_reduction; i < e.first_reduction + e.reduction_count; ++i) {
        if (reductions_[i].which() == r) {
            reductions_[i] = loc;
            return;
        }
    }
    if (e.reduction_count != 0 && e.first_reduction + e.reduction_count != reductions_.size()) {
        // Not the last entry's run (rare: reductions of one entry listed apart): moved to the end.
        const auto first = reductions_.begin() + e.first_reduction;
        std::vector<reduction_location> moved(first, first + static_cast<std::ptrdiff_t>(e.reduction_count));
        e.first_reduction = static_cast<std::uint32_t>(reductions_.size());
        reductions_.insert(reductions_.end(), moved.begin(), moved.end());
    } else if (e.reduction_count == 0) {
        e.first_reduction = static_cast<std::uint32_t>(reductions_.size());
    }
    reductions_.push_back(loc);
    ++e.reduction_count;
}

TDBG_DECL std::pair<const reduction_location*, const reduction_location*>
tensor_record::reductions(const tensor_entry& e) const noexcept {
    const reduction_location* first = reductions_.data() + e.first_reduction;
    return {first, first + e.reduction_count};
}

TDBG_DECL void tensor_record::set_shape(tensor_entry& e, std::vector<std::int64_t> shape) {
    e.has_shape = true;
    totals_.any_shape = true;
    shapes_[{e.step, e.worker}] = std::move(shape);
}

TDBG_DECL const std::vector<std::int64_t>* tensor_record::shape(const tensor_entry& e) const {
    if (!e.has_shape) {
        return nullptr;
    }
    auto it = shapes_.find({e.step, e.worker});
    return it == shapes_.end() ? nullptr : &it->second;
}

TDBG_DECL std::pair<const tensor_entry*, const tensor_entry*> tensor_record::at_step(std::int64_t step) const noexcept {
    const auto first = std::lower_bound(entries_.begin(), entries_.end(), step,
                                        [](const tensor_entry& e, std::int64_t s) { return e.step < s; });
    auto last = first;
    while (last != entries_.end() && last->step == step) {
        ++last;
    }
    if (first == last) {
        return {nullptr, nullptr};
    }
    return {&*first, &*first + (last - first)};
}

TDBG_DECL bool tensor_record::has_mode(mode m) const noexcept {
    if (m == mode::global) {
        return !entries_.empty();
    }
    return modes_[static_cast<std::size_t>(m) - 1];
}

TDBG_DECL void tensor_record::keep_last_described() {
    const auto last = std::find_if(entries_.rbegin(), entries_.rend(),
                                   [](const tensor_entry& e) { return e.has_value() || e.has_shape; });
    if (last == entries_.rend()) {
        entries_.clear();
        reductions_.clear();
        wide_values_.clear();
        shapes_.clear();
        return;
    }
    tensor_entry kept = *last;
    const auto first = reductions_.begin() + kept.first_reduction;
    std::vector<reduction_location> reductions(first, first + static_cast<std::ptrdiff_t>(kept.reduction_count));
    kept.first_reduction = 0;
    reductions_ = std::move(reductions);
    std::vector<record_span> wide;
    if (kept.wide_value) {
        wide.push_back(wide_values_[kept.value_length_low]);
        kept.value_length_low = 0;
    }
    wide_values_ = std::move(wide);
    entries_.assign(1, kept);
    const std::pair<std::int64_t, worker_id> where{kept.step, kept.worker};
    std::vector<std::int64_t> shape = kept.has_shape ? std::move(shapes_[where]) : std::vector<std::int64_t>{};
    shapes_.clear();
    if (kept.has_shape) {
        shapes_[where] = std::move(shape);
    }
}

TDBG_DECL tensor_entry tensor_record::make(std::int64_t step, worker_id worker, mode m, std::uint32_t source) {
    tensor_entry e;
    e.step = step;
    e.worker = worker;
    e.entry_mode_code = static_cast<std::uint8_t>(m);
    e.source = source;
    return e;
}

} // namespace tdbg::detail
