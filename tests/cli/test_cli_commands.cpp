// The command line's library functions (tdbg/cli/commands.hpp), called as a program that
// embeds tdbg's command line calls them: options structs in, the output on the streams given
// and the exit status out, over runs written here with the hook.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/hook/hook.hpp"

namespace {

// A TRAIN run of 3 steps with "relu1_output_0" (float32 [2, 8], all zero: every unit dead,
// and not matched by DeadRelu's default tensor_regex '.*relu_output') and "w" (float32 [2],
// {bias + step, 1}).
void write_commands_run(const std::filesystem::path& dir, float bias) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"values"};
    tdbg::collection values("values");
    values.include("^(relu1_output_0|w)$");
    o.collections = {values};
    tdbg::hook h(o);
    h.set_mode(tdbg::mode::train);
    for (int s = 0; s < 3; ++s) {
        h.begin_step();
        const std::vector<float> relu(16, 0.0F);
        h.save_tensor("relu1_output_0", relu.data(), {2, 8});
        const std::vector<float> w{bias + static_cast<float>(s), 1.0F};
        h.save_tensor("w", w.data(), {2});
    }
    h.close();
}

// What a command wrote and returned.
struct command_output {
    int status = -1;
    std::string out;
    std::string err;
};

template <class Options, class Command>
command_output call_command(Command command, const Options& options) {
    std::ostringstream out;
    std::ostringstream err;
    command_output r;
    r.status = command(options, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

} // namespace

TEST_CASE("commands::ls, show and dump write what tdbg ls, show and dump write, with their exit statuses") {
    tdbg::test::temp_dir dir("commands_ls");
    write_commands_run(dir.path() / "run", 0.0F);
    const std::string run = (dir.path() / "run").string();

    tdbg::commands::ls_options ls;
    ls.run = run;
    auto r = call_command(&tdbg::commands::ls, ls);
    INFO(r.out + r.err);
    CHECK(r.status == tdbg::commands::exit_ok);
    CHECK(r.err.empty());
    CHECK(r.out.find("state        finished (training_job_end.ts present)\n") != std::string::npos);
    CHECK(r.out.find("steps        0-2 (3 steps)\n") != std::string::npos);
    CHECK(r.out.find("tensors      2\n") != std::string::npos);
    CHECK(r.out.find("\nTENSOR          DTYPE    SHAPE   STEPS  MODES  SAVED\n"
                     "relu1_output_0  float32  [2, 8]      3  TRAIN  value\n"
                     "w               float32  [2]         3  TRAIN  value\n") != std::string::npos);

    // An error is a message on err, as the command line writes it, and exit_error: never an exception.
    ls.run = (dir.path() / "missing").string();
    r = call_command(&tdbg::commands::ls, ls);
    CHECK(r.status == tdbg::commands::exit_error);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("tdbg ls: error: ", 0) == 0);
    CHECK(r.err.find("missing") != std::string::npos);

    tdbg::commands::show_options show;
    show.run = run;
    show.tensor_regex = "^w$";
    show.steps = tdbg::step_range{1, std::nullopt};
    r = call_command(&tdbg::commands::show, show);
    INFO(r.err);
    CHECK(r.status == tdbg::commands::exit_ok);
    CHECK(r.out == "w  step 1 (TRAIN step 1)  float32 [2]\n[1. 1.]\n\nw  step 2 (TRAIN step 2)  float32 [2]\n[2. 1.]\n");
    show.tensor_regex = "^nothing$";
    r = call_command(&tdbg::commands::show, show);
    CHECK(r.status == tdbg::commands::exit_error);
    CHECK(r.err.rfind("tdbg show: error: ", 0) == 0);

    tdbg::commands::dump_options dump;
    dump.run = run;
    dump.filter.tensor_regex = "^w$";
    r = call_command(&tdbg::commands::dump, dump);
    INFO(r.err);
    REQUIRE(r.status == tdbg::commands::exit_ok);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("format") == "smdebug-golden/1");
    CHECK(doc.at("tensors").size() == 1);
    CHECK(doc.at("tensors").contains("w"));
}

