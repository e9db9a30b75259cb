// The `tdbg` program on s3:// runs: `rules`, `report --rule` and SimilarAcrossRuns'
// other trial answer exactly what they answer for the same run on local disk.
// A reference run written by Python smdebug is copied, object for object, into a
// bucket of the loopback S3 server; the program finds the server through the
// AWS_* environment variables, as a user's shell would pass them. And the
// program's errors from a server that quotes the credentials (a scripted one,
// fake_http_server.hpp) print none of them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_http_server.hpp"
#include "s3_test_server.hpp"
#include "support.hpp"
#include "tdbg/storage/s3.hpp"

using tdbg::test::fake_http_server;
using tdbg::test::fake_reply;
using tdbg::test::s3_test_server;

namespace {

/// Copies every file of `run` to the bucket prefix `url`, keeping relative paths as keys.
void upload(const std::filesystem::path& run, const tdbg::s3_storage& s3) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(run)) {
        if (entry.is_regular_file()) {
            const std::string key = std::filesystem::relative(entry.path(), run).generic_string();
            s3.put(key, tdbg::test::read_file(entry.path()));
        }
    }
}

/// Runs `tdbg <args>` with the server's endpoint and credentials in the environment.
tdbg::test::command_result tdbg_cli(const s3_test_server& server, const std::vector<std::string>& args) {
    using tdbg::test::shell_quote;
    std::string command = "env -u AWS_SESSION_TOKEN -u AWS_ENDPOINT_URL_S3 -u AWS_PROFILE AWS_ACCESS_KEY_ID=" +
                          shell_quote(s3_test_server::access_key_id) +
                          " AWS_SECRET_ACCESS_KEY=" + shell_quote(s3_test_server::secret_access_key) +
                          " AWS_REGION=us-east-1 AWS_ENDPOINT_URL=" + shell_quote(server.endpoint()) + " " +
                          shell_quote(TDBG_CLI_PATH);
    for (const auto& a : args) {
        command += " " + shell_quote(a);
    }
    return tdbg::test::run_shell(command);
}

/// The results of `tdbg rules --json`, without the other run's location (which differs by design).
nlohmann::json results_of(const tdbg::test::command_result& r) {
    INFO(r.err);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.contains("results"));
    for (auto& result : j["results"]) {
        result["params"].erase("other_trial");
        result["resolved_params"].erase("other_trial");
    }
    return j["results"];
}


// The first 8 bytes of `hidden` found together in `text`, or "": a piece of a secret printed.
std::string cli_piece_printed(const std::string& text, const std::string& hidden) {
    for (std::size_t at = 0; at + 8 <= hidden.size(); ++at) {
        if (text.find(hidden.substr(at, 8)) != std::string::npos) {
            return hidden.substr(at, 8);
        }
    }
    return {};
}
} // namespace

TEST_CASE("tdbg rules, report --rule and SimilarAcrossRuns read s3:// runs as they read local ones", "[server]") {
    const auto fixtures = tdbg::test::fixtures_dir();
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::filesystem::path local = fixtures / "vanishing_run";
    const std::filesystem::path other_local = fixtures / "pytorch_mlp";
    const std::string url = server.new_run("jobs/vanishing_run");
    const std::string other_url = server.new_run("jobs/pytorch_mlp");
    upload(local, tdbg::s3_storage(url, server.options()));
    upload(other_local, tdbg::s3_storage(other_url, server.options()));

    SECTION("rules: the same verdicts, steps and exit status") {
        const std::vector<std::string> rules = {"--rule",  "VanishingGradient", "--rule", "ExplodingTensor",
                                                "--param", "only_nan=True",     "--rule", "LossNotDecreasing",
                                                "--json"};
        std::vector<std::string> on_disk = {"rules", local.string()};
        std::vector<std::string> on_s3 = {"rules", url};
        on_disk.insert(on_disk.end(), rules.begin(), rules.end());
        on_s3.insert(on_s3.end(), rules.begin(), rules.end());
        const auto disk = tdbg_cli(server, on_disk);
        const auto s3 = tdbg_cli(server, on_s3);
        INFO(s3.err);
        CHECK(disk.status == 1); // VanishingGradient triggers on this run
        CHECK(s3.status == disk.status);
        const auto expected = results_of(disk);
        CHECK(results_of(s3) == expected);
        REQUIRE(expected.size() == 3);
        CHECK(expected[0]["rule"] == "VanishingGradient");
        CHECK_FALSE(expected[0]["triggered_steps"].empty());

        const auto text = tdbg_cli(server, {"rules", url, "--rule", "VanishingGradient"});
        CHECK(text.status == 1);
        CHECK(text.out.find("VanishingGradient: IssuesFound") != std::string::npos);
        CHECK(text.out.find("triggered at steps 7-39") != std::string::npos);
    }

    SECTION("SimilarAcrossRuns: the other trial on S3 answers as the same run on disk") {
        for (const auto& [other_disk, other_s3] :
             {std::pair{local.string(), url}, std::pair{other_local.string(), other_url}}) {
            INFO(other_disk);
            const auto disk = tdbg_cli(server, {"rules", local.string(), "--rule", "SimilarAcrossRuns", "--param",
                                                "other_trial=" + other_disk, "--json"});
            const auto s3 = tdbg_cli(server, {"rules", url, "--rule", "SimilarAcrossRuns", "--param",
                                              "other_trial=" + other_s3, "--json"});
            INFO(disk.err << s3.err);
            REQUIRE(disk.status != 2);
            CHECK(s3.status == disk.status);
            CHECK(results_of(s3) == results_of(disk));
        }
        // Against itself the run is similar at every step; against another model it is not.
        const auto same =
            tdbg_cli(server, {"rules", url, "--rule", "SimilarAcrossRuns", "--param", "other_trial=" + url});
        CHECK(same.status == 0);
    }

    SECTION("report --rule: the page of an S3 run carries the rule's result") {
        tdbg::test::temp_dir dir("s3_cli_report");
        const auto page = dir.path() / "report.html";
        const auto r = tdbg_cli(server, {"report", url, "-o", page.string(), "--rule", "VanishingGradient"});
        INFO(r.err);
        CHECK(r.status == 0);
        REQUIRE(std::filesystem::exists(page));
        const std::string html = tdbg::test::read_file(page);
        CHECK(html.find("VanishingGradient") != std::string::npos);
        CHECK(html.find("<span class=\"badge bad\">IssuesFound</span>") != std::string::npos);
        CHECK(html.find(url) != std::string::npos);
    }

    SECTION("diff: an S3 run against its local copy agrees, against another run it parts") {
        const auto same = tdbg_cli(server, {"diff", local.string(), url, "--json"});
        INFO(same.err);
        CHECK(same.status == 0);
        const auto agreed = nlohmann::json::parse(same.out);
        CHECK(agreed.at("agree") == true);
        CHECK(agreed.at("compared").at("values").get<std::size_t>() > 0);
        const auto local_diff = tdbg_cli(server, {"diff", local.string(), other_local.string(), "--json"});
        const auto s3_diff = tdbg_cli(server, {"diff", url, other_url, "--json"});
        INFO(s3_diff.err);
        CHECK(local_diff.status == 1);
        CHECK(s3_diff.status == 1);
        auto expected = nlohmann::json::parse(local_diff.out);
        auto got = nlohmann::json::parse(s3_diff.out);
        for (auto* doc : {&expected, &got}) { // the runs' names are their locations
            doc->erase("run_a");
            doc->erase("run_b");
        }
        CHECK(got == expected);
    }

    SECTION("a prefix that holds no run is an error naming it, exit 2") {
        const auto r = tdbg_cli(server, {"rules", url + "-missing/", "--rule", "VanishingGradient"});
        CHECK(r.status == 2);
        CHECK(r.err.find("vanishing_run-missing") != std::string::npos);
    }
}

