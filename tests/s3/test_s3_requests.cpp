// What s3_storage sends and how it reacts, checked against a scripted HTTP
// server: encoded paths, sorted queries, signing headers, retries.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_http_server.hpp"
#include "tdbg/storage/s3.hpp"

using tdbg::test::fake_http_server;
using tdbg::test::fake_reply;
using namespace std::chrono_literals;

namespace {

const char* const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const char* const token = "FwoGZXIvYXdzEXAMPLETOKEN";

tdbg::s3_options options_for(const std::string& endpoint) {
    tdbg::s3_options o;
    o.use_environment = false;
    o.endpoint_url = endpoint;
    o.access_key_id = "AKIDEXAMPLE";
    o.secret_access_key = secret;
    o.region = "us-west-2";
    o.retry.base_delay = 1ms;
    o.retry.max_delay = 4ms;
    return o;
}

fake_reply error_reply(int status, const std::string& code, const std::string& message) {
    return {status, "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>" + message +
                        "</Message><RequestId>req-1</RequestId></Error>",
            {"Content-Type: application/xml"}, false};
}

int closed_port() {
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


// The first 8 bytes of `hidden` found together in `text`, or "": a piece of a secret printed.
std::string requests_piece_printed(const std::string& text, const std::string& hidden) {
    for (std::size_t at = 0; at + 8 <= hidden.size(); ++at) {
        if (text.find(hidden.substr(at, 8)) != std::string::npos) {
            return hidden.substr(at, 8);
        }
    }
    return {};
}
} // namespace

TEST_CASE("requests carry the encoded key path, the payload hash and signed AWS headers") {
    fake_http_server server({{200, "", {"ETag: \"x\""}, false}, {200, "abc", {}, false}});
    auto o = options_for(server.endpoint());
    o.session_token = token;
    const tdbg::s3_storage s("s3://bkt/runs/r 1", o);
    CHECK(s.describe() == "s3://bkt/runs/r 1");
    s.put("a b/c+d=e&f", "abc");
    CHECK(s.read("x~y") == "abc");

    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    const auto& put = requests[0];
    CHECK(put.method == "PUT");
    CHECK(put.target == "/bkt/runs/r%201/a%20b/c%2Bd%3De%26f");
    CHECK(put.body == "abc");
    CHECK(put.headers.at("content-length") == "3");
    CHECK(put.headers.count("transfer-encoding") == 0);
    // SHA-256("abc") from FIPS 180-2
    CHECK(put.headers.at("x-amz-content-sha256") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(put.headers.at("x-amz-security-token") == token);
    const std::string& auth = put.headers.at("authorization");
    CHECK_THAT(auth, Catch::StartsWith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"));
    CHECK_THAT(auth, Catch::Contains("/us-west-2/s3/aws4_request"));
    CHECK_THAT(auth, Catch::Contains("x-amz-content-sha256") && Catch::Contains("x-amz-security-token"));
    CHECK(auth.find(secret) == std::string::npos);
    CHECK(put.headers.count("x-amz-date") == 1);
    CHECK(requests[1].method == "GET");
    CHECK(requests[1].target == "/bkt/runs/r%201/x~y");
    CHECK(requests[1].headers.at("x-amz-content-sha256") ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("list sends a sorted, encoded ListObjectsV2 query and follows continuation tokens") {
    const std::string page1 = "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>"
                              "<NextContinuationToken>tok+/=</NextContinuationToken>"
                              "<Contents><Key>run/index/b</Key></Contents><Contents><Key>run/index/c.tmp</Key></Contents>"
                              "</ListBucketResult>";
    const std::string page2 = "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
                              "<Contents><Key>run/index/d%20e</Key></Contents></ListBucketResult>";
    fake_http_server server({{200, page1, {}, false}, {200, page2, {}, false}});
    auto o = options_for(server.endpoint());
    o.list_page_size = 2;
    const tdbg::s3_storage s("s3://bkt/run", o);
    const auto keys = s.list("index/", "index/a");
    CHECK(keys == std::vector<std::string>{"index/b", "index/d e"});
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].target ==
          "/bkt?encoding-type=url&list-type=2&max-keys=2&prefix=run%2Findex%2F&start-after=run%2Findex%2Fa");
    CHECK(requests[1].target ==
          "/bkt?continuation-token=tok%2B%2F%3D&encoding-type=url&list-type=2&max-keys=2&prefix=run%2Findex%2F");
    CHECK(s.stats().requests == 2);
}

TEST_CASE("5xx replies and dropped connections are retried until a success") {
    // the drop comes first: on a reused connection curl itself would retry it unseen
    fake_http_server server({{0, "", {}, true},
                             error_reply(503, "SlowDown", "Please reduce your request rate."),
                             error_reply(500, "InternalError", "We encountered an internal error."),
                             {206, "llo", {"Content-Range: bytes 2-4/11"}, false}});
    const tdbg::s3_storage s("s3://bkt/run", options_for(server.endpoint()));
    CHECK(s.read_range("k", 2, 3) == "llo");
    const auto requests = server.requests();
    REQUIRE(requests.size() == 4);
    for (const auto& r : requests) {
        CHECK(r.headers.at("range") == "bytes=2-4");
    }
    CHECK(s.stats().requests == 4);
    CHECK(s.stats().retries == 3);
}

TEST_CASE("4xx replies are not retried and explain themselves without the secret") {
    fake_http_server server({error_reply(403, "AccessDenied", "Access Denied"), error_reply(404, "NoSuchKey", "gone"),
                             error_reply(400, "InvalidArgument", "bad thing")});
    auto o = options_for(server.endpoint());
    o.session_token = token;
    const tdbg::s3_storage s("s3://bkt/run", o);
    try {
        (void)s.read("k");
        FAIL("no error");
    } catch (const tdbg::s3_error& e) {
        const std::string what = e.what();
        CHECK(e.http_status() == 403);
        CHECK(e.code() == "AccessDenied");
        CHECK_THAT(what, Catch::Contains("GET s3://bkt/run/k") && Catch::Contains("Access Denied") &&
                             Catch::Contains("AKIDEXAMPLE") && Catch::Contains("us-west-2") &&
                             Catch::Contains(server.endpoint()) && Catch::Contains("req-1"));
        CHECK(what.find(secret) == std::string::npos);
        CHECK(what.find(token) == std::string::npos);
    }
    CHECK_THROWS_AS(s.read("k"), tdbg::object_not_found);
    try {
        s.put("k", "v");
        FAIL("no error");
    } catch (const tdbg::s3_error& e) {
        CHECK(e.http_status() == 400);
        CHECK_THAT(std::string(e.what()), Catch::Contains("InvalidArgument: bad thing"));
    }
    CHECK(s.stats().requests == 3);
    CHECK(s.stats().retries == 0);
}

TEST_CASE("an S3 error quoting the session token past its message's 1000th byte prints no piece of it") {
    // A token as long as STS gives (hundreds of characters), quoted by the server where the
    // message is cut: it starts at byte 794 of the message and ends past byte 1000, so that a
    // message cut before it is redacted would print 206 of its 207 characters. The request id,
    // cut at 200 bytes, quotes the secret access key across its cut in the same way.
    std::string long_token = "IQoJb3JpZ2luX2VjEXAMPLE";
    for (unsigned n = 1; long_token.size() < 207; n = n * 1103515245U + 12345U) {
        long_token += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(n >> 16U) % 64U];
    }
    const std::string message = std::string(794, '.') + long_token + " is not valid for this bucket";
    const std::string request_id = std::string(190, 'R') + secret;
    fake_http_server server({{403,
                              "<?xml version=\"1.0\"?><Error><Code>InvalidToken</Code><Message>" + message +
                                  "</Message><RequestId>" + request_id + "</RequestId></Error>",
                              {"Content-Type: application/xml"},
                              false}});
    auto o = options_for(server.endpoint());
    o.session_token = long_token;
    const tdbg::s3_storage s("s3://bkt/run", o);
    std::string what;
    try {
        (void)s.read("k");
        FAIL("no error");
    } catch (const tdbg::s3_error& e) {
        what = e.what();
        CHECK(e.http_status() == 403);
        CHECK(e.code() == "InvalidToken");
    }
    INFO(what);
    // The secrets are redacted where they stand, then the quotes are cut as before.
    CHECK_THAT(what, Catch::Contains(": " + std::string(794, '.') + "<redacted> is not valid for this bucket"));
    CHECK_THAT(what, Catch::Contains("(request id " + std::string(190, 'R') + "<redacted>)"));
    CHECK(requests_piece_printed(what, long_token).empty());
    CHECK(requests_piece_printed(what, std::string(secret)).empty());
    // A quote that is still too long after redaction is still cut.
    fake_http_server chatty({error_reply(403, "AccessDenied", std::string(3000, 'm') + long_token)});
    o.endpoint_url = chatty.endpoint();
    try {
        (void)tdbg::s3_storage("s3://bkt/run", o).read("k");
        FAIL("no error");
    } catch (const tdbg::s3_error& e) {
        const std::string chatty_what = e.what();
        CHECK_THAT(chatty_what, Catch::Contains("AccessDenied: " + std::string(1000, 'm') + " (request id req-1)"));
        CHECK(chatty_what.find("<redacted>") == std::string::npos);
    }
}

TEST_CASE("retries are bounded by max_attempts and by max_elapsed") {
    SECTION("attempts") {
        fake_http_server server({error_reply(500, "InternalError", "a"), error_reply(500, "InternalError", "b"),
                                 error_reply(500, "InternalError", "c"), {200, "late", {}, false}});
        auto o = options_for(server.endpoint());
        o.retry.max_attempts = 3;
        const tdbg::s3_storage s("s3://bkt/run", o);
        try {
            (void)s.read("k");
            FAIL("no error");
        } catch (const tdbg::s3_error& e) {
            CHECK(e.http_status() == 500);
            CHECK_THAT(std::string(e.what()), Catch::Contains("after 3 attempts"));
        }
        CHECK(server.requests().size() == 3);
    }
    SECTION("connection refused, time budget") {
        auto o = options_for("http://127.0.0.1:" + std::to_string(closed_port()));
        // Without the time budget the attempts would go on for half an hour; with it, two
        // seconds, long enough that a thread the machine's load holds up still makes several.
        o.retry.max_attempts = 100000;
        o.retry.base_delay = 20ms;
        o.retry.max_delay = 40ms;
        o.retry.max_elapsed = 2s;
        const tdbg::s3_storage s("s3://bkt/run", o);
        const auto start = std::chrono::steady_clock::now();
        try {
            (void)s.exists("k");
            FAIL("no error");
        } catch (const tdbg::s3_error& e) {
            CHECK(e.http_status() == 0);
            CHECK_THAT(std::string(e.what()), Catch::Contains("HEAD s3://bkt/run/k") && Catch::Contains("attempts"));
        }
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(took < 1min);
        // each wait is at least 10 ms, so a 2 s budget allows at most ~200 attempts
        CHECK(s.stats().requests >= 3);
        CHECK(s.stats().requests <= 202);
    }
}

TEST_CASE("a large put is a multipart upload, a completion failing inside a 200 is retried") {
    const std::string initiate = "<InitiateMultipartUploadResult><UploadId>up/1+</UploadId></InitiateMultipartUploadResult>";
    fake_http_server server({{200, initiate, {}, false},
                             {200, "", {"ETag: \"e1\""}, false},
                             {200, "", {"ETag: \"e2\""}, false},
                             {200, "<Error><Code>InternalError</Code><Message>retry me</Message></Error>", {}, false},
                             {200, "<CompleteMultipartUploadResult><ETag>\"all\"</ETag></CompleteMultipartUploadResult>",
                              {},
                              false}});
    auto o = options_for(server.endpoint());
    o.part_size = 5u << 20;
    const tdbg::s3_storage s("s3://bkt/run", o);
    std::string data((6u << 20) + 5, 'q');
    s.put("big", data);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 5);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].target == "/bkt/run/big?uploads=");
    CHECK(requests[1].target == "/bkt/run/big?partNumber=1&uploadId=up%2F1%2B");
    CHECK(requests[1].body.size() == (5u << 20));
    CHECK(requests[2].target == "/bkt/run/big?partNumber=2&uploadId=up%2F1%2B");
    CHECK(requests[2].body.size() == (1u << 20) + 5);
    CHECK(requests[3].target == "/bkt/run/big?uploadId=up%2F1%2B");
    CHECK(requests[4].body == requests[3].body);
    pugi::xml_document doc;
    REQUIRE(doc.load_string(requests[3].body.c_str()));
    std::vector<std::string> parts;
    for (auto part : doc.child("CompleteMultipartUpload").children("Part")) {
        parts.push_back(std::string(part.child_value("PartNumber")) + ":" + part.child_value("ETag"));
    }
    CHECK(parts == std::vector<std::string>{"1:\"e1\"", "2:\"e2\""});
}

