#pragma once
/// \file
/// Definitions of tdbg/trial/detail/run_index.hpp.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "tdbg/trial/detail/run_index.hpp"

namespace tdbg::detail {

TDBG_DECL std::string describe_step(std::int64_t step, mode m) {
    return fmt::format("step {} of mode {}", step, mode_name(m));
}

TDBG_DECL worker_id run_index::intern_worker(const std::string& worker) {
    auto it = worker_ids.find(worker);
    if (it != worker_ids.end()) {
        return it->second;
    }
    const auto id = static_cast<worker_id>(worker_names.size());
    worker_names.push_back(worker);
    worker_ids.emplace(worker, id);
    // The workers' order by name, recomputed as a worker arrives (rarely: once per worker).
    std::vector<worker_id> by_name(worker_names.size());
    std::iota(by_name.begin(), by_name.end(), worker_id{0});
    std::sort(by_name.begin(), by_name.end(), [&](worker_id a, worker_id b) { return worker_names[a] < worker_names[b]; });
    worker_ranks.resize(by_name.size());
    for (std::uint32_t rank = 0; rank < by_name.size(); ++rank) {
        worker_ranks[by_name[rank]] = rank;
    }
    return id;
}

TDBG_DECL std::uint32_t run_index::intern_file(std::string_view key) {
    // Keyed by views of the deque's strings, which never move.
    if (auto it = file_ids.find(key); it != file_ids.end()) {
        return it->second;
    }
    const auto id = static_cast<std::uint32_t>(files.size());
    const event_file& f = files.emplace_back(std::string(key));
    file_ids.emplace(std::string_view(f.key), id);
    return id;
}

TDBG_DECL tensor_record& run_index::record_for(std::string_view name) {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
        auto made = std::make_unique<tensor_record>(std::string(name), tensors.size(), summarised);
        it = tensors.emplace(std::string(name), std::move(made)).first;
    }
    return *it->second;
}

TDBG_DECL std::uint32_t run_index::add_source(std::uint32_t file, std::int64_t mode_step) {
    const auto id = static_cast<std::uint32_t>(sources.size());
    sources.push_back(entry_source{mode_step, file});
    return id;
}

TDBG_DECL record_request run_index::request_for(const value_location& where) const {
    return record_request{&files[where.file], where.file, where.offset, where.length};
}

TDBG_DECL resolved_entry run_index::resolve(const tensor_record& record, const tensor_entry& e) const {
    resolved_entry r;
    r.step = e.step;
    r.entry_mode = e.entry_mode();
    r.mode_step = mode_step_of(e);
    r.worker = &worker_names[e.worker];
    if (e.has_value()) {
        r.value = request_for(value_of(record, e));
    }
    const auto [first, last] = record.reductions(e);
    r.reductions.reserve(static_cast<std::size_t>(last - first));
    for (const reduction_location* loc = first; loc != last; ++loc) {
        r.reductions.emplace_back(loc->which(), request_for(where(e, *loc)));
    }
    if (const auto* shape = record.shape(e)) {
        r.shape = *shape;
    }
    return r;
}

TDBG_DECL const tensor_entry* run_index::choose_entry(const tensor_record& record, std::int64_t step, mode m,
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
                   : (chosen == nullptr || worker_ranks[e->worker] < worker_ranks[chosen->worker])) {
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

} // namespace tdbg::detail