TEST_CASE("tdbg ls, dump, rules, report and diff print no piece of a session token an S3 error quotes") {
    // The server refuses every request with a 403 whose message quotes the session token where
    // the message is cut (from its byte 794 past its byte 1000), and whose request id quotes the
    // secret access key across its own cut (200 bytes): each command fails, saying why, and
    // prints neither secret, whole or cut.
    std::string cli_token = "IQoJb3JpZ2luX2VjEXAMPLE";
    for (unsigned n = 7; cli_token.size() < 207; n = n * 1103515245U + 12345U) {
        cli_token += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(n >> 16U) % 64U];
    }
    const std::string cli_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    const std::string message = std::string(794, '.') + cli_token + " is not valid";
    fake_http_server server([&](const tdbg::test::recorded_request&) {
        return fake_reply{403,
                          "<?xml version=\"1.0\"?><Error><Code>InvalidToken</Code><Message>" + message +
                              "</Message><RequestId>" + std::string(190, 'R') + cli_secret + "</RequestId></Error>",
                          {"Content-Type: application/xml"},
                          false};
    });
    const tdbg::test::temp_dir dir("s3_cli_token");
    const std::string page = (dir.path() / "report.html").string();
    const std::vector<std::vector<std::string>> commands = {
        {"ls", "s3://bkt/run"},
        {"dump", "s3://bkt/run"},
        {"rules", "s3://bkt/run", "--rule", "VanishingGradient"},
        {"report", "s3://bkt/run", "-o", page, "--rule", "VanishingGradient"},
        {"diff", "s3://bkt/run", "s3://bkt/other", "--json"}};
    for (const auto& args : commands) {
        using tdbg::test::shell_quote;
        std::string command = "env -u AWS_PROFILE -u AWS_ENDPOINT_URL_S3 AWS_ACCESS_KEY_ID=AKIDEXAMPLE "
                              "AWS_SECRET_ACCESS_KEY=" +
                              shell_quote(cli_secret) + " AWS_SESSION_TOKEN=" + shell_quote(cli_token) +
                              " AWS_REGION=us-east-1 AWS_ENDPOINT_URL=" + shell_quote(server.endpoint()) + " " +
                              shell_quote(TDBG_CLI_PATH);
        for (const auto& a : args) {
            command += " " + shell_quote(a);
        }
        const auto r = tdbg::test::run_shell(command);
        const std::string printed = r.out + r.err;
        INFO("tdbg " << args[0] << ": exit " << r.status << "\n" << printed);
        CHECK(r.status != 0);
        CHECK_THAT(printed, Catch::Contains("InvalidToken") && Catch::Contains("<redacted> is not valid"));
        CHECK(cli_piece_printed(printed, cli_token).empty());
        CHECK(cli_piece_printed(printed, cli_secret).empty());
    }
}
