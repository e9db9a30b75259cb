#pragma once
/// \file
/// Definitions of tdbg/hook/detail/run_claim.hpp.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <unistd.h>

#include "tdbg/format/index_file.hpp"
#include "tdbg/hook/detail/run_claim.hpp"

namespace tdbg::detail {

TDBG_DECL std::string claim_holder(const any_storage& storage, const std::string& claim) {
    std::string holder;
    // A claim another hook is publishing at this moment may not read yet (an S3 PUT under way):
    // looked for again for a second at most, so that the refusal can name its job.
    for (int look = 0;; ++look) {
        try {
            holder = storage.read(claim);
            break;
        } catch (const object_not_found&) {
            if (look == 20) {
                return "another hook, which is claiming it at this moment";
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    if (const auto parsed = format::parse_job_claim(holder); parsed && !parsed->id.empty()) {
        return format::describe(*parsed);
    }
    if (holder.size() > 400) {
        holder = holder.substr(0, 400) + "...";
    }
    return holder;
}

TDBG_DECL std::optional<long> live_local_holder(const std::string& holder) {
    try {
        const format::json_value claim = format::parse_json(holder, "claim", "claim");
        const format::json_value* host = claim.find("host");
        const format::json_value* pid = claim.find("pid");
        if (host == nullptr || pid == nullptr || !host->is_string()) {
            return std::nullopt;
        }
        char here[256] = {};
        if (::gethostname(here, sizeof here - 1) != 0 || host->as_string() != here) {
            return std::nullopt;
        }
        const std::int64_t id = pid->as_int64();
        if (id <= 0 || id == ::getpid() || id > std::numeric_limits<pid_t>::max()) {
            return std::nullopt; // this process (a hook made again), or no process
        }
        if (::kill(static_cast<pid_t>(id), 0) == 0 || errno == EPERM) {
            return static_cast<long>(id);
        }
    } catch (const error&) { // NOLINT(bugprone-empty-catch): not a claim tdbg wrote: nobody to ask
    }
    return std::nullopt;
}

TDBG_DECL void refuse_run(const any_storage& storage, std::string_view worker, const std::string& why) {
    throw config_error(terminal_safe(fmt::format(
        "the run directory {} holds another job's run of {}: {}. One job writes one run directory: write to a new "
        "one, or set hook_options::existing_run to existing_run_policy::resume (go on with that run) or "
        "existing_run_policy::overwrite (remove {}'s files and start again)",
        storage.describe(), worker, why, worker)));
}

TDBG_DECL void remove_worker_files(const any_storage& storage, const std::string& worker) {
    if (!storage.remove(std::string(format::end_marker_key))) {
        throw config_error(
            fmt::format("cannot overwrite the run at {}: its storage cannot remove objects", storage.describe()));
    }
    (void)storage.remove(std::string(format::stop_marker_key));
    for (const std::string& key : storage.list("events/")) {
        const auto info = format::parse_event_file_key(key);
        if (info && info->worker == worker) {
            (void)storage.remove(key);
        }
    }
    for (const std::string& key : storage.list("index/")) {
        const auto info = format::parse_index_file_key(key);
        if (info && info->worker == worker) {
            (void)storage.remove(key);
        }
    }
    (void)storage.remove(format::collections_file_key(worker));
}

TDBG_DECL void claim_run(const any_storage& storage, const std::string& worker, existing_run_policy policy,
                         bool resumed, std::int64_t first_step) {
    const std::string claim = format::claim_key(worker);
    const std::string text = format::to_json(format::new_job_claim(worker, first_step));
    if (policy == existing_run_policy::overwrite) {
        if (!storage.remove(std::string(format::end_marker_key))) {
            throw config_error(
                fmt::format("cannot overwrite the run at {}: its storage cannot remove objects", storage.describe()));
        }
        // The new job's claim first: a reader following the run learns that the job changed
        // before any of the old job's files go (trial/detail/run_jobs.hpp).
        storage.put(claim, text);
        remove_worker_files(storage, worker);
        return;
    }
    if (storage.exists(std::string(format::end_marker_key))) {
        refuse_run(storage, worker,
                   fmt::format("the run has ended (it holds {}; existing_run_policy::resume does not reopen it)",
                               format::end_marker_key));
    }
    if (policy == existing_run_policy::resume || resumed) {
        // The claim is taken over from a job that is gone, never from one that runs: of two jobs
        // resuming one run at once, one wins the claim and the other finds it held by a live
        // process (on this host; a holder on another host cannot be asked, and is taken over).
        if (!storage.put_if_absent(claim, text)) {
            std::string held;
            try {
                held = storage.read(claim);
            } catch (const object_not_found&) { // NOLINT(bugprone-empty-catch): gone since: nobody holds it
            }
            if (const auto pid = live_local_holder(held)) {
                refuse_run(storage, worker,
                           fmt::format("{} is claimed by process {} on this host, which is still running: {}", claim,
                                       *pid, claim_holder(storage, claim)));
            }
            storage.put(claim, text);
        }
        return;
    }
    // A run written without a claim is refused before claiming: a claim that appears and goes
    // again would read to a follower of that run as a change of job.
    const auto unclaimed_run = [&] {
        refuse_run(storage, worker,
                   fmt::format("it holds {} and no claim: a run written by another job",
                               format::collections_file_key(worker)));
    };
    if (!storage.exists(claim) && storage.exists(format::collections_file_key(worker))) {
        unclaimed_run();
    }
    if (!storage.put_if_absent(claim, text)) {
        refuse_run(storage, worker, fmt::format("{} is claimed by {}", claim, claim_holder(storage, claim)));
    }
    if (storage.exists(format::collections_file_key(worker))) {
        try {
            if (storage.read(claim) == text) {
                (void)storage.remove(claim); // the directory stays as it was
            }
        } catch (const object_not_found&) { // NOLINT(bugprone-empty-catch): gone already
        }
        unclaimed_run();
    }
}

TDBG_DECL std::optional<run_position> published_position(const any_storage& storage, const std::string& worker,
                                                        std::size_t max_reads) {
    std::vector<std::pair<std::int64_t, std::string>> steps; // (step, key) of the worker's index files
    for (std::string& key : storage.list("index/")) {
        const auto info = format::parse_index_file_key(key);
        if (info && info->worker == worker) {
            steps.emplace_back(info->step, std::move(key));
        }
    }
    if (steps.empty()) {
        return std::nullopt;
    }
    std::sort(steps.begin(), steps.end());
    run_position position;
    position.last_step = steps.back().first;
    // Each mode's newest step, from the newest files: a mode not met there goes on after the
    // last global step (step_clock::resume), which is above any of its steps.
    std::size_t read = 0;
    for (auto it = steps.rbegin(); it != steps.rend() && read < max_reads; ++it, ++read) {
        const format::index_file index = format::parse_index_file(storage.read(it->second), it->second);
        const bool known = std::any_of(position.mode_steps.begin(), position.mode_steps.end(),
                                       [&](const auto& m) { return m.first == index.mode; });
        if (!known && index.mode != mode::global) {
            position.mode_steps.emplace_back(index.mode, index.mode_step);
        }
    }
    return position;
}

} // namespace tdbg::detail
