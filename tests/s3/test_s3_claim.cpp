// S3's put_if_absent (the claim of a hook's worker in a run, hook/detail/run_claim.hpp): a
// conditional PUT, or candidates and a listing where the server lacks those; and a hook built
// while S3 cannot be reached, which constructs and reports the outage by its write-error policy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_http_server.hpp"
#include "s3_test_server.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/s3.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::fake_http_server;
using tdbg::test::fake_reply;
using tdbg::test::s3_test_server;
using namespace std::chrono_literals;

namespace {

tdbg::s3_options claim_test_options(const std::string& endpoint) {
    tdbg::s3_options o;
    o.use_environment = false;
    o.endpoint_url = endpoint;
    o.access_key_id = "AKIDEXAMPLE";
    o.secret_access_key = "claim-test-secret";
    o.retry.base_delay = 1ms;
    o.retry.max_delay = 4ms;
    return o;
}

fake_reply claim_test_error(int status, const std::string& code) {
    return {status, "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>m</Message></Error>",
            {"Content-Type: application/xml"}, false};
}

// A loopback port nothing listens on: connections to it are refused.
int refusing_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

tdbg::hook_options claim_test_hook_options() {
    tdbg::hook_options o;
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.worker = "worker_0";
    o.num_workers = 1;
    o.stop_check_interval = 0ms;
    return o;
}

} // namespace

TEST_CASE("s3 put_if_absent is a PUT with If-None-Match: *, read back, and a 412 means the key is taken") {
    // The PUT answered 200, read back (a server whose condition is not atomic may have let another
    // conditional PUT through); the second caller's PUT answered 412.
    fake_http_server server({{200, "", {"ETag: \"x\""}, false},
                             {200, "mine", {}, false},
                             claim_test_error(412, "PreconditionFailed")});
    const tdbg::s3_storage s("s3://bkt/run", claim_test_options(server.endpoint()));
    CHECK(s.put_if_absent(".tdbg/claims/worker_0.json", "mine"));
    CHECK_FALSE(s.put_if_absent(".tdbg/claims/worker_0.json", "theirs"));
    const auto requests = server.requests();
    REQUIRE(requests.size() == 3); // a 412 is an answer, not retried
    for (const auto& r : requests) {
        CHECK(r.target == "/bkt/run/.tdbg/claims/worker_0.json");
    }
    CHECK(requests[0].method == "PUT");
    CHECK(requests[0].headers.at("if-none-match") == "*");
    CHECK(requests[0].body == "mine");
    CHECK(requests[1].method == "GET");
    CHECK(requests[2].method == "PUT");
    CHECK(requests[2].headers.at("if-none-match") == "*");
}

TEST_CASE("s3 put_if_absent whose PUT was answered 200 but reads back another caller's bytes has lost") {
    // A server that checks If-None-Match before it writes let two conditional PUTs through; the
    // other caller's landed last, and is the object.
    fake_http_server server({{200, "", {"ETag: \"x\""}, false}, {200, "theirs", {}, false}});
    const tdbg::s3_storage s("s3://bkt/run", claim_test_options(server.endpoint()));
    CHECK_FALSE(s.put_if_absent(".tdbg/claims/worker_0.json", "mine"));
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].method == "GET");
}

