// The byte-compatibility proof, both ways, with the real Python smdebug 1.0.34
// (../shared/tools/smdebug, set up by the "smdebug: set up" test of this folder):
//
// - Python smdebug reads runs tdbg writes (every dtype it can read, the four
//   modes, two workers, stored reductions, shapes, TensorBoard off and on, the
//   demo trainer's run), and its reading is compared with `tdbg dump --json`.
// - tdbg reads runs Python smdebug writes here and now (make_fixtures.py's three
//   runs, bench_smdebug.py's raw and reductions runs): `tdbg dump --json` is
//   compared with Python's own reading, and `tdbg rules` with Python's invoke_rule.
//
// Skipped with a message when ../shared or the Python packages are missing;
// TDBG_REQUIRE_SMDEBUG=1 (CI) makes that a failure.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden_checker.hpp"
#include "rules/reference_defaults.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using tdbg::test::command_result;
using tdbg::test::read_file;
using tdbg::test::run_program;
using tdbg::test::shell_quote;

namespace {

bool required() {
    const char* env = std::getenv("TDBG_REQUIRE_SMDEBUG");
    return env != nullptr && std::string(env) == "1";
}

fs::path tools_dir() {
    const char* env = std::getenv("TDBG_SHARED_DIR");
    return fs::path(env != nullptr ? env : TDBG_SHARED_DIR) / "tools" / "smdebug";
}

// The smdebug source tree the setup test prepared, or nothing (with the reason in `why`): the
// tree, and the scripts of the shared reference material that drive it (dump_trial.py).
std::optional<fs::path> smdebug_source(std::string& why) {
    const fs::path src(TDBG_SMDEBUG_SRC);
    if (!fs::is_regular_file(tools_dir() / "dump_trial.py")) {
        why = "no " + (tools_dir() / "dump_trial.py").string() +
              " (the shared reference material is not beside the checkout: ../shared, or TDBG_SHARED_DIR)";
        return std::nullopt;
    }
    if (!fs::is_regular_file(src / "smdebug" / "core" / "tfevent" / "proto" / "event_pb2.py")) {
        why = "Python smdebug is not set up in " + src.string() +
              " (the test 'smdebug: set up Python smdebug' prepares it from the shared reference material,"
              " ../shared/tools/smdebug)";
        return std::nullopt;
    }
    return src;
}

// The prepared smdebug source tree; nothing after a skip message (a failure when required).
std::optional<fs::path> prepared_smdebug() {
    std::string why;
    auto src = smdebug_source(why);
    if (!src) {
        if (required()) {
            FAIL(why << " and TDBG_REQUIRE_SMDEBUG=1");
        }
        tdbg::test::skip_test(why);
    }
    return src;
}

// Runs one of ../shared/tools/smdebug's scripts with the prepared smdebug.
command_result python(const fs::path& src, const std::string& script, const std::vector<std::string>& args) {
    std::string command = "SMDEBUG_SRC=" + shell_quote(src.string()) + " " + shell_quote(TDBG_PYTHON3) + " " +
                          shell_quote((tools_dir() / script).string());
    for (const auto& a : args) {
        command += " " + shell_quote(a);
    }
    return tdbg::test::run_shell(command);
}

// A fresh scratch directory for `name` (left in place for a look after a failure).
fs::path work_dir(const std::string& name) {
    const fs::path dir = fs::path(TDBG_TEST_TMP) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// Python's reading of `run` (dump_trial.py) against `tdbg dump --json`; returns both documents.
std::pair<json, json> compare_readings(const fs::path& run, const std::string& golden_text) {
    const command_result ours = run_program(TDBG_CLI_PATH, {"dump", run.string(), "--json"});
    INFO("tdbg dump: " << ours.err);
    REQUIRE(ours.status == 0);
    tdbg::test::check_dump_text(run, ours.out, golden_text);
    return {json::parse(golden_text), json::parse(ours.out)};
}

// What Python smdebug reads from `run` ("smdebug-golden/1"), asserting it could.
std::string python_reading(const fs::path& src, const fs::path& run) {
    const command_result golden = python(src, "dump_trial.py", {run.string()});
    INFO("dump_trial.py: " << golden.err);
    REQUIRE(golden.status == 0);
    return golden.out;
}

// What a cross_writer run saved (its manifest): the tensors with the number of index
// entries of each, and the sha256 of every raw value by (tensor, step, worker).
struct manifest {
    std::map<std::string, std::size_t> tensors;
    std::map<std::tuple<std::string, std::int64_t, std::string>, std::string> values;
};

manifest manifest_of(const std::string& out) {
    manifest m;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string kind;
        std::string name;
        words >> kind >> name;
        if (kind == "tensor") {
            words >> m.tensors[name];
        } else if (kind == "value") {
            std::int64_t step = 0;
            std::string worker;
            std::string sha;
            words >> step >> worker >> sha;
            m.values[{name, step, worker}] = sha;
        }
    }
    return m;
}

// Python's reading of a run tdbg wrote, checked against the writer's manifest and against tdbg's reading;
// false after a skip (no Python smdebug), when the caller asserts nothing more.
bool python_reads(const std::string& run_name) {
    const auto src = prepared_smdebug();
    if (!src) {
        return false;
    }
    const fs::path root = work_dir("tdbg_written_" + run_name);
    const fs::path run = root / run_name;
    const command_result wrote = run_program(TDBG_CROSS_WRITER_PATH, {root.string(), run_name});
    INFO("cross_writer: " << wrote.err);
    REQUIRE(wrote.status == 0);
    const manifest saved = manifest_of(wrote.out);
    REQUIRE(saved.tensors.size() >= 10);
    REQUIRE(saved.values.size() >= 50);

    const std::string golden_text = python_reading(*src, run);
    const auto [golden, ours] = compare_readings(run, golden_text);
    // Python found every tensor tdbg saved, with every index entry, and every raw value's very bytes.
    std::map<std::string, std::size_t> read_by_python;
    std::size_t values_checked = 0;
    for (const auto& [name, t] : golden["tensors"].items()) {
        read_by_python[name] = t["entries"].size();
        for (const auto& e : t["entries"]) {
            const auto it = saved.values.find({name, e["step"].get<std::int64_t>(), e["worker"].get<std::string>()});
            if (it == saved.values.end()) {
                CHECK_FALSE(e.contains("sha256")); // no raw value saved there
                continue;
            }
            INFO(name << " step " << e["step"] << " " << e["worker"]);
            CHECK(e.value("sha256", "") == it->second);
            ++values_checked;
        }
    }
    CHECK(read_by_python == saved.tensors);
    CHECK(values_checked == saved.values.size());
    return true;
}

// The fixture runs of make_fixtures.py, written now by Python smdebug.
std::vector<std::string> python_runs(const fs::path& src, const fs::path& dest) {
    const bool torch = tdbg::test::run_shell(shell_quote(TDBG_PYTHON3) + " -c 'import torch' >/dev/null 2>&1").status == 0;
    std::vector<std::string> runs{"core_modes_workers"};
    if (torch) {
        runs.emplace_back("pytorch_mlp");
        runs.emplace_back("vanishing_run");
    } else if (required()) {
        FAIL("python3-torch is missing (smdebug.pytorch writes two of the runs) and TDBG_REQUIRE_SMDEBUG=1");
    } else {
        WARN("python3-torch is missing: only core_modes_workers is written by Python smdebug");
    }
    std::vector<std::string> args{dest.string(), "--only"};
    args.insert(args.end(), runs.begin(), runs.end());
    const command_result made = python(src, "make_fixtures.py", args);
    INFO("make_fixtures.py: " << made.err);
    REQUIRE(made.status == 0);
    return runs;
}

// A rules.json parameter (a Python value) as SageMaker would pass it: a string.
std::string as_param_string(const json& v) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? "True" : "False";
    }
    return v.dump();
}

