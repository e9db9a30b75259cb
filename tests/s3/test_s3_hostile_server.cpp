// s3_storage against a server that never lets go: listings truncated forever
// (new tokens each page, or tokens that come round again), a body sent a byte
// at a time, and a caller that cancels while a request waits. Each ends with
// an error naming what was asked for, bounded in time and memory.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <string>

#include "fake_http_server.hpp"
#include "support.hpp"
#include "tdbg/storage/s3.hpp"

using tdbg::test::fake_http_server;
using tdbg::test::fake_reply;
using tdbg::test::recorded_request;
using namespace std::chrono_literals;

namespace {

tdbg::s3_options hostile_server_options(const std::string& endpoint) {
    tdbg::s3_options o;
    o.use_environment = false;
    o.endpoint_url = endpoint;
    o.access_key_id = "AKIDEXAMPLE";
    o.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    o.region = "us-east-1";
    o.retry.base_delay = 1ms;
    o.retry.max_delay = 4ms;
    return o;
}

// The continuation token a request carried ("" for a listing's first page).
std::string token_of(const recorded_request& r) {
    const std::string name = "continuation-token=";
    const std::size_t at = r.target.find(name);
    if (at == std::string::npos) {
        return {};
    }
    const std::size_t end = r.target.find('&', at);
    return r.target.substr(at + name.size(), end == std::string::npos ? std::string::npos : end - at - name.size());
}

// A truncated ListObjectsV2 page holding `keys`, pointing on to `next`.
fake_reply truncated_page(const std::vector<std::string>& keys, const std::string& next) {
    std::string body =
        "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>" + next + "</NextContinuationToken>";
    for (const std::string& key : keys) {
        body += "<Contents><Key>" + key + "</Key></Contents>";
    }
    return {200, body + "</ListBucketResult>", {}, false};
}

bool is_get_of(const recorded_request& r, const std::string& path) { return r.method == "GET" && r.target == path; }

} // namespace