TEST_CASE("s3 put_if_absent on a server without conditional PUTs lists candidates: a taken key loses") {
    // 501 (not retried), then: HEAD (absent), PUT of this caller's candidate, a listing in which
    // the key is there (another caller won meanwhile), DELETE of this caller's candidate.
    const std::string listing = "<ListBucketResult><IsTruncated>false</IsTruncated>"
                                "<Contents><Key>run/c/w</Key></Contents>"
                                "<Contents><Key>run/c/w~99999999999999999999-ffffffffffffffff</Key></Contents>"
                                "</ListBucketResult>";
    fake_http_server server({claim_test_error(501, "NotImplemented"), claim_test_error(404, "NoSuchKey"),
                             {200, "", {"ETag: \"x\""}, false}, {200, listing, {}, false}, {204, "", {}, false},
                             // the second call goes to the listing at once: the key is there
                             {200, "", {}, false}});
    const tdbg::s3_storage s("s3://bkt/run", claim_test_options(server.endpoint()));
    CHECK_FALSE(s.put_if_absent("c/w", "mine"));
    CHECK_FALSE(s.put_if_absent("c/w", "mine"));
    const auto requests = server.requests();
    REQUIRE(requests.size() == 6);
    CHECK(requests[0].headers.at("if-none-match") == "*");
    CHECK(requests[1].method == "HEAD");
    CHECK(requests[2].method == "PUT");
    const std::string candidate = requests[2].target;
    CHECK(candidate.rfind("/bkt/run/c/w~", 0) == 0);
    CHECK(requests[2].headers.count("if-none-match") == 0);
    CHECK(requests[3].method == "GET");
    CHECK(requests[4].method == "DELETE");
    CHECK(requests[4].target == candidate); // the loser's candidate is removed
    CHECK(requests[5].method == "HEAD");
    CHECK(requests[5].headers.count("if-none-match") == 0);
}

TEST_CASE("s3 put_if_absent without conditional PUTs: two candidates seen together both withdraw, and the caller "
          "alone next time wins, whatever the clocks") {
    // A server whose listing shows this caller's candidate beside another caller's the first time
    // (its time far in the future: no clock decides), and alone the second time.
    std::mutex mutex;
    std::string last_candidate;
    int listings = 0;
    fake_http_server server([&](const tdbg::test::recorded_request& r) -> fake_reply {
        const std::lock_guard<std::mutex> lock(mutex);
        if (r.method == "PUT" && r.headers.count("if-none-match") != 0) {
            return claim_test_error(501, "NotImplemented");
        }
        if (r.method == "HEAD") {
            return {404, "", {}, false};
        }
        if (r.method == "PUT" && r.target.find('~') != std::string::npos) {
            last_candidate = r.target.substr(std::string("/bkt/").size());
            return {200, "", {"ETag: \"x\""}, false};
        }
        if (r.method == "GET" && r.target.find("list-type=2") != std::string::npos) {
            std::string keys = "<Contents><Key>" + last_candidate + "</Key></Contents>";
            if (listings++ == 0) {
                keys += "<Contents><Key>run/c/w~99999999999999999999-0000000000000000</Key></Contents>";
            }
            return {200, "<ListBucketResult><IsTruncated>false</IsTruncated>" + keys + "</ListBucketResult>", {}, false};
        }
        return {r.method == "DELETE" ? 204 : 200, "", {}, false};
    });
    const tdbg::s3_storage s("s3://bkt/run", claim_test_options(server.endpoint()));
    CHECK(s.put_if_absent("c/w", "mine"));
    const auto requests = server.requests();
    std::vector<std::string> methods;
    for (const auto& r : requests) {
        methods.push_back(r.method + (r.target.find('~') != std::string::npos ? " candidate" : ""));
    }
    // The conditional PUT; a round lost to the other candidate (withdrawn); a round won, the key put.
    REQUIRE(methods == std::vector<std::string>{"PUT", "HEAD", "PUT candidate", "GET", "DELETE candidate", "HEAD",
                                                "PUT candidate", "GET", "PUT", "DELETE candidate"});
    CHECK(requests[8].target == "/bkt/run/c/w");
    CHECK(requests[8].body == "mine");
}

TEST_CASE("s3 put_if_absent on the loopback server: the first caller publishes, the next ones do not", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const tdbg::s3_storage s(server.new_run("claims"), server.options());
    CHECK(s.put_if_absent(".tdbg/claims/worker_0.json", "first"));
    CHECK_FALSE(s.put_if_absent(".tdbg/claims/worker_0.json", "second"));
    CHECK(s.read(".tdbg/claims/worker_0.json") == "first");
    CHECK(s.list("") == std::vector<std::string>{".tdbg/claims/worker_0.json"}); // no candidate left behind
}

