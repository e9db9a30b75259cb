#pragma once
/// \file
/// What a trial knows about one tensor: for each (global step, worker) where
/// the index mentions it, where its value and its stored reductions lie in
/// the event files, and its shape when the index records one. Kept compact:
/// a run's index can hold millions of entries, so an entry is 32 bytes with
/// no allocation of its own (what all entries of one index file share, its
/// event file and mode step, is the index's, once per file), and stored
/// reductions sit in one array per tensor, 12 bytes each.

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

#include "tdbg/config.hpp"
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

/// Where a record lies in its event file, the file left out (an entry's records are all in
/// its index file's event file).
struct record_span {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

/// A value's offset and length below this (1 TiB) are kept in its entry, 40 bits each;
/// larger ones (a damaged index, mostly) in a list of the record's.
inline constexpr std::uint64_t max_narrow_offset = std::uint64_t{1} << 40U;

/// A stored reduction's record starts below this (256 TiB; the index parser checks it).
inline constexpr std::uint64_t max_reduction_offset = std::uint64_t{1} << 48U;

/// The longest record a stored reduction may have.
inline constexpr std::uint64_t max_reduction_record = 0xffffffffU;

/// A stored reduction's record, packed in 12 bytes (a run of stored reductions
/// has six or more of them per entry). A reduction's record holds one number,
/// so its length fits 32 bits (the index parser checks it); its event file is its entry's.
struct reduction_location {
    reduction_location() = default;
    reduction_location(reduction r, const record_span& at) noexcept
        : offset_low(static_cast<std::uint32_t>(at.offset)), length(static_cast<std::uint32_t>(at.length)),
          offset_high(static_cast<std::uint16_t>(at.offset >> 32U)), kind(static_cast<std::uint8_t>(r.kind)),
          abs(r.abs) {}

    std::uint32_t offset_low = 0;
    std::uint32_t length = 0;
    std::uint16_t offset_high = 0;
    std::uint8_t kind = 0; // reduction_kind
    bool abs = false;

    [[nodiscard]] reduction which() const noexcept { return reduction{static_cast<reduction_kind>(kind), abs}; }
    /// Where the record lies, in event file `file` (its entry's).
    [[nodiscard]] value_location where(std::uint32_t file) const noexcept {
        return {file, std::uint64_t{offset_high} << 32U | offset_low, length};
    }
};

static_assert(sizeof(reduction_location) == 12, "reduction_location is packed");

/// One tensor at one global step, as written by one worker, in 32 bytes. The
/// index file it came from (`source`, a number the index gives each file) says
/// its event file and mode step; its value's offset and length take 40 bits each
/// (tensor_record::value reads them).
struct tensor_entry {
    tensor_entry() noexcept
        : value_offset(0), value_length_high(0), reduction_count(0),
          entry_mode_code(static_cast<std::uint8_t>(mode::global)), has_shape(false), wide_value(false) {}

    std::int64_t step = 0;             // global step
    std::uint32_t source = 0;          // its index file (run_index::sources)
    worker_id worker = 0;
    std::uint32_t first_reduction = 0; // into the record's reductions
    std::uint32_t value_length_low = 0; // when wide_value: the value's place in the record's wide values
    std::uint64_t value_offset : 40;
    std::uint64_t value_length_high : 8; // with value_length_low, the length; 0: no value saved
    std::uint64_t reduction_count : 8;
    std::uint64_t entry_mode_code : 3;
    std::uint64_t has_shape : 1;  // the record keeps the shape the index gave
    std::uint64_t wide_value : 1; // the value's offset or length is max_narrow_offset or more

    [[nodiscard]] mode entry_mode() const noexcept { return static_cast<mode>(entry_mode_code); }
    [[nodiscard]] std::uint64_t value_length() const noexcept {
        return std::uint64_t{value_length_high} << 32U | value_length_low;
    }
    [[nodiscard]] bool has_value() const noexcept { return wide_value || value_length() != 0; }
};

static_assert(sizeof(tensor_entry) == 32, "tensor_entry stays compact");

/// What the entries of one tensor say, gathered as they are added (tdbg ls
/// reads it without walking the entries).
struct tensor_totals {
    /// The bit of `r` in `reductions`: plain kinds first, then the abs ones (the order of reduction's <).
    static constexpr std::uint32_t bit(reduction r) noexcept {
        return std::uint32_t{1} << (static_cast<unsigned>(r.kind) + (r.abs ? all_reduction_kinds.size() : 0U));
    }
    /// The reductions whose bits are set, sorted.
    [[nodiscard]] TDBG_DECL std::vector<reduction> stored_reductions() const;

    std::size_t steps = 0;        // distinct global steps
    std::uint32_t reductions = 0; // a bit per stored reduction
    bool any_value = false;
    bool any_shape = false;
};

/// A set of global steps held as arithmetic progressions: a tensor saved every
/// N steps is one progression however many steps it has. Steps added in
/// increasing order extend the last progression; one added out of order is
/// kept apart (a lagging worker's step, rare).
class step_set {
public:
    /// Adds `step`; true when it was not in the set.
    TDBG_DECL bool insert(std::int64_t step);

