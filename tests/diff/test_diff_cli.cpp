// `tdbg diff RUN_A RUN_B`: exit statuses, the text and the "tdbg-diff/1" JSON document.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diff_runs.hpp"
#include "support.hpp"

using nlohmann::json;
using tdbg::test::diff_run_spec;
using tdbg::test::run_program;
using tdbg::test::temp_dir;
using tdbg::test::write_diff_run;

namespace {

tdbg::test::command_result tdbg_diff(std::vector<std::string> args) {
    args.insert(args.begin(), "diff");
    return run_program(TDBG_CLI_PATH, args);
}

} // namespace

TEST_CASE("tdbg diff: runs that agree exit 0") {
    temp_dir dir("diff_cli_same");
    write_diff_run(dir.path() / "a", {});
    write_diff_run(dir.path() / "b", {});
    const auto r = tdbg_diff({(dir.path() / "a").string(), (dir.path() / "b").string()});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out == "runs agree within rtol 1e-05, atol 1e-08: compared 4 tensors, 10 steps, 120 values\n"
                   "note: 20 of the values compared are stored reductions (10 tensor steps without raw values)\n");
    CHECK(r.err.empty());

    const auto j = tdbg_diff({(dir.path() / "a").string(), (dir.path() / "b").string(), "--json"});
    CHECK(j.status == 0);
    const json doc = json::parse(j.out);
    CHECK(doc["format"] == "tdbg-diff/1");
    CHECK(doc["agree"] == true);
    CHECK(doc["first_divergence"].is_null());
    CHECK(doc["tensors"] == json::array());
    CHECK(doc["compared"] ==
          json({{"tensors", 4}, {"steps", 10}, {"values", 120}, {"reductions", 20}, {"reduction_only_steps", 10}}));
    CHECK(doc["reductions_only"] == false);
}

TEST_CASE("tdbg diff: runs that part exit 1 and name the first divergence") {
    temp_dir dir("diff_cli_part");
    write_diff_run(dir.path() / "a", {});
    diff_run_spec perturbed;
    perturbed.perturb_from = 7;
    perturbed.extra_tensor = true;
    write_diff_run(dir.path() / "b", perturbed);
    const std::string a = (dir.path() / "a").string();
    const std::string b = (dir.path() / "b").string();

    const auto text = tdbg_diff({a, b});
    INFO(text.err);
    CHECK(text.status == 1);
    CHECK(text.out.find("runs part at step 7 (TRAIN step 7, worker_0): tensor MLP_fc1.weight\n") == 0);
    CHECK(text.out.find("element [1, 2] (flat 5) is furthest out of tolerance; 1 of 6 values differ") !=
          std::string::npos);
    CHECK(text.out.find("tensors that diverge, by the step where each first does:") != std::string::npos);
    CHECK(text.out.find("only in run B: extra\n") != std::string::npos);

    const auto j = tdbg_diff({a, b, "--json"});
    CHECK(j.status == 1);
    const json doc = json::parse(j.out);
    CHECK(doc["format"] == "tdbg-diff/1");
    CHECK(doc["run_a"] == a);
    CHECK(doc["run_b"] == b);
    CHECK(doc["agree"] == false);
    CHECK(doc["rtol"] == 1e-5);
    CHECK(doc["atol"] == 1e-8);
    const json& first = doc["first_divergence"];
    CHECK(first["tensor"] == "MLP_fc1.weight");
    CHECK(first["tensor_b"] == "MLP_fc1.weight");
    CHECK(first["step"] == 7);
    CHECK(first["mode"] == "TRAIN");
    CHECK(first["mode_step"] == 7);
    CHECK(first["worker"] == "worker_0");
    CHECK(first["max_abs_diff"].get<double>() == Approx(0.5).epsilon(1e-6));
    CHECK(first["max_rel_diff"].get<double>() == Approx(0.5).epsilon(1e-6));
    CHECK(first["index"] == json({1, 2}));
    CHECK(first["reason"] == "1 of 6 values differ");
    REQUIRE(doc["tensors"].size() == 1);
    CHECK(doc["tensors"][0]["tensor"] == "MLP_fc1.weight");
    CHECK(doc["tensors"][0]["step"] == 7);
    CHECK(doc["tensors"][0]["mode"] == "TRAIN");
    CHECK(doc["tensors"][0]["mode_step"] == 7);
    CHECK(doc["tensors"][0]["diverging_steps"] == 3);
    CHECK(doc["only_in_a"] == json::array());
    CHECK(doc["only_in_b"] == json({"extra"}));

    // Options: tolerances, a tensor regex, ignoring tensors of one run only.
    CHECK(tdbg_diff({a, b, "--atol", "1", "--ignore-missing"}).status == 0);
    CHECK(tdbg_diff({a, b, "--rtol", "0.6", "--ignore-missing"}).status == 0);
    CHECK(tdbg_diff({a, b, "--tensors", "fc2|Loss", "--ignore-missing"}).status == 0);
    CHECK(tdbg_diff({a, b, "--tensors", "fc2|Loss|extra"}).status == 1); // `extra` is in run B only
    CHECK(tdbg_diff({a, b, "--mode", "eval", "--ignore-missing"}).status == 2); // no EVAL step: nothing compared
}

