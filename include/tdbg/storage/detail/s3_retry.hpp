#pragma once
/// \file
/// When to retry an S3 request and how long to wait: exponential backoff with
/// "equal jitter" (half of each delay fixed, half random), bounded in attempts
/// and in total time. The fixed half gives the total wait a floor, so a server
/// that restarts is waited for; the random half spreads out the retries of
/// many threads that failed together.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace tdbg {

/// How an S3 request is retried after a 5xx reply, a timeout or a connection error.
struct s3_retry_policy {
    /// Attempts in all, the first one included (1: never retry).
    int max_attempts = 10;
    /// Upper bound of the first delay; each later bound doubles.
    std::chrono::milliseconds base_delay{100};
    /// No delay exceeds this.
    std::chrono::milliseconds max_delay{10'000};
    /// No retry starts once this much time has passed since the first attempt.
    std::chrono::milliseconds max_elapsed{120'000};
};

namespace detail {

/// The bound of the delay before retry number `retry` (1 for the first retry):
/// min(max_delay, base_delay * 2^(retry-1)).
inline std::chrono::milliseconds backoff_ceiling(const s3_retry_policy& policy, int retry) {
    const std::int64_t cap = std::max<std::int64_t>(0, policy.max_delay.count());
    std::int64_t delay = std::max<std::int64_t>(0, policy.base_delay.count());
    for (int i = 1; i < retry && delay < cap; ++i) {
        delay *= 2;
    }
    return std::chrono::milliseconds(std::min(delay, cap));
}

/// The delay before retry number `retry`, for a uniform random `unit` in [0, 1):
/// ceiling/2 + unit * ceiling/2.
inline std::chrono::milliseconds backoff_delay(const s3_retry_policy& policy, int retry, double unit) {
    const auto ceiling = static_cast<double>(backoff_ceiling(policy, retry).count());
    const double clamped = std::min(std::max(unit, 0.0), 1.0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(ceiling / 2 + clamped * ceiling / 2));
}

/// True when another attempt may start: attempts left, and the wait ends
/// before the time budget does.
inline bool may_retry(const s3_retry_policy& policy, int attempts_made, std::chrono::milliseconds elapsed,
                      std::chrono::milliseconds next_delay) {
    return attempts_made < policy.max_attempts && elapsed + next_delay < policy.max_elapsed;
}

/// True for replies worth retrying: 5xx but 501 Not Implemented (a server that lacks a
/// feature lacks it the next time too), 429 Too Many Requests, and the S3 error codes that
/// mean "try again" (RequestTimeout comes with a 400).
inline bool retryable_status(long status, std::string_view s3_code) {
    return (status >= 500 && status != 501) || status == 429 || s3_code == "RequestTimeout" || s3_code == "SlowDown" ||
           s3_code == "InternalError" || s3_code == "ServiceUnavailable";
}

} // namespace detail
} // namespace tdbg
