// `tdbg report RUN_A RUN_B`: one page comparing runs, as the seeds' notebook
// compares a badly initialised run with a well initialised one — a line per run
// on every plot, the runs' distributions side by side, rule results per run —
// and, with `tdbg diff --json` output, where the runs first diverge.

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include <nlohmann/json.hpp>

#include "browser.hpp"
#include "report_html.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"

namespace {

namespace fs = std::filesystem;
using tdbg::test::count_of;
using tdbg::test::read_file;
using tdbg::test::temp_dir;

const std::string dot = "\xC2\xB7"; // the separator of legend labels

tdbg::test::command_result report_of(std::vector<std::string> args) {
    args.insert(args.begin(), "report");
    return tdbg::test::run_program(TDBG_CLI_PATH, args);
}

// The HTML of the section of tensor `name`.
std::string tensor_html(const std::string& html, const std::string& name) {
    const auto at = html.find("data-tensor=\"" + name + "\"");
    REQUIRE(at != std::string::npos);
    return html.substr(at, html.find("</section>", at) - at);
}

// 20 TRAIN steps then 4 EVAL steps, every one saved:
//   layer1/weight  64 values, spread init * (1 + 0.05 step) evenly around 0 (so mean 0,
//                  l2 4.6182 * spread); with nan_at, a NaN in it at that step
//   loss           a scalar
//   only/bias      8 values, when `extra` (a tensor only this run has)
void write_init_run(const fs::path& dir, float init, std::optional<int> nan_at, bool extra) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_regex = {"^layer1/", "^loss$", "^only/"};
    tdbg::hook h(o);
    h.set_mode(tdbg::mode::train);
    for (int step = 0; step < 24; ++step) {
        if (step == 20) {
            h.set_mode(tdbg::mode::eval);
        }
        h.begin_step();
        const float spread = init * (1.0F + 0.05F * static_cast<float>(step));
        xt::xarray<float> w = (xt::arange<float>(64.0F) - 31.5F) / 32.0F * spread;
        if (nan_at && step == *nan_at) {
            w(3) = std::nanf("");
        }
        h.save_tensor("layer1/weight", w);
        h.save_tensor("loss", xt::xarray<float>(init * std::exp(-0.1F * static_cast<float>(step)) + 0.1F));
        if (extra) {
            h.save_tensor("only/bias", xt::xarray<float>(xt::arange<float>(8.0F) * 0.1F));
        }
    }
    h.close();
}

// `tdbg diff --json` output, written by hand: layer1/weight differs first, at step 10; loss from step 12.
const char* const diff_json = R"({"format": "tdbg-diff/1", "run_a": "bad/run", "run_b": "good/run",
  "agree": false, "rtol": 1e-05, "atol": 1e-08,
  "first_divergence": {"tensor": "layer1/weight", "tensor_b": "layer1/weight", "step": 10, "mode": "TRAIN",
    "mode_step": 10, "worker": "worker_0", "max_abs_diff": 2.8, "max_rel_diff": 19.0, "index": [0],
    "reason": "values differ beyond tolerance"},
  "tensors": [
    {"tensor": "layer1/weight", "tensor_b": "layer1/weight", "step": 10, "mode": "TRAIN", "mode_step": 10,
     "max_abs_diff": 2.8, "max_rel_diff": 19.0},
    {"tensor": "loss", "tensor_b": "loss", "step": 12, "mode": "TRAIN", "mode_step": 12,
     "max_abs_diff": 0.5, "max_rel_diff": 1.2}],
  "only_in_a": ["only/bias"], "only_in_b": [], "compared": {"tensors": 2, "steps": 24}})";

struct two_runs {
    temp_dir dir{"report_compare"};
    fs::path bad = dir.path() / "bad" / "run";
    fs::path good = dir.path() / "good" / "run";
    fs::path diff = dir.path() / "diff.json";
    two_runs() {
        write_init_run(bad, 2.0F, 15, true);
        write_init_run(good, 0.1F, std::nullopt, false);
        tdbg::test::write_file(diff, diff_json);
    }
};

} // namespace

