// The retry policy: which failures are retried, and the backoff schedule.
#include <catch2/catch.hpp>

#include <chrono>

#include <curl/curl.h>

#include "tdbg/storage/detail/s3_http.hpp"
#include "tdbg/storage/detail/s3_retry.hpp"

using namespace std::chrono_literals;
using tdbg::s3_retry_policy;

TEST_CASE("backoff doubles from base_delay up to max_delay, with half of it random") {
    s3_retry_policy p;
    p.base_delay = 100ms;
    p.max_delay = 1000ms;
    const long long expected[] = {100, 200, 400, 800, 1000, 1000, 1000};
    for (int retry = 1; retry <= 7; ++retry) {
        const auto ceiling = tdbg::detail::backoff_ceiling(p, retry);
        CHECK(ceiling.count() == expected[retry - 1]);
        CHECK(tdbg::detail::backoff_delay(p, retry, 0.0).count() == expected[retry - 1] / 2);
        CHECK(tdbg::detail::backoff_delay(p, retry, 1.0).count() == expected[retry - 1]);
        const auto mid = tdbg::detail::backoff_delay(p, retry, 0.5).count();
        CHECK(mid == expected[retry - 1] * 3 / 4);
    }
    // huge retry numbers neither overflow nor exceed the cap
    CHECK(tdbg::detail::backoff_ceiling(p, 1000).count() == 1000);
    s3_retry_policy zero;
    zero.base_delay = 0ms;
    CHECK(tdbg::detail::backoff_ceiling(zero, 5).count() == 0);
}

TEST_CASE("retries stop at max_attempts and at the time budget") {
    s3_retry_policy p;
    p.max_attempts = 3;
    p.max_elapsed = 10s;
    CHECK(tdbg::detail::may_retry(p, 1, 0ms, 100ms));
    CHECK(tdbg::detail::may_retry(p, 2, 0ms, 100ms));
    CHECK_FALSE(tdbg::detail::may_retry(p, 3, 0ms, 100ms));
    CHECK(tdbg::detail::may_retry(p, 1, 9800ms, 100ms));
    CHECK_FALSE(tdbg::detail::may_retry(p, 1, 9950ms, 100ms));
    p.max_attempts = 1;
    CHECK_FALSE(tdbg::detail::may_retry(p, 1, 0ms, 0ms));
}

TEST_CASE("5xx but 501, 429 and S3's try-again codes are retried, other 4xx are not") {
    using tdbg::detail::retryable_status;
    CHECK(retryable_status(500, "InternalError"));
    CHECK(retryable_status(502, ""));
    CHECK(retryable_status(503, "SlowDown"));
    CHECK(retryable_status(504, ""));
    CHECK(retryable_status(429, ""));
    CHECK_FALSE(retryable_status(501, "NotImplemented")); // a missing feature stays missing
    CHECK(retryable_status(400, "RequestTimeout"));
    CHECK_FALSE(retryable_status(400, "InvalidArgument"));
    CHECK_FALSE(retryable_status(403, "SignatureDoesNotMatch"));
    CHECK_FALSE(retryable_status(403, "AccessDenied"));
    CHECK_FALSE(retryable_status(404, "NoSuchKey"));
    CHECK_FALSE(retryable_status(409, "BucketAlreadyExists"));
    CHECK_FALSE(retryable_status(416, "InvalidRange"));
    CHECK_FALSE(retryable_status(200, ""));
    CHECK_FALSE(retryable_status(206, ""));
}

TEST_CASE("connection errors and timeouts are retried, usage errors are not") {
    using tdbg::detail::retryable_curl_code;
    CHECK(retryable_curl_code(CURLE_COULDNT_CONNECT));
    CHECK(retryable_curl_code(CURLE_OPERATION_TIMEDOUT));
    CHECK(retryable_curl_code(CURLE_RECV_ERROR));
    CHECK(retryable_curl_code(CURLE_SEND_ERROR));
    CHECK(retryable_curl_code(CURLE_GOT_NOTHING));
    CHECK(retryable_curl_code(CURLE_PARTIAL_FILE));
    CHECK_FALSE(retryable_curl_code(CURLE_OK));
    CHECK_FALSE(retryable_curl_code(CURLE_URL_MALFORMAT));
    CHECK_FALSE(retryable_curl_code(CURLE_WRITE_ERROR));
    CHECK_FALSE(retryable_curl_code(CURLE_PEER_FAILED_VERIFICATION));
}
