// The diff document (tdbg/diff/document.hpp): a diff_result written as "tdbg-diff/1" and read
// back, and the reader's errors, each naming the file and where in the document.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "diff_runs.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/diff/document.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// A difference as the document holds it: the number, none where it is not finite.
std::optional<double> as_written(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

// The members every entry has, read back from `d`.
void check_entry(const tdbg::diff_document_entry& e, const tdbg::diff_divergence& d) {
    CHECK(e.tensor == d.tensor);
    CHECK(e.tensor_b == d.tensor_b);
    CHECK(e.step == d.step);
    CHECK(e.step_mode == d.step_mode);
    CHECK(e.mode_step == d.mode_step);
    CHECK(e.worker == d.worker);
    CHECK(e.max_abs_diff == as_written(d.max_abs_diff));
    CHECK(e.max_rel_diff == as_written(d.max_rel_diff));
    CHECK(e.reason == d.reason);
    CHECK(e.compared_reduction == d.compared_reduction);
}

// Everything of `result` (compared with `options`) that `doc` read back.
void check_document(const tdbg::diff_document& doc, const tdbg::diff_result& result,
                    const tdbg::diff_options& options) {
    CHECK(doc.agree == result.agree());
    CHECK(doc.rtol == options.rtol);
    CHECK(doc.atol == options.atol);
    REQUIRE(doc.first_divergence.has_value() == (result.first_divergence() != nullptr));
    if (const auto* first = result.first_divergence()) {
        check_entry(*doc.first_divergence, *first);
        CHECK(doc.first_divergence->index == first->index);
        CHECK(doc.first_divergence->flat_index == first->flat_index);
        CHECK(doc.first_divergence->mismatched == first->mismatched);
    }
    REQUIRE(doc.tensors.size() == result.divergences.size());
    for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
        INFO("tensors[" << i << "]");
        check_entry(doc.tensors[i], result.divergences[i]);
        CHECK(doc.tensors[i].diverging_steps == result.divergences[i].diverging_steps);
    }
    CHECK(doc.only_in_a == result.only_in_a);
    CHECK(doc.only_in_b == result.only_in_b);
    CHECK(doc.tensors_compared == result.tensors_compared);
    CHECK(doc.steps_compared == result.steps_compared);
    CHECK(doc.values_compared == result.values_compared);
    CHECK(doc.reductions_compared == result.reductions_compared);
    CHECK(doc.reduction_only_steps == result.reduction_only_steps);
    CHECK(doc.reductions_only == result.reductions_only());
    CHECK(doc.note == tdbg::diff_reductions_note(result));
}

// A divergence of tensor `name` (called Net_... in run B) with its differences and why.
tdbg::diff_divergence divergence(const std::string& name, tdbg::mode mode, std::int64_t step, std::int64_t mode_step,
                                 double abs, double rel, const std::string& reason) {
    tdbg::diff_divergence d;
    d.tensor = "MLP_" + name;
    d.tensor_b = "Net_" + name;
    d.step = step;
    d.step_mode = mode;
    d.mode_step = mode_step;
    d.worker = "worker_" + std::to_string(step % 2);
    d.max_abs_diff = abs;
    d.max_rel_diff = rel;
    d.reason = reason;
    return d;
}

// A result with a divergence of every kind: values out of tolerance (a relative difference
// against 0, infinite), a stored reduction compared where no element was (differences NaN).
tdbg::diff_result made_up_result() {
    tdbg::diff_result r;
    auto values = divergence("fc1.weight", tdbg::mode::train, 7, 7, 0.5, infinity, "2 of 6 values differ");
    values.flat_index = 5;
    values.index = {1, 2};
    values.mismatched = 2;
    values.diverging_steps = 3;
    auto reduction = divergence("fc1.bias", tdbg::mode::eval, 12, 2, nan, nan, "only in run A at this step and worker");
    reduction.compared_reduction = tdbg::parse_reduction("abs_mean");
    r.divergences = {values, reduction};
    r.only_in_a = {"extra/a"};
    r.only_in_b = {"extra/b1", "extra/b2"};
    r.tensors_compared = 4;
    r.steps_compared = 10;
    r.values_compared = 120;
    r.reductions_compared = 20;
    r.reduction_only_steps = 10;
    return r;
}