TEST_CASE("s3 hooks racing for one worker of one run on the loopback server: one starts, the other is refused", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("claimed");
    const tdbg::s3_storage s(url, server.options());
    std::optional<tdbg::hook> first;
    first.emplace(s, claim_test_hook_options());
    CHECK_THROWS_WITH(tdbg::hook(s, claim_test_hook_options()),
                      Catch::Contains(url) && Catch::Contains("another job's run of worker_0"));
    first->begin_step();
    first->save_tensor("w", tdbg::tensor_value::scalar(1.0F));
    first->close();
    CHECK_FALSE(first->write_error());
    CHECK(tdbg::open_trial(s, "claimed").steps() == std::vector<std::int64_t>{0});
}

TEST_CASE("a hook built while S3 refuses connections constructs, trains, and reports the outage by its policy") {
    const std::string endpoint = "http://127.0.0.1:" + std::to_string(refusing_port());
    auto s3 = claim_test_options(endpoint);
    s3.retry.max_attempts = 2;
    s3.connect_timeout = 2000ms;
    const tdbg::s3_storage storage("s3://bucket/runs/outage", s3);
    for (const bool writing : {true, false}) {
        INFO((writing ? "worker_0" : "worker_1, which writes only the end marker"));
        auto o = claim_test_hook_options();
        o.worker = writing ? "worker_0" : "worker_1";
        o.num_workers = 2;
        {
            std::optional<tdbg::hook> h;
            REQUIRE_NOTHROW(h.emplace(storage, o)); // disable (the default): printed, training goes on
            REQUIRE(h->write_error());
            CHECK_THAT(*h->write_error(), Catch::Contains(endpoint));
            for (int step = 0; step < 3; ++step) {
                CHECK_NOTHROW(h->begin_step());
                CHECK_NOTHROW(h->save_tensor("w", tdbg::tensor_value::scalar(static_cast<float>(step))));
            }
            CHECK_NOTHROW(h->close());
        }
        {
            o.on_write_error = tdbg::write_error_policy::rethrow;
            std::optional<tdbg::hook> h;
            REQUIRE_NOTHROW(h.emplace(storage, o));
            CHECK_THROWS_AS(h->begin_step(), tdbg::s3_error); // once, by the next call
            for (int step = 0; step < 3; ++step) {
                CHECK_NOTHROW(h->begin_step());
                CHECK_NOTHROW(h->save_tensor("w", tdbg::tensor_value::scalar(static_cast<float>(step))));
            }
            CHECK(h->global_step() == 2);
            CHECK_NOTHROW(h->close());
            REQUIRE(h->write_error());
            CHECK_THAT(*h->write_error(), Catch::Contains("Connection refused") || Catch::Contains("connect"));
        }
    }
}

TEST_CASE("a hook whose S3 outage stopped saving at its start trains on without waiting on storage") {
    // The server answers 503 while the hook starts (its claim fails: saving stops at step -1),
    // then holds every request until the test lets go. A training step that waited on storage
    // would wait for the hold, which ends by itself only after minutes: seen as held_too_long.
    std::mutex mutex;
    std::condition_variable let_go;
    bool training = false;
    bool released = false;
    bool held_too_long = false;
    fake_http_server server([&](const tdbg::test::recorded_request&) {
        std::unique_lock<std::mutex> lock(mutex);
        if (training && !let_go.wait_for(lock, std::chrono::minutes(2), [&] { return released; })) {
            held_too_long = true;
        }
        return claim_test_error(503, "ServiceUnavailable");
    });
    auto s3 = claim_test_options(server.endpoint());
    s3.retry.max_attempts = 2;
    const tdbg::s3_storage storage("s3://bucket/runs/outage_at_start", s3);
    auto o = claim_test_hook_options();
    o.stop_check_interval = 1000ms; // the default: the stop marker is looked for off the training thread
    o.log = [](std::string_view) {}; // the outage is said once; this test is about time
    std::optional<tdbg::hook> h;
    h.emplace(storage, o);
    REQUIRE(h->write_error());
    {
        const std::lock_guard<std::mutex> lock(mutex);
        training = true;
    }
    for (int step = 0; step < 4; ++step) {
        h->begin_step();
        h->save_tensor("w", tdbg::tensor_value::scalar(static_cast<float>(step)));
        h->save_scalar("lr", 0.1, true);
        h->end_step();
    }
    CHECK(h->global_step() == 3);
    {
        const std::lock_guard<std::mutex> lock(mutex);
        released = true;
        CHECK_FALSE(held_too_long);
    }
    let_go.notify_all();
    h->close();
}

