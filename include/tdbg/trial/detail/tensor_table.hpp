#pragma once
/// \file
/// What a trial knows about one tensor: for each (global step, worker) where
/// the index mentions it, where its value and its stored reductions lie in
/// the event files, and its shape when the index records one. Kept compact:
/// a run's index can hold millions of entries, so an entry is 48 bytes with
/// no allocation of its own, and stored reductions sit in one array per tensor.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/trial/detail/step_table.hpp"

namespace tdbg::detail {

/// Where one record lies: an event file (numbered by the trial) and the byte
/// range of the whole TFRecord record in it.
struct value_location {
    std::uint32_t file = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

/// A stored reduction's record, packed in 20 bytes (a run of stored reductions
/// has six or more of them per entry). A reduction's record holds one number,
/// so its length fits 32 bits (the index parser checks it).
struct reduction_location {
    reduction_location() = default;
    reduction_location(reduction r, const value_location& at) noexcept
        : offset_low(static_cast<std::uint32_t>(at.offset)), offset_high(static_cast<std::uint32_t>(at.offset >> 32U)),
          length(static_cast<std::uint32_t>(at.length)), file(at.file), kind(static_cast<std::uint8_t>(r.kind)),
          abs(r.abs) {}

    std::uint32_t offset_low = 0;
    std::uint32_t offset_high = 0;
    std::uint32_t length = 0;
    std::uint32_t file = 0;
    std::uint8_t kind = 0; // reduction_kind
    bool abs = false;

    [[nodiscard]] reduction which() const noexcept { return reduction{static_cast<reduction_kind>(kind), abs}; }
    [[nodiscard]] value_location where() const noexcept {
        return {file, std::uint64_t{offset_high} << 32U | offset_low, length};
    }
};

static_assert(sizeof(reduction_location) == 20, "reduction_location is packed");

/// The longest record a stored reduction may have.
inline constexpr std::uint64_t max_reduction_record = 0xffffffffU;

/// One tensor at one global step, as written by one worker.
struct tensor_entry {
    std::int64_t step = 0; // global step
    std::int64_t mode_step = 0;
    std::uint64_t value_offset = 0;
    std::uint64_t value_length = 0; // 0: no value saved
    std::uint32_t value_file = 0;
    worker_id worker = 0;
    std::uint32_t first_reduction = 0; // into the record's reductions
    std::uint8_t reduction_count = 0;
    std::uint8_t entry_mode_code = static_cast<std::uint8_t>(mode::global);
    bool has_shape = false; // the record keeps the shape the index gave

    [[nodiscard]] mode entry_mode() const noexcept { return static_cast<mode>(entry_mode_code); }
    [[nodiscard]] bool has_value() const noexcept { return value_length != 0; }
    [[nodiscard]] value_location value() const noexcept { return {value_file, value_offset, value_length}; }
    void set_value(const value_location& at) noexcept {
        value_file = at.file;
        value_offset = at.offset;
        value_length = at.length;
    }
};

static_assert(sizeof(tensor_entry) == 48, "tensor_entry stays compact");

/// What the entries of one tensor say, gathered as they are added (tdbg ls
/// reads it without walking the entries).
struct tensor_totals {
    /// The bit of `r` in `reductions`: plain kinds first, then the abs ones (the order of reduction's <).
    static constexpr std::uint32_t bit(reduction r) noexcept {
        return std::uint32_t{1} << (static_cast<unsigned>(r.kind) + (r.abs ? all_reduction_kinds.size() : 0U));
    }
    /// The reductions whose bits are set, sorted.
    [[nodiscard]] std::vector<reduction> stored_reductions() const {
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

    std::size_t steps = 0;        // distinct global steps
    std::uint32_t reductions = 0; // a bit per stored reduction
    bool any_value = false;
    bool any_shape = false;
};

/// All entries of one tensor, sorted by (global step, worker). Index files
/// arrive in step order, so adding is an append nearly always.
class tensor_record {
public:
    /// The record of tensor `name`, the trial's `serial`-th (records are merged in lanes by it).
    tensor_record(std::string name, std::size_t serial) : name_(std::move(name)), serial_(serial) {}

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] std::size_t serial() const noexcept { return serial_; }
    [[nodiscard]] const std::vector<tensor_entry>& entries() const noexcept { return entries_; }
    [[nodiscard]] const tensor_totals& totals() const noexcept { return totals_; }

    /// The entry for (`step`, `worker`), created (with its mode) when new.
    tensor_entry& at(std::int64_t step, worker_id worker, mode m, std::int64_t mode_step) {
        modes_[static_cast<std::size_t>(m) - 1] = true;
        if (entries_.empty() || key(entries_.back()) < std::make_tuple(step, worker)) {
            if (entries_.empty() || entries_.back().step != step) {
                ++totals_.steps;
            }
            entries_.push_back(make(step, worker, m, mode_step));
            steps_.push_back(step);
            return entries_.back();
        }
        auto pos = std::lower_bound(entries_.begin(), entries_.end(), std::make_tuple(step, worker),
                                    [](const tensor_entry& e, const auto& k) { return key(e) < k; });
        if (pos != entries_.end() && key(*pos) == std::make_tuple(step, worker)) {
            return *pos;
        }
        const bool new_step = (pos == entries_.begin() || std::prev(pos)->step != step) &&
                              (pos == entries_.end() || pos->step != step);
        if (new_step) {
            ++totals_.steps;
        }
        steps_.insert(steps_.begin() + (pos - entries_.begin()), step);
        return *entries_.insert(pos, make(step, worker, m, mode_step));
    }

