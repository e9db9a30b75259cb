#pragma once
/// \file
/// Who writes the run a trial follows: the claim of each worker (format/job_claim.hpp), as
/// first seen, checked again before new index files of that worker are read, so that a trial
/// never takes a job started again over the run (existing_run_policy::overwrite, or a resume)
/// for the job it opened, nor waits without end for a run that was removed.
///
/// A claim is only ever replaced by another job, so its text is the job's identity. The check
/// comes after the listing and before the reading: a new job claims before it writes, so a
/// claim still the old one after the listing means every file listed is the old job's.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// The claims of a followed run's workers, and the change found, if any.
class run_jobs {
public:
    /// Over the run in `storage`; `root` prefixes keys in messages.
    run_jobs(const any_storage& storage, std::string root) : storage_(storage), root_(std::move(root)) {}

    /// The key whose absence means the run was removed: the first collection file the trial read.
    void set_presence_key(std::string key) { presence_key_ = std::move(key); }

    /// Before the index files of `workers` (sorted, unique) are read: each one's claim, read now,
    /// is the one first seen (a worker first met is remembered); with no new file, that the run
    /// is still there. Throws run_changed (and keeps it: change()) otherwise.
    TDBG_DECL void check(const std::vector<std::string>& workers);

    /// The change found, if any: every check after it throws it again.
    [[nodiscard]] const std::optional<run_changed>& change() const noexcept { return change_; }

private:
    // A worker's claim as its text now; "" when it has none.
    [[nodiscard]] TDBG_DECL std::string claim_text(const std::string& worker) const;
    [[noreturn]] TDBG_DECL void restarted(const std::string& worker, const std::string& before,
                                          const std::string& now);
    [[noreturn]] TDBG_DECL void removed();

    const any_storage& storage_;
    std::string root_;
    std::string presence_key_;
    std::map<std::string, std::string, std::less<>> claims_; // worker -> its claim's text as first seen
    std::optional<run_changed> change_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/run_jobs.ipp"
#endif
