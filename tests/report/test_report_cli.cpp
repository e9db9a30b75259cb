// `tdbg report`: the page for a run written here with the hook — a section and
// plots per tensor, rule triggers on the step axis, names escaped, nothing
// fetched from the network — its options and errors, and the page as a real
// browser draws it (headless Chromium, screenshot decoded with Python's PIL).

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include "browser.hpp"
#include "report_html.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"

namespace {

namespace fs = std::filesystem;
using tdbg::test::read_file;
using tdbg::test::temp_dir;

using cli_result = tdbg::test::command_result;

cli_result tdbg_report(std::vector<std::string> args) {
    args.insert(args.begin(), "report");
    return tdbg::test::run_program(TDBG_CLI_PATH, args);
}

// The HTML of the section of tensor `name` (its name as escaped in the page).
std::string section_of(const std::string& html, const std::string& escaped_name) {
    const auto start = html.find("<section class=\"card tensor\" id=\"tensor-");
    for (auto at = start; at != std::string::npos;) {
        const auto end = html.find("</section>", at);
        const std::string section = html.substr(at, end - at);
        if (section.find("data-tensor=\"" + escaped_name + "\"") != std::string::npos) {
            return section;
        }
        at = html.find("<section class=\"card tensor\"", end);
    }
    FAIL("no section for tensor " << escaped_name);
    return {};
}

// The cards of a page, in order: the names of their tensors.
std::vector<std::string> card_order(const std::string& html) {
    std::vector<std::string> order;
    for (auto at = html.find("data-tensor=\""); at != std::string::npos; at = html.find("data-tensor=\"", at + 1)) {
        const auto begin = at + std::string("data-tensor=\"").size();
        order.push_back(html.substr(begin, html.find('"', begin) - begin));
    }
    return order;
}

const std::string hostile_name = "evil<script>alert(\"x\")</script>&'";
const std::string hostile_escaped = "evil&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;";

// 30 TRAIN steps then 6 EVAL steps, every one saved:
//   layer/weight   64 values whose spread grows with the step; NaN in two of them at steps 12 and 13
//   grad/weight    only its mean, std and l2 norm (a collection without the raw tensor)
//   loss           a scalar
//   hostile_name   a scalar whose name is HTML
void write_run(const fs::path& dir) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_regex = {"^layer/", "^loss$", "script"};
    tdbg::collection grads("grads");
    grads.include("^grad/");
    grads.set_reduction_config(tdbg::reduction_config::parse("mean,std,l2_norm"));
    o.collections.push_back(grads);
    tdbg::hook h(o);
    h.set_mode(tdbg::mode::train);
    for (int step = 0; step < 36; ++step) {
        if (step == 30) {
            h.set_mode(tdbg::mode::eval);
        }
        h.begin_step();
        const float spread = 0.2F + 0.03F * static_cast<float>(step);
        xt::xarray<float> w = (xt::arange<float>(64.0F) - 31.5F) / 32.0F * spread;
        if (step == 12 || step == 13) {
            w(5) = std::nanf("");
            w(40) = std::nanf("");
        }
        h.save_tensor("layer/weight", w);
        h.save_tensor("grad/weight", xt::xarray<float>(w * 0.01F + 0.001F * static_cast<float>(step)));
        h.save_tensor("loss", xt::xarray<float>(2.0F * std::exp(-0.1F * static_cast<float>(step)) + 0.1F));
        h.save_tensor(hostile_name, xt::xarray<float>(static_cast<float>(step % 7)));
    }
    h.close();
}

// Steps 0-19, every fifth saved: each of `weights` (4 values, i + step for the i-th) and its
// gradient (the same values, named gradient/<weight>; a NaN in that of `nan_weight` at step 10),
// and a loss, CrossEntropyLoss_output_0.
void write_weights_run(const fs::path& dir, const std::vector<std::string>& weights, const std::string& nan_weight) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{5, {}, 0, std::nullopt}); // steps 0, 5, 10, 15
    o.include_collections = {"weights", "gradients", "losses"};
    tdbg::hook h(o);
    h.set_mode(tdbg::mode::train);
    for (int step = 0; step < 20; ++step) {
        h.begin_step();
        for (std::size_t i = 0; i < weights.size(); ++i) {
            xt::xarray<float> w = xt::ones<float>({4}) * static_cast<float>(i + static_cast<std::size_t>(step));
            h.save_tensor(weights[i], w);
            if (weights[i] == nan_weight && step == 10) {
                w(1) = std::nanf("");
            }
            h.save_tensor("gradient/" + weights[i], w);
        }
        h.save_tensor("CrossEntropyLoss_output_0", xt::xarray<float>(1.0F / static_cast<float>(step + 1)));
    }
    h.close();
}

} // namespace