// The document of made_up_result() as text, with `from` replaced by `to`.
std::string edited_document(const std::string& from, const std::string& to) {
    std::string text = tdbg::format::dump_json(tdbg::diff_document_json(made_up_result(), "a", "b", {}));
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("diff document: a diff_result written and read back holds the same fields") {
    tdbg::diff_options options;
    options.rtol = 1e-4;
    options.atol = 1e-6;
    const tdbg::diff_result result = made_up_result();
    const tdbg::format::json_value json = tdbg::diff_document_json(result, "runs/python", "runs/cpp", options);
    CHECK(json.at("format").as_string() == "tdbg-diff/1");
    // Differences that are not finite numbers are null.
    CHECK(json.at("first_divergence").at("max_rel_diff").is_null());
    CHECK(json.at("tensors").at(1).at("max_abs_diff").is_null());
    CHECK(json.at("tensors").at(1).at("reduction").as_string() == "abs_mean");

    const tdbg::diff_document doc = tdbg::read_diff_document(tdbg::format::dump_json(json), "diff.json");
    CHECK(doc.run_a == "runs/python");
    CHECK(doc.run_b == "runs/cpp");
    CHECK_FALSE(doc.agree);
    check_document(doc, result, options);
    CHECK(doc.note == "20 of the values compared are stored reductions (10 tensor steps without raw values)");
    // A null difference is infinite where elements were compared, undefined where none was.
    CHECK(doc.first_divergence->elements_compared());
    CHECK_FALSE(doc.tensors[1].elements_compared());

    // Laid out as `tdbg diff --json` prints it, the same document.
    tdbg::format::json_style indented;
    indented.indent = 2;
    const auto again = tdbg::read_diff_document(tdbg::format::dump_json(json, indented), "diff.json");
    check_document(again, result, options);
}

TEST_CASE("diff document: diff_runs' results read back, runs that agree and runs that part") {
    tdbg::test::temp_dir dir("diff_document_runs");
    tdbg::test::write_diff_run(dir.path() / "a", {});
    tdbg::test::diff_run_spec perturbed;
    perturbed.perturb_from = 7;
    perturbed.extra_tensor = true;
    tdbg::test::write_diff_run(dir.path() / "b", perturbed);
    const auto a = tdbg::create_trial((dir.path() / "a").string());
    const auto b = tdbg::create_trial((dir.path() / "b").string());
    const tdbg::diff_options options;
    for (const auto* run_b : {&a, &b}) {
        const tdbg::diff_result result = tdbg::diff_runs(a, *run_b, options);
        INFO("run B " << run_b->name());
        CHECK(result.agree() == (run_b == &a));
        const auto doc = tdbg::read_diff_document(
            tdbg::format::dump_json(tdbg::diff_document_json(result, "A", "B", options)), "diff.json");
        check_document(doc, result, options);
    }
}

TEST_CASE("diff document: a document without the members added to the format later is read") {
    const auto doc = tdbg::read_diff_document(
        R"({"format": "tdbg-diff/1", "run_a": "a", "run_b": "b", "agree": false, "rtol": 1e-05, "atol": 1e-08,
            "first_divergence": {"tensor": "w", "tensor_b": "w", "step": 3, "mode": "GLOBAL", "mode_step": 3,
              "worker": "worker_0", "max_abs_diff": null, "max_rel_diff": null, "index": [], "reason": "dtype"},
            "tensors": [{"tensor": "w", "tensor_b": "w", "step": 3, "mode": "GLOBAL", "mode_step": 3,
              "max_abs_diff": null, "max_rel_diff": null}],
            "only_in_a": [], "only_in_b": []})",
        "old.json");
    REQUIRE(doc.first_divergence);
    CHECK(doc.first_divergence->step_mode == tdbg::mode::global);
    CHECK_FALSE(doc.first_divergence->flat_index);
    CHECK_FALSE(doc.first_divergence->elements_compared());
    CHECK(doc.first_divergence->mismatched == 0);
    REQUIRE(doc.tensors.size() == 1);
    CHECK(doc.tensors[0].worker.empty());
    CHECK(doc.tensors[0].diverging_steps == 1);
    CHECK_FALSE(doc.tensors[0].compared_reduction);
    CHECK(doc.values_compared == 0);
    CHECK_FALSE(doc.reductions_only);
    CHECK(doc.note.empty());
}

TEST_CASE("diff document: what is not a diff document is refused, naming the file and the member") {
    struct edit {
        std::string from;
        std::string to;
        std::string error;
    };
    const std::vector<edit> edits{
        {"\"step\": 12, ", "", "tensors[1] has no \"step\""},
        {"\"flat_index\": 5", "\"flat_index\": \"5\"",
         "first_divergence: \"flat_index\" is a JSON string, expected a whole number, 0 or more"},
        {"\"mode\": \"EVAL\"", "\"mode\": \"TEST\"",
         "tensors[1]: \"mode\" is 'TEST', expected TRAIN, EVAL, PREDICT or GLOBAL"},
        {"\"reduction\": \"abs_mean\"", "\"reduction\": \"median\"",
         "tensors[1]: \"reduction\" is 'median', not a reduction"},
        {"\"index\": [1, 2]", "\"index\": [1, -2]", "first_divergence: \"index[1]\" is -2, expected a whole number"},
        {"\"only_in_b\": [\"extra/b1\"", "\"only_in_b\": [7",
         "the document: \"only_in_b\"[0] is a JSON number, expected a tensor name"},
        {"\"compared\": {", "\"compared\": 7, \"counts\": {", "compared is a JSON number, expected an object"},
        {"\"agree\": false", "\"agree\": \"no\"", "the document: \"agree\" is a JSON string, expected true or false"},
        {"\"tdbg-diff/1\"", "\"smdebug-golden/1\"",
         "not tdbg diff --json output: \"format\" is \"smdebug-golden/1\", expected \"tdbg-diff/1\""},
    };
    for (const edit& e : edits) {
        INFO(e.from << " -> " << e.to);
        const std::string text = edited_document(e.from, e.to);
        CHECK_THROWS_AS(tdbg::read_diff_document(text, "runs/diff.json"), tdbg::format_error);
        CHECK_THROWS_WITH(tdbg::read_diff_document(text, "runs/diff.json"),
                          Catch::Contains("runs/diff.json: " + e.error));
    }
    CHECK_THROWS_WITH(tdbg::read_diff_document(R"({"format": "tdbg-diff/1", )", "runs/diff.json"),
                      Catch::Contains("runs/diff.json") && Catch::Contains("tdbg diff output is not valid JSON"));
}
