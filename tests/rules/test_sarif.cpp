// Evaluation results as SARIF 2.1.0 (tdbg/rules/sarif.hpp), checked field by field and
// validated against the SARIF 2.1.0 schema in ../shared/reference/sarif.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"

#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/sarif.hpp"

namespace {

// Three evaluations: one that triggered, one that found nothing, one that failed.
std::vector<tdbg::rules::evaluation_result> sarif_sample() {
    std::vector<tdbg::rules::evaluation_result> results(3);
    results[0].rule = "VanishingGradient";
    results[0].configuration_name = "VGRule";
    results[0].params = {{"threshold", "1e-5"}};
    results[0].resolved_params = tdbg::format::json_value::object({{"threshold", 1e-5}});
    results[0].triggered_steps = {7, 12};
    results[0].not_triggered_steps = {0, 1};
    results[1].rule = "LossNotDecreasing";
    results[1].not_triggered_steps = {0, 1, 2};
    results[2].rule = "AllZero";
    results[2].error = "tensor 'w' is not a number";
    return results;
}

// The SARIF 2.1.0 schema, when the shared reference material is there.
std::filesystem::path sarif_schema() {
    const char* env = std::getenv("TDBG_SHARED_DIR");
    const std::filesystem::path shared = env != nullptr ? std::filesystem::path(env) : std::filesystem::path(TDBG_SHARED_DIR);
    return shared / "reference" / "sarif" / "sarif-schema-2.1.0.json";
}

} // namespace

