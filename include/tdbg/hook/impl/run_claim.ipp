#pragma once
/// \file
/// Definitions of tdbg/hook/detail/run_claim.hpp.

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "tdbg/hook/detail/run_claim.hpp"

namespace tdbg::detail {

TDBG_DECL std::string claim_text(std::string_view worker) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) {
        host[0] = '\0';
    }
    const char* job = std::getenv("TRAINING_JOB_NAME");
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string out = R"({"worker": )";
    format::append_json_string(out, worker, true);
    out += R"(, "host": )";
    format::append_json_string(out, host, true);
    out += fmt::format(R"(, "pid": {}, "job": )", ::getpid());
    format::append_json_string(out, job == nullptr ? "" : job, true);
    out += fmt::format(R"(, "time": {:.6f}}})", now);
    return out;
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
                         bool resumed) {
    const std::string claim = claim_key(worker);
    if (policy == existing_run_policy::overwrite) {
        remove_worker_files(storage, worker);
        storage.put(claim, claim_text(worker));
        return;
    }
    if (storage.exists(std::string(format::end_marker_key))) {
        refuse_run(storage, worker,
                   fmt::format("the run has ended (it holds {}; existing_run_policy::resume does not reopen it)",
                               format::end_marker_key));
    }
    if (policy == existing_run_policy::resume || resumed) {
        storage.put(claim, claim_text(worker));
        return;
    }
    if (!storage.put_if_absent(claim, claim_text(worker))) {
        std::string holder;
        try {
            holder = storage.read(claim);
        } catch (const object_not_found&) {
            holder = "another hook is claiming it at this moment";
        }
        if (holder.size() > 400) {
            holder = holder.substr(0, 400) + "...";
        }
        refuse_run(storage, worker, fmt::format("{} is claimed: {}", claim, holder));
    }
    if (storage.exists(format::collections_file_key(worker))) {
        (void)storage.remove(claim); // the directory stays as it was
        refuse_run(storage, worker,
                   fmt::format("it holds {} and no claim: a run written by another job",
                               format::collections_file_key(worker)));
    }
}

} // namespace tdbg::detail
