#pragma once
/// \file
/// Definitions of tdbg/trial/detail/run_jobs.hpp.

#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "tdbg/format/job_claim.hpp"
#include "tdbg/trial/detail/run_jobs.hpp"

namespace tdbg::detail {

// A claim's text for a message: the job it names, else what it holds.
inline std::string claimed_job_text(const std::string& claim) {
    if (claim.empty()) {
        return "no claim (a run written by smdebug or another writer)";
    }
    if (const auto parsed = format::parse_job_claim(claim)) {
        return format::describe(*parsed);
    }
    return fmt::format("a claim that is not JSON ({} bytes)", claim.size());
}

TDBG_DECL void run_jobs::check(const std::vector<std::string>& workers) {
    if (change_) {
        throw run_changed(*change_);
    }
    for (const std::string& worker : workers) {
        std::string now = claim_text(worker);
        const auto seen = claims_.find(worker);
        if (seen == claims_.end()) {
            claims_.emplace(worker, std::move(now));
        } else if (seen->second != now) {
            restarted(worker, seen->second, now);
        }
    }
    if (!workers.empty() || presence_key_.empty() || storage_.exists(presence_key_)) {
        return;
    }
    // The run's first collection file is gone: a job that started again over it (whose claim
    // came first), or a removal.
    for (const auto& [worker, before] : claims_) {
        if (std::string now = claim_text(worker); now != before && !now.empty()) {
            restarted(worker, before, now);
        }
    }
    removed();
}

TDBG_DECL std::string run_jobs::claim_text(const std::string& worker) const {
    try {
        return storage_.read(format::claim_key(worker));
    } catch (const object_not_found&) {
        return {};
    }
}

TDBG_DECL void run_jobs::restarted(const std::string& worker, const std::string& before, const std::string& now) {
    const auto claim = format::parse_job_claim(now);
    const std::optional<std::int64_t> first = claim ? claim->first_step : std::nullopt;
    std::string message;
    if (now.empty()) {
        message = fmt::format("the run at {} is no longer written by the job the trial opened: {}'s claim {} was "
                              "removed (it named {}); the trial stops here, having read that job's steps only",
                              root_, worker, format::claim_key(worker), claimed_job_text(before));
    } else {
        message = fmt::format(
            "the run at {} was started again by another job: {} is now written by {}, which began at {}; until "
            "then it was written by {}. The trial stops here, having read the earlier job's steps only: open the "
            "run again to read the new job",
            root_, worker, claimed_job_text(now), first ? fmt::format("step {}", *first) : std::string("an unknown step"),
            claimed_job_text(before));
    }
    change_.emplace(message, now.empty() ? run_changed::kind::removed : run_changed::kind::restarted, worker, first);
    throw run_changed(*change_);
}

TDBG_DECL void run_jobs::removed() {
    change_.emplace(fmt::format("the run at {} was removed: its {} is gone", root_, presence_key_),
                    run_changed::kind::removed, std::string(), std::nullopt);
    throw run_changed(*change_);
}

} // namespace tdbg::detail