TEST_CASE("tdbg report draws each tensor's reductions and distribution, and where a rule triggered") {
    temp_dir dir("report_run");
    const fs::path run = dir.path() / "run";
    write_run(run);
    const fs::path page = dir.path() / "report.html";
    const auto r =
        tdbg_report({run.string(), "-o", page.string(), "--rule", "ExplodingTensor", "--param", "only_nan=True"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == "wrote " + page.string() + ": 4 of 4 tensors, 1 rule (1 found issues)\n");
    const std::string html = read_file(page);
    CHECK_FALSE(fs::exists(page.string() + ".partial"));

    // A section per tensor, in name order, each listed in the index.
    CHECK(tdbg::test::count_of(html, "<section class=\"card tensor\"") == 4);
    for (const std::string& name :
         {std::string("grad/weight"), std::string("layer/weight"), std::string("loss"), hostile_escaped}) {
        CHECK(tdbg::test::count_of(html, "data-tensor=\"" + name + "\"") == 1);
        CHECK(html.find(">" + name + "<") != std::string::npos);
    }
    // Values saved: mean, std and l2 computed, and the distribution over steps.
    const std::string weight = section_of(html, "layer/weight");
    CHECK(tdbg::test::count_of(weight, "class=\"plot line-plot\"") == 3);
    CHECK(tdbg::test::count_of(weight, "class=\"plot heatmap\"") == 1);
    for (const char* reduction : {"<b>mean</b>", "<b>std</b>", "<b>l2</b>", "<b>distribution of values</b>"}) {
        CHECK(weight.find(reduction) != std::string::npos);
    }
    CHECK(weight.find("float32 [64]") != std::string::npos);
    CHECK(weight.find("36 steps (TRAIN, EVAL)") != std::string::npos);
    CHECK(weight.find("<span class=\"flag\">NaN/inf</span>") != std::string::npos);
    // The steps 12 and 13 have a NaN: crosses on the top edge of mean, std and l2, a NaN/inf row on the heatmap.
    CHECK(tdbg::test::count_of(weight, "class=\"nonfinite\"") == 3 * 2);
    CHECK(weight.find("step 12 (TRAIN 12): 62 values") != std::string::npos);
    CHECK(weight.find("; 2 NaN/inf</title>") != std::string::npos);
    // The last EVAL step: 64 values spread by 0.2 + 0.03 * 35 = 1.25 over [-1.25 * 31.5/32, ...].
    CHECK(weight.find("step 35 (EVAL 5): 64 values, min -1.23, mean 0, max 1.23") != std::string::npos);

    // Reductions only: the stored ones are plotted, no distribution.
    const std::string grad = section_of(html, "grad/weight");
    CHECK(tdbg::test::count_of(grad, "class=\"plot line-plot\"") == 3);
    CHECK(tdbg::test::count_of(grad, "class=\"plot heatmap\"") == 0);
    CHECK(grad.find("saved: mean, std, l2_norm") != std::string::npos);
    CHECK(grad.find("only reductions were saved") != std::string::npos);

    // A scalar: its value, on a plot of twice the width.
    const std::string loss = section_of(html, "loss");
    CHECK(tdbg::test::count_of(loss, "class=\"plot line-plot\"") == 1);
    CHECK(loss.find("<b>value</b>") != std::string::npos);
    CHECK(loss.find("viewBox=\"0 0 720 200\"") != std::string::npos);
    CHECK(loss.find("step 0 (TRAIN 0): value = 2.1<") != std::string::npos);
    CHECK(loss.find("step 31 (EVAL 1): value = 0.1901<") != std::string::npos);

    // The rule: its status and triggered steps in the table, a band on each step axis.
    CHECK(html.find("<span class=\"badge bad\">IssuesFound</span>") != std::string::npos);
    // The first tensor found holding a NaN is grad/weight, saved as reductions only: its stored l2
    // norm is NaN, which only a NaN element makes (tdbg decides it; smdebug would skip it).
    CHECK(html.find("<td class=\"steps\">12, 13<div class=\"reason\">step 12: grad/weight (worker_0) holds a NaN "
                    "(its stored l2 is nan), saved as reductions only") != std::string::npos);
    // Why it fired, on the card of the tensor that did (named by the rule's reason), not on the others.
    CHECK(grad.find("<ul class=\"fired\"><li>ExplodingTensor at step 12: grad/weight (") != std::string::npos);
    CHECK(grad.find("<li>ExplodingTensor at step 13: grad/weight (") != std::string::npos);
    CHECK(weight.find("class=\"fired\"") == std::string::npos);
    CHECK(loss.find("class=\"fired\"") == std::string::npos);
    CHECK(html.find("only_nan=True") != std::string::npos);
    // Its band on the plots of the tensor it fired on: grad/weight's 3 line plots (band and strip
    // mark each), and the timeline's bar; a faint strip mark on the other tensors' 3 + 1 + 1 line
    // plots and 1 heatmap.
    CHECK(tdbg::test::count_of(html, "ExplodingTensor triggered at steps 12-13</title>") == 3 * 2 + 1);
    CHECK(tdbg::test::count_of(html, "ExplodingTensor triggered at steps 12-13 (on other tensors)</title>") ==
          3 + 1 + 1 + 1);
    CHECK(tdbg::test::count_of(grad, "class=\"rule-band\"") == 3);
    CHECK(tdbg::test::count_of(weight, "class=\"rule-band\"") == 0);

    // The hostile name is text, never markup; the page's only script is its own.
    CHECK(html.find("<script>alert") == std::string::npos);
    CHECK(tdbg::test::count_of(html, "<script") == 1);
    // Self-contained: no address to fetch anything from.
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
}

TEST_CASE("tdbg report's default page: what a rule flagged, then a section per collection, each capped") {
    temp_dir dir("report_sections");
    const fs::path run = dir.path() / "run";
    std::vector<std::string> weights;
    for (int i = 0; i < 8; ++i) {
        weights.push_back("layer" + std::to_string(i) + ".weight");
    }
    write_weights_run(run, weights, "layer6.weight");
    const auto r = tdbg_report({run.string(), "-o", "-", "--rule", "ExplodingTensor", "--no-distributions"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    // The order of the cards: the flagged gradient, the loss, 6 of the 7 other gradients, 6 of 8 weights.
    const std::vector<std::string> expected{
        "gradient/layer6.weight",     "CrossEntropyLoss_output_0", "gradient/layer0.weight", "gradient/layer1.weight",
        "gradient/layer2.weight",     "gradient/layer3.weight",    "gradient/layer4.weight", "gradient/layer5.weight",
        "layer0.weight", "layer1.weight", "layer2.weight", "layer3.weight", "layer4.weight", "layer5.weight"};
    CHECK(card_order(r.out) == expected);
    for (const char* heading : {"flagged by a rule", "losses", "gradients", "weights"}) {
        CHECK(r.out.find(std::string("<h2 class=\"group\">") + heading + "</h2>") != std::string::npos);
    }
    CHECK(r.out.find("gradients: 6 of 7 tensors shown (gradient/layer7.weight ... left out); --collection gradients "
                     "shows them all.") != std::string::npos);
    CHECK(r.out.find("weights: 6 of 8 tensors shown (layer6.weight ... left out); --collection weights shows them "
                     "all.") != std::string::npos);
    // The rules table counts skips as `tdbg rules` does: steps 1-4, 6-9, ... were never saved.
    CHECK(r.out.find("StepUnavailable</span>") == std::string::npos);
    CHECK(r.out.find("title=\"evaluated 4 of 4 steps\"") != std::string::npos);

    // --per-section 0 shows every tensor of each section.
    const auto all = tdbg_report({run.string(), "-o", "-", "--per-section", "0", "--max-tensors", "0", "--no-distributions"});
    REQUIRE(all.status == 0);
    CHECK(tdbg::test::count_of(all.out, "<section class=\"card tensor\"") == 17);
}

TEST_CASE("tdbg report's default page shows every model in each section, the caps shared among them") {
    // Two models named as torch_hook names them (<model>_<module path>.<parameter>, gradients
    // under gradient/): A with 12 weights, B with 3; B's second gradient holds a NaN at step 10.
    temp_dir dir("report_models");
    const fs::path run = dir.path() / "run";
    std::vector<std::string> weights;
    for (int i = 0; i < 12; ++i) {
        weights.push_back(fmt::format("A_layer{:02}.weight", i));
    }
    for (int i = 0; i < 3; ++i) {
        weights.push_back(fmt::format("B_fc{:02}.weight", i));
    }
    write_weights_run(run, weights, "B_fc01.weight");
    const auto r = tdbg_report({run.string(), "-o", "-", "--rule", "ExplodingTensor", "--no-distributions"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    // The flagged gradient, the loss; of the 14 other gradients, B's 2 and 4 of A's (B needs
    // less than half the 6, A gets the rest); of the 15 weights, 3 each.
    const std::vector<std::string> expected{
        "gradient/B_fc01.weight", "CrossEntropyLoss_output_0",
        "gradient/A_layer00.weight", "gradient/A_layer01.weight", "gradient/A_layer02.weight",
        "gradient/A_layer03.weight", "gradient/B_fc00.weight", "gradient/B_fc02.weight",
        "A_layer00.weight", "A_layer01.weight", "A_layer02.weight", "B_fc00.weight", "B_fc01.weight", "B_fc02.weight"};
    CHECK(card_order(r.out) == expected);
    CHECK(r.out.find("gradients: 6 of 14 tensors shown, the cap shared by model: A 4 of 12 "
                     "(gradient/A_layer04.weight ... left out), B all 2; --collection gradients shows them all.") !=
          std::string::npos);
    CHECK(r.out.find("weights: 6 of 15 tensors shown, the cap shared by model: A 3 of 12 (A_layer03.weight ... left "
                     "out), B all 3; --collection weights shows them all.") != std::string::npos);

    // The rule fired on B's gradient only: its band on that tensor's 3 plots (band and strip
    // each) and the timeline; every other plot shows a faint mark, which its legend explains.
    CHECK(r.out.find("<td class=\"steps\">10<div class=\"reason\">step 10: gradient/B_fc01.weight") !=
          std::string::npos);
    CHECK(tdbg::test::count_of(r.out, "ExplodingTensor triggered at step 10</title>") == 3 * 2 + 1);
    const std::string flagged = section_of(r.out, "gradient/B_fc01.weight");
    CHECK(tdbg::test::count_of(flagged, "class=\"rule-band\"") == 3);
    CHECK(flagged.find("ExplodingTensor triggered</span>") != std::string::npos);
    CHECK(flagged.find("rule-elsewhere") == std::string::npos);
    CHECK(flagged.find("on other tensors") == std::string::npos);
    const std::string weight = section_of(r.out, "B_fc01.weight");
    CHECK(weight.find("class=\"rule-band\"") == std::string::npos);
    CHECK(tdbg::test::count_of(weight, "ExplodingTensor triggered at step 10 (on other tensors)</title>") == 3);
    CHECK(weight.find("ExplodingTensor triggered on other tensors</span>") != std::string::npos);
    CHECK(weight.find("ExplodingTensor triggered</span>") == std::string::npos);
    // 13 cards without the rule's band: the loss's one plot, 12 tensors' 3.
    CHECK(tdbg::test::count_of(r.out, "(on other tensors)</title>") == 1 + 12 * 3);

    // The page's cap is shared too: with room for 10 tensors, the weights' last 2 places go one to each model.
    const auto capped = tdbg_report({run.string(), "-o", "-", "--rule", "ExplodingTensor", "--no-distributions",
                                     "--max-tensors", "10"});
    REQUIRE(capped.status == 0);
    const std::vector<std::string> first_ten(expected.begin(), expected.begin() + 8);
    std::vector<std::string> order = card_order(capped.out);
    REQUIRE(order.size() == 10);
    CHECK(std::vector<std::string>(order.begin(), order.begin() + 8) == first_ten);
    CHECK(order[8] == "A_layer00.weight");
    CHECK(order[9] == "B_fc00.weight");
    CHECK(capped.out.find("weights: 2 of 15 tensors shown, the cap shared by model: A 1 of 12 (A_layer01.weight ... "
                          "left out), B 1 of 3 (B_fc01.weight ... left out); --collection weights shows them all.") !=
          std::string::npos);
    CHECK(capped.out.find("Showing the first 10 of 14 tensors") != std::string::npos);

    // A page of chosen tensors shares --max-tensors among the models too: A's 24 tensors and
    // B's 6 match, 2 of each shown.
    const auto chosen =
        tdbg_report({run.string(), "-o", "-", "--tensors", "weight", "--max-tensors", "4", "--no-distributions"});
    REQUIRE(chosen.status == 0);
    CHECK(card_order(chosen.out) ==
          std::vector<std::string>{"A_layer00.weight", "A_layer01.weight", "B_fc00.weight", "B_fc01.weight"});
    CHECK(chosen.out.find("Showing 4 of 30 tensors, the cap shared by model: A 2 of 24 (A_layer02.weight ... left "
                          "out), B 2 of 6 (B_fc02.weight ... left out); choose with --tensors REGEX") !=
          std::string::npos);
}

TEST_CASE("tdbg report chooses tensors and reductions as asked") {
    temp_dir dir("report_options");
    const fs::path run = dir.path() / "run";
    write_run(run);

    auto r =
        tdbg_report({run.string(), "-o", "-", "--tensors", "^layer/", "--reductions", "max,abs_mean", "--bins", "8"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(tdbg::test::count_of(r.out, "<section class=\"card tensor\"") == 1);
    CHECK(r.out.find("<b>max</b>") != std::string::npos);
    CHECK(r.out.find("<b>abs_mean</b>") != std::string::npos);
    CHECK(r.out.find("<b>mean</b>") == std::string::npos);
    CHECK(r.out.find("8 bins over [") != std::string::npos);
    CHECK(r.out.find("1 shown of 4") != std::string::npos);

    r = tdbg_report({run.string(), "-o", "-", "--max-tensors", "2", "--no-distributions"});
    REQUIRE(r.status == 0);
    CHECK(tdbg::test::count_of(r.out, "<section class=\"card tensor\"") == 2);
    CHECK(tdbg::test::count_of(r.out, "class=\"plot heatmap\"") == 0);
    CHECK(r.out.find("Showing the first 2 of 4 tensors") != std::string::npos);

    // Rules from a SageMaker configuration file, under their configuration name.
    const fs::path config = dir.path() / "rules.json";
    tdbg::test::write_file(config, R"([{"RuleConfigurationName": "NoNaN",
        "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "only_nan": "True"}}])");
    r = tdbg_report({run.string(), "-o", "-", "--config", config.string(), "--tensors", "loss"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("NoNaN <span class=\"hint\">(ExplodingTensor)</span>") != std::string::npos);
    CHECK(r.out.find("NoNaN triggered at steps 12-13") != std::string::npos);
}

TEST_CASE("tdbg report writes a page for a run without steps, and fails clearly on what is not a run") {
    temp_dir dir("report_errors");
    {
        tdbg::hook_options o;
        o.out_dir = (dir.path() / "empty").string();
        tdbg::hook h(o);
        h.close(); // the collections and the end marker, no step
    }
    auto r = tdbg_report({(dir.path() / "empty").string(), "-o", "-"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("The run has no steps yet") != std::string::npos);
    CHECK(tdbg::test::count_of(r.out, "<section class=\"card tensor\"") == 0);

    r = tdbg_report({(dir.path() / "missing").string(), "-o", (dir.path() / "x.html").string()});
    CHECK(r.status == 2);
    CHECK(r.err.find("no such directory") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path() / "x.html"));

    fs::create_directories(dir.path() / "not_a_run");
    r = tdbg_report({(dir.path() / "not_a_run").string()});
    CHECK(r.status == 2);
    CHECK(r.err.find("not a run directory") != std::string::npos);

    r = tdbg_report({(dir.path() / "empty").string(), "-o", "-", "--rule", "NoSuchRule"});
    CHECK(r.status == 2);
    CHECK(r.err.find("unknown rule 'NoSuchRule'") != std::string::npos);
    CHECK(r.out.empty());

    r = tdbg_report({(dir.path() / "empty").string(), "--bins", "1"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--bins expects a whole number from 2 to 400") != std::string::npos);

    r = tdbg_report({(dir.path() / "empty").string(), "--colour", "red"});
    CHECK(r.status == 2);
    CHECK(r.err.find("unknown option '--colour'") != std::string::npos);

    r = tdbg_report({"--help"});
    CHECK(r.status == 0);
    CHECK(r.out.rfind("usage: tdbg report DIR", 0) == 0);
}


TEST_CASE("tdbg report's page draws its plots in a real browser") {
    const auto chromium = tdbg::test::find_chromium();
    if (!chromium) {
        if (tdbg::test::chromium_required()) {
            FAIL("chromium not found on PATH (Debian package chromium) and TDBG_REQUIRE_CHROMIUM=1");
        }
        TDBG_SKIP("chromium not found on PATH (Debian package chromium; or set TDBG_CHROMIUM)");
    }
    temp_dir dir("report_browser");
    const fs::path run = dir.path() / "run";
    write_run(run);
    const fs::path page = dir.path() / "report.html";
    // Only the weights and the loss: the shot then holds the top of the page, both plot kinds and the rule.
    const auto r =
        tdbg_report({run.string(), "-o", page.string(), "--tensors", "^(layer/|loss)", "--rule", "ExplodingTensor"});
    INFO(r.err);
    REQUIRE(r.status == 0);

    // A fresh profile each time, nothing fetched; it runs as root in CI, hence --no-sandbox.
    const fs::path profile = dir.path() / "profile";
    fs::create_directories(profile);
    const fs::path png = dir.path() / "report.png";
    const std::string command =
        "timeout 60 " + tdbg::test::shell_quote(chromium->string()) +
        " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
        " --disable-component-update --disable-sync --user-data-dir=" +
        tdbg::test::shell_quote(profile.string()) + " --window-size=1200,3000 --screenshot=" + tdbg::test::shell_quote(png.string()) + " " +
        tdbg::test::shell_quote("file://" + fs::absolute(page).string());
    const auto shot = tdbg::test::run_shell(command);
    INFO("chromium: " << shot.err);
    REQUIRE(shot.status == 0);
    REQUIRE(fs::exists(png));
    // Kept beside the test's scratch directories for a person to look at.
    fs::copy_file(png, fs::path(TDBG_TEST_TMP) / "report_browser.png", fs::copy_options::overwrite_existing);

    namespace report = tdbg::cli::report;
    const auto counts = tdbg::test::count_colours(png, {report::series_palette[0],
                                            report::series_palette[1],
                                            report::rule_palette[0],
                                            report::heat_color(report::heat_levels / 2),
                                            report::heat_color(report::heat_levels),
                                            {255, 255, 255}});
    INFO("TRAIN line, EVAL line, rule, mid shade, top shade, white: " << counts[0] << " " << counts[1] << " "
                                                                      << counts[2] << " " << counts[3] << " "
                                                                      << counts[4] << " " << counts[5]);
    // Lines: the TRAIN line crosses 3 plots and the loss plot, the dashed EVAL line is short (6 of 36 steps).
    CHECK(counts[0] > 2000);
    CHECK(counts[1] > 150);
    // The rule's marks: its bar on the timeline, its swatch (it fired on grad/weight, not shown:
    // these plots show it faintly).
    CHECK(counts[2] > 300);
    // The heatmap: values spread evenly over a widening range, so middle shades fill much of it.
    CHECK(counts[3] + counts[4] > 1000);
    // The page itself: white cards.
    CHECK(counts[5] > 500000);

    // The hover read-out: a copy of the page that moves the mouse over step 20 of
    // the first plot (by the plot's own geometry), then the DOM as the browser left it.
    std::string probe = read_file(page);
    const auto body_end = probe.rfind("</body>");
    REQUIRE(body_end != std::string::npos);
    probe.insert(body_end, "<script>var fig = document.querySelector('figure.chart[data-hover]'), g = fig.dataset;"
                           "var svg = fig.querySelector('svg'), box = svg.getBoundingClientRect();"
                           "var x = +g.x0 + (20 - g.lo) / (g.hi - g.lo) * (g.x1 - g.x0);"
                           "svg.dispatchEvent(new MouseEvent('mousemove', {clientX: box.left + x * box.width / g.w,"
                           " clientY: box.top + box.height / 2, bubbles: true}));</script>");
    const fs::path probe_page = dir.path() / "probe.html";
    tdbg::test::write_file(probe_page, probe);
    fs::remove_all(profile);
    fs::create_directories(profile);
    const auto dom =
        tdbg::test::run_shell("timeout 60 " + tdbg::test::shell_quote(chromium->string()) +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                    " --disable-background-networking --disable-component-update --disable-sync --user-data-dir=" +
                    tdbg::test::shell_quote(profile.string()) + " --dump-dom " + tdbg::test::shell_quote("file://" + fs::absolute(probe_page).string()));
    REQUIRE(dom.status == 0);
    // layer/weight's mean there: 0, the values being symmetric around it.
    const auto readout = dom.out.find("<div class=\"readout\" style=\"display: block;");
    REQUIRE(readout != std::string::npos);
    const std::string shown = dom.out.substr(readout, dom.out.find("</figure>", readout) - readout);
    INFO(shown);
    CHECK(shown.find(">step 20</div>") != std::string::npos);
    CHECK(shown.find("TRAIN: 0</div>") != std::string::npos);
}