TEST_CASE("tdbg report of two runs draws a line per run, their distributions side by side, rules per run") {
    const two_runs runs;
    const fs::path page = runs.dir.path() / "report.html";
    const auto r = report_of({runs.bad.string(), runs.good.string(), "-o", page.string(), "--rule",
                                "ExplodingTensor", "--param", "only_nan=True"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == "wrote " + page.string() + ": 3 of 3 tensors, 2 rules (1 found issues)\n");
    const std::string html = read_file(page);

    // Both directories are called "run": each is named with its parent's name too.
    CHECK(html.find("<title>tdbg report: bad/run vs good/run</title>") != std::string::npos);
    for (const auto& [name, dir] : {std::pair{"bad/run", runs.bad}, std::pair{"good/run", runs.good}}) {
        CHECK(html.find(std::string("<b>") + name + "</b></td><td class=\"path\">" +
                        tdbg::cli::report::escape(dir.string())) != std::string::npos);
    }

    // layer1/weight: mean, std, l2 with a line per run and mode, in the run's colour (dashed for EVAL).
    const std::string weight = tensor_html(html, "layer1/weight");
    CHECK(count_of(weight, "class=\"plot line-plot\"") == 3);
    const std::string bad_colour = tdbg::cli::report::series_palette[0].hex();
    const std::string good_colour = tdbg::cli::report::series_palette[1].hex();
    CHECK(count_of(weight, "stroke=\"" + bad_colour + "\"><title>bad/run " + dot + " TRAIN</title></path>") == 3);
    CHECK(count_of(weight, "stroke=\"" + good_colour + "\"><title>good/run " + dot + " TRAIN</title></path>") == 3);
    CHECK(count_of(weight, "stroke=\"" + bad_colour + "\" stroke-dasharray=\"6 3\"><title>bad/run " + dot +
                               " EVAL</title></path>") == 3);
    CHECK(count_of(weight, "stroke=\"" + good_colour + "\" stroke-dasharray=\"6 3\"><title>good/run " + dot +
                               " EVAL</title></path>") == 3);
    // The values: l2 = 4.6182 * init * (1 + 0.05 step); at step 10, 13.85 for init 2 and 0.6927 for init 0.1.
    CHECK(weight.find("bad/run " + dot + " TRAIN, step 10 (TRAIN 10): l2 = 13.85</title>") != std::string::npos);
    CHECK(weight.find("good/run " + dot + " TRAIN, step 10 (TRAIN 10): l2 = 0.6927</title>") != std::string::npos);
    CHECK(weight.find("good/run " + dot + " EVAL, step 23 (EVAL 3): mean = 0</title>") != std::string::npos);
    // The legend names the runs, each run's modes in its colour.
    for (const std::string& key : {"bad/run " + dot + " TRAIN", "bad/run " + dot + " EVAL",
                                   "good/run " + dot + " TRAIN", "good/run " + dot + " EVAL"}) {
        CHECK(count_of(weight, "</svg>" + key + "</span>") == 1);
    }
    CHECK(weight.find("</svg>bad/run " + dot + " TRAIN</span>") < weight.find("</svg>bad/run " + dot + " EVAL</span>"));
    CHECK(weight.find("</svg>bad/run " + dot + " EVAL</span>") < weight.find("</svg>good/run " + dot + " TRAIN</span>"));
    // The summary says what each run saved; the NaN of the bad run is flagged.
    CHECK(weight.find("bad/run: float32 [64] " + dot + " 24 steps (TRAIN, EVAL)") != std::string::npos);
    CHECK(weight.find("\ngood/run: float32 [64]") != std::string::npos);
    CHECK(weight.find("<span class=\"flag\">NaN/inf</span>") != std::string::npos);
    // The distributions side by side, one per run, with the runs' own value ranges.
    CHECK(weight.find("<div class=\"grid runs\">") != std::string::npos);
    CHECK(count_of(weight, "class=\"plot heatmap\"") == 2);
    CHECK(weight.find("<b>distribution of values</b> " + dot + " <b class=\"run-name\">bad/run</b>") !=
          std::string::npos);
    CHECK(weight.find("<b>distribution of values</b> " + dot + " <b class=\"run-name\">good/run</b>") !=
          std::string::npos);
    CHECK(weight.find("step 23 (EVAL 3): 64 values, min -4.233, mean 0, max 4.233") != std::string::npos);
    CHECK(weight.find("step 23 (EVAL 3): 64 values, min -0.2116, mean 0, max 0.2116") != std::string::npos);

    // A tensor of one run only: its lines, and a note for the other run.
    const std::string only = tensor_html(html, "only/bias");
    CHECK(count_of(only, "<title>bad/run " + dot + " TRAIN</title></path>") == 3);
    CHECK(count_of(only, "good/run " + dot) == 0);
    CHECK(only.find("<li>not in run good/run</li>") != std::string::npos);

    // The loss: one wide plot, both runs' values.
    const std::string loss = tensor_html(html, "loss");
    CHECK(loss.find("bad/run " + dot + " TRAIN, step 0 (TRAIN 0): value = 2.1<") != std::string::npos);
    CHECK(loss.find("good/run " + dot + " TRAIN, step 0 (TRAIN 0): value = 0.2<") != std::string::npos);

    // The rule over each run: the bad run's NaN at step 15 found, the good run clean.
    CHECK(html.find("<th>run</th><th>rule</th>") != std::string::npos);
    CHECK(html.find("<td class=\"run-name\">bad/run</td><td>ExplodingTensor</td><td><span class=\"badge "
                    "bad\">IssuesFound</span></td><td class=\"steps\">15<div class=\"reason\">step 15: ") != std::string::npos);
    CHECK(html.find("<td class=\"run-name\">good/run</td><td>ExplodingTensor</td><td><span class=\"badge "
                    "good\">NoIssuesFound</span></td><td class=\"steps\">&ndash;</td>") != std::string::npos);
    // Its triggers marked under the run's name on the plots of the tensor it fired on, layer1/weight
    // (3 line plots, bands and strips, and both runs' heatmaps), and the timeline; faintly on the
    // others' (the loss's line plot, only/bias's 3 and its heatmap).
    CHECK(html.find("<div class=\"reason\">step 15: layer1/weight (worker_0) holds a NaN") != std::string::npos);
    CHECK(count_of(html, "bad/run " + dot + " ExplodingTensor triggered at step 15</title>") == 3 * 2 + 2 + 1);
    CHECK(count_of(html, "bad/run " + dot + " ExplodingTensor triggered at step 15 (on other tensors)</title>") ==
          1 + 3 + 1);
    CHECK(count_of(html, "good/run " + dot + " ExplodingTensor triggered") == 0);
    // The overview has a row of steps per run and mode.
    CHECK(html.find(">bad/run " + dot + " TRAIN steps<title>") != std::string::npos);
    CHECK(html.find(">good/run " + dot + " EVAL steps<title>") != std::string::npos);
    // No diff given: no marks.
    CHECK(html.find("class=\"divergence\"") == std::string::npos);

    // Self-contained.
    CHECK(count_of(html, "<script") == 1);
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
}

TEST_CASE("tdbg report --diff marks the first divergence on every step axis and each tensor's own") {
    const two_runs runs;
    const auto r = report_of({runs.bad.string(), runs.good.string(), "-o", "-", "--diff", runs.diff.string(),
                                "--name", "bad", "--name", "good"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const std::string& html = r.out;

    // --name names the runs in the legends.
    CHECK(html.find("</svg>bad " + dot + " TRAIN</span>") != std::string::npos);
    CHECK(html.find("</svg>good " + dot + " EVAL</span>") != std::string::npos);
    CHECK(html.find("bad/run " + dot) == std::string::npos);

    // The summary box.
    CHECK(html.find("<section class=\"diff\" id=\"diff\"><h3>The runs diverge") != std::string::npos);
    CHECK(html.find("<dt>first divergence</dt><dd><b>step 10</b> (TRAIN 10), layer1/weight, worker_0</dd>") !=
          std::string::npos);
    CHECK(html.find("max abs 2.8, max rel 19 at [0]") != std::string::npos);
    CHECK(html.find("<dt>differing tensors (2)</dt>") != std::string::npos);
    CHECK(html.find("loss from step 12 (TRAIN 12)") != std::string::npos);
    CHECK(html.find("1 tensors only in bad/run, 0 only in good/run") != std::string::npos);

    // A marker at step 10 on every plot with a step axis: 7 line plots, 3 heatmaps, the timeline.
    const std::size_t axes = count_of(html, "class=\"plot line-plot\"") + count_of(html, "class=\"plot heatmap\"") +
                             count_of(html, "class=\"plot timeline\"");
    CHECK(axes == 7 + 3 + 1);
    CHECK(count_of(html, "<g class=\"divergence\" data-step=\"10\">") == axes);
    CHECK(count_of(html, "<title>first divergence: step 10</title></g>") == axes);
    CHECK(count_of(html, "class=\"divergence-label\">diverges 10</text>") == axes);
    // At step 10 on the axis: steps 0-23 span [-0.5, 23.5] over pixels 54-348 of a small plot.
    const std::string weight = tensor_html(html, "layer1/weight");
    CHECK(weight.find("<g class=\"divergence\" data-step=\"10\"><line x1=\"182.6\" y1=\"10\" x2=\"182.6\"") !=
          std::string::npos);

    // Each differing tensor flagged, and marked at its own first step when that is another.
    CHECK(weight.find("<span class=\"flag diverges\">differs from step 10</span>") != std::string::npos);
    CHECK(count_of(weight, "class=\"tensor-divergence\"") == 0);
    const std::string loss = tensor_html(html, "loss");
    CHECK(loss.find("<span class=\"flag diverges\">differs from step 12</span>") != std::string::npos);
    CHECK(count_of(loss, "<g class=\"tensor-divergence\" data-step=\"12\">") == 1);
    CHECK(loss.find("<title>this tensor diverges from step 12</title>") != std::string::npos);
    const std::string only = tensor_html(html, "only/bias");
    CHECK(only.find("flag diverges") == std::string::npos);
    CHECK(count_of(only, "class=\"tensor-divergence\"") == 0);
}

TEST_CASE("tdbg report --diff refuses what is not tdbg diff output, naming the file") {
    const two_runs runs;
    const fs::path bad_file = runs.dir.path() / "other.json";
    auto report_with = [&](const std::string& text) {
        tdbg::test::write_file(bad_file, text);
        return report_of(
            {runs.bad.string(), runs.good.string(), "-o", (runs.dir.path() / "x.html").string(), "--diff",
             bad_file.string()});
    };
    auto r = report_with(R"({"format": "smdebug-golden/1"})");
    CHECK(r.status == 2);
    CHECK(r.err.find("--diff " + bad_file.string() +
                     ": not tdbg diff --json output: \"format\" is \"smdebug-golden/1\", expected \"tdbg-diff/1\"") !=
          std::string::npos);
    CHECK_FALSE(fs::exists(runs.dir.path() / "x.html"));

    r = report_with("{\"format\": \"tdbg-diff/1\", ");
    CHECK(r.status == 2);
    CHECK(r.err.find(bad_file.string()) != std::string::npos);
    CHECK(r.err.find("not valid JSON") != std::string::npos);

    std::string text = diff_json;
    text.replace(text.find("\"step\": 12, "), 12, "");
    r = report_with(text);
    CHECK(r.status == 2);
    CHECK(r.err.find("--diff " + bad_file.string() + ": tensors[1] has no \"step\"") != std::string::npos);

    text = diff_json;
    text.replace(text.find("\"mode\": \"TRAIN\""), 15, "\"mode\": \"TEST\"");
    r = report_with(text);
    CHECK(r.status == 2);
    CHECK(r.err.find("first_divergence: \"mode\" is 'TEST', expected TRAIN, EVAL, PREDICT or GLOBAL") !=
          std::string::npos);

    text = diff_json;
    text.replace(text.find("\"agree\": false"), 14, "\"agree\": \"no\"");
    r = report_with(text);
    CHECK(r.status == 2);
    CHECK(r.err.find("the document: \"agree\" is a JSON string, expected true or false") != std::string::npos);

    r = report_of({runs.bad.string(), "--diff", (runs.dir.path() / "missing.json").string()});
    CHECK(r.status == 2);
    CHECK(r.err.find("--diff " + (runs.dir.path() / "missing.json").string() + ": cannot read it") !=
          std::string::npos);
}

namespace {

// A run of 3 TRAIN steps for the diff round trip: w = [w0, 1], s of `s_size` elements, n = [n0];
// with `extra`, a tensor "only/extra" too.
void write_diff_run(const fs::path& dir, float w0, std::size_t s_size, float n0, bool extra) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_regex = {".*"};
    tdbg::hook h(o);
    h.set_mode(tdbg::mode::train);
    for (int step = 0; step < 3; ++step) {
        h.begin_step();
        h.save_tensor("w", xt::xarray<float>{w0, 1.0F});
        h.save_tensor("s", xt::xarray<float>(xt::ones<float>({s_size})));
        h.save_tensor("n", xt::xarray<float>{step == 2 ? n0 : 1.0F});
        if (extra) {
            h.save_tensor("only/extra", xt::xarray<float>{1.0F});
        }
    }
    h.close();
}

// `tdbg diff A B --json [ARGS]` into `file`, its exit status.
int diff_json_into(const fs::path& a, const fs::path& b, const fs::path& file, const std::vector<std::string>& args = {}) {
    std::vector<std::string> command{"diff", a.string(), b.string(), "--json"};
    command.insert(command.end(), args.begin(), args.end());
    const auto d = tdbg::test::run_program(TDBG_CLI_PATH, command);
    tdbg::test::write_file(file, d.out);
    return d.status;
}

} // namespace

TEST_CASE("tdbg report --diff reads what tdbg diff --json writes: infinite and undefined differences, no first divergence") {
    temp_dir dir("report_diff_nulls");
    // Run A holds a 0 where run B holds 0.001 (a relative difference against 0: infinite), a
    // tensor of another shape (no element compared: undefined), and 1 where B holds NaN at step 2.
    const fs::path a = dir.path() / "a";
    const fs::path b = dir.path() / "b";
    write_diff_run(a, 0.0F, 2, 1.0F, false);
    write_diff_run(b, 1e-3F, 3, std::nanf(""), false);
    const fs::path diff = dir.path() / "diff.json";
    REQUIRE(diff_json_into(a, b, diff) == 1);
    const auto doc = nlohmann::json::parse(read_file(diff));
    INFO(doc.dump(1));
    REQUIRE(doc.at("tensors").size() == 3);
    CHECK(doc.at("first_divergence").at("tensor") == "s"); // at step 0, "s" < "w"
    CHECK(doc.at("first_divergence").at("max_abs_diff").is_null());
    CHECK(doc.at("first_divergence").at("flat_index").is_null());
    for (const auto& t : doc.at("tensors")) {
        CHECK(t.at("max_rel_diff").is_null()); // every one: against 0, none compared, NaN
    }

    auto r = report_of({a.string(), b.string(), "-o", "-", "--diff", diff.string()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("<section class=\"diff\" id=\"diff\"><h3>The runs diverge"));
    CHECK_THAT(r.out, Catch::Contains("<dt>first divergence</dt><dd><b>step 0</b> (TRAIN 0), s, worker_0</dd>"));
    CHECK_THAT(r.out, Catch::Contains("<dt>difference</dt><dd>max abs undefined, max rel undefined</dd>"));
    CHECK_THAT(r.out, Catch::Contains("<dt>differing tensors (3)</dt>"));

    // Only "w" compared: the first divergence is at an element, its relative difference infinite.
    REQUIRE(diff_json_into(a, b, diff, {"--tensors", "^w$"}) == 1);
    const auto w = nlohmann::json::parse(read_file(diff)).at("first_divergence");
    CHECK(w.at("max_abs_diff") == 1e-3F);
    CHECK(w.at("max_rel_diff").is_null());
    r = report_of({a.string(), b.string(), "-o", "-", "--diff", diff.string()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("<dt>difference</dt><dd>max abs 0.001, max rel inf at [0]</dd>"));
    // The same, piped as a user would: `tdbg diff --json | tdbg report --diff /dev/stdin`.
    using tdbg::test::shell_quote;
    const std::string cli = shell_quote(TDBG_CLI_PATH);
    const auto piped = tdbg::test::run_shell(cli + " diff " + shell_quote(a.string()) + " " + shell_quote(b.string()) +
                                             " --json --tensors '^w$' | " + cli + " report " +
                                             shell_quote(a.string()) + " " + shell_quote(b.string()) +
                                             " -o - --diff /dev/stdin");
    INFO(piped.err);
    REQUIRE(piped.status == 0);
    CHECK_THAT(piped.out, Catch::Contains("<dt>first divergence</dt><dd><b>step 0</b> (TRAIN 0), w, worker_0</dd>"));
    CHECK_THAT(piped.out, Catch::Contains("<dt>difference</dt><dd>max abs 0.001, max rel inf at [0]</dd>"));

    // A NaN against a number: an infinite absolute and relative difference.
    REQUIRE(diff_json_into(a, b, diff, {"--tensors", "^n$"}) == 1);
    CHECK(nlohmann::json::parse(read_file(diff)).at("first_divergence").at("max_abs_diff").is_null());
    r = report_of({a.string(), b.string(), "-o", "-", "--diff", diff.string()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("<dt>first divergence</dt><dd><b>step 2</b> (TRAIN 2), n, worker_0</dd>"));
    CHECK_THAT(r.out, Catch::Contains("<dt>difference</dt><dd>max abs inf, max rel inf at [0]</dd>"));
}

TEST_CASE("tdbg report --diff reads tdbg diff --json of runs that part only by a tensor saved in one run") {
    temp_dir dir("report_diff_no_first");
    const fs::path a = dir.path() / "a";
    const fs::path b = dir.path() / "b";
    write_diff_run(a, 0.5F, 2, 1.0F, true);
    write_diff_run(b, 0.5F, 2, 1.0F, false);
    const fs::path diff = dir.path() / "diff.json";
    REQUIRE(diff_json_into(a, b, diff) == 1);
    const auto doc = nlohmann::json::parse(read_file(diff));
    CHECK(doc.at("agree") == false);
    CHECK(doc.at("first_divergence").is_null());
    CHECK(doc.at("only_in_a") == nlohmann::json::array({"only/extra"}));

    const auto r = report_of({a.string(), b.string(), "-o", "-", "--diff", diff.string()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("<section class=\"diff\" id=\"diff\"><h3>The runs diverge"));
    CHECK_THAT(r.out, Catch::Contains("<dt>first divergence</dt><dd>none at a step both runs hold: the runs hold "
                                      "different tensors</dd>"));
    CHECK_THAT(r.out, Catch::Contains("1 tensors only in " + tdbg::cli::report::escape(a.string())));
    CHECK(count_of(r.out, "<g class=\"divergence\"") == 0); // no step to mark

    // What is not consistent is still refused: runs that differ, with nothing that says where.
    std::string text = read_file(diff);
    text.replace(text.find("\"only/extra\""), 12, "");
    tdbg::test::write_file(diff, text);
    const auto refused = report_of({a.string(), b.string(), "-o", "-", "--diff", diff.string()});
    CHECK(refused.status == 2);
    CHECK_THAT(refused.err, Catch::Contains("\"agree\" is false but \"first_divergence\" is null and no tensor is "
                                            "in one run only"));
}

TEST_CASE("tdbg report names runs as asked and refuses names it cannot tell apart") {
    const two_runs runs;
    auto r = report_of({runs.bad.string(), runs.good.string(), "--name", "a", "--name", "b", "--name", "c"});
    CHECK(r.status == 2);
    CHECK(r.err.find("3 --name options for 2 runs") != std::string::npos);

    r = report_of({runs.bad.string(), runs.good.string(), "--name", "same", "--name", "same"});
    CHECK(r.status == 2);
    CHECK(r.err.find("runs 1 and 2 are both named 'same'") != std::string::npos);

    r = report_of({runs.bad.string(), runs.bad.string(), "-o", "-"});
    CHECK(r.status == 2);
    CHECK(r.err.find("name them with --name") != std::string::npos);

    std::vector<std::string> nine(9, runs.bad.string());
    r = report_of(nine);
    CHECK(r.status == 2);
    CHECK(r.err.find("at most 8 runs in one report, got 9") != std::string::npos);

    // Only the first run named: the second keeps its directory's name.
    r = report_of({runs.bad.string(), runs.good.string(), "-o", "-", "--name", "bad init", "--tensors", "loss"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("</svg>bad init " + dot + " TRAIN</span>") != std::string::npos);
    CHECK(r.out.find("</svg>run " + dot + " TRAIN</span>") != std::string::npos);
}

TEST_CASE("tdbg report's page of two runs and a diff draws in a real browser") {
    const auto chromium = tdbg::test::find_chromium();
    if (!chromium) {
        if (tdbg::test::chromium_required()) {
            FAIL("chromium not found on PATH (Debian package chromium) and TDBG_REQUIRE_CHROMIUM=1");
        }
        TDBG_SKIP("chromium not found on PATH (Debian package chromium; or set TDBG_CHROMIUM)");
    }
    const two_runs runs;
    const fs::path page = runs.dir.path() / "report.html";
    const auto r = report_of({runs.bad.string(), runs.good.string(), "-o", page.string(), "--tensors",
                                "^(layer1/|loss)", "--diff", runs.diff.string()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const fs::path png = runs.dir.path() / "report.png";
    const auto shot = tdbg::test::screenshot(*chromium, page, png, runs.dir.path() / "profile", 1200, 3000);
    INFO("chromium: " << shot.err);
    REQUIRE(shot.status == 0);
    REQUIRE(fs::exists(png));
    fs::copy_file(png, fs::path(TDBG_TEST_TMP) / "report_compare_browser.png", fs::copy_options::overwrite_existing);

    namespace report = tdbg::cli::report;
    const auto counts = tdbg::test::count_colours(
        png, {report::series_palette[0], report::series_palette[1], report::divergence_colour,
              report::heat_color(report::heat_levels / 2), report::heat_color(report::heat_levels), {255, 255, 255}});
    INFO("bad run, good run, divergence, mid shade, top shade, white: " << counts[0] << " " << counts[1] << " "
                                                                        << counts[2] << " " << counts[3] << " "
                                                                        << counts[4] << " " << counts[5]);
    // Both runs' lines cross the 3 plots of the weights and the loss.
    CHECK(counts[0] > 1500);
    CHECK(counts[1] > 1500);
    // The divergence: a line on each of 6 plots and the timeline, their labels, the flags.
    CHECK(counts[2] > 400);
    // Two heatmaps side by side, each filled by its run's values.
    CHECK(counts[3] + counts[4] > 1000);
    CHECK(counts[5] > 500000);
}
