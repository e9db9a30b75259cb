// `tdbg rules`: exit statuses, text, --json against the fixtures' rules
// files (through --config), --junit, --stop-training and --follow on a run
// being written. Runs the built `tdbg` program.

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"

namespace {

using cli_result = tdbg::test::command_result;

cli_result tdbg_rules(std::vector<std::string> args) {
    args.insert(args.begin(), "rules");
    return tdbg::test::run_program(TDBG_CLI_PATH, args);
}

std::vector<std::int64_t> steps_of(const nlohmann::json& j) { return j.get<std::vector<std::int64_t>>(); }

} // namespace

TEST_CASE("tdbg rules exits 0 without issues, 1 with issues, 2 on errors") {
    const auto fixtures = tdbg::test::fixtures_dir();
    if (!fixtures) {
        TDBG_SKIP("no fixtures directory");
    }
    const std::string run = (*fixtures / "vanishing_run").string();
    auto r = tdbg_rules({run, "--rule", "ExplodingTensor"});
    CHECK(r.status == 0);
    CHECK(r.out.find("ExplodingTensor: NoIssuesFound") != std::string::npos);

    r = tdbg_rules({run, "--rule", "ExplodingTensor", "--rule", "VanishingGradient"});
    CHECK(r.status == 1);
    CHECK(r.out.find("VanishingGradient: IssuesFound") != std::string::npos);
    CHECK(r.out.find("triggered at steps 7-39") != std::string::npos);

    r = tdbg_rules({run, "--rule", "LossNotDecreasing", "--param", "num_steps=3", "--param", "diff_percent=1"});
    CHECK(r.status == 1);
    CHECK(r.out.find("triggered at steps 9, 12, 15") != std::string::npos);

    CHECK(tdbg_rules({run, "--rule", "NoSuchRule"}).status == 2);
    r = tdbg_rules({run, "--rule", "VanishingGradient", "--param", "threshold=tiny"});
    CHECK(r.status == 2);
    CHECK(r.err.find("parameter 'threshold' = 'tiny' is not a number") != std::string::npos);
    r = tdbg_rules({run, "--rule", "VanishingGradient", "--param", "threshold=nan"}); // would never trigger
    CHECK(r.status == 2);
    CHECK(r.err.find("parameter 'threshold' = 'nan' is not a number such as 0.5 or 1e-07 (not NaN)") != std::string::npos);
    r = tdbg_rules({run, "--rule", "AllZero", "--threads", "-1"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--threads expects a whole number from 0 to 1024, got '-1'") != std::string::npos);
    CHECK(tdbg_rules({run, "--rule", "VanishingGradient", "--param", "typo=1"}).status == 2);
    CHECK(tdbg_rules({run}).status == 2);                                          // no rule
    CHECK(tdbg_rules({"/nonexistent/run", "--rule", "AllZero"}).status == 2);      // no run
    CHECK(tdbg_rules({run, "--param", "x=1", "--rule", "AllZero"}).status == 2);   // --param before --rule
    CHECK(tdbg_rules({run, "--rule", "AllZero", "--end-step", "-1"}).status == 2); // bad step
    r = tdbg_rules({"--list"});
    CHECK(r.status == 0);
    CHECK(r.out.find("VanishingGradient\n") != std::string::npos);
}

TEST_CASE("tdbg rules --config --json reproduces every entry of the fixtures' rules files") {
    const auto fixtures = tdbg::test::fixtures_dir();
    if (!fixtures) {
        TDBG_SKIP("no fixtures directory");
    }
    tdbg::test::temp_dir dir("rules_cli_config");
    for (const char* run : tdbg::test::fixture_runs) {
        INFO(run);
        const auto expected = nlohmann::json::parse(tdbg::test::read_file(*fixtures / (std::string(run) + ".rules.json")));
        // The fixture's rules as a SageMaker DebugRuleConfigurations file (parameters as strings).
        nlohmann::json config = nlohmann::json::array();
        std::size_t i = 0;
        for (const auto& entry : expected.at("results")) {
            nlohmann::json params = {{"rule_to_invoke", entry.at("rule")}};
            for (const auto& [k, v] : entry.at("params").items()) {
                params[k] = v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "True" : "False") : v.dump();
            }
            config.push_back({{"RuleConfigurationName", "rule_" + std::to_string(i++)},
                              {"InstanceType", "ml.t3.medium"},
                              {"VolumeSizeInGB", 30},
                              {"RuleParameters", params}});
        }
        const auto config_file = dir.path() / (std::string(run) + "_rules.json");
        std::ofstream(config_file) << config.dump(2);

        const auto& invoked = expected.at("invoke");
        const auto r = tdbg_rules({(*fixtures / run).string(), "--config", config_file.string(), "--json", "--start-step",
                                   std::to_string(invoked.at("start_step").get<int>()), "--end-step",
                                   std::to_string(invoked.at("end_step").get<int>())});
        INFO(r.err);
        CHECK((r.status == 0 || r.status == 1));
        const auto doc = nlohmann::json::parse(r.out);
        CHECK(doc.at("format") == "smdebug-rules/1");
        CHECK(doc.at("trial_name") == run);
        CHECK(doc.at("invoke").at("end_step") == invoked.at("end_step"));
        REQUIRE(doc.at("results").size() == expected.at("results").size());
        bool any_issue = false;
        for (std::size_t k = 0; k < doc.at("results").size(); ++k) {
            const auto& got = doc.at("results")[k];
            const auto& want = expected.at("results")[k];
            INFO("entry " << k << ": " << want.at("rule") << " " << want.at("params").dump());
            CHECK(got.at("rule") == want.at("rule"));
            CHECK(got.at("configuration_name") == "rule_" + std::to_string(k));
            CHECK(steps_of(got.at("triggered_steps")) == steps_of(want.at("triggered_steps")));
            CHECK(steps_of(got.at("not_triggered_steps")) == steps_of(want.at("not_triggered_steps")));
            CHECK(got.at("skipped_steps") == want.at("skipped_steps"));
            CHECK(got.at("params") == want.at("params"));
            CHECK(got.at("resolved_params") == want.at("resolved_params"));
            CHECK(got.at("status") == (want.at("triggered_steps").empty() ? "NoIssuesFound" : "IssuesFound"));
            any_issue = any_issue || !want.at("triggered_steps").empty();
        }
        CHECK(r.status == (any_issue ? 1 : 0));
    }
}

TEST_CASE("tdbg rules --junit writes one testcase per rule, failures listing the steps") {
    const auto fixtures = tdbg::test::fixtures_dir();
    if (!fixtures) {
        TDBG_SKIP("no fixtures directory");
    }
    tdbg::test::temp_dir dir("rules_cli_junit");
    const auto junit = dir.path() / "rules.xml";
    const auto r = tdbg_rules({(*fixtures / "core_modes_workers").string(), "--rule", "ExplodingTensor", "--param",
                               "only_nan=True", "--rule", "VanishingGradient", "--junit", junit.string()});
    CHECK(r.status == 1);
    const std::string xml = tdbg::test::read_file(junit);
    CHECK(xml.find("<testsuite name=\"tdbg rules: core_modes_workers\" tests=\"2\" failures=\"2\" errors=\"0\"") !=
          std::string::npos);
    CHECK(xml.find("<testcase classname=\"tdbg.rules.ExplodingTensor\" name=\"ExplodingTensor\">") != std::string::npos);
    CHECK(xml.find("message=\"ExplodingTensor triggered at steps 4\"") != std::string::npos);
    CHECK(xml.find("message=\"VanishingGradient triggered at steps 10, 12\"") != std::string::npos);
}

TEST_CASE("tdbg rules --follow evaluates a run while it is written, and --stop-training writes the marker") {
    tdbg::test::temp_dir dir("rules_cli_follow");
    tdbg::test::rule_run run(dir.path());
    run.collections({{"gradients", "^gradient/"}});
    run.step(0, {{"gradient/w", tdbg::test::f32({1.0F, -1.0F}), {}}});

    // Without --follow: the steps written so far, at once.
    auto snapshot = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--json"});
    CHECK(snapshot.status == 0);
    CHECK(steps_of(nlohmann::json::parse(snapshot.out).at("results")[0].at("not_triggered_steps")) ==
          std::vector<std::int64_t>{0});

    std::thread writer([&] {
        float g = 0.1F;
        for (std::int64_t s = 1; s < 8; ++s) {
            std::this_thread::sleep_for(std::chrono::milliseconds(60));
            run.step(s, {{"gradient/w", tdbg::test::f32({g, -g}), {}}});
            g /= 10.0F;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        run.end();
    });
    const auto followed = tdbg_rules({run.path(), "--rule", "VanishingGradient", "--param", "threshold=5e-6", "--follow",
                                      "--poll", "0.02", "--stop-training", "--json"});
    writer.join();
    CHECK(followed.status == 1);
    const auto result = nlohmann::json::parse(followed.out).at("results")[0];
    CHECK(steps_of(result.at("triggered_steps")) == std::vector<std::int64_t>{6, 7}); // 1e-6 and 1e-7 < 5e-6
    CHECK(steps_of(result.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(result.at("end") == "no_more_data");
    const auto marker = nlohmann::json::parse(tdbg::test::read_file(dir.path() / std::string(tdbg::format::stop_marker_key)));
    CHECK(marker.at("rule") == "VanishingGradient");
    CHECK(marker.at("step") == 6);
}

TEST_CASE("tdbg rules --follow waits for a run directory that does not exist yet") {
    tdbg::test::temp_dir dir("rules_cli_follow_later");
    const auto later = dir.path() / "not_yet";
    std::thread trainer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        tdbg::test::rule_run run(later);
        run.collections({{"gradients", "^gradient/"}});
        for (std::int64_t s = 0; s < 3; ++s) {
            run.step(s, {{"gradient/w", tdbg::test::f32({1.0F, -1.0F}), {}}});
        }
        run.end();
    });
    const auto followed =
        tdbg_rules({later.string(), "--rule", "VanishingGradient", "--follow", "--poll", "0.02", "--json"});
    trainer.join();
    CHECK(followed.status == 0);
    const auto result = nlohmann::json::parse(followed.out).at("results")[0];
    CHECK(steps_of(result.at("not_triggered_steps")) == std::vector<std::int64_t>{0, 1, 2});

    // Without --follow a missing directory is an error at once.
    const auto missing = tdbg_rules({(dir.path() / "never").string(), "--rule", "VanishingGradient"});
    CHECK(missing.status == 2);
    CHECK_THAT(missing.err, Catch::Contains("no such directory"));
}
