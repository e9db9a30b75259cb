#pragma once
/// \file
/// Who writes a run: the claim a tdbg hook takes on its worker before it writes a byte of the
/// run, `.tdbg/claims/<worker>.json` (outside the folders smdebug's layout has, so smdebug's
/// reader never lists it):
///
///     {"worker": "worker_0", "host": "node-1", "pid": 4242, "job": "", "time": 1796656102.239574,
///      "id": "3f2a9c1e5b7d4e60a1b2c3d4e5f60718", "started": "2026-12-07T15:01:02Z", "first_step": 0}
///
/// `id` is 128 random bits, new for every hook that claims: two jobs never share one, even on
/// one host with a recycled pid. `first_step` is the first global step the job writes (0 for
/// a new run or one started again, the step after the last one published for a resumed run).
/// `time` is the claim's time in seconds since the epoch, `started` the same in UTC, `job` the
/// SageMaker job name where there is one. A claim is only ever replaced by another job: a
/// reader that follows a live run compares the claim's text from refresh to refresh, and a
/// change means that the worker's run is now another job's (trial/detail/run_jobs.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"

namespace tdbg::format {

/// Where the claims of a run live.
inline constexpr std::string_view claims_prefix = ".tdbg/claims/";

/// The key of `worker`'s claim in a run.
[[nodiscard]] TDBG_DECL std::string claim_key(std::string_view worker);

/// The worker a claim's key names; nullopt for another key.
[[nodiscard]] TDBG_DECL std::optional<std::string> parse_claim_key(std::string_view key);

/// A job's claim on one worker of a run.
struct job_claim {
    std::string worker;
    std::string id;   ///< 32 hex digits, random; empty in claims written before ids existed
    std::string host;
    std::int64_t pid = 0;
    std::string job;  ///< $TRAINING_JOB_NAME, else empty
    double time = 0;  ///< when the claim was taken, seconds since the epoch
    std::optional<std::int64_t> first_step; ///< the first global step the job writes
};

/// A claim for `worker` by this process, now, with a new random id, writing from `first_step`.
[[nodiscard]] TDBG_DECL job_claim new_job_claim(std::string_view worker, std::int64_t first_step);

/// The claim's JSON text (one line, the fields above in that order).
[[nodiscard]] TDBG_DECL std::string to_json(const job_claim& claim);

/// Reads a claim's text leniently (a field missing or of another type stays empty); nullopt
/// when the text is not a JSON object.
[[nodiscard]] TDBG_DECL std::optional<job_claim> parse_job_claim(std::string_view text);

/// The claim for a person: "job 3f2a9c1e5b7d4e60a1b2c3d4e5f60718 (host node-1, pid 4242, started
/// 2026-12-07T15:01:02Z)", with the job's name where it has one. Not terminal-safe: the caller
/// escapes what it prints.
[[nodiscard]] TDBG_DECL std::string describe(const job_claim& claim);

/// `seconds` since the epoch as "2026-12-07T15:01:02Z" (UTC, whole seconds).
[[nodiscard]] TDBG_DECL std::string utc_time_text(double seconds);

} // namespace tdbg::format

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/job_claim.ipp"
#endif