TEST_CASE("an S3 listing truncated forever with a new token each page stops at max_list_pages, naming the prefix") {
    std::atomic<int> pages{0};
    fake_http_server server([&pages](const recorded_request&) {
        const int n = pages.fetch_add(1) + 1;
        return truncated_page({"run/index/" + std::to_string(2 * n), "run/index/" + std::to_string(2 * n + 1)},
                              "token" + std::to_string(n));
    });
    auto o = hostile_server_options(server.endpoint());
    o.list_page_size = 2;
    o.max_list_pages = 5;
    const tdbg::s3_storage s("s3://bkt/run", o);
    const std::string message = tdbg::test::error_of([&] { (void)s.list("index/"); });
    CHECK_THAT(message, Catch::Contains("list s3://bkt/run/index/*") &&
                            Catch::Contains("still truncated after 5 pages of up to 2 keys") &&
                            Catch::Contains("max_list_pages"));
    CHECK(server.requests().size() == 5);
    CHECK(tdbg::s3_options{}.max_list_pages == 10'000);
}

TEST_CASE("an S3 listing whose pages bring no new key is refused after max_stalled_list_pages pages, not max_list_pages") {
    SECTION("empty pages, each with a fresh token") {
        std::atomic<int> pages{0};
        fake_http_server server([&pages](const recorded_request&) {
            return truncated_page({}, "token" + std::to_string(pages.fetch_add(1) + 1));
        });
        const tdbg::s3_storage s("s3://bkt/run", hostile_server_options(server.endpoint()));
        const std::string message = tdbg::test::error_of([&] { (void)s.list("index/"); });
        CHECK_THAT(message, Catch::Contains("list s3://bkt/run/index/*") &&
                                Catch::Contains("its last 8 pages (to page 8) brought no new key") &&
                                Catch::Contains("max_stalled_list_pages"));
        CHECK(server.requests().size() == 8);
    }
    SECTION("the same keys again on every page") {
        std::atomic<int> pages{0};
        fake_http_server server([&pages](const recorded_request&) {
            return truncated_page({"run/index/a", "run/index/b"}, "token" + std::to_string(pages.fetch_add(1) + 1));
        });
        auto o = hostile_server_options(server.endpoint());
        o.max_stalled_list_pages = 3;
        const tdbg::s3_storage s("s3://bkt/run", o);
        const std::string message = tdbg::test::error_of([&] { (void)s.list("index/"); });
        CHECK_THAT(message, Catch::Contains("its last 3 pages (to page 4) brought no new key"));
        CHECK(server.requests().size() == 4); // the first page's keys were new
    }
    CHECK(tdbg::s3_options{}.max_stalled_list_pages == 8);
}

TEST_CASE("an S3 listing is bounded in the bytes of keys it holds, whatever its pages") {
    std::atomic<int> pages{0};
    fake_http_server server([&pages](const recorded_request&) {
        const int n = pages.fetch_add(1) + 1;
        const std::string stem = "run/index/" + std::string(5, static_cast<char>('a' + n % 26)) + std::to_string(n);
        return truncated_page({stem + "x", stem + "y"}, "token" + std::to_string(n));
    });
    auto o = hostile_server_options(server.endpoint());
    o.max_list_bytes = 100; // keys of 9 to 10 bytes past the prefix: two a page
    const tdbg::s3_storage s("s3://bkt/run", o);
    const std::string message = tdbg::test::error_of([&] { (void)s.list("index/"); });
    CHECK_THAT(message, Catch::Contains("list s3://bkt/run/index/*") &&
                            Catch::Contains("holds more than 100 bytes of keys after") &&
                            Catch::Contains("max_list_bytes"));
    CHECK(server.requests().size() <= 6);
    CHECK(tdbg::s3_options{}.max_list_bytes == std::uint64_t{1} << 30U);
}

TEST_CASE("an S3 listing whose continuation tokens alternate stops at the first token given twice") {
    // A, B, A, B, ...: no token repeats the one before it, but the third page starts the listing over.
    fake_http_server server([](const recorded_request& r) {
        const std::string next = token_of(r) == "A" ? "B" : "A";
        return truncated_page({"run/index/" + next}, next);
    });
    const tdbg::s3_storage s("s3://bkt/run", hostile_server_options(server.endpoint()));
    const std::string message = tdbg::test::error_of([&] { (void)s.list("index/"); });
    CHECK_THAT(message, Catch::Contains("list s3://bkt/run/index/*") &&
                            Catch::Contains("no new continuation token (page 3, a token it gave before)"));
    const auto requests = server.requests();
    REQUIRE(requests.size() == 3);
    CHECK(token_of(requests[1]) == "A");
    CHECK(token_of(requests[2]) == "B");
}

TEST_CASE("an S3 listing page with more keys than asked for or a key longer than S3 allows is refused") {
    SECTION("too many keys") {
        fake_http_server server({truncated_page({"run/a", "run/b", "run/c"}, "next")});
        auto o = hostile_server_options(server.endpoint());
        o.list_page_size = 2;
        const tdbg::s3_storage s("s3://bkt/run", o);
        CHECK_THAT(tdbg::test::error_of([&] { (void)s.list(""); }),
                   Catch::Contains("list s3://bkt/run/*: ") &&
                       Catch::Contains("page 1 of the listing holds 3 keys, more than the 2 asked for"));
    }
    SECTION("a key of 1025 bytes") {
        fake_http_server server({truncated_page({"run/" + std::string(1021, 'k')}, "next")});
        const tdbg::s3_storage s("s3://bkt/run", hostile_server_options(server.endpoint()));
        CHECK_THAT(tdbg::test::error_of([&] { (void)s.list(""); }),
                   Catch::Contains("holds a key of 1025 bytes; S3 keys have at most 1024"));
    }
}

TEST_CASE("an S3 object sent 2 bytes a second is aborted by the low-speed limit, naming the object") {
    fake_http_server server([](const recorded_request&) {
        fake_reply drip{200, std::string(4000, 'x'), {}, false};
        drip.drip_interval = 500ms;
        return drip;
    });
    auto o = hostile_server_options(server.endpoint());
    o.stall_timeout = 2s;
    o.retry.max_attempts = 2;
    const tdbg::s3_storage s("s3://bkt/run", o);
    const auto started = std::chrono::steady_clock::now();
    const std::string message = tdbg::test::error_of([&] { (void)s.read("collections/c.json"); });
    CHECK_THAT(message, Catch::Contains("GET s3://bkt/run/collections/c.json failed") &&
                            Catch::Contains("curl error 28") && Catch::Contains("gave up after 2 attempts"));
    CHECK(server.requests().size() == 2);
    // Sending the whole body would take half an hour; two stalls of 2 s end it.
    CHECK(std::chrono::steady_clock::now() - started < 5min);
    const tdbg::s3_options defaults;
    CHECK(defaults.low_speed_limit == 1024);
    CHECK(defaults.stall_timeout == 30s);
}

TEST_CASE("an S3 request that outlives request_timeout is aborted, naming the object") {
    fake_http_server server([](const recorded_request&) {
        fake_reply drip{200, std::string(4000, 'x'), {}, false};
        drip.drip_interval = 100ms;
        return drip;
    });
    auto o = hostile_server_options(server.endpoint());
    o.low_speed_limit = 1; // 10 bytes a second pass the low-speed limit: only the total limit ends it
    o.stall_timeout = 3600s;
    o.request_timeout = 1500ms;
    o.retry.max_attempts = 1;
    const tdbg::s3_storage s("s3://bkt/run", o);
    const std::string message = tdbg::test::error_of([&] { (void)s.read_range("events/e.tfevents", 0, 4000); });
    CHECK_THAT(message, Catch::Contains("GET s3://bkt/run/events/e.tfevents bytes 0..4000 failed") &&
                            Catch::Contains("curl error 28"));
    CHECK(server.requests().size() == 1);
    const tdbg::s3_options defaults;
    CHECK(defaults.request_timeout == 10min);
    CHECK(defaults.connect_timeout == 10s);
}

TEST_CASE("s3_options::cancelled ends a read in progress on a server that drips, without a retry") {
    fake_http_server server([](const recorded_request&) {
        fake_reply drip{200, std::string(4000, 'x'), {}, false};
        drip.drip_interval = 500ms;
        return drip;
    });
    std::atomic<bool> stop{false};
    auto o = hostile_server_options(server.endpoint());
    o.stall_timeout = 3600s; // only the cancellation can end it
    o.cancelled = [&stop] { return stop.load(); };
    const tdbg::s3_storage s("s3://bkt/run", o);
    auto reading =
        std::async(std::launch::async, [&] { return tdbg::test::error_of([&] { (void)s.read("index/i.json"); }); });
    REQUIRE(
        server.wait_for_request([](const recorded_request& r) { return is_get_of(r, "/bkt/run/index/i.json"); }, 60s));
    stop = true;
    REQUIRE(reading.wait_for(60s) == std::future_status::ready); // a bound for a failing test, not a pace
    CHECK(reading.get() == "GET s3://bkt/run/index/i.json: cancelled while it ran");
    CHECK(server.requests().size() == 1);
    // Cancelled before it starts, a request is not sent.
    CHECK_THROWS_AS(s.read("index/j.json"), tdbg::s3_cancelled);
    CHECK(server.requests().size() == 1);
}

TEST_CASE("s3_options::cancelled ends the wait between two retries") {
    fake_http_server server([](const recorded_request&) {
        return fake_reply{503, "<Error><Code>SlowDown</Code></Error>", {}, false};
    });
    std::atomic<bool> stop{false};
    auto o = hostile_server_options(server.endpoint());
    o.retry.base_delay = 600s; // each wait would last minutes
    o.retry.max_delay = 600s;
    o.retry.max_elapsed = 3600s;
    o.cancelled = [&stop] { return stop.load(); };
    const tdbg::s3_storage s("s3://bkt/run", o);
    auto reading = std::async(std::launch::async, [&] { return tdbg::test::error_of([&] { (void)s.read("k"); }); });
    REQUIRE(server.wait_for_request([](const recorded_request& r) { return is_get_of(r, "/bkt/run/k"); }, 60s));
    stop = true;
    // Bounded, not timed: without the cancellation the wait before the retry lasts at least 5 minutes.
    REQUIRE(reading.wait_for(60s) == std::future_status::ready);
    // The flag is set as the server answers: the reply may still be arriving (cancelled while
    // it ran), or the client already waiting to retry (cancelled before the next attempt).
    const std::string message = reading.get();
    CHECK((message == "GET s3://bkt/run/k: cancelled" || message == "GET s3://bkt/run/k: cancelled while it ran"));
    CHECK(server.requests().size() == 1);
}
