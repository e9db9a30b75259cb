#pragma once
/// \file
/// What a trial knows about one tensor: for each (global step, worker) where
/// the index mentions it, where its value and its stored reductions lie in
/// the event files, and its shape when the index records one.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
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

/// One tensor at one global step, as written by one worker. Kept small (the
/// common entry, a value and nothing else, fits a cache line); stored
/// reductions and index shapes live in a separate allocation.
struct tensor_entry {
    /// What only some entries have.
    struct extra_info {
        std::vector<std::pair<reduction, value_location>> reductions;
        std::optional<std::vector<std::int64_t>> shape; // from the index's shape_payload
    };

    std::int64_t step = 0; // global step
    std::int64_t mode_step = 0;
    worker_id worker = 0;
    std::uint32_t value_file = 0;
    std::uint64_t value_offset = 0;
    std::uint64_t value_length = 0; // 0: no value saved
    mode entry_mode = mode::global;
    std::unique_ptr<extra_info> extra;

    [[nodiscard]] bool has_value() const noexcept { return value_length != 0; }
    [[nodiscard]] value_location value() const noexcept { return {value_file, value_offset, value_length}; }
    void set_value(const value_location& at) noexcept {
        value_file = at.file;
        value_offset = at.offset;
        value_length = at.length;
    }
    /// The extra information, created on first use.
    extra_info& more() {
        if (!extra) {
            extra = std::make_unique<extra_info>();
        }
        return *extra;
    }
};

/// All entries of one tensor, sorted by (global step, worker). Index files
/// arrive in step order, so adding is an append nearly always.
class tensor_record {
public:
    explicit tensor_record(std::string name) : name_(std::move(name)) {}

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const std::vector<tensor_entry>& entries() const noexcept { return entries_; }

    /// The entry for (`step`, `worker`), created (with its mode) when new.
    tensor_entry& at(std::int64_t step, worker_id worker, mode m, std::int64_t mode_step) {
        modes_[static_cast<std::size_t>(m) - 1] = true;
        if (entries_.empty() || key(entries_.back()) < std::make_tuple(step, worker)) {
            entries_.push_back(make(step, worker, m, mode_step));
            steps_.push_back(step);
            return entries_.back();
        }
        auto pos = std::lower_bound(entries_.begin(), entries_.end(), std::make_tuple(step, worker),
                                    [](const tensor_entry& e, const auto& k) { return key(e) < k; });
        if (pos != entries_.end() && key(*pos) == std::make_tuple(step, worker)) {
            return *pos;
        }
        steps_.insert(steps_.begin() + (pos - entries_.begin()), step);
        return *entries_.insert(pos, make(step, worker, m, mode_step));
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

private:
    static std::tuple<std::int64_t, worker_id> key(const tensor_entry& e) noexcept { return {e.step, e.worker}; }
    static tensor_entry make(std::int64_t step, worker_id worker, mode m, std::int64_t mode_step) {
        tensor_entry e;
        e.step = step;
        e.worker = worker;
        e.entry_mode = m;
        e.mode_step = mode_step;
        return e;
    }

    std::string name_;
    std::vector<tensor_entry> entries_;
    std::vector<std::int64_t> steps_; // entries_[i].step, for searching
    std::array<bool, 4> modes_{};
    mutable std::atomic<std::uint32_t> content_hint_{0};
};

} // namespace tdbg::detail
