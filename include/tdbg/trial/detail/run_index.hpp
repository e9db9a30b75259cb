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

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/trial/detail/record_cache.hpp"
#include "tdbg/trial/detail/step_table.hpp"
#include "tdbg/trial/detail/tensor_table.hpp"

namespace tdbg::detail {

/// "step 3 of mode TRAIN", for messages.
inline std::string describe_step(std::int64_t step, mode m) {
    return fmt::format("step {} of mode {}", step, mode_name(m));
}

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

/// The index of a run as read so far. Lookups hold `mutex` shared; a merge
/// holds it exclusively. Records, workers and event files are never removed or
/// moved, so pointers to them stay valid as long as the index.
struct run_index {
    mutable std::shared_mutex mutex; // guards everything below
    step_table steps;
    std::map<std::string, std::unique_ptr<tensor_record>, std::less<>> tensors;
    std::deque<std::string> worker_names; // a deque: resolved entries point into it
    std::unordered_map<std::string, worker_id> worker_ids;
    std::deque<event_file> files; // likewise
    std::unordered_map<std::string_view, std::uint32_t> file_ids;

    // ---- growing (the caller holds the lock exclusively) --------------------

    worker_id intern_worker(const std::string& worker) {
        auto it = worker_ids.find(worker);
        if (it != worker_ids.end()) {
            return it->second;
        }
        const auto id = static_cast<worker_id>(worker_names.size());
        worker_names.push_back(worker);
        worker_ids.emplace(worker, id);
        return id;
    }

    std::uint32_t intern_file(std::string_view key) {
        // Keyed by views of the deque's strings, which never move.
        if (auto it = file_ids.find(key); it != file_ids.end()) {
            return it->second;
        }
        const auto id = static_cast<std::uint32_t>(files.size());
        const event_file& f = files.emplace_back(std::string(key));
        file_ids.emplace(std::string_view(f.key), id);
        return id;
    }

    tensor_record& record_for(std::string_view name) {
        auto it = tensors.find(name);
        if (it == tensors.end()) {
            auto made = std::make_unique<tensor_record>(std::string(name), tensors.size());
            it = tensors.emplace(std::string(name), std::move(made)).first;
        }
        return *it->second;
    }

    // ---- reading (the caller holds the lock, shared) ------------------------

    /// The request for `where` (a location the index gave).
    [[nodiscard]] record_request request_for(const value_location& where) const {
        return record_request{&files[where.file], where.file, where.offset, where.length};
    }

    /// Everything the index says of `e`, an entry of `record`.
    [[nodiscard]] resolved_entry resolve(const tensor_record& record, const tensor_entry& e) const {
        resolved_entry r;
        r.step = e.step;
        r.entry_mode = e.entry_mode();
        r.mode_step = e.mode_step;
        r.worker = &worker_names[e.worker];
        if (e.has_value()) {
            r.value = request_for(e.value());
        }
        const auto [first, last] = record.reductions(e);
        r.reductions.reserve(static_cast<std::size_t>(last - first));
        for (const reduction_location* loc = first; loc != last; ++loc) {
            r.reductions.emplace_back(loc->which(), request_for(loc->where()));
        }
        if (const auto* shape = record.shape(e)) {
            r.shape = *shape;
        }
        return r;
    }

    /// The entry of (`step`, `m`) written by `worker` (default: the first worker in
    /// sorted order, as smdebug); nullptr when there is none; invalid_worker (naming
    /// `trial_name`) when others wrote it but not `worker`.
    [[nodiscard]] const tensor_entry* choose_entry(const tensor_record& record, std::int64_t step, mode m,
                                                   const std::optional<std::string>& worker,
                                                   std::string_view trial_name) const {
        const auto global = steps.global_step(m, step);
        if (!global) {
            return nullptr;
        }
        auto [first, last] = record.at_step(*global);
        const tensor_entry* chosen = nullptr;
        for (auto* e = first; e != last; ++e) {
            if (m != mode::global && e->entry_mode() != m) {
                continue;
            }
            if (worker ? worker_names[e->worker] == *worker
                       : (chosen == nullptr || worker_names[e->worker] < worker_names[chosen->worker])) {
                chosen = e;
            }
        }
        if (chosen != nullptr || !worker || first == last) {
            return chosen;
        }
        std::vector<std::string> have;
        for (auto* e = first; e != last; ++e) {
            if (m == mode::global || e->entry_mode() == m) {
                have.push_back(worker_names[e->worker]);
            }
        }
        if (!have.empty()) {
            std::sort(have.begin(), have.end());
            throw invalid_worker(fmt::format("invalid worker '{}': tensor '{}' at {} was written by {} (trial {})",
                                             *worker, record.name(), describe_step(step, m), fmt::join(have, ", "),
                                             trial_name),
                                 *worker);
        }
        return nullptr;
    }
};

} // namespace tdbg::detail
