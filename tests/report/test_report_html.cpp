// The page of `tdbg report` from made-up numbers: escaping, axis ticks and
// labels, rule bands, and what each kind of tensor section holds.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "report/models.hpp"
#include "report_html.hpp"
#include "support.hpp"

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

TEST_CASE("a rule's bands on a tensor's charts are the steps whose reasons name that tensor") {
    tdbg::rules::evaluation_result r;
    r.rule = "ExplodingTensor";
    r.triggered_steps = {10, 20, 30};
    r.not_triggered_steps = {0, 40};
    r.trigger_reasons = {{10, "w (worker_0) holds a NaN"}, {20, "loss (worker_0) holds a NaN"}}; // none at 30
    const std::vector<std::int64_t> steps{0, 10, 20, 30, 40};
    // w: step 10, and step 30 that gave no reason (it may concern any tensor); step 20 splits them.
    const auto w = report::detail::bands_of(r, steps, 5, "w");
    REQUIRE(w.size() == 2);
    CHECK(w[0].first == 10);
    CHECK(w[0].last == 10);
    CHECK(w[1].first == 30);
    const auto loss = report::detail::bands_of(r, steps, 5, "loss");
    REQUIRE(loss.size() == 1);
    CHECK(loss[0].first == 20);
    CHECK(loss[0].last == 30);
    // "w" is not named by a reason that names "w_grad" or "gradient/w".
    CHECK_FALSE(report::detail::concerns(r, 10, "gradient/w"));
    r.trigger_reasons[10] = "gradient/w (worker_0) holds a NaN";
    CHECK_FALSE(report::detail::concerns(r, 10, "w"));
    const auto all = report::detail::bands_of(r, steps, 5);
    REQUIRE(all.size() == 1);
    CHECK(all[0].first == 10);
    CHECK(all[0].last == 30);
}

TEST_CASE("a run's models are the prefixes of its parameters' names") {
    CHECK(report::declared_model("Generator_conv1.weight") == "Generator");
    CHECK(report::declared_model("gradient/Discriminator_main.0.weight") == "Discriminator");
    CHECK(report::declared_model("Net_output_0").empty()); // not a parameter: no module path
    CHECK(report::declared_model("layers.0.conv_output_0").empty());
    CHECK(report::declared_model("fc1.weight").empty());
    CHECK(report::declared_model("dense_1/kernel:0").empty());
    CHECK(report::declared_model("_x.weight").empty());
    const std::vector<std::string> names{"BCELoss_output_0",      "Discriminator_conv1.weight",
                                         "Generator_conv1.weight", "Generator_output_0",
                                         "gradient/Generator_conv1.weight"};
    const auto models = report::models_of(names);
    CHECK(models == std::vector<std::string>{"Discriminator", "Generator"});
    CHECK(report::model_of("Generator_output_0", models) == "Generator");
    CHECK(report::model_of("gradient/Discriminator_conv1.weight", models) == "Discriminator");
    CHECK(report::model_of("BCELoss_output_0", models).empty());
    CHECK(report::models_of({"fc1.weight", "gradient/fc1.weight", "loss"}).empty()); // no prefix: one model
}

TEST_CASE("a section's cap is shared among its models, what a small one leaves going to the others") {
    const std::vector<std::string> models{"A", "B"};
    auto section = [](int a, int b) {
        std::vector<std::string> names;
        for (int i = 0; i < a; ++i) {
            names.push_back("A_l" + std::to_string(10 + i) + ".w");
        }
        for (int i = 0; i < b; ++i) {
            names.push_back("B_l" + std::to_string(10 + i) + ".w");
        }
        names.emplace_back("loss");
        return names;
    };
    // A 12, B 3 and a tensor of no model, a cap of 6: the loss takes 1 of its 2, B all 3 of its
    // 2.5, A what is left; each keeps its first tensors.
    auto names = section(12, 3);
    auto shares = report::share_cap(names, models, 6);
    CHECK(names == std::vector<std::string>{"A_l10.w", "A_l11.w", "B_l10.w", "B_l11.w", "B_l12.w", "loss"});
    REQUIRE(shares.size() == 3);
    CHECK(shares[0].model == "A");
    CHECK(shares[0].shown == 2);
    CHECK(shares[0].total == 12);
    CHECK(shares[0].first_left_out == "A_l12.w");
    CHECK(shares[1].model == "B");
    CHECK(shares[1].shown == 3);
    CHECK(shares[1].first_left_out.empty());
    CHECK(shares[2].model.empty());
    CHECK(shares[2].shown == 1);
    CHECK(shares[2].first_left_out.empty());
    // B needs 1 of its 3: A gets the other 5.
    names = section(12, 1);
    shares = report::share_cap(names, models, 7);
    CHECK(shares[0].shown == 5);
    CHECK(shares[1].shown == 1);
    CHECK(names.size() == 7);
    // Equal models: the first in name order gets the odd place.
    names = section(10, 10);
    names.pop_back();
    shares = report::share_cap(names, models, 5);
    REQUIRE(shares.size() == 2);
    CHECK(shares[0].shown == 3);
    CHECK(shares[1].shown == 2);
    // A cap that holds everything keeps everything.
    names = section(2, 2);
    shares = report::share_cap(names, models, 10);
    CHECK(names.size() == 5);
    CHECK(shares[0].first_left_out.empty());
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