TEST_CASE("SARIF: a result per rule and step triggered, the rules with their parameters, failures as notifications") {
    tdbg::rules::sarif_options options;
    options.run_location = "/data/runs/train 1";
    options.tool_version = "9.8.7";
    options.rule_description = [](const tdbg::rules::evaluation_result& r) {
        return r.rule == "VanishingGradient" ? std::string("gradients too small to train") : std::string();
    };
    options.step_reason = [](const tdbg::rules::evaluation_result& /*r*/, std::int64_t step) {
        return step == 12 ? std::string("mean |gradient| 1e-9 < threshold") : std::string();
    };
    const auto doc = nlohmann::json::parse(tdbg::rules::to_sarif(sarif_sample(), options));
    INFO(doc.dump(1));
    CHECK(doc.at("version") == "2.1.0");
    REQUIRE(doc.at("runs").size() == 1);
    const auto& run = doc.at("runs").at(0);
    const auto& driver = run.at("tool").at("driver");
    CHECK(driver.at("name") == "tdbg");
    CHECK(driver.at("version") == "9.8.7");
    REQUIRE(driver.at("rules").size() == 3);
    const auto& vg = driver.at("rules").at(0);
    CHECK(vg.at("id") == "VGRule");
    CHECK(vg.at("name") == "VanishingGradient");
    CHECK(vg.at("fullDescription").at("text") == "gradients too small to train");
    CHECK(vg.at("properties").at("parameters") == nlohmann::json({{"threshold", "1e-5"}}));
    CHECK(vg.at("properties").at("resolved_parameters") == nlohmann::json({{"threshold", 1e-5}}));
    CHECK(vg.at("properties").at("status") == "IssuesFound");
    CHECK_FALSE(driver.at("rules").at(1).contains("fullDescription")); // "" from the callback: none
    CHECK(driver.at("rules").at(1).at("id") == "LossNotDecreasing");

    // The run is the artifact, as a file URI (the space percent-encoded).
    const std::string uri = "file:///data/runs/train%201";
    CHECK(run.at("artifacts") == nlohmann::json::parse(R"([{"location": {"uri": "file:///data/runs/train%201"}}])"));
    const auto& results = run.at("results");
    REQUIRE(results.size() == 2);
    CHECK(results.at(0).at("ruleId") == "VGRule");
    CHECK(results.at(0).at("ruleIndex") == 0);
    CHECK(results.at(0).at("level") == "error");
    CHECK(results.at(0).at("message").at("text") == "VGRule triggered at step 7");
    CHECK(results.at(0).at("properties").at("step") == 7);
    CHECK(results.at(0).at("locations").at(0).at("physicalLocation").at("artifactLocation").at("uri") == uri);
    CHECK(results.at(1).at("message").at("text") ==
          "VGRule triggered at step 12: mean |gradient| 1e-9 < threshold");

    // The error is a notification of level error, tied to its rule; the invocation failed.
    REQUIRE(run.at("invocations").size() == 1);
    const auto& invocation = run.at("invocations").at(0);
    CHECK(invocation.at("executionSuccessful") == false);
    REQUIRE(invocation.at("toolExecutionNotifications").size() == 1);
    const auto& n = invocation.at("toolExecutionNotifications").at(0);
    CHECK(n.at("level") == "error");
    CHECK(n.at("message").at("text") == "tensor 'w' is not a number");
    CHECK(n.at("descriptor").at("id") == "Error");
    CHECK(n.at("associatedRule") == nlohmann::json({{"id", "AllZero"}, {"index", 2}}));
}

TEST_CASE("SARIF: statuses map to notifications in one place, and run locations to URIs") {
    using tdbg::rules::sarif_notification_of;
    auto r = sarif_sample();
    CHECK_FALSE(sarif_notification_of(r[0]).has_value()); // IssuesFound: results, no notification
    CHECK_FALSE(sarif_notification_of(r[1]).has_value()); // NoIssuesFound
    const auto error = sarif_notification_of(r[2]);
    REQUIRE(error.has_value());
    CHECK(error->level == "error");
    CHECK(error->message == "tensor 'w' is not a number");
    // An interrupted evaluation cannot say there is no issue: an error, naming where it stopped.
    r[1].end = tdbg::rules::evaluation_end::interrupted;
    r[1].next_step = 3;
    const auto stopped = sarif_notification_of(r[1]);
    REQUIRE(stopped.has_value());
    CHECK(stopped->level == "error");
    CHECK(stopped->message == "LossNotDecreasing was interrupted before step 3");
    const auto doc = nlohmann::json::parse(tdbg::rules::to_sarif({r[1]}));
    CHECK(doc.at("runs").at(0).at("invocations").at(0).at("executionSuccessful") == false);
    CHECK(doc.at("runs").at(0).at("invocations").at(0).at("toolExecutionNotifications").at(0).at("descriptor").at(
              "id") == "Stopped");
    // Nothing that failed: a successful invocation, no notification.
    const auto clean = nlohmann::json::parse(tdbg::rules::to_sarif({sarif_sample()[1]}));
    CHECK(clean.at("runs").at(0).at("invocations").at(0).at("executionSuccessful") == true);
    CHECK(clean.at("runs").at(0).at("invocations").at(0).at("toolExecutionNotifications") == nlohmann::json::array());
    CHECK_FALSE(clean.at("runs").at(0).contains("artifacts")); // no run location given

    using tdbg::rules::sarif_artifact_uri;
    CHECK(sarif_artifact_uri("s3://bucket/run 1") == "s3://bucket/run 1");
    CHECK(sarif_artifact_uri("/abs/r\xC3\xA9sum#1") == "file:///abs/r%C3%A9sum%231");
    CHECK(sarif_artifact_uri("runs/a:b") == "runs/a%3Ab");
}

TEST_CASE("SARIF: the document validates against the SARIF 2.1.0 schema") {
    const auto schema = sarif_schema();
    if (!std::filesystem::is_regular_file(schema)) {
        TDBG_SKIP("no SARIF schema at " << schema.string() << " (the shared reference material is absent)");
    }
    tdbg::test::temp_dir dir("sarif_schema");
    auto results = sarif_sample();
    results[0].rule = "Vanishing\xFFGradient"; // not UTF-8: U+FFFD, still a valid document
    tdbg::rules::sarif_options options;
    options.run_location = "runs/train";
    options.tool_version = "1.0";
    options.rule_description = [](const tdbg::rules::evaluation_result&) { return std::string("a rule"); };
    options.step_reason = [](const tdbg::rules::evaluation_result&, std::int64_t) { return std::string("why"); };
    const auto file = dir.path() / "rules.sarif";
    tdbg::test::write_file(file, tdbg::rules::to_sarif(results, options));
    const auto empty = dir.path() / "empty.sarif";
    tdbg::test::write_file(empty, tdbg::rules::to_sarif({}));

    const char* script = R"py(
import json, sys
try:
    import jsonschema
except ImportError:
    print("SKIPPED: no jsonschema module")
    sys.exit(0)
schema = json.load(open(sys.argv[1]))
jsonschema.Draft4Validator.check_schema(schema)
validator = jsonschema.Draft4Validator(schema)
for path in sys.argv[2:]:
    errors = list(validator.iter_errors(json.load(open(path))))
    for e in errors:
        print(path, list(e.absolute_path), e.message)
    print("valid" if not errors else "invalid", len(errors))
)py";
    // Debian's interpreter first (python3-jsonschema), else the python3 on PATH.
    std::string skipped;
    for (const char* python : {TDBG_PYTHON3, "python3"}) {
        const auto r = tdbg::test::run_shell(tdbg::test::shell_quote(python) + " -c " + tdbg::test::shell_quote(script) +
                                             " " + tdbg::test::shell_quote(schema.string()) + " " +
                                             tdbg::test::shell_quote(file.string()) + " " +
                                             tdbg::test::shell_quote(empty.string()));
        if (r.status == 127 || r.out.find("SKIPPED:") == 0) { // no such interpreter, or no jsonschema in it
            skipped += std::string(python) + ": " + (r.status == 127 ? std::string("not found") : r.out) + " ";
            continue;
        }
        INFO(python << ": " << r.out << r.err);
        REQUIRE(r.status == 0);
        CHECK(r.out == "valid 0\nvalid 0\n");
        return;
    }
    TDBG_SKIP("no Python with jsonschema validated the document: " << skipped);
}
