// URL pieces: AWS percent-encoding, canonical queries, s3:// URLs, endpoints.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "tdbg/storage/detail/s3_uri.hpp"

using namespace tdbg::detail;

TEST_CASE("aws_percent_encode keeps only A-Za-z0-9-_.~ and writes upper-case hex") {
    // every byte on its own, against a spelled-out rule
    for (int b = 0; b < 256; ++b) {
        const char c = static_cast<char>(b);
        const bool unreserved = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-' ||
                                b == '_' || b == '.' || b == '~';
        char escaped[4];
        std::snprintf(escaped, sizeof escaped, "%%%02X", b);
        const std::string expected = unreserved ? std::string(1, c) : std::string(escaped);
        CHECK(aws_percent_encode(std::string(1, c)) == expected);
        if (b == '/') {
            CHECK(aws_percent_encode("/", true) == "/");
        } else {
            CHECK(aws_percent_encode(std::string(1, c), true) == expected);
        }
    }
    // UTF-8 is encoded byte by byte; '/' survives only in paths
    CHECK(aws_percent_encode("a b+c=d/\xc3\xa9~") == "a%20b%2Bc%3Dd%2F%C3%A9~");
    CHECK(aws_percent_encode("a b+c=d/\xc3\xa9~", true) == "a%20b%2Bc%3Dd/%C3%A9~");
    CHECK(aws_percent_encode("&?#%;,:$@*()!'") == "%26%3F%23%25%3B%2C%3A%24%40%2A%28%29%21%27");
}

TEST_CASE("percent_decode inverts the encoding, reads '+' as a space on request, refuses bad escapes") {
    std::string all;
    for (int b = 0; b < 256; ++b) {
        all += static_cast<char>(b);
    }
    CHECK(percent_decode(aws_percent_encode(all), false) == all);
    CHECK(percent_decode(aws_percent_encode(all, true), true) == all);
    CHECK(percent_decode("a+b%2Bc%20d", true) == std::optional<std::string>("a b+c d"));
    CHECK(percent_decode("a+b", false) == std::optional<std::string>("a+b"));
    CHECK(percent_decode("%e2%82%ac", false) == std::optional<std::string>("\xe2\x82\xac"));
    CHECK_FALSE(percent_decode("%G1", false).has_value());
    CHECK_FALSE(percent_decode("abc%4", false).has_value());
    CHECK_FALSE(percent_decode("abc%", false).has_value());
}

TEST_CASE("canonical_query sorts by encoded name, encodes values and writes '=' for empty values") {
    // the example of AWS's Signature V4 documentation
    CHECK(canonical_query({{"prefix", "somePrefix"}, {"marker", "someMarker"}, {"max-keys", "20"}}) ==
          "marker=someMarker&max-keys=20&prefix=somePrefix");
    CHECK(canonical_query({{"uploads", ""}}) == "uploads=");
    CHECK(canonical_query({{"uploadId", "x/y+z"}, {"partNumber", "2"}}) == "partNumber=2&uploadId=x%2Fy%2Bz");
    CHECK(canonical_query({{"start-after", "run/a b"}, {"list-type", "2"}, {"continuation-token", "q=="}}) ==
          "continuation-token=q%3D%3D&list-type=2&start-after=run%2Fa%20b");
    CHECK(canonical_query({}).empty());
}

TEST_CASE("parse_s3_url splits bucket and prefix and refuses malformed URLs") {
    const auto a = parse_s3_url("s3://my-bucket/runs/job-1");
    CHECK(a.bucket == "my-bucket");
    CHECK(a.prefix == "runs/job-1");
    const auto b = parse_s3_url("s3://bkt/runs/job-1///");
    CHECK(b.prefix == "runs/job-1");
    const auto c = parse_s3_url("s3://bkt");
    CHECK(c.bucket == "bkt");
    CHECK(c.prefix.empty());
    CHECK(parse_s3_url("s3://bkt/").prefix.empty());
    CHECK_THROWS_AS(parse_s3_url("/local/path"), tdbg::config_error);
    CHECK_THROWS_AS(parse_s3_url("http://bkt/x"), tdbg::config_error);
    CHECK_THROWS_AS(parse_s3_url("s3://"), tdbg::config_error);
    CHECK_THROWS_AS(parse_s3_url("s3:///prefix"), tdbg::config_error);
    CHECK_THROWS_AS(parse_s3_url("s3://bad bucket/p"), tdbg::config_error);
    CHECK_THROWS_AS(parse_s3_url("s3://bkt/a/../b"), tdbg::config_error);
    CHECK_THROWS_AS(parse_s3_url("s3://bkt//a"), tdbg::config_error);
    CHECK_THROWS_WITH(parse_s3_url("s3://b?x/p"), Catch::Contains("invalid bucket name"));
}

TEST_CASE("parse_endpoint accepts http(s)://host[:port][/base] and refuses user info") {
    const auto e = parse_endpoint("http://127.0.0.1:9000");
    CHECK(e.scheme == "http");
    CHECK(e.authority == "127.0.0.1:9000");
    CHECK(e.base_path.empty());
    CHECK(e.url() == "http://127.0.0.1:9000");
    const auto f = parse_endpoint("HTTPS://storage.example.com/s3/");
    CHECK(f.scheme == "https");
    CHECK(f.authority == "storage.example.com");
    CHECK(f.base_path == "/s3");
    CHECK_THROWS_AS(parse_endpoint("127.0.0.1:9000"), tdbg::config_error);
    CHECK_THROWS_AS(parse_endpoint("ftp://host"), tdbg::config_error);
    CHECK_THROWS_AS(parse_endpoint("http://"), tdbg::config_error);
    CHECK_THROWS_AS(parse_endpoint("http://host/?a=b"), tdbg::config_error);
    try {
        (void)parse_endpoint("http://key:supersecret@host");
        FAIL("user info accepted");
    } catch (const tdbg::config_error& e) {
        CHECK(std::string(e.what()).find("supersecret") == std::string::npos);
    }
}

TEST_CASE("dns_compatible_bucket follows the virtual-hosted naming rules") {
    CHECK(dns_compatible_bucket("my-bucket-1"));
    CHECK_FALSE(dns_compatible_bucket("my.bucket"));  // TLS wildcard certificates do not cover dots
    CHECK_FALSE(dns_compatible_bucket("My-Bucket"));
    CHECK_FALSE(dns_compatible_bucket("ab"));
    CHECK_FALSE(dns_compatible_bucket("-abc"));
    CHECK_FALSE(dns_compatible_bucket(std::string(64, 'a')));
    CHECK(dns_compatible_bucket(std::string(63, 'a')));
}