TEST_CASE("commands::rules: exit 2 for a rule that evaluated nothing, 1 for issues, 0 with allow_empty") {
    tdbg::test::temp_dir dir("commands_rules");
    write_commands_run(dir.path() / "run", 0.0F);

    tdbg::commands::rules_options o;
    o.run = (dir.path() / "run").string();
    o.rules.push_back({"DeadRelu", {}, ""});
    auto r = call_command(&tdbg::commands::rules, o);
    CHECK(r.status == tdbg::commands::exit_error);
    CHECK(r.out.find("DeadRelu: NothingEvaluated\n") != std::string::npos);
    CHECK(r.err.find("tdbg rules: error: DeadRelu evaluated nothing: ") != std::string::npos);

    o.allow_empty = true;
    r = call_command(&tdbg::commands::rules, o);
    CHECK(r.status == tdbg::commands::exit_ok);
    CHECK(r.err.empty());

    o.rules.front().params["tensor_regex"] = "relu1_output";
    o.rules.front().configuration_name = "DeadUnits";
    o.json = true;
    r = call_command(&tdbg::commands::rules, o);
    INFO(r.err);
    CHECK(r.status == tdbg::commands::exit_issues);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("results")[0].at("status") == "IssuesFound");
    CHECK(doc.at("results")[0].at("configuration_name") == "DeadUnits");
    CHECK_FALSE(doc.contains("interrupted"));

    // The list, as `tdbg rules --list`; an unknown rule is exit_error naming the nearest one.
    tdbg::commands::rules_options list;
    list.list = true;
    r = call_command(&tdbg::commands::rules, list);
    CHECK(r.status == tdbg::commands::exit_ok);
    CHECK(r.out.find("\nVanishingGradient") != std::string::npos);
    tdbg::commands::rules_options unknown;
    unknown.describe = "VanishingGradiant";
    r = call_command(&tdbg::commands::rules, unknown);
    CHECK(r.status == tdbg::commands::exit_error);
    CHECK(r.err.find("did you mean 'VanishingGradient'?") != std::string::npos);
}

TEST_CASE("commands::rules: a stop request from the caller ends the evaluation with its reason and exit status") {
    tdbg::test::temp_dir dir("commands_rules_stop");
    write_commands_run(dir.path() / "run", 0.0F);

    tdbg::commands::rules_options o;
    o.run = (dir.path() / "run").string();
    o.rules.push_back({"AllZero", {{"tensor_regex", "relu1_output"}}, ""});
    o.json = true;
    std::size_t asked = 0;
    o.stop = [&asked](std::chrono::milliseconds) -> std::optional<tdbg::commands::stop_reason> {
        ++asked;
        return tdbg::commands::stop_reason{"shutdown", 75};
    };
    const auto r = call_command(&tdbg::commands::rules, o);
    CHECK(r.status == 75);
    CHECK(asked >= 1);
    CHECK(r.err.find("tdbg rules: interrupted by shutdown: the results cover the steps evaluated until then\n") !=
          std::string::npos);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("interrupted") == "shutdown");
    CHECK(doc.at("results")[0].at("end") == "interrupted");
}

TEST_CASE("commands::diff returns 0 for runs that agree, 1 for runs that differ, 2 for a missing run") {
    tdbg::test::temp_dir dir("commands_diff");
    write_commands_run(dir.path() / "a", 0.0F);
    write_commands_run(dir.path() / "b", 0.0F);
    write_commands_run(dir.path() / "c", 0.5F);

    tdbg::commands::diff_options o;
    o.run_a = (dir.path() / "a").string();
    o.run_b = (dir.path() / "b").string();
    auto r = call_command(&tdbg::commands::diff, o);
    INFO(r.err);
    CHECK(r.status == tdbg::commands::exit_ok);
    CHECK(r.out.rfind("runs agree within rtol", 0) == 0);

    o.run_b = (dir.path() / "c").string();
    o.json = true;
    r = call_command(&tdbg::commands::diff, o);
    CHECK(r.status == tdbg::commands::exit_issues);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.at("agree") == false);
    CHECK(doc.at("first_divergence").at("tensor") == "w");
    CHECK(doc.at("first_divergence").at("step") == 0);

    o.run_b = (dir.path() / "missing").string();
    r = call_command(&tdbg::commands::diff, o);
    CHECK(r.status == tdbg::commands::exit_error);
    CHECK(r.err.rfind("tdbg diff: error: ", 0) == 0);
}

TEST_CASE("commands::report writes the page to out for \"-\", and refuses a report on no run") {
    tdbg::test::temp_dir dir("commands_report");
    write_commands_run(dir.path() / "run", 0.0F);

    tdbg::commands::report_options o;
    o.runs = {(dir.path() / "run").string()};
    o.output = "-";
    o.distributions = false;
    auto r = call_command(&tdbg::commands::report, o);
    INFO(r.err);
    CHECK(r.status == tdbg::commands::exit_ok);
    CHECK(r.out.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(r.out.find("relu1_output_0") != std::string::npos);

    o.runs.clear();
    r = call_command(&tdbg::commands::report, o);
    CHECK(r.status == tdbg::commands::exit_error);
    CHECK(r.err == "tdbg report: error: a report is on 1 to 8 runs, got 0\n");
}