// Every rule of Python's rules document for `run`, through `tdbg rules`: the same steps, the same parameters
// (with the reference's defaults where AWS's, tdbg's, differ: rules/reference_defaults.hpp).
std::size_t check_rules(const fs::path& run, const json& python_rules) {
    const auto& invoked = python_rules.at("invoke");
    std::size_t checked = 0;
    for (const auto& entry : python_rules.at("results")) {
        const std::string rule = entry.at("rule").get<std::string>();
        std::map<std::string, std::string> params;
        for (const auto& [key, value] : entry.at("params").items()) {
            params[key] = as_param_string(value);
        }
        const std::set<std::string> added = tdbg::test::add_reference_defaults(rule, params);
        // Where smdebug evaluated no step, tdbg says NothingEvaluated: expected here.
        std::vector<std::string> args{"rules", run.string(), "--json", "--allow-empty", "--rule", rule};
        for (const auto& [key, value] : params) {
            args.push_back("--param");
            args.push_back(key + "=" + value);
        }
        args.insert(args.end(), {"--start-step", std::to_string(invoked.at("start_step").get<std::int64_t>()),
                                 "--end-step", std::to_string(invoked.at("end_step").get<std::int64_t>())});
        const command_result r = run_program(TDBG_CLI_PATH, args);
        INFO("rule " << entry.at("rule") << " " << entry.at("params").dump() << ": " << r.err);
        REQUIRE((r.status == 0 || r.status == 1));
        json ours = json::parse(r.out).at("results").at(0);
        for (const std::string& key : added) {
            if (!entry.at("resolved_params").contains(key)) {
                ours.at("resolved_params").erase(key); // given only to turn off a check the reference does not have
            }
        }
        CHECK(ours.at("triggered_steps") == entry.at("triggered_steps"));
        CHECK(ours.at("not_triggered_steps") == entry.at("not_triggered_steps"));
        CHECK(ours.at("skipped_steps") == entry.at("skipped_steps"));
        CHECK(ours.at("resolved_params") == entry.at("resolved_params"));
        CHECK(r.status == (entry.at("triggered_steps").empty() ? 0 : 1));
        ++checked;
    }
    return checked;
}

} // namespace