    /// True when `step` is in the set.
    [[nodiscard]] TDBG_DECL bool contains(std::int64_t step) const noexcept;

    /// What the set holds, in progressions and steps kept apart (its memory, in units).
    [[nodiscard]] std::size_t pieces() const noexcept { return runs_.size() + apart_.size(); }

private:
    struct progression {
        std::int64_t first = 0;
        std::int64_t stride = 0; // 0 while it has one step
        std::int64_t count = 0;
        [[nodiscard]] std::int64_t last() const noexcept { return first + stride * (count - 1); }
    };

    std::vector<progression> runs_;  // sorted and disjoint: each starts after the previous one's last
    std::vector<std::int64_t> apart_; // sorted: steps added before the last progression's last
};

/// All entries of one tensor, sorted by (global step, worker). Index files
/// arrive in step order, so adding is an append nearly always.
///
/// A summarised record (trial_options::summary_only) keeps its totals and, of
/// its entries, only the last one with a value or a shape and those of its
/// latest step: its memory follows the number of workers, not of steps.
class tensor_record {
public:
    /// The record of tensor `name`, the trial's `serial`-th (records are merged in lanes by it);
    /// `summarised`: see the class comment.
    tensor_record(std::string name, std::size_t serial, bool summarised = false)
        : name_(std::move(name)), serial_(serial), summarised_(summarised) {}

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] std::size_t serial() const noexcept { return serial_; }
    [[nodiscard]] const std::vector<tensor_entry>& entries() const noexcept { return entries_; }
    [[nodiscard]] const tensor_totals& totals() const noexcept { return totals_; }
    [[nodiscard]] bool summarised() const noexcept { return summarised_; }
    /// The units of state a summarised record holds: entries kept, stored reductions kept,
    /// shapes kept and the pieces of its set of steps (tests check it does not grow with steps).
    [[nodiscard]] std::size_t held_units() const noexcept {
        return entries_.size() + reductions_.size() + shapes_.size() + wide_values_.size() + seen_steps_.pieces();
    }

    /// The entry for (`step`, `worker`), created (with its mode and its index file `source`) when new.
    TDBG_DECL tensor_entry& at(std::int64_t step, worker_id worker, mode m, std::uint32_t source);

    /// Makes room for `more` entries like the last one (its stored reductions
    /// included), once per `refresh` (the trial numbers its refreshes from 1): a
    /// refresh that reads many index files of a regular run sizes the arrays once
    /// instead of doubling them. Growth stays geometric, so many small refreshes
    /// (a live run) still cost amortised constant time.
    TDBG_DECL void expect(std::size_t more, std::uint64_t refresh);

    /// Records the value's location for `e` (an entry of this record).
    TDBG_DECL void set_value(tensor_entry& e, const record_span& at);

    /// Where the value of `e` (an entry of this record that has one) lies, in event file `file`.
    [[nodiscard]] TDBG_DECL value_location value(const tensor_entry& e, std::uint32_t file) const noexcept;

    /// Records (or replaces) the stored reduction `r` of `e` (an entry of this record).
    TDBG_DECL void set_reduction(tensor_entry& e, reduction r, const record_span& at);

    /// The stored reductions of `e`, as [first, last).
    [[nodiscard]] TDBG_DECL std::pair<const reduction_location*, const reduction_location*>
    reductions(const tensor_entry& e) const noexcept;

    /// Records the shape the index gave for `e`.
    TDBG_DECL void set_shape(tensor_entry& e, std::vector<std::int64_t> shape);

    /// The shape the index gave for `e`, nullptr when none.
    [[nodiscard]] TDBG_DECL const std::vector<std::int64_t>* shape(const tensor_entry& e) const;

    /// The entries of global step `step` (one per worker), as [first, last).
    [[nodiscard]] TDBG_DECL std::pair<const tensor_entry*, const tensor_entry*>
    at_step(std::int64_t step) const noexcept;

    /// Where this tensor's elements last started in a record (0: not read yet);
    /// a hint for placing the next read so that the value needs no copy.
    [[nodiscard]] std::atomic<std::uint32_t>& content_hint() const noexcept { return content_hint_; }

    /// True when the tensor has an entry in mode `m` (mode::global: any entry).
    [[nodiscard]] TDBG_DECL bool has_mode(mode m) const noexcept;

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
    static TDBG_DECL tensor_entry make(std::int64_t step, worker_id worker, mode m, std::uint32_t source);

    // A summarised record reaching a later step: keeps only its last entry with a value or a shape.
    TDBG_DECL void keep_last_described();

    std::string name_;
    std::size_t serial_;
    std::vector<tensor_entry> entries_;
    std::vector<reduction_location> reductions_;
    std::vector<record_span> wide_values_; // the values of entries with wide_value
    std::map<std::pair<std::int64_t, worker_id>, std::vector<std::int64_t>> shapes_;
    tensor_totals totals_;
    std::uint64_t sized_in_ = 0; // the refresh that last called expect()
    std::array<bool, 4> modes_{};
    bool summarised_ = false;
    step_set seen_steps_; // a summarised record's steps, for totals_.steps
    mutable std::atomic<std::uint32_t> content_hint_{0};
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/tensor_table.ipp"
#endif
