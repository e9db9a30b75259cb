// The page of `tdbg report` from made-up numbers: escaping, axis ticks and
// labels, rule bands, and what each kind of tensor section holds.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "support.hpp"
#include "report_html.hpp"

namespace report = tdbg::cli::report;

namespace {

report::document two_mode_run() {
    report::document doc;
    doc.title = "t";
    doc.run_name = "run";
    doc.workers = {"worker_0"};
    doc.modes = {{"TRAIN", {0, 10, 20, 30, 40}}, {"EVAL", {42, 44, 46}}};
    return doc;
}

} // namespace

TEST_CASE("escape makes tensor names safe in HTML text and attributes") {
    CHECK(report::escape("<script>alert('x' & \"y\")</script>") ==
          "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
    CHECK(report::escape("gradient/MLP_fc1.weight") == "gradient/MLP_fc1.weight");
    CHECK(report::escape(std::string("a\x01"
                                     "b",
                                     3)) == "a&#xFFFD;b"); // not allowed in XML
    CHECK(report::escape("caf\xC3\xA9") == "caf\xC3\xA9"); // UTF-8 passes through
}

TEST_CASE("tick labels show the digits that tell ticks apart") {
    CHECK(report::format_tick(0.25, 0.05) == "0.25");
    CHECK(report::format_tick(0.3, 0.05) == "0.30");
    CHECK(report::format_tick(40, 10) == "40");
    CHECK(report::format_tick(-0.0635, 0.0005) == "-0.0635");
    CHECK(report::format_tick(2e6, 5e5) == "2.0e6");
    CHECK(report::format_tick(-2.3785e-2, 5e-6) == "-2.3785e-2");
    CHECK(report::format_tick(1e-12, 0.1) == "0");
    CHECK(report::format_value(std::nan("")) == "NaN");
    CHECK(report::format_value(-INFINITY) == "-inf");
    CHECK(report::format_value(1.5e-5) == "1.5e-5");
    CHECK(report::format_value(0.123456) == "0.1235");
}

TEST_CASE("ticks are round numbers covering the range") {
    const auto t = report::nice_ticks(0.0, 48.0, 5, true);
    CHECK(t.step == 10);
    CHECK(t.at == std::vector<double>{0, 10, 20, 30, 40});
    const auto small = report::nice_ticks(0.0, 3.0, 10, true);
    CHECK(small.step == 1); // steps are whole numbers
    const auto [y, labels] = report::value_axis(0.031, 0.049, false, 200, 10);
    CHECK(y.d0 == Approx(0.03));
    CHECK(y.d1 == Approx(0.05));
    REQUIRE(labels.size() == 5);
    CHECK(labels.front().second == "0.030");
    CHECK(labels.back().second == "0.050");
    CHECK(y(0.03) == Approx(200));
    CHECK(y(0.05) == Approx(10));
    // Wide positive ranges get a log scale labelled by decades.
    const auto [ly, decades] = report::value_axis(2e-7, 3.0, true, 200, 10);
    CHECK(ly.d0 == -7);
    CHECK(ly.d1 == 1);
    CHECK(ly(1.0) == Approx(200 - 7.0 / 8.0 * 190));
    CHECK(decades.front().second == "1e-7");
    // Rounding noise around a constant is not blown up into a trend.
    const auto [flat, flat_labels] = report::value_axis(-0.0237850, -0.02378501, false, 200, 10);
    CHECK(flat.d1 - flat.d0 >= 0.0237 * 1e-3);
    CHECK(flat_labels.size() <= 8);
}

TEST_CASE("steps are described briefly") {
    CHECK(report::describe_steps({0, 5, 10, 15}) == "0-15 every 5 (4 steps)");
    CHECK(report::describe_steps({3}) == "step 3");
    CHECK(report::describe_steps({0, 1, 2, 7}) == "0-2, 7 (4 steps)");
    CHECK(report::describe_steps({}) == "none");
}

TEST_CASE("a rule's triggered steps become bands split by steps where it was not met") {
    tdbg::rules::evaluation_result r;
    r.rule = "LossNotDecreasing";
    r.triggered_steps = {42, 46};
    r.not_triggered_steps = {40, 44};
    r.skipped_steps["StepUnavailable"] = {41, 43, 45};
    const auto split = report::detail::bands_of(r, {40, 42, 44, 46}, 2.5);
    REQUIRE(split.size() == 2);
    CHECK(split[0].first == 42);
    CHECK(split[0].last == 42);
    CHECK(split[0].lo == Approx(41.2)); // 0.8 of the way to halfway: neighbouring bands do not touch
    CHECK(split[0].hi == Approx(42.8));
    CHECK(split[1].hi == Approx(48)); // the last step reaches half a usual gap, times 0.8

    r.triggered_steps = {10, 20, 30};
    r.not_triggered_steps = {0};
    r.skipped_steps["StepUnavailable"] = {11, 12, 25}; // steps never saved do not split a band
    const auto merged = report::detail::bands_of(r, {0, 10, 20, 30}, 5);
    REQUIRE(merged.size() == 1);
    CHECK(merged[0].first == 10);
    CHECK(merged[0].last == 30);
}

TEST_CASE("the rules table counts skips as tdbg rules does: steps the run never saved are not skipped") {
    report::document doc = two_mode_run();
    tdbg::rules::evaluation_result r;
    r.rule = "ExplodingTensor";
    r.not_triggered_steps = {0, 10};
    r.unsaved_steps = tdbg::rules::step_set(std::vector<std::int64_t>{1, 2, 3, 4, 5});
    r.skipped_steps["StepUnavailable"] = tdbg::rules::step_set(std::vector<std::int64_t>{1, 2, 3, 4, 5});
    r.skipped_steps["TensorUnavailableForStep"] = tdbg::rules::step_set(std::vector<std::int64_t>{20});
    doc.rules.push_back(r);
    const std::string html = report::render_html(doc);
    CHECK(tdbg::rules::describe_coverage(r) == "evaluated 2 of 3 steps; 1 skipped: 1 TensorUnavailableForStep");
    CHECK(html.find("1 <span class=\"hint\">TensorUnavailableForStep</span>") != std::string::npos);
    CHECK(html.find("StepUnavailable</span>") == std::string::npos);
}

TEST_CASE("the page has a section per tensor with its plots, and rule marks on every step axis") {
    report::document doc = two_mode_run();
    report::tensor_section w;
    w.name = "w<1>";
    for (const char* r : {"mean", "std"}) {
        report::reduction_plot p;
        p.reduction = r;
        p.lines.push_back({"TRAIN", "worker_0", {{0, 0, 1.0}, {10, 1, 2.0}, {20, 2, std::nan("")}, {30, 3, 3.0}}, ""});
        p.lines.push_back({"EVAL", "worker_0", {{42, 0, 1.5}, {44, 1, 1.6}}, ""});
        w.plots.push_back(p);
    }
    report::distribution d;
    d.worker = "worker_0";
    d.low = -1;
    d.high = 1;
    d.bins = 4;
    d.columns.push_back({0, "TRAIN", 0, {1, 2, 3, 0}, 6, 0, -1, 0.5, 0.0});
    d.columns.push_back({10, "TRAIN", 1, {0, 0, 0, 0}, 0, 6, 0, 0, 0.0});
    d.steps_with_values = 2;
    w.distributions.push_back(d);
    w.has_non_finite = true;
    doc.tensors.push_back(w);
    report::tensor_section loss;
    loss.name = "loss";
    loss.plots.push_back({"value", {{"TRAIN", "worker_0", {{0, 0, 2.0}, {10, 1, 1.0}}, ""}}});
    doc.tensors.push_back(loss);
    tdbg::rules::evaluation_result r;
    r.rule = "ExplodingTensor";
    r.triggered_steps = {20};
    r.not_triggered_steps = {0, 10, 30};
    doc.rules.push_back(r);

    const std::string html = report::render_html(doc);
    CHECK(tdbg::test::count_of(html, "<section class=\"card tensor\"") == 2);
    CHECK(tdbg::test::count_of(html, "class=\"plot line-plot\"") == 3);
    CHECK(tdbg::test::count_of(html, "class=\"plot heatmap\"") == 1);
    CHECK(tdbg::test::count_of(html, "class=\"plot timeline\"") == 1);
    CHECK(html.find("data-tensor=\"w&lt;1&gt;\"") != std::string::npos);
    CHECK(html.find("w<1>") == std::string::npos);
    // The band over step 20, on the three line plots (strip and shading), the heatmap's strip and the timeline.
    CHECK(tdbg::test::count_of(html, "ExplodingTensor triggered at step 20<") == 3 * 2 + 1 + 1);
    // The NaN at step 20 is a cross on each of w's plots, and the heatmap has a NaN/inf row.
    CHECK(tdbg::test::count_of(html, "class=\"nonfinite\"") == 2);
    CHECK(html.find(">NaN/inf</text>") != std::string::npos);
    // TRAIN is the first colour, EVAL the second and dashed: on w's two plots and in its legend.
    CHECK(tdbg::test::count_of(html, "stroke=\"" + report::series_palette[0].hex() + "\"") ==
          3 + 2 + 2); // lines, NaN crosses, legends
    CHECK(tdbg::test::count_of(html, "stroke=\"" + report::series_palette[1].hex() + "\" stroke-dasharray=\"6 3\"") == 2 + 1);
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
}

TEST_CASE("a run without steps gets a page that says so") {
    report::document doc;
    doc.title = "t";
    doc.run_name = "empty";
    doc.notes.emplace_back("The run has no steps yet: nothing to plot.");
    const std::string html = report::render_html(doc);
    CHECK(html.find("The run has no steps yet") != std::string::npos);
    CHECK(html.find("<svg") == std::string::npos);
    CHECK(html.find("</html>") != std::string::npos);
}
