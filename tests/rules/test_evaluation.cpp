// Evaluation results as the "smdebug-rules/1" JSON, text and JUnit XML.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/junit.hpp"

namespace {

tdbg::rules::evaluation_result sample() {
    tdbg::rules::evaluation_result r;
    r.rule = "VanishingGradient";
    r.configuration_name = "VGRule";
    r.params = {{"threshold", "1e-5"}};
    r.resolved_params = tdbg::format::json_value::object({{"threshold", 1e-5}});
    r.triggered_steps = {7, 8, 9, 12};
    r.not_triggered_steps = {0, 1};
    r.skipped_steps["StepUnavailable"] = {2, 3};
    return r;
}

} // namespace

TEST_CASE("a result's status, its JSON entry and the smdebug-rules/1 document") {
    auto r = sample();
    CHECK(r.status() == tdbg::rules::evaluation_status::issues_found);
    CHECK(tdbg::rules::status_name(r.status()) == "IssuesFound");
    CHECK(r.all_skipped_steps() == std::vector<std::int64_t>{2, 3});
    const auto j = tdbg::test::to_nlohmann(tdbg::rules::to_json(r));
    CHECK(j.at("rule") == "VanishingGradient");
    CHECK(j.at("configuration_name") == "VGRule");
    // params: the given keys with the values the rule read (typed, as smdebug writes them).
    CHECK(j.at("params") == nlohmann::json{{"threshold", 1e-5}});
    CHECK(j.at("triggered_steps") == nlohmann::json{7, 8, 9, 12});
    CHECK(j.at("skipped_steps") == nlohmann::json{{"StepUnavailable", {2, 3}}});
    CHECK(j.at("status") == "IssuesFound");

    tdbg::rules::invoke_record invoked;
    invoked.start_step = 0;
    const auto doc = tdbg::test::to_nlohmann(tdbg::rules::rules_document({r}, "my_run", invoked));
    CHECK(doc.at("format") == "smdebug-rules/1");
    CHECK(doc.at("trial_name") == "my_run");
    CHECK(doc.at("invoke") == nlohmann::json{{"start_step", 0}, {"end_step", nullptr}, {"raise_eval_cond", false}});
    CHECK(doc.at("results").size() == 1);

    r.error = "boom";
    CHECK(r.status() == tdbg::rules::evaluation_status::error);
    r.error.clear();
    r.triggered_steps.clear();
    CHECK(r.status() == tdbg::rules::evaluation_status::no_issues_found);
}

TEST_CASE("the text report and the JUnit XML name the rule and list the triggered steps") {
    CHECK(tdbg::rules::format_steps({1, 2, 3, 4, 7, 9, 10}) == "1-4, 7, 9, 10");
    CHECK(tdbg::rules::format_steps({}) == "");
    const auto text = tdbg::rules::to_text(sample());
    CHECK(text.find("VGRule (VanishingGradient): IssuesFound  [threshold=1e-5]") == 0);
    CHECK(text.find("triggered at steps 7-9, 12") != std::string::npos);

    auto error = sample();
    error.configuration_name = "Bad<Rule>";
    error.error = "rule \"x\": parameter & more";
    auto fine = sample();
    fine.configuration_name = "Fine";
    fine.triggered_steps.clear();
    const auto xml = tdbg::rules::to_junit_xml({sample(), error, fine}, "tdbg rules: run", 1.5);
    CHECK(xml.find("<?xml version=\"1.0\" encoding=\"UTF-8\"?>") == 0);
    CHECK(xml.find("<testsuite name=\"tdbg rules: run\" tests=\"3\" failures=\"1\" errors=\"1\"") != std::string::npos);
    CHECK(xml.find("<testcase classname=\"tdbg.rules.VanishingGradient\" name=\"VGRule\">") != std::string::npos);
    CHECK(xml.find("<failure type=\"IssuesFound\" message=\"VGRule triggered at steps 7-9, 12\">triggered at steps: 7, 8, 9, 12</failure>") !=
          std::string::npos);
    CHECK(xml.find("name=\"Bad&lt;Rule&gt;\"") != std::string::npos);
    CHECK(xml.find("<error type=\"Error\" message=\"rule &quot;x&quot;: parameter &amp; more\">") != std::string::npos);
    const auto fine_case = xml.find("name=\"Fine\"");
    REQUIRE(fine_case != std::string::npos);
    CHECK(xml.find("<failure", fine_case) == std::string::npos); // no failure after the passing case
}
