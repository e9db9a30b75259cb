// Evaluation results as the "smdebug-rules/1" JSON, text and JUnit XML.

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "json_support.hpp"

#include "tdbg/core/error.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/junit.hpp"
#include "tdbg/rules/merge.hpp"

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

TEST_CASE("a step_set keeps steps as ascending runs, merging runs that touch or overlap") {
    tdbg::rules::step_set s;
    CHECK(s.empty());
    s.add(5);
    s.add(7);
    s.add(6); // joins 5 and 7
    s.add(10, 20);
    s.add(1);
    s.add(18, 25); // overlaps 10-20
    using run = tdbg::rules::step_set::run;
    CHECK(s.runs() == std::vector<run>{{1, 1}, {5, 7}, {10, 25}});
    CHECK(s.size() == 1 + 3 + 16);
    CHECK(s.contains(6));
    CHECK(s.contains(25));
    CHECK_FALSE(s.contains(8));
    CHECK_FALSE(s.contains(0));
    s.add(2, 9); // bridges 1 and 5-7 and touches 10-25
    CHECK(s.runs() == std::vector<run>{{1, 25}});
    CHECK(s.size() == 25);
    CHECK(s == tdbg::rules::step_set(std::vector<std::int64_t>{3, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                                                 17, 18, 19, 20, 21, 22, 23, 24, 25}));
    CHECK_THROWS_AS(s.add(4, 3), tdbg::usage_error);
}

