// The seven built-in rules the fixtures cover, against every entry of the
// three `<run>.rules.json` files written by Python smdebug's invoke_rule (with
// the reference's defaults where AWS's differ, reference_defaults.hpp).

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_support.hpp"
#include "reference_defaults.hpp"
#include "support.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

// A fixture parameter (a Python value) as SageMaker would pass it: a string.
std::string as_param_string(const nlohmann::json& v) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? "True" : "False";
    }
    return v.dump();
}

std::vector<std::int64_t> steps_of(const nlohmann::json& j) { return j.get<std::vector<std::int64_t>>(); }

} // namespace

TEST_CASE("built-in rules trigger on exactly the steps Python smdebug recorded, on every fixture run") {
    const auto fixtures = tdbg::test::fixtures_dir();
    std::size_t checked = 0;
    std::vector<std::string> compared_nothing;
    for (const char* run : tdbg::test::fixture_runs) {
        std::ifstream in(fixtures / (std::string(run) + ".rules.json"));
        REQUIRE(in);
        const auto doc = nlohmann::json::parse(in);
        REQUIRE(doc.at("format") == "smdebug-rules/1");
        const auto& invoked = doc.at("invoke");
        for (const auto& entry : doc.at("results")) {
            std::map<std::string, std::string> params;
            for (const auto& [k, v] : entry.at("params").items()) {
                params[k] = as_param_string(v);
            }
            const std::string name = entry.at("rule").get<std::string>();
            const std::set<std::string> added = tdbg::test::add_reference_defaults(name, params);
            INFO("run " << run << ", rule " << name << ", params " << entry.at("params").dump());
            auto trial = tdbg::create_trial((fixtures / run).string());
            auto rule = tdbg::rules::registry::create(name, trial, tdbg::rules::rule_params(params), {},
                                                      tdbg::rules::rule_logger::silent());
            tdbg::rules::invoke_options options;
            options.start_step = invoked.at("start_step").get<std::int64_t>();
            options.end_step = invoked.at("end_step").get<std::int64_t>();
            const auto result = rule.invoke(options);

            CHECK(result.triggered_steps == steps_of(entry.at("triggered_steps")));
            CHECK(result.not_triggered_steps == steps_of(entry.at("not_triggered_steps")));
            std::map<std::string, tdbg::rules::step_set> skipped;
            for (const auto& [reason, steps] : entry.at("skipped_steps").items()) {
                skipped[reason] = steps_of(steps);
            }
            CHECK(result.skipped_steps == skipped);
            // tdbg's additions: every triggered step says why; nothing evaluated is no pass.
            CHECK(result.trigger_reasons.size() == result.triggered_steps.size());
            if (result.evaluated_steps() == 0) {
                CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
                CHECK_FALSE(result.nothing_evaluated_reason.empty());
            } else if (result.comparisons && result.comparisons->compared == 0) {
                // smdebug recorded steps not triggered where the rule compared nothing: no pass either.
                CHECK(result.triggered_steps.empty());
                CHECK(result.status() == tdbg::rules::evaluation_status::nothing_evaluated);
                CHECK_THAT(result.nothing_evaluated_reason, Catch::Matchers::StartsWith("it compared nothing: "));
                compared_nothing.push_back(std::string(run) + ": " + name + " " + entry.at("params").dump() + ": " + tdbg::rules::describe_coverage(result));
            } else {
                // Where it compared something, smdebug's verdict stands.
                CHECK(result.status() == (result.triggered_steps.empty() ? tdbg::rules::evaluation_status::no_issues_found
                                                                         : tdbg::rules::evaluation_status::issues_found));
            }
            // A parameter the reference does not have (given here to turn its check off) is not in its record.
            auto resolved = tdbg::test::to_nlohmann(result.resolved_params);
            for (const std::string& key : added) {
                if (!entry.at("resolved_params").contains(key)) {
                    resolved.erase(key);
                }
            }
            CHECK(resolved == entry.at("resolved_params"));
            ++checked;
        }
    }
    CHECK(checked == 39);
    // smdebug's NoIssuesFound where LossNotDecreasing (mode None: EVAL) had too few EVAL steps
    // to fill a window of 10.
    CHECK(compared_nothing == std::vector<std::string>{
                                  "core_modes_workers: LossNotDecreasing {}: evaluated 15 of 15 steps; 6 EVAL steps, 0 "
                                  "windows of 10",
                                  "pytorch_mlp: LossNotDecreasing {}: evaluated 13 of 13 steps; 5 EVAL steps, 0 windows of 10"});
}
