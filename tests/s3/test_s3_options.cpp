// s3_storage's settings: the standard AWS variables, defaults and refusals.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "tdbg/storage/s3.hpp"

namespace {

/// Sets environment variables for a scope and restores them after.
class scoped_env {
public:
    explicit scoped_env(const std::map<std::string, std::optional<std::string>>& values) {
        for (const auto& [name, value] : values) {
            const char* old = std::getenv(name.c_str());
            saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
            set(name, value);
        }
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
    ~scoped_env() {
        for (const auto& [name, value] : saved_) {
            set(name, value);
        }
    }

private:
    static void set(const std::string& name, const std::optional<std::string>& value) {
        if (value) {
            ::setenv(name.c_str(), value->c_str(), 1);
        } else {
            ::unsetenv(name.c_str());
        }
    }
    std::map<std::string, std::optional<std::string>> saved_;
};

const std::map<std::string, std::optional<std::string>> cleared{
    {"AWS_ACCESS_KEY_ID", std::nullopt},     {"AWS_SECRET_ACCESS_KEY", std::nullopt},
    {"AWS_SESSION_TOKEN", std::nullopt},     {"AWS_REGION", std::nullopt},
    {"AWS_DEFAULT_REGION", std::nullopt},    {"AWS_ENDPOINT_URL", std::nullopt},
    {"AWS_ENDPOINT_URL_S3", std::nullopt}};

} // namespace

static_assert(tdbg::is_storage_v<tdbg::s3_storage>);

TEST_CASE("credentials, region and endpoint come from the standard AWS variables") {
    auto env = cleared;
    env["AWS_ACCESS_KEY_ID"] = "AKIDENV";
    env["AWS_SECRET_ACCESS_KEY"] = "env-secret";
    env["AWS_SESSION_TOKEN"] = "env-token";
    env["AWS_DEFAULT_REGION"] = "eu-central-1";
    env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9/";
    const scoped_env scope(env);
    const tdbg::s3_storage s("s3://bkt/a/b/");
    CHECK(s.describe() == "s3://bkt/a/b");
    CHECK(s.bucket() == "bkt");
    CHECK(s.prefix() == "a/b");
    CHECK(s.options().access_key_id == "AKIDENV");
    CHECK(s.options().secret_access_key == "env-secret");
    CHECK(s.options().session_token == "env-token");
    CHECK(s.options().region == "eu-central-1");
    CHECK(s.endpoint() == "http://127.0.0.1:9");
    {
        auto more = env;
        more["AWS_REGION"] = "ap-south-1";                  // wins over AWS_DEFAULT_REGION
        more["AWS_ENDPOINT_URL_S3"] = "https://s3.example"; // wins over AWS_ENDPOINT_URL
        const scoped_env inner(more);
        const tdbg::s3_storage t("s3://bkt");
        CHECK(t.options().region == "ap-south-1");
        CHECK(t.endpoint() == "https://s3.example");
        CHECK(t.describe() == "s3://bkt");
    }
    // explicit options win; use_environment=false ignores the variables
    tdbg::s3_options o;
    o.access_key_id = "AKIDOPT";
    o.secret_access_key = "opt-secret";
    o.use_environment = false;
    const tdbg::s3_storage u("s3://bkt/p", o);
    CHECK(u.options().access_key_id == "AKIDOPT");
    CHECK(u.options().session_token.empty());
    CHECK(u.options().region == "us-east-1");
    CHECK(u.endpoint() == "https://s3.us-east-1.amazonaws.com");
}

TEST_CASE("missing credentials and bad settings are config errors that never show the secret") {
    const scoped_env scope(cleared);
    CHECK_THROWS_WITH(tdbg::s3_storage("s3://bkt/p"),
                      Catch::Contains("AWS_ACCESS_KEY_ID") && Catch::Contains("s3://bkt/p"));
    tdbg::s3_options o;
    o.access_key_id = "AKID";
    CHECK_THROWS_WITH(tdbg::s3_storage("s3://bkt/p", o), Catch::Contains("secret access key"));
    o.secret_access_key = "s3cr3t-value";
    CHECK_NOTHROW(tdbg::s3_storage("s3://bkt/p", o));
    CHECK_THROWS_AS(tdbg::s3_storage("file:///tmp", o), tdbg::config_error);
    auto bad = o;
    bad.part_size = 1u << 20;
    CHECK_THROWS_WITH(tdbg::s3_storage("s3://bkt/p", bad), Catch::Contains("part_size"));
    bad = o;
    bad.list_page_size = 1001;
    CHECK_THROWS_AS(tdbg::s3_storage("s3://bkt/p", bad), tdbg::config_error);
    bad = o;
    bad.region = "us east";
    CHECK_THROWS_AS(tdbg::s3_storage("s3://bkt/p", bad), tdbg::config_error);
    bad = o;
    bad.endpoint_url = "http://AKID:s3cr3t-value@host";
    try {
        tdbg::s3_storage s("s3://bkt/p", bad);
        FAIL("accepted");
    } catch (const tdbg::config_error& e) {
        CHECK(std::string(e.what()).find("s3cr3t-value") == std::string::npos);
    }
    // keys are checked like every backend's before any request
    const tdbg::s3_storage s("s3://bkt/p", o);
    CHECK_THROWS_AS(s.read("../x"), tdbg::invalid_name);
    CHECK_THROWS_AS(s.put("/abs", "x"), tdbg::invalid_name);
    CHECK(s.stats().requests == 0);
}