TEST_CASE("a step_set holds more steps than memory, and refuses to list them one by one") {
    tdbg::rules::step_set s{0, 1};
    s.add(2, 999'999'999'998);
    s.add(999'999'999'999);
    CHECK(s.runs().size() == 1);
    CHECK(s.size() == 1'000'000'000'000U);
    CHECK(tdbg::rules::format_steps(s) == "0-999999999999");
    CHECK_THROWS_WITH(s.steps(), Catch::Contains("1000000000000 steps") && Catch::Contains("too many"));
    CHECK(tdbg::rules::step_set{4, 9, 8}.steps() == std::vector<std::int64_t>{4, 8, 9});
    CHECK(tdbg::rules::format_steps(tdbg::rules::step_set{1, 3, 4, 6, 7, 8}) == "1, 3, 4, 6-8");
}

TEST_CASE("skipped steps in JSON: step by step, and a run longer than the limit as [first, last]") {
    auto r = sample();
    r.skipped_steps["StepUnavailable"] = {2, 3};
    r.skipped_steps["StepUnavailable"].add(10, 10 + static_cast<std::int64_t>(tdbg::rules::json_step_run_limit) - 1);
    r.skipped_steps["StepUnavailable"].add(5000, 999'999'999'998);
    r.skipped_steps["TensorUnavailableForStep"] = {4};
    const auto j = tdbg::test::to_nlohmann(tdbg::rules::to_json(r));
    const auto& listed = j.at("skipped_steps").at("StepUnavailable");
    // 2, 3, then the 1000 steps from 10 (at the limit: listed), then one run beyond it.
    REQUIRE(listed.size() == 2 + tdbg::rules::json_step_run_limit + 1);
    CHECK(listed[0] == 2);
    CHECK(listed[2] == 10);
    CHECK(listed[listed.size() - 2] == 1009);
    CHECK(listed.back() == nlohmann::json{5000, 999'999'999'998});
    CHECK(j.at("skipped_steps").at("TensorUnavailableForStep") == nlohmann::json{4});
    CHECK(r.all_skipped_steps().size() == 2 + 1 + tdbg::rules::json_step_run_limit + (999'999'999'998 - 5000 + 1));
    // The text a person reads counts them.
    CHECK_THAT(tdbg::rules::to_text(r),
               Catch::Contains(fmt::format(" {} StepUnavailable",
                                           2 + tdbg::rules::json_step_run_limit + (999'999'999'998 - 5000 + 1))));
}

TEST_CASE("an interrupted evaluation is Stopped unless it found issues, and fails a JUnit gate") {
    auto r = sample();
    r.triggered_steps.clear();
    r.end = tdbg::rules::evaluation_end::interrupted;
    r.next_step = 13;
    CHECK(r.status() == tdbg::rules::evaluation_status::stopped);
    CHECK(tdbg::rules::status_name(r.status()) == "Stopped");
    const auto j = tdbg::test::to_nlohmann(tdbg::rules::to_json(r));
    CHECK(j.at("status") == "Stopped");
    CHECK(j.at("end") == "interrupted");
    CHECK_THAT(tdbg::rules::to_text(r),
               Catch::StartsWith("VGRule (VanishingGradient): Stopped") &&
                   Catch::Contains("  interrupted before step 13: it and later steps were not evaluated\n"));
    const std::string xml = tdbg::rules::to_junit_xml({r}, "suite", 1.0);
    CHECK_THAT(xml, Catch::Contains(R"(tests="1" failures="0" errors="1")") &&
                        Catch::Contains(R"(<error type="Stopped" message="VGRule was interrupted before step 13")"));
    r.triggered_steps = {3}; // what it found before the signal stands
    CHECK(r.status() == tdbg::rules::evaluation_status::issues_found);
}

TEST_CASE("a result read back from its JSON, and results of ranges of steps merged") {
    auto a = sample(); // steps 0-12
    a.first_step = 0;
    a.next_step = 13;
    a.trigger_reasons = {{7, "too small"}};
    a.unsaved_steps = {2, 3};
    a.skipped_steps["TensorUnavailable"].add(100, 5000); // a long run, written [first, last]
    a.comparisons = tdbg::rules::comparison_coverage{3, "3 windows"};
    const auto back = tdbg::rules::result_from_json(tdbg::rules::to_json(a), "a.json");
    CHECK(back.rule == a.rule);
    CHECK(back.configuration_name == a.configuration_name);
    // A parameter reads back as the value the rule resolved it to, written as JSON writes it.
    CHECK(back.params == std::map<std::string, std::string>{{"threshold", "1e-05"}});
    CHECK(back.triggered_steps == a.triggered_steps);
    CHECK(back.not_triggered_steps == a.not_triggered_steps);
    CHECK(back.skipped_steps == a.skipped_steps);
    CHECK(back.unsaved_steps == a.unsaved_steps);
    CHECK(back.trigger_reasons == a.trigger_reasons);
    CHECK(back.first_step == 0);
    CHECK(back.next_step == 13);
    REQUIRE(back.comparisons);
    CHECK(back.comparisons->compared == 3);
    CHECK(back.comparisons->text == "3 windows");
    CHECK(tdbg::rules::to_json(back) == tdbg::rules::to_json(a));

    // Steps 13-19 of the same rule: merged, the steps of both, the comparisons added.
    auto b = sample();
    b.triggered_steps = {15};
    b.not_triggered_steps = {13, 14, 16, 17, 18, 19};
    b.skipped_steps = {};
    b.first_step = 13;
    b.next_step = 20;
    b.comparisons = tdbg::rules::comparison_coverage{2, "2 windows"};
    const auto merged = tdbg::rules::merge_results({b, back});
    CHECK(merged.triggered_steps == std::vector<std::int64_t>{7, 8, 9, 12, 15});
    CHECK(merged.not_triggered_steps == std::vector<std::int64_t>{0, 1, 13, 14, 16, 17, 18, 19});
    CHECK(merged.first_step == 0);
    CHECK(merged.next_step == 20);
    REQUIRE(merged.comparisons);
    CHECK(merged.comparisons->compared == 5);
    CHECK(merged.skipped_steps.at("StepUnavailable") == tdbg::rules::step_set{2, 3});

    auto other = b;
    other.configuration_name = "Another";
    CHECK_THROWS_AS(tdbg::rules::merge_results({back, other}), tdbg::config_error);
    CHECK_THROWS_WITH(tdbg::rules::result_from_json(tdbg::format::json_value::object(), "x.json"),
                      Catch::Contains("x.json: not a result of tdbg rules --json"));
}