TEST_CASE("an S3 outage from the start with a stop check every step: each step trains at once, the outage said once") {
    // Every request is answered 503 SlowDown, so the hook's claim fails and saving stops at its
    // start. The looks for the stop marker (stop_check_interval 0: one asked at every step) are
    // answered late, as an overloaded server answers: only once the test lets go. A begin_step that
    // looked itself, or waited for a look, would wait for that hold, which ends by itself only after
    // a minute (held_too_long); the steps train while the server holds the watch's look.
    const std::string marker_path = "/bucket/runs/outage_every_step/" + std::string(tdbg::format::stop_marker_key);
    std::mutex mutex;
    std::condition_variable changed;
    bool training = false;
    bool released = false;
    bool held_too_long = false;
    int holding = 0; // looks the server holds unanswered now
    int marker_requests = 0; // requests for the stop marker received while training
    fake_http_server server([&](const tdbg::test::recorded_request& r) {
        std::unique_lock<std::mutex> lock(mutex);
        if (training && r.target == marker_path) {
            ++marker_requests;
            ++holding;
            changed.notify_all();
            if (!released && !held_too_long &&
                !changed.wait_for(lock, std::chrono::minutes(1), [&] { return released; })) {
                held_too_long = true;
            }
            --holding;
        }
        return claim_test_error(503, "SlowDown");
    });
    auto s3 = claim_test_options(server.endpoint());
    s3.retry.max_attempts = 3;
    s3.retry.base_delay = 100ms; // each failed request costs real time before its retry
    s3.retry.max_delay = 200ms;
    const tdbg::s3_storage storage("s3://bucket/runs/outage_every_step", s3);
    auto o = claim_test_hook_options(); // save_interval 1
    o.stop_check_interval = 0ms;
    std::vector<std::string> said;
    o.log = [&](std::string_view line) {
        const std::lock_guard<std::mutex> lock(mutex);
        said.emplace_back(line);
    };
    std::optional<tdbg::hook> h;
    h.emplace(storage, o);
    REQUIRE(h->write_error()); // the claim met the outage: saving stopped at the start
    CHECK_THAT(*h->write_error(), Catch::Contains("HTTP 503") && Catch::Contains("gave up after 3 attempts"));
    {
        const std::lock_guard<std::mutex> lock(mutex);
        training = true;
    }
    const auto server_holds_a_look = [&] {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, std::chrono::minutes(1), [&] { return holding == 1 || held_too_long; }) &&
               holding == 1;
    };
    for (int step = 0; step < 10; ++step) {
        h->begin_step();
        if (step == 0) {
            REQUIRE(server_holds_a_look()); // the watch's first look, started by this begin_step
        }
        REQUIRE_FALSE(h->should_stop());
        h->save_tensor("w", tdbg::tensor_value::scalar(static_cast<float>(step)));
        h->save_scalar("lr", 0.1, true);
        h->end_step();
    }
    CHECK(h->global_step() == 9);
    {
        const std::lock_guard<std::mutex> lock(mutex);
        CHECK(holding == 1); // ten steps trained while the look begun at the first was unanswered
        CHECK(marker_requests == 1); // no other look, and no retry, before the held one ends
        CHECK_FALSE(held_too_long);
        released = true;
    }
    changed.notify_all();
    h->close(); // waits for the look in progress, whose retries (503 again) take their time
    REQUIRE(h->write_error());
    const std::lock_guard<std::mutex> lock(mutex);
    CHECK_FALSE(held_too_long);
    CHECK(marker_requests >= 3); // the held look's retries, s3_options::retry's max_attempts
    for (const std::string& line : said) {
        UNSCOPED_INFO("said: " << line);
    }
    CHECK(std::count_if(said.begin(), said.end(), [](const std::string& line) {
              return line.find("HTTP 503") != std::string::npos;
          }) == 1);
}