TEST_CASE("tdbg diff: name maps and stored reductions") {
    temp_dir dir("diff_cli_map");
    write_diff_run(dir.path() / "a", {});
    diff_run_spec renamed;
    renamed.prefix = "Net_";
    renamed.loss_name = "loss";
    renamed.perturb_mean_from = 3;
    write_diff_run(dir.path() / "b", renamed);
    const std::string a = (dir.path() / "a").string();
    const std::string b = (dir.path() / "b").string();
    const std::vector<std::string> maps{"--map-prefix", "MLP_=Net_",
                                        "--map-prefix", "gradient/MLP_=gradient/Net_",
                                        "--map",        "CrossEntropyLoss_output_0=loss"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args{a, b};
        args.insert(args.end(), maps.begin(), maps.end());
        args.insert(args.end(), extra.begin(), extra.end());
        return tdbg_diff(args);
    };
    const auto unmapped = tdbg_diff({a, b, "--json"});
    CHECK(unmapped.status == 1);
    CHECK(json::parse(unmapped.out)["only_in_b"].size() == 4);
    const auto mapped = with({"--tensors", "^MLP_|Loss"});
    INFO(mapped.err);
    CHECK(mapped.status == 0);

    // The gradients are saved as reductions only: compared by them, asked (--reductions) or not.
    for (const bool asked : {false, true}) {
        std::vector<std::string> extra{"--json"};
        if (asked) {
            extra.emplace_back("--reductions");
        }
        const auto reductions = with(extra);
        INFO("--reductions: " << asked << "\n" << reductions.err);
        CHECK(reductions.status == 1);
        const json doc = json::parse(reductions.out);
        CHECK(doc["first_divergence"]["tensor"] == "gradient/MLP_fc1.weight");
        CHECK(doc["first_divergence"]["tensor_b"] == "gradient/Net_fc1.weight");
        CHECK(doc["first_divergence"]["step"] == 3);
        CHECK(doc["first_divergence"]["reduction"] == "mean");
        CHECK(doc["first_divergence"]["index"] == json::array());
    }
}

TEST_CASE("tdbg diff: errors exit 2 with a message") {
    temp_dir dir("diff_cli_errors");
    write_diff_run(dir.path() / "a", {});
    const std::string a = (dir.path() / "a").string();
    const auto missing = tdbg_diff({a, (dir.path() / "nothing").string()});
    CHECK(missing.status == 2);
    CHECK(missing.err.find("no such directory") != std::string::npos);
    CHECK(tdbg_diff({a}).status == 2);
    const auto bad_tolerance = tdbg_diff({a, a, "--rtol", "-1"});
    CHECK(bad_tolerance.status == 2);
    CHECK(bad_tolerance.err.find("--rtol expects a non-negative number, got '-1'") != std::string::npos);
    CHECK(tdbg_diff({a, a, "--map", "no-equals"}).status == 2);
    CHECK(tdbg_diff({a, a, "--mode", "sideways"}).status == 2);
    CHECK(tdbg_diff({a, a, "--tensors", "("}).status == 2);
    CHECK(tdbg_diff({a, a, "--frobnicate"}).status == 2);
    const auto help = tdbg_diff({"--help"});
    CHECK(help.status == 0);
    CHECK(help.out.find("usage: tdbg diff RUN_A RUN_B") == 0);
}