TEST_CASE("python smdebug reads tdbg's run: every dtype it reads, as 0-d, 1-D, N-D and large values") {
    python_reads("dtypes");
}

TEST_CASE("python smdebug reads tdbg's run: four modes, two workers, stored reductions, shapes, scalars") {
    python_reads("modes_workers");
}

TEST_CASE("python smdebug reads tdbg's run: with TensorBoard export on") {
    if (python_reads("tensorboard")) {
        CHECK(fs::is_directory(fs::path(TDBG_TEST_TMP) / "tdbg_written_tensorboard" / "tensorboard" / "tensorboard"));
    }
}

TEST_CASE("python smdebug reads tdbg's run: the demo trainer's (train_mlp)") {
    const auto src = prepared_smdebug();
    if (!src) {
        return;
    }
#ifndef TDBG_TRAIN_MLP_PATH
    TDBG_SKIP("the examples are not built (TDBG_BUILD_EXAMPLES=OFF): no train_mlp");
#else
    const fs::path run = work_dir("tdbg_written_train_mlp") / "run";
    const command_result trained = run_program(TDBG_TRAIN_MLP_PATH, {"--out", run.string(), "--steps", "60"});
    INFO("train_mlp: " << trained.err);
    REQUIRE(trained.status == 0);
    const std::string golden_text = python_reading(*src, run);
    const auto [golden, ours] = compare_readings(run, golden_text);
    CHECK(golden["modes"] == json::array({"EVAL", "TRAIN"}));
    CHECK(golden["tensors"].contains("gradient/MLP_fc1.weight"));
    CHECK(golden["tensors"].contains("CrossEntropyLoss_output_0"));
    CHECK(golden["tensors"].size() >= 8);
#endif
}

TEST_CASE("tdbg reads the runs python smdebug writes now: make_fixtures.py's, values and rules") {
    const auto src = prepared_smdebug();
    if (!src) {
        return;
    }
    const fs::path dest = work_dir("python_written_fixtures");
    std::size_t rules = 0;
    for (const std::string& run : python_runs(*src, dest)) {
        INFO("run " << run);
        const auto [golden, ours] = compare_readings(dest / run, read_file(dest / (run + ".golden.json")));
        CHECK(golden["tensors"].size() >= 5);
        rules += check_rules(dest / run, json::parse(read_file(dest / (run + ".rules.json"))));
    }
    CHECK(rules >= 13);
}

TEST_CASE("tdbg reads the runs python smdebug writes now: bench_smdebug.py's raw and reductions runs") {
    const auto src = prepared_smdebug();
    if (!src) {
        return;
    }
    const fs::path work = work_dir("python_written_bench");
    const command_result bench = python(*src, "bench_smdebug.py",
                                        {"--steps", "12", "--tensors", "4", "--elements", "40", "--keep", "--workdir",
                                         work.string()});
    INFO("bench_smdebug.py: " << bench.err);
    REQUIRE(bench.status == 0);
    // bench_smdebug.py writes under a random mkdtemp name; smdebug's reader takes a
    // worker name for a TensorFlow device name when "__" is anywhere in an index
    // file's path (not only in its name), so the runs are read from a fixed name.
    const fs::path runs = work / "runs";
    fs::rename(json::parse(bench.out).at("workdir").get<std::string>(), runs);
    for (const char* kind : {"raw", "reductions"}) {
        INFO("run " << kind);
        const auto [golden, ours] = compare_readings(runs / kind, python_reading(*src, runs / kind));
        CHECK(golden["tensors"].size() == 4);
        for (const auto& [name, t] : golden["tensors"].items()) {
            CHECK(t["entries"].size() == 12);
        }
    }
}