TEST_CASE("a failed multipart upload is aborted, an uncommitted writer aborts its upload") {
    const std::string initiate = "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>";
    fake_http_server server({{200, initiate, {}, false},
                             error_reply(400, "EntityTooSmall", "too small"),
                             {204, "", {}, false},
                             {200, initiate, {}, false},
                             {200, "", {"ETag: \"e1\""}, false},
                             {204, "", {}, false}});
    auto o = options_for(server.endpoint());
    o.part_size = 5u << 20;
    const tdbg::s3_storage s("s3://bkt/run", o);
    CHECK_THROWS_AS(s.put("big", std::string((5u << 20) + 1, 'x')), tdbg::s3_error);
    {
        auto w = s.open_write("w");
        w.append(std::string((5u << 20) + 1, 'y'));
        CHECK(w.size() == (5u << 20) + 1);
    }
    const auto requests = server.requests();
    REQUIRE(requests.size() == 6);
    CHECK(requests[2].method == "DELETE");
    CHECK(requests[2].target == "/bkt/run/big?uploadId=U");
    CHECK(requests[5].method == "DELETE");
    CHECK(requests[5].target == "/bkt/run/w?uploadId=U");
}

TEST_CASE("a whole read larger than max_read_bytes is aborted with an error naming the object, and not retried") {
    fake_http_server server({{200, std::string(5000, 'x'), {}, false}, {200, std::string(100, 'y'), {}, false}});
    auto o = options_for(server.endpoint());
    o.max_read_bytes = 1000;
    const tdbg::s3_storage s("s3://bkt/run", o);
    CHECK_THROWS_WITH(s.read("index/000000000/000000000000_worker_0.json"),
                      Catch::Contains("index/000000000/000000000000_worker_0.json") &&
                          Catch::Contains("larger than 1000 bytes"));
    CHECK(s.read("collections/000000000/worker_0_collections.json") == std::string(100, 'y'));
    CHECK(server.requests().size() == 2);
}
