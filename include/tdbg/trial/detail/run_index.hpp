#pragma once
/// \file
/// What a run's index files said so far, the state a trial's lookups read:
/// its steps, its tensors and their entries, the workers and event files they
/// name. index_loader merges new index files into it; trial_core answers queries.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/trial/detail/record_cache.hpp"
#include "tdbg/trial/detail/step_table.hpp"
#include "tdbg/trial/detail/tensor_table.hpp"

namespace tdbg::detail {

/// "step 3 of mode TRAIN", for messages.
TDBG_DECL std::string describe_step(std::int64_t step, mode m);

/// A tensor entry found for a query, copied out of the shared state with
/// everything needed to read it without the lock (the pointers stay valid:
/// workers and event files are never removed or moved).
struct resolved_entry {
    std::int64_t step = 0;
    mode entry_mode = mode::global;
    std::int64_t mode_step = 0;
    const std::string* worker = nullptr;
    std::optional<record_request> value;
    std::vector<std::pair<reduction, record_request>> reductions;
    std::optional<std::vector<std::int64_t>> shape;
};

/// What the entries of one index file share: its event file and mode step.
struct entry_source {
    std::int64_t mode_step = 0;
    std::uint32_t file = 0; // into run_index::files
};

/// The index of a run as read so far. Lookups hold `mutex` shared; a merge
/// holds it exclusively. Records, workers and event files are never removed or
/// moved, so pointers to them stay valid as long as the index.
struct run_index {
    mutable std::shared_mutex mutex; // guards everything below
    step_table steps;
    std::map<std::string, std::unique_ptr<tensor_record>, std::less<>> tensors;
    std::deque<std::string> worker_names; // a deque: resolved entries point into it
    std::unordered_map<std::string, worker_id> worker_ids;
    std::vector<std::uint32_t> worker_ranks; // by worker_id: its place among the workers sorted by name
    std::deque<event_file> files; // likewise
    std::unordered_map<std::string_view, std::uint32_t> file_ids;
    /// Counts the changes of the index (each merge, each refresh's end): what was computed
    /// from it at one count holds as long as the count stays.
    std::uint64_t generation = 0;
    std::vector<entry_source> sources; // by tensor_entry::source: one per index file read
    bool summarised = false; // records keep summaries only (trial_options::summary_only); set before growing

    // ---- growing (the caller holds the lock exclusively) --------------------

    TDBG_DECL worker_id intern_worker(const std::string& worker);

    TDBG_DECL std::uint32_t intern_file(std::string_view key);

    TDBG_DECL tensor_record& record_for(std::string_view name);

    /// Numbers an index file whose entries are in event file `file` at `mode_step`.
    TDBG_DECL std::uint32_t add_source(std::uint32_t file, std::int64_t mode_step);

    // ---- reading (the caller holds the lock, shared) ------------------------

    /// The request for `where` (a location the index gave).
    [[nodiscard]] TDBG_DECL record_request request_for(const value_location& where) const;

    /// Where the value of `e`, an entry of `record`, lies (it has one).
    [[nodiscard]] value_location value_of(const tensor_record& record, const tensor_entry& e) const {
        return record.value(e, sources[e.source].file);
    }
    /// Where the stored reduction `loc` of `e` lies.
    [[nodiscard]] value_location where(const tensor_entry& e, const reduction_location& loc) const {
        return loc.where(sources[e.source].file);
    }
    /// The mode step of `e`, its index file's.
    [[nodiscard]] std::int64_t mode_step_of(const tensor_entry& e) const { return sources[e.source].mode_step; }

    /// Everything the index says of `e`, an entry of `record`.
    [[nodiscard]] TDBG_DECL resolved_entry resolve(const tensor_record& record, const tensor_entry& e) const;

    /// The entry of (`step`, `m`) written by `worker` (default: the first worker in
    /// sorted order, as smdebug, by worker_ranks); nullptr when there is none; invalid_worker (naming
    /// `trial_name`) when others wrote it but not `worker`.
    [[nodiscard]] TDBG_DECL const tensor_entry* choose_entry(const tensor_record& record, std::int64_t step, mode m,
                                                             const std::optional<std::string>& worker,
                                                             std::string_view trial_name) const;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/run_index.ipp"
#endif
