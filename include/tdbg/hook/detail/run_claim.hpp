#pragma once
/// \file
/// One job per run directory: the claim a hook takes on its worker in a run before it
/// writes, so that two jobs never write one run (hook_options::existing_run).
///
/// A run directory holds one job's run. Workers of one job (MPI ranks, torchrun
/// processes) write into it side by side under different worker names, so the claim is
/// per worker: `.tdbg/claims/<worker>.json` (format/job_claim.hpp: a random id, the host, the
/// pid, the start time and the first step the job writes), published with the storage's
/// put_if_absent (of two hooks racing for one worker, one wins) when the hook is built, before
/// any other file of the run is written and before the hook's writer threads exist. That worker's run in the directory is
/// another job's when the directory holds the end marker (a finished run), the
/// worker's claim (a job live or crashed), or the worker's collections file (a run
/// written before claims existed, or by Python smdebug). The claim lies outside the
/// folders smdebug's layout has (events/, index/, collections/, tensorboard/), which are
/// the only ones tdbg's and smdebug's readers list, so a run reads as before.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/job_claim.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Who holds `claim` (a claim's key), for a refusal's message: the job it names (id, host,
/// pid, start time), else its text cut to 400 bytes.
[[nodiscard]] TDBG_DECL std::string claim_holder(const any_storage& storage, const std::string& claim);

/// The process a claim's text names when it runs on this host (not this process); nullopt when
/// it is gone, on another host, or the text is not a claim.
[[nodiscard]] TDBG_DECL std::optional<long> live_local_holder(const std::string& holder);

/// The config_error of a run directory that holds another job's run of `worker`.
[[noreturn]] TDBG_DECL void refuse_run(const any_storage& storage, std::string_view worker, const std::string& why);

/// Removes what `worker` wrote in the run (its event, index and collections files), the end
/// marker and the stop marker: existing_run_policy::overwrite.
TDBG_DECL void remove_worker_files(const any_storage& storage, const std::string& worker);

/// Claims `worker` in the run held by `storage` as `policy` says, for a job whose first
/// global step is `first_step`; `resumed`: the state store resumes the job (which then goes
/// on as with existing_run_policy::resume). With existing_run_policy::overwrite the new claim
/// replaces the old one before the old files are removed, so that a reader following the run
/// sees the change of job before it sees files go. Throws config_error when the run is
/// another job's, a storage_error when the storage fails.
TDBG_DECL void claim_run(const any_storage& storage, const std::string& worker, existing_run_policy policy,
                         bool resumed, std::int64_t first_step);

/// Where a worker's run in the directory left off: its last published global step, and the
/// last step of each mode found in its newest index files.
struct run_position {
    std::int64_t last_step = -1;
    std::vector<std::pair<mode, std::int64_t>> mode_steps;
};

/// The position of `worker`'s published steps in the run (its index files, the newest
/// `max_reads` of them read for their modes); nullopt when it published none. A job that
/// resumes the run without a state store goes on after it, so its steps never replace another
/// job's (existing_run_policy::resume).
[[nodiscard]] TDBG_DECL std::optional<run_position> published_position(const any_storage& storage,
                                                                        const std::string& worker,
                                                                        std::size_t max_reads = 16);

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/run_claim.ipp"
#endif