    /// Makes room for `more` entries like the last one (its stored reductions
    /// included), once per `refresh` (the trial numbers its refreshes from 1): a
    /// refresh that reads many index files of a regular run sizes the arrays once
    /// instead of doubling them. Growth stays geometric, so many small refreshes
    /// (a live run) still cost amortised constant time.
    void expect(std::size_t more, std::uint64_t refresh) {
        if (sized_in_ == refresh) {
            return;
        }
        sized_in_ = refresh;
        const std::size_t per_entry = entries_.empty() ? 0 : entries_.back().reduction_count;
        grow(entries_, entries_.size() + more);
        grow(steps_, steps_.size() + more);
        if (per_entry != 0) {
            grow(reductions_, reductions_.size() + more * per_entry);
        }
    }

    /// Records the value's location for `e` (an entry of this record).
    void set_value(tensor_entry& e, const value_location& at) noexcept {
        e.set_value(at);
        totals_.any_value = true;
    }

    /// Records (or replaces) the stored reduction `r` of `e` (an entry of this record).
    void set_reduction(tensor_entry& e, reduction r, const value_location& at) {
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
            std::vector<reduction_location> moved(first, first + e.reduction_count);
            e.first_reduction = static_cast<std::uint32_t>(reductions_.size());
            reductions_.insert(reductions_.end(), moved.begin(), moved.end());
        } else if (e.reduction_count == 0) {
            e.first_reduction = static_cast<std::uint32_t>(reductions_.size());
        }
        reductions_.push_back(loc);
        ++e.reduction_count;
    }

    /// The stored reductions of `e`, as [first, last).
    [[nodiscard]] std::pair<const reduction_location*, const reduction_location*> reductions(
        const tensor_entry& e) const noexcept {
        const reduction_location* first = reductions_.data() + e.first_reduction;
        return {first, first + e.reduction_count};
    }

    /// Records the shape the index gave for `e`.
    void set_shape(tensor_entry& e, std::vector<std::int64_t> shape) {
        e.has_shape = true;
        totals_.any_shape = true;
        shapes_[{e.step, e.worker}] = std::move(shape);
    }

    /// The shape the index gave for `e`, nullptr when none.
    [[nodiscard]] const std::vector<std::int64_t>* shape(const tensor_entry& e) const {
        if (!e.has_shape) {
            return nullptr;
        }
        auto it = shapes_.find({e.step, e.worker});
        return it == shapes_.end() ? nullptr : &it->second;
    }

    /// The entries of global step `step` (one per worker), as [first, last).
    [[nodiscard]] std::pair<const tensor_entry*, const tensor_entry*> at_step(std::int64_t step) const noexcept {
        // Searched in the compact array of steps: a few cache lines instead of one per probe.
        const auto first = std::lower_bound(steps_.begin(), steps_.end(), step);
        auto last = first;
        while (last != steps_.end() && *last == step) {
            ++last;
        }
        if (first == last) {
            return {nullptr, nullptr};
        }
        const tensor_entry* base = entries_.data() + (first - steps_.begin());
        return {base, base + (last - first)};
    }

    /// Where this tensor's elements last started in a record (0: not read yet);
    /// a hint for placing the next read so that the value needs no copy.
    [[nodiscard]] std::atomic<std::uint32_t>& content_hint() const noexcept { return content_hint_; }

    /// True when the tensor has an entry in mode `m` (mode::global: any entry).
    [[nodiscard]] bool has_mode(mode m) const noexcept {
        if (m == mode::global) {
            return !entries_.empty();
        }
        return modes_[static_cast<std::size_t>(m) - 1];
    }

    /// True when the tensor has an entry of mode `m` itself (mode::global: saved in GLOBAL mode).
    [[nodiscard]] bool has_mode_exactly(mode m) const noexcept { return modes_[static_cast<std::size_t>(m) - 1]; }

private:
    template <class T>
    static void grow(std::vector<T>& v, std::size_t wanted) {
        if (wanted > v.capacity()) {
            v.reserve(std::max(wanted, v.capacity() * 2));
        }
    }

    static std::tuple<std::int64_t, worker_id> key(const tensor_entry& e) noexcept { return {e.step, e.worker}; }
    static tensor_entry make(std::int64_t step, worker_id worker, mode m, std::int64_t mode_step) {
        tensor_entry e;
        e.step = step;
        e.worker = worker;
        e.entry_mode_code = static_cast<std::uint8_t>(m);
        e.mode_step = mode_step;
        return e;
    }

    std::string name_;
    std::size_t serial_;
    std::vector<tensor_entry> entries_;
    std::vector<std::int64_t> steps_; // entries_[i].step, for searching
    std::vector<reduction_location> reductions_;
    std::map<std::pair<std::int64_t, worker_id>, std::vector<std::int64_t>> shapes_;
    tensor_totals totals_;
    std::uint64_t sized_in_ = 0; // the refresh that last called expect()
    std::array<bool, 4> modes_{};
    mutable std::atomic<std::uint32_t> content_hint_{0};
};

} // namespace tdbg::detail
