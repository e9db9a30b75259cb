#pragma once
/// \file
/// One job per run directory: the claim a hook takes on its worker in a run before it
/// writes, so that two jobs never write one run (hook_options::existing_run).
///
/// A run directory holds one job's run. Workers of one job (MPI ranks, torchrun
/// processes) write into it side by side under different worker names, so the claim is
/// per worker: `.tdbg/claims/<worker>.json`, published with the storage's put_if_absent
/// (of two hooks racing for one worker, one wins). That worker's run in the directory is
/// another job's when the directory holds the end marker (a finished run), the
/// worker's claim (a job live or crashed), or the worker's collections file (a run
/// written before claims existed, or by Python smdebug). The claim lies outside the
/// folders smdebug's layout has (events/, index/, collections/, tensorboard/), which are
/// the only ones tdbg's and smdebug's readers list, so a run reads as before.

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

#include <unistd.h>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// The key of `worker`'s claim in a run.
[[nodiscard]] inline std::string claim_key(std::string_view worker) {
    return fmt::format(".tdbg/claims/{}.json", worker);
}

/// What a claim holds: who took it and when (JSON, for a person reading a refusal).
[[nodiscard]] inline std::string claim_text(std::string_view worker) {
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

/// The config_error of a run directory that holds another job's run of `worker`.
[[noreturn]] inline void refuse_run(const any_storage& storage, std::string_view worker, const std::string& why) {
    throw config_error(terminal_safe(fmt::format(
        "the run directory {} holds another job's run of {}: {}. One job writes one run directory: write to a new "
        "one, or set hook_options::existing_run to existing_run_policy::resume (go on with that run) or "
        "existing_run_policy::overwrite (remove {}'s files and start again)",
        storage.describe(), worker, why, worker)));
}

/// Removes what `worker` wrote in the run (its event, index and collections files), the end
/// marker and the stop marker: existing_run_policy::overwrite.
inline void remove_worker_files(const any_storage& storage, const std::string& worker) {
    if (!storage.remove(std::string(format::end_marker_key))) {
        throw config_error(fmt::format("cannot overwrite the run at {}: its storage cannot remove objects",
                                       storage.describe()));
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

/// Claims `worker` in the run held by `storage` as `policy` says; `resumed`: the state store
/// resumes the job (which then goes on as with existing_run_policy::resume). Throws
/// config_error when the run is another job's, a storage_error when the storage fails.
inline void claim_run(const any_storage& storage, const std::string& worker, existing_run_policy policy,
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