TEST_CASE("tdbg diff: runs whose gradients are saved as reductions only are compared by those reductions") {
    temp_dir dir("diff_cli_reductions_only");
    write_diff_run(dir.path() / "a", {});
    write_diff_run(dir.path() / "b", {});
    const std::string a = (dir.path() / "a").string();
    const std::string b = (dir.path() / "b").string();

    const auto same = tdbg_diff({a, b, "--tensors", "gradient"});
    INFO(same.err);
    CHECK(same.status == 0);
    CHECK(same.out == "runs agree within rtol 1e-05, atol 1e-08: compared 1 tensors, 10 steps, 20 values\n"
                      "note: compared reductions only (no raw values saved in both runs)\n");
    const auto j = tdbg_diff({a, b, "--tensors", "gradient", "--json"});
    CHECK(j.status == 0);
    const json doc = json::parse(j.out);
    CHECK(doc["agree"] == true);
    CHECK(doc["reductions_only"] == true);
    CHECK(doc["note"] == "compared reductions only (no raw values saved in both runs)");
    CHECK(doc["compared"] ==
          json({{"tensors", 1}, {"steps", 10}, {"values", 20}, {"reductions", 20}, {"reduction_only_steps", 10}}));

    // A gradient whose stored mean moves from step 5 on parts the runs there.
    diff_run_spec moved;
    moved.perturb_mean_from = 5;
    write_diff_run(dir.path() / "c", moved);
    const auto parted = tdbg_diff({a, (dir.path() / "c").string(), "--tensors", "gradient"});
    CHECK(parted.status == 1);
    CHECK(parted.out.find("runs part at step 5 (TRAIN step 5, worker_0): tensor gradient/MLP_fc1.weight [mean]\n") ==
          0);
    CHECK(parted.out.find("note: compared reductions only (no raw values saved in both runs)\n") != std::string::npos);
}

TEST_CASE("tdbg diff: a diff that compares nothing exits 2 and says why") {
    temp_dir dir("diff_cli_nothing");
    write_diff_run(dir.path() / "a", {});
    write_diff_run(dir.path() / "b", {});
    const std::string a = (dir.path() / "a").string();
    const std::string b = (dir.path() / "b").string();

    // --tensors that matches nothing: the nearest names, and no document on stdout.
    for (const bool json_output : {false, true}) {
        std::vector<std::string> args{a, b, "--tensors", "gradinet/MLP_fc1"};
        if (json_output) {
            args.emplace_back("--json");
        }
        const auto r = tdbg_diff(args);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err.find("tdbg diff: error: nothing was compared: the tensor regex 'gradinet/MLP_fc1' matches none "
                         "of the 4 tensors of run A; the nearest names: 'gradient/MLP_fc1.weight', ") == 0);
    }

    // No step in common: a mode neither run has.
    const auto eval = tdbg_diff({a, b, "--mode", "EVAL"});
    CHECK(eval.status == 2);
    CHECK(eval.err.find("nothing was compared: the 4 tensors in both runs ('CrossEntropyLoss_output_0', ") !=
          std::string::npos);
    CHECK(eval.err.find("have no step in common in mode EVAL\n") != std::string::npos);

    // No tensor in both runs, the missing ones ignored.
    diff_run_spec renamed;
    renamed.prefix = "Net_";
    renamed.loss_name = "loss";
    write_diff_run(dir.path() / "c", renamed);
    const auto apart = tdbg_diff({a, (dir.path() / "c").string(), "--ignore-missing", "--tensors", "MLP"});
    CHECK(apart.status == 2);
    CHECK(apart.err.find("nothing was compared: no tensor of run A matching 'MLP' is in run B") != std::string::npos);
}
