// The `tdbg` program: `dump --json` reproduces Python smdebug's reading of
// each fixture run (the golden files) except where tdbg reads better, or of
// part of a run (--tensors, --steps, --mode), `ls` is readable, `show` prints
// values as numpy does, bad input ends with a message and exit status 2, and output
// files (`report -o`, `rules --junit`, `rules -o`) are written through links,
// into FIFOs and devices in place, and replaced whole, or not at all.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "arguments.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"
#include "trial/golden.hpp"
#include "trial/run_writer.hpp"

using nlohmann::json;

namespace {

using run_result = tdbg::test::command_result;
using tdbg::test::read_file;

// Runs the tdbg program with `args`.
run_result tdbg_run(const std::vector<std::string>& args) { return tdbg::test::run_program(TDBG_CLI_PATH, args); }

void check_dump(const std::string& run) {
    const auto dir = tdbg::test::fixture_run(run);
    const run_result r = tdbg_run({"dump", dir.string(), "--json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const std::string golden_text = read_file(tdbg::test::fixtures_dir() / (run + ".golden.json"));
    const auto c = tdbg::test::check_dump_text(dir, r.out, golden_text);
    CHECK(c.computed_compared > 100);
    if (run == "core_modes_workers") {
        CHECK(c.int8_entries == 22);
        CHECK(c.recovered_values == 22);
    }
    CHECK(c.better_results > 0);
}

// A small finished run: gradient/w at steps 0-2, in the "gradients" collection.
void write_gradient_run(const std::filesystem::path& dir) {
    const tdbg::test::run_writer run(dir);
    tdbg::format::collection_spec gradients;
    gradients.name = "gradients";
    gradients.include_regex = {"^gradient/"};
    run.collections("worker_0", 1, {gradients});
    const std::vector<float> g{1.0F, -1.0F};
    for (std::int64_t s = 0; s < 3; ++s) {
        run.step(s, "worker_0", tdbg::mode::train, s, {{"gradient/w", tdbg::tensor_value::borrow(g.data(), {2}), {}, std::nullopt}});
    }
    run.end();
}

// The commands that write an output file, each with `target` as that file.
std::vector<std::vector<std::string>> file_output_commands(const std::string& run, const std::string& target) {
    return {{"report", run, "-o", target},
            {"rules", run, "--rule", "VanishingGradient", "--junit", target},
            {"rules", run, "--rule", "VanishingGradient", "--json", "-o", target}};
}

// What each of file_output_commands writes begins with.
const char* const file_output_starts[] = {"<!DOCTYPE html>", "<?xml", "{"};

// The names in `dir`, sorted.
std::vector<std::string> names_in(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

TEST_CASE("tdbg dump --json: core_modes_workers matches Python's reading, or does better") {
    check_dump("core_modes_workers");
}

TEST_CASE("tdbg dump --json: pytorch_mlp matches Python's reading, or does better") {
    check_dump("pytorch_mlp");
}

TEST_CASE("tdbg dump --json: vanishing_run matches Python's reading, or does better") {
    check_dump("vanishing_run");
}

TEST_CASE("tdbg ls: a readable summary with aligned columns") {
    const run_result r = tdbg_run({"ls", tdbg::test::fixture_run("pytorch_mlp").string()});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("workers      1 of 1: worker_0") != std::string::npos);
    CHECK(r.out.find("TRAIN      0-35 every 5 (8 steps)") != std::string::npos);
    CHECK(r.out.find("EVAL       0-8 every 2 (5 steps)") != std::string::npos);
    CHECK(r.out.find("finished") != std::string::npos);
    std::istringstream lines(r.out);
    std::string line;
    std::size_t dtype_column = std::string::npos;
    std::size_t rows = 0;
    bool table = false;
    while (std::getline(lines, line)) {
        if (line.rfind("TENSOR", 0) == 0) {
            table = true;
            dtype_column = line.find("DTYPE");
            continue;
        }
        if (table && !line.empty()) {
            ++rows;
            CHECK(line[dtype_column - 1] == ' ');
            CHECK(line[dtype_column] != ' ');
            if (line.rfind("act_output_0", 0) == 0) {
                CHECK(line.find("[32, 16]") == std::string::npos); // the last step is EVAL with batch 16
                CHECK(line.find("shape, 6 reductions") != std::string::npos);
            }
            if (line.rfind("MLP_fc2.weight", 0) == 0) {
                CHECK(line.find("float32  [3, 16]") != std::string::npos);
                CHECK(line.find("TRAIN,EVAL") != std::string::npos);
            }
        }
    }
    CHECK(rows == 10);
    const run_result quick = tdbg_run({"ls", "--no-values", tdbg::test::fixture_run("pytorch_mlp").string()});
    CHECK(quick.status == 0);
    CHECK(quick.out.find("MLP_fc2.weight") != std::string::npos);
}

TEST_CASE("tdbg: help, version and usage errors") {
    const run_result help = tdbg_run({"--help"});
    CHECK(help.status == 0);
    CHECK(help.out.find("ls") != std::string::npos);
    CHECK(help.out.find("dump") != std::string::npos);
    const run_result ls_help = tdbg_run({"ls", "--help"});
    CHECK(ls_help.status == 0);
    CHECK(ls_help.out.rfind("usage: tdbg ls", 0) == 0);
    const run_result dump_help = tdbg_run({"dump", "-h"});
    CHECK(dump_help.status == 0);
    CHECK(dump_help.out.rfind("usage: tdbg dump", 0) == 0);
    const run_result version = tdbg_run({"--version"});
    CHECK(version.status == 0);
    CHECK(version.out.rfind("tdbg ", 0) == 0);

    const run_result none = tdbg_run({});
    CHECK(none.status == 2);
    CHECK(none.err.find("usage") != std::string::npos);
    const run_result unknown = tdbg_run({"frobnicate"});
    CHECK(unknown.status == 2);
    CHECK(unknown.err.find("unknown command 'frobnicate'") != std::string::npos);
    const run_result bad_flag = tdbg_run({"ls", "--bogus", "x"});
    CHECK(bad_flag.status == 2);
    CHECK(bad_flag.err.find("unknown option '--bogus'") != std::string::npos);
    const run_result missing = tdbg_run({"dump"});
    CHECK(missing.status == 2);
    CHECK(missing.err.find("missing the run directory") != std::string::npos);
    const run_result two = tdbg_run({"ls", "a", "b"});
    CHECK(two.status == 2);
}

TEST_CASE("tdbg arguments: one parser for every subcommand, its help written from the same declarations") {
    struct cli_test_options {
        bool verbose = false;
        std::string output = "-";
        std::size_t jobs = 1;
        double poll = 0.5;
        std::vector<std::string> rules;
    } o;
    tdbg::cli::arguments args("tdbg thing DIR [options]\ntdbg thing --list", "Does a thing.\n");
    args.flag("--verbose", "say more", o.verbose);
    args.text("-o,--output", "FILE", "where the thing goes", o.output);
    args.section("tuning");
    args.number("--jobs", "N", "threads, 1 to 8", o.jobs, std::size_t{1}, std::size_t{8});
    args.number("--poll", "SECONDS", "a very long description that has to be wrapped over more than one line of "
                                     "the help text, at a word boundary",
                o.poll, 0.001, 60.0);
    args.option("--rule", "NAME", "repeatable", [&o](const std::string&, const std::string& v) { o.rules.push_back(v); });
    args.epilog("exit status: 0.\n");

    SECTION("values: separate words, --name=value, a value that looks like an option, and -- ends the options") {
        const auto p = args.parse({"run", "-o", "-h", "--jobs=4", "--rule", "A", "--verbose", "--rule=--B", "--",
                                   "--poll", "-"});
        CHECK_FALSE(p.help);
        CHECK(p.positional == std::vector<std::string>{"run", "--poll", "-"});
        CHECK(o.output == "-h");
        CHECK(o.jobs == 4);
        CHECK(o.verbose);
        CHECK(o.rules == std::vector<std::string>{"A", "--B"});
        CHECK(o.poll == 0.5);
    }
    SECTION("help is asked only where an option stands") {
        CHECK(args.parse({"run", "--bogus", "--help"}).help);
        CHECK(args.parse({"-h"}).help);
        CHECK_FALSE(args.parse({"-o", "--help", "run"}).help);
        CHECK_FALSE(args.parse({"--", "-h"}).help);
    }
    SECTION("bad arguments are usage errors naming the option") {
        using Catch::Matchers::Contains;
        CHECK_THROWS_WITH(args.parse({"--bogus"}), Contains("unknown option '--bogus'"));
        CHECK_THROWS_WITH(args.parse({"--jobs"}), Contains("--jobs needs a value (N)"));
        CHECK_THROWS_WITH(args.parse({"--jobs", "9"}), Contains("--jobs expects a whole number from 1 to 8, got '9'"));
        CHECK_THROWS_WITH(args.parse({"--jobs", "2x"}), Contains("got '2x'"));
        CHECK_THROWS_WITH(args.parse({"--jobs", "-1"}), Contains("got '-1'"));
        CHECK_THROWS_WITH(args.parse({"--poll", "nan"}), Contains("--poll expects a number from 0.001 to 60"));
        CHECK_THROWS_WITH(args.parse({"--poll", "inf"}), Contains("got 'inf'"));
        CHECK_THROWS_WITH(args.parse({"--verbose=yes"}), Contains("--verbose takes no value"));
        CHECK_THROWS_WITH(args.parse({"--output="}), Contains("--output needs a non-empty value"));
        CHECK_THROWS_AS(args.parse({"--jobs", "0"}), tdbg::cli::argument_error);
    }
    SECTION("the help text lists every option, by section, wrapped under its description column") {
        const std::string help = args.help();
        CHECK(help.rfind("usage: tdbg thing DIR [options]\n       tdbg thing --list\n\nDoes a thing.\n", 0) == 0);
        CHECK(help.find("\noptions:\n  --verbose           say more\n") != std::string::npos);
        CHECK(help.find("  -o, --output FILE   where the thing goes\n") != std::string::npos);
        CHECK(help.find("\ntuning:\n  --jobs N            threads, 1 to 8\n") != std::string::npos);
        CHECK(help.find("  --poll SECONDS      a very long description that has to be wrapped over more\n"
                        "                      than one line of the help text, at a word boundary\n") !=
              std::string::npos);
        CHECK(help.size() - help.rfind("\nexit status: 0.\n") == std::string("\nexit status: 0.\n").size());
        std::istringstream lines(help);
        for (std::string line; std::getline(lines, line);) {
            CHECK(line.size() <= 79);
        }
    }
    SECTION("one number parser, for counts, steps and seconds") {
        CHECK(tdbg::cli::parse_number<std::int64_t>("--start-step", "12", 0, 100) == 12);
        CHECK(tdbg::cli::parse_number("--rtol", "1e-3", 0.0, 1.0) == Approx(1e-3));
        CHECK_THROWS_WITH(tdbg::cli::parse_number("--rtol", "-1", 0.0, std::numeric_limits<double>::max()),
                          "--rtol expects a non-negative number, got '-1'");
        CHECK_THROWS_WITH(tdbg::cli::parse_number<std::int64_t>("--end-step", "", 0, 5),
                          "--end-step expects a whole number from 0 to 5, got ''");
    }
}

TEST_CASE("tdbg subcommands: -- ends the options, -o takes the next word as its value, help never runs the command") {
    tdbg::test::temp_dir dir("cli_arguments");
    // `tdbg rules -- DIR` takes DIR as the run (the other subcommands did already).
    const run_result dashdash = tdbg_run({"rules", "--rule", "AllZero", "--param", "tensor_regex=nomatch", "--",
                                          (dir.path() / "absent").string()});
    CHECK(dashdash.status == 2);
    CHECK(dashdash.err.find("absent") != std::string::npos);
    CHECK(dashdash.err.find("unknown option") == std::string::npos);
    // `-o -h` writes to a file named -h (the value of -o), it does not print the help.
    const run_result output_dash_h =
        tdbg_run({"rules", (dir.path() / "absent").string(), "--rule", "AllZero", "-o", "-h"});
    CHECK(output_dash_h.status == 2);
    CHECK(output_dash_h.out.find("usage:") == std::string::npos);
    CHECK(output_dash_h.err.find("absent") != std::string::npos);
    for (const std::string command : {"ls", "dump", "show", "rules", "diff", "report"}) {
        INFO(command);
        const run_result help = tdbg_run({command, "--no-such-option", "--help"});
        CHECK(help.status == 0);
        CHECK(help.out.rfind("usage: tdbg " + command, 0) == 0);
        const run_result equals = tdbg_run({command, "--no-such-option=1"});
        CHECK(equals.status == 2);
        CHECK(equals.err.find("unknown option '--no-such-option'") != std::string::npos);
    }
    const run_result report_equals = tdbg_run({"report", "--bins=1", "x"});
    CHECK(report_equals.status == 2);
    CHECK(report_equals.err.find("--bins expects a whole number from 2 to 400, got '1'") != std::string::npos);
}

TEST_CASE("tdbg ls and show: names from the run are printed with their control characters escaped") {
    // A name that would clear the screen, return to the start of the line and ring the bell.
    const std::string hostile = "evil\x1b[2J\r\a\xc2\x9b/weight";
    tdbg::test::temp_dir dir("cli_hostile_name");
    {
        tdbg::hook_options o;
        o.out_dir = dir.path();
        o.save_all = true;
        tdbg::hook h(o);
        h.begin_step();
        const std::vector<float> w{1.0F, 2.0F};
        h.save_tensor(hostile, w.data(), {2});
        h.close();
    }
    const run_result r = tdbg_run({"ls", dir.path()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("evil\\x1b[2J\\x0d\\x07\\xc2\\x9b/weight  float32") != std::string::npos);
    for (const char c : r.out) {
        const auto b = static_cast<unsigned char>(c);
        CHECK((b >= 0x20 || c == '\n'));
        CHECK(b != 0x7F);
    }
    // So does `tdbg show`, in the line above the values.
    const run_result show = tdbg_run({"show", dir.path(), "weight"});
    INFO(show.err);
    REQUIRE(show.status == 0);
    CHECK(show.out == "evil\\x1b[2J\\x0d\\x07\\xc2\\x9b/weight  step 0 (GLOBAL step 0)  float32 [2]\n[1. 2.]\n");
    // The JSON dump keeps the name exact (JSON escapes it).
    const run_result dump = tdbg_run({"dump", dir.path(), "--json"});
    REQUIRE(dump.status == 0);
    CHECK(json::parse(dump.out).dump().find(json(hostile).dump()) != std::string::npos);
}

TEST_CASE("tdbg dump: a tensor of 60,000 dimensions is refused with a message, not a stack overflow") {
    // The hook refuses to write it (tests/hook); another writer might.
    tdbg::test::temp_dir dir("cli_deep_shape");
    const std::vector<float> one{1.0F};
    const tdbg::test::run_writer run(dir.path());
    run.collections("worker_0", 1);
    run.step(0, "worker_0", tdbg::mode::train, 0,
             {{"deep", tdbg::tensor_value::borrow(one.data(), std::vector<std::size_t>(60000, 1)), {}, std::nullopt},
              {"fine", tdbg::tensor_value::borrow(one.data(), {1}), {}, std::nullopt}});
    run.end();
    for (const std::vector<std::string>& args : {std::vector<std::string>{"dump", dir.path(), "--json"},
                                                 std::vector<std::string>{"ls", dir.path()}}) {
        const run_result r = tdbg_run(args);
        INFO(args[0] << ": " << r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find("tensor 'deep'") != std::string::npos);
        CHECK(r.err.find("60000 dimensions, more than the 64 a tensor may have") != std::string::npos);
    }
}

TEST_CASE("tdbg: output that cannot be written is an error with exit status 2, never a silent success") {
    if (!std::filesystem::exists("/dev/full")) {
        TDBG_SKIP("no /dev/full on this system");
    }
    const std::string run = tdbg::test::fixture_run("vanishing_run").string();
    const std::vector<std::vector<std::string>> commands{{"ls", run},
                                                         {"dump", run, "--json"},
                                                         {"rules", run, "--rule", "VanishingGradient", "--json"},
                                                         {"rules", run, "--rule", "VanishingGradient"},
                                                         {"report", run, "-o", "-"},
                                                         {"--help"}};
    for (const auto& args : commands) {
        std::string command = tdbg::test::shell_quote(TDBG_CLI_PATH);
        for (const auto& a : args) {
            command += " " + tdbg::test::shell_quote(a);
        }
        INFO(command);
        const run_result written = tdbg::test::run_shell(command + " >/dev/null");
        CHECK((written.status == 0 || written.status == 1)); // VanishingGradient triggers on this run
        const run_result full = tdbg::test::run_shell(command + " >/dev/full");
        CHECK(full.status == 2);
        CHECK(full.err.find("error: cannot write to standard output") != std::string::npos);
    }
}

TEST_CASE("tdbg: bad paths, non-run directories and corrupt runs exit 2 with a message") {
    tdbg::test::temp_dir dir("cli_errors");
    const run_result absent = tdbg_run({"ls", (dir.path() / "absent").string()});
    CHECK(absent.status == 2);
    CHECK(absent.err.find("no such directory") != std::string::npos);
    CHECK(absent.out.empty());

    const auto file = dir.path() / "file.txt";
    std::ofstream(file) << "x";
    const run_result not_dir = tdbg_run({"dump", file.string(), "--json"});
    CHECK(not_dir.status == 2);
    CHECK(not_dir.err.find("not a directory") != std::string::npos);

    const run_result empty = tdbg_run({"dump", dir.path().string()});
    CHECK(empty.status == 2);
    CHECK(empty.err.find("not a run directory") != std::string::npos);

    // A collections file and an index file that are not JSON.
    const auto run = dir.path() / "run";
    std::filesystem::create_directories(run / "collections" / "000000000");
    std::ofstream(run / "collections" / "000000000" / "worker_0_collections.json") << "{\"collections\": ";
    const run_result bad_collections = tdbg_run({"ls", run.string()});
    CHECK(bad_collections.status == 2);
    CHECK(bad_collections.err.find("worker_0_collections.json") != std::string::npos);

    std::ofstream(run / "collections" / "000000000" / "worker_0_collections.json")
        << "{\"collections\": {}, \"_meta\": {\"num_workers\": 1}}";
    std::filesystem::create_directories(run / "index" / "000000000");
    std::ofstream(run / "index" / "000000000" / "000000000000_worker_0.json") << "[1, 2";
    const run_result bad_index = tdbg_run({"dump", run.string()});
    CHECK(bad_index.status == 2);
    CHECK(bad_index.err.find("000000000000_worker_0.json") != std::string::npos);

    // An index that points at an event file that is garbage.
    std::ofstream(run / "index" / "000000000" / "000000000000_worker_0.json")
        << R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "events/000000000000/000000000000_worker_0.tfevents"}, )"
        << R"("tensor_payload": [{"tensorname": "w", "start_idx": 0, "length": 40}], "shape_payload": []})";
    std::filesystem::create_directories(run / "events" / "000000000000");
    std::ofstream(run / "events" / "000000000000" / "000000000000_worker_0.tfevents") << std::string(40, '\x5a');
    const run_result bad_event = tdbg_run({"dump", run.string(), "--json"});
    CHECK(bad_event.status == 2);
    CHECK(bad_event.err.find("000000000000_worker_0.tfevents") != std::string::npos);
    CHECK(bad_event.err.find("at byte 0") != std::string::npos);
    const run_result ls_bad_event = tdbg_run({"ls", run.string()});
    CHECK(ls_bad_event.status == 2);
    const run_result ls_no_values = tdbg_run({"ls", "--no-values", run.string()});
    CHECK(ls_no_values.status == 0); // nothing read: nothing corrupt seen
    CHECK(ls_no_values.out.find("state        live or interrupted") != std::string::npos);
}


TEST_CASE("tdbg output files: a symbolic link is written through and stays a link") {
    tdbg::test::temp_dir dir("cli_output_link");
    const auto run = dir.path() / "run";
    write_gradient_run(run);
    std::filesystem::create_directories(dir.path() / "pages");
    const auto commands = file_output_commands(run.string(), (dir.path() / "link").string());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        INFO(commands[i][0] << " " << commands[i][commands[i].size() - 2]);
        tdbg::test::write_file(dir.path() / "pages" / "real", "old");
        std::filesystem::remove(dir.path() / "link");
        std::filesystem::create_symlink("pages/real", dir.path() / "link"); // relative to the link's directory
        const run_result r = tdbg_run(commands[i]);
        INFO(r.err);
        CHECK(r.status == 0);
        CHECK(std::filesystem::is_symlink(dir.path() / "link"));
        CHECK(std::filesystem::read_symlink(dir.path() / "link") == "pages/real");
        CHECK(tdbg::test::read_file(dir.path() / "pages" / "real").rfind(file_output_starts[i], 0) == 0);
        // The file was replaced in its own directory: no temporary file left there or beside the link.
        CHECK(names_in(dir.path() / "pages") == std::vector<std::string>{"real"});
        CHECK(names_in(dir.path()) == std::vector<std::string>{"link", "pages", "run"});
    }
    // A link to a file that does not exist yet: the file is created, the link kept.
    std::filesystem::remove(dir.path() / "pages" / "real");
    const run_result dangling = tdbg_run(file_output_commands(run.string(), (dir.path() / "link").string())[1]);
    CHECK(dangling.status == 0);
    CHECK(std::filesystem::is_symlink(dir.path() / "link"));
    CHECK(tdbg::test::read_file(dir.path() / "pages" / "real").rfind("<?xml", 0) == 0);
}

TEST_CASE("tdbg output files: a FIFO receives the document and stays a FIFO") {
    tdbg::test::temp_dir dir("cli_output_fifo");
    const auto run = dir.path() / "run";
    write_gradient_run(run);
    const auto fifo = dir.path() / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto commands = file_output_commands(run.string(), fifo.string());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        INFO(commands[i][0]);
        // The reader opens first (so tdbg's open does not block), and a write end held here
        // until tdbg has ended keeps the reader from seeing the end of the data too early.
        const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        REQUIRE(reader >= 0);
        const int keep_open = ::open(fifo.c_str(), O_WRONLY);
        REQUIRE(keep_open >= 0);
        REQUIRE(::fcntl(reader, F_SETFL, 0) == 0); // blocking reads from here on
        std::string received;
        std::thread reading([&] {
            char buffer[4096];
            ssize_t n = 0;
            while ((n = ::read(reader, buffer, sizeof buffer)) > 0) {
                received.append(buffer, static_cast<std::size_t>(n));
            }
        });
        const run_result r = tdbg_run(commands[i]);
        ::close(keep_open);
        reading.join();
        ::close(reader);
        INFO(r.err);
        CHECK(r.status == 0);
        CHECK(received.rfind(file_output_starts[i], 0) == 0);
        CHECK(received.size() > 100);
        struct stat st {};
        REQUIRE(::lstat(fifo.c_str(), &st) == 0);
        CHECK(S_ISFIFO(st.st_mode));
        CHECK(names_in(dir.path()) == std::vector<std::string>{"pipe", "run"});
    }
}

TEST_CASE("tdbg output files: /dev/null is written, and stays a character device") {
    struct stat before {};
    if (::stat("/dev/null", &before) != 0 || !S_ISCHR(before.st_mode)) {
        TDBG_SKIP("no /dev/null device on this system");
    }
    tdbg::test::temp_dir dir("cli_output_null");
    const auto run = dir.path() / "run";
    write_gradient_run(run);
    for (const auto& args : file_output_commands(run.string(), "/dev/null")) {
        INFO(args[0]);
        const run_result r = tdbg_run(args);
        INFO(r.err);
        CHECK(r.status == 0);
        struct stat after {};
        REQUIRE(::lstat("/dev/null", &after) == 0);
        CHECK(S_ISCHR(after.st_mode));
        CHECK(after.st_rdev == before.st_rdev);
    }
}

TEST_CASE("tdbg output files: a file that cannot be written is exit 2 naming it, and leaves nothing behind") {
    tdbg::test::temp_dir dir("cli_output_errors");
    const auto run = dir.path() / "run";
    write_gradient_run(run);
    const auto check_fails = [&](const std::vector<std::string>& args, const std::string& target, const std::string& why) {
        const run_result r = tdbg_run(args);
        INFO(args[0] << " -> " << target << ": " << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Contains("error: cannot write " + target + ": " + why));
        CHECK(names_in(dir.path()) == std::vector<std::string>{"run"});
    };
    for (const auto& args : file_output_commands(run.string(), (dir.path() / "missing" / "out").string())) {
        check_fails(args, (dir.path() / "missing" / "out").string(), "cannot create a file in " + (dir.path() / "missing").string());
    }
    // A directory (not the run: an output inside the run it reads is refused before this).
    for (const auto& args : file_output_commands(run.string(), dir.path().string())) {
        check_fails(args, dir.path().string(), "it is a directory");
    }
    if (std::filesystem::exists("/dev/full")) {
        for (const auto& args : file_output_commands(run.string(), "/dev/full")) {
            check_fails(args, "/dev/full", "");
        }
    }
    // A write that fails half way (the file size limit, as a full disk would): the old file
    // stays as it was and the temporary file is removed.
    std::filesystem::create_directories(dir.path() / "out");
    const auto page = dir.path() / "out" / "report.html";
    tdbg::test::write_file(page, "old");
    std::string command = "trap '' XFSZ; ulimit -f 1; exec " + tdbg::test::shell_quote(TDBG_CLI_PATH);
    const std::vector<std::string> report = file_output_commands(run.string(), page.string())[0];
    for (const auto& a : report) {
        command += " " + tdbg::test::shell_quote(a);
    }
    const run_result limited = tdbg::test::run_shell(command);
    INFO(limited.err);
    CHECK(limited.status == 2);
    CHECK_THAT(limited.err, Catch::Contains("cannot write " + page.string() + ": "));
    CHECK(tdbg::test::read_file(page) == "old");
    CHECK(names_in(dir.path() / "out") == std::vector<std::string>{"report.html"});
}

namespace {

// A run for `tdbg show`, written with the hook: at TRAIN steps 0-2 and EVAL step 0 (global
// step 3), "w" (float32 [2, 3]), "counts" (int32 [4]), "scale" (float32, 0-d), "big" (int32
// [40, 50], 0 to 1999) and "loss" (float32 [3]), of which only the min and max are saved.
void write_show_run(const std::filesystem::path& dir) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"values", "loss_stats"};
    tdbg::collection values("values");
    values.include("^(w|counts|scale|big)$");
    tdbg::collection loss_stats("loss_stats");
    loss_stats.include("^loss$");
    loss_stats.set_reduction_config(tdbg::reduction_config::parse("min,max"));
    o.collections = {values, loss_stats};
    tdbg::hook h(o);
    std::vector<std::int32_t> big(2000);
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<std::int32_t>(i);
    }
    const auto step = [&](float s) {
        h.begin_step();
        const std::vector<float> w{s + 0.5F, -1.0F, 2.0F, 0.25F, -3.0F, 10.0F};
        h.save_tensor("w", w.data(), {2, 3});
        const std::vector<std::int32_t> counts{static_cast<std::int32_t>(s), -7, 100, 3};
        h.save_tensor("counts", counts.data(), {4});
        h.save_tensor("scale", tdbg::tensor_value::scalar(0.001F * (s + 1)));
        h.save_tensor("big", big.data(), {40, 50});
        const std::vector<float> loss{s + 1, s + 2, s + 4};
        h.save_tensor("loss", loss.data(), {3});
    };
    h.set_mode(tdbg::mode::train);
    for (int s = 0; s < 3; ++s) {
        step(static_cast<float>(s));
    }
    h.set_mode(tdbg::mode::eval);
    step(10.0F);
    h.close();
}

} // namespace

TEST_CASE("tdbg show: values as numpy prints them, a step at a time, the last one by default") {
    tdbg::test::temp_dir dir("cli_show_values");
    write_show_run(dir.path());
    const std::string run = dir.path().string();

    const run_result last = tdbg_run({"show", run, "^w$"});
    INFO(last.err);
    REQUIRE(last.status == 0);
    CHECK(last.out == "w  step 3 (EVAL step 0)  float32 [2, 3]\n"
                      "[[10.5  -1.    2.  ]\n"
                      " [ 0.25 -3.   10.  ]]\n");

    const run_result train = tdbg_run({"show", run, "^w$", "--mode", "TRAIN", "--steps", "1:"});
    INFO(train.err);
    REQUIRE(train.status == 0);
    CHECK(train.out == "w  step 1 (TRAIN step 1)  float32 [2, 3]\n"
                       "[[ 1.5  -1.    2.  ]\n"
                       " [ 0.25 -3.   10.  ]]\n"
                       "\n"
                       "w  step 2 (TRAIN step 2)  float32 [2, 3]\n"
                       "[[ 2.5  -1.    2.  ]\n"
                       " [ 0.25 -3.   10.  ]]\n");

    // Several tensors, each under its own header; integers right-aligned, a 0-d value as a number.
    const run_result two = tdbg_run({"show", run, "^(counts|scale)$", "--step", "1"});
    INFO(two.err);
    REQUIRE(two.status == 0);
    CHECK(two.out == "counts  step 1 (TRAIN step 1)  int32 [4]\n"
                     "[  1  -7 100   3]\n"
                     "\n"
                     "scale  step 1 (TRAIN step 1)  float32 []\n"
                     "0.002\n");
    const run_result ranged = tdbg_run({"show", run, "^counts$", "--steps", ":2"});
    REQUIRE(ranged.status == 0);
    CHECK(ranged.out == "counts  step 0 (TRAIN step 0)  int32 [4]\n"
                        "[  0  -7 100   3]\n"
                        "\n"
                        "counts  step 1 (TRAIN step 1)  int32 [4]\n"
                        "[  1  -7 100   3]\n");
}

TEST_CASE("tdbg show: more than 1000 elements are summarised as numpy does, 3 items each side") {
    tdbg::test::temp_dir dir("cli_show_big");
    write_show_run(dir.path());
    const run_result r = tdbg_run({"show", dir.path().string(), "big"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == "big  step 3 (EVAL step 0)  int32 [40, 50]\n"
                   "[[   0    1    2 ...   47   48   49]\n"
                   " [  50   51   52 ...   97   98   99]\n"
                   " [ 100  101  102 ...  147  148  149]\n"
                   " ...\n"
                   " [1850 1851 1852 ... 1897 1898 1899]\n"
                   " [1900 1901 1902 ... 1947 1948 1949]\n"
                   " [1950 1951 1952 ... 1997 1998 1999]]\n");
}

TEST_CASE("tdbg show --reductions: a table over the steps, stored reductions or computed ones") {
    tdbg::test::temp_dir dir("cli_show_reductions");
    write_show_run(dir.path());
    const std::string run = dir.path().string();

    // Computed from the values where none are stored.
    const run_result computed = tdbg_run({"show", run, "^counts$", "--reductions", "--mode", "TRAIN", "--steps", ":"});
    INFO(computed.err);
    REQUIRE(computed.status == 0);
    CHECK(computed.out == "counts  reductions computed from the values\n"
                          "step  mode   mode_step  min  max   mean                std                  l2\n"
                          "   0  TRAIN          0   -7  100   24.0  44.02839992550263  100.28958071504736\n"
                          "   1  TRAIN          1   -7  100  24.25  43.89404857153188  100.29456615390487\n"
                          "   2  TRAIN          2   -7  100   24.5  43.76356932426787  100.30952098380293\n");

    // A tensor saved as reductions only: said so, and its stored reductions shown, without --reductions.
    const run_result stored = tdbg_run({"show", run, "loss", "--steps", "2:"});
    INFO(stored.err);
    REQUIRE(stored.status == 0);
    CHECK(stored.out == "loss  stored reductions (saved as reductions only, no values)\n"
                        "step  mode   mode_step   min   max\n"
                        "   2  TRAIN          2   3.0   6.0\n"
                        "   3  EVAL           0  11.0  14.0\n");
}

TEST_CASE("tdbg show: no match, bad steps, modes and workers exit 2 with a message") {
    tdbg::test::temp_dir dir("cli_show_errors");
    write_show_run(dir.path());
    const std::string run = dir.path().string();
    const auto fails = [&](const std::vector<std::string>& args, const std::string& message) {
        const run_result r = tdbg_run(args);
        INFO(args.back() << ": " << r.err);
        CHECK(r.status == 2);
        CHECK(r.err.find(message) != std::string::npos);
    };
    fails({"show", run, "cuonts"}, "tdbg show: error: no tensor matches 'cuonts'; did you mean 'counts'?");
    fails({"show", run, "^nothing$"}, "no tensor matches '^nothing$'");
    fails({"show", run, "^w$", "--mode", "PREDICT"}, "no tensor matches '^w$' in mode PREDICT (it matches 1 saved in other modes: 'w')");
    fails({"show", run, "^w$", "--steps", "10:"}, "no tensor matching '^w$' was saved at the steps asked for");
    fails({"show", run, "^w$", "--step", "1", "--steps", "1:2"}, "--step and --steps cannot be given together");
    fails({"show", run, "^w$", "--steps", "3:1"}, "--steps 3:1 holds no step");
    fails({"show", run, "^w$", "--steps", "1"}, "--steps expects A:B");
    fails({"show", run, "^w$", "--steps", "a:"}, "--steps expects a whole number >= 0, got 'a'");
    fails({"show", run, "^w$", "--mode", "TRAINING"}, "--mode expects TRAIN, EVAL, PREDICT or GLOBAL, got 'TRAINING'");
    fails({"show", run, "^w$", "--worker", "worker_9"}, "no worker 'worker_9' in the run (its workers: 'worker_0')");
    fails({"show", run}, "expected the run and a tensor regex");
    // A regex from the command line is printed escaped, as names from the run are.
    fails({"show", run, "evil\x1b"}, "no tensor matches 'evil\\x1b'");
}

TEST_CASE("tdbg dump --tensors --steps --mode: the golden document of part of a run") {
    tdbg::test::temp_dir dir("cli_dump_filters");
    write_show_run(dir.path());
    const std::string run = dir.path().string();
    const run_result r = tdbg_run({"dump", run, "--tensors", "^(w|loss)$", "--mode", "TRAIN", "--steps", "1:"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const json doc = json::parse(r.out);
    CHECK(doc["tensor_names"] == json({"loss", "w"}));
    CHECK(doc["tensor_names_by_mode"]["EVAL"] == json({"loss", "w"}));
    CHECK(doc["collections"]["values"]["trial_tensor_names"] == json({"w"}));
    CHECK(doc["steps"]["TRAIN"] == json({1, 2}));
    CHECK(doc["steps"]["EVAL"] == json::array());
    CHECK(doc["steps"]["GLOBAL"] == json({1, 2}));
    CHECK(doc["global_step_to_mode"].size() == 2);
    CHECK(doc["global_step_to_mode"]["2"]["mode_step"] == 2);
    REQUIRE(doc["tensors"].size() == 2);
    for (const char* name : {"loss", "w"}) {
        INFO(name);
        const json& tensor = doc["tensors"][name];
        REQUIRE(tensor["entries"].size() == 2);
        CHECK(tensor["entries"][0]["step"] == 1);
        CHECK(tensor["entries"][1]["mode"] == "TRAIN");
        CHECK(tensor["steps"]["TRAIN"] == json({1, 2}));
        CHECK(tensor["steps"]["EVAL"] == json::array());
    }
    CHECK(doc["tensors"]["w"]["entries"][1]["value"] == json({{2.5, -1.0, 2.0}, {0.25, -3.0, 10.0}}));
    CHECK(doc["tensors"]["loss"]["entries"][1]["reductions"]["max"]["value"] == 6.0);
    // Global steps without a mode; the run's other members as they are.
    const run_result global = tdbg_run({"dump", run, "--steps", "3:"});
    REQUIRE(global.status == 0);
    const json all = json::parse(global.out);
    CHECK(all["tensor_names"] == json({"big", "counts", "loss", "scale", "w"}));
    CHECK(all["steps"]["GLOBAL"] == json({3}));
    CHECK(all["steps"]["EVAL"] == json({0}));
    CHECK(all["steps"]["TRAIN"] == json::array());
    CHECK(all["tensors"]["counts"]["entries"].size() == 1);
    CHECK(all["modes"] == json({"EVAL", "TRAIN"}));
    // No filter, or filters that keep everything: the whole run's document, byte for byte.
    const run_result whole = tdbg_run({"dump", run});
    REQUIRE(whole.status == 0);
    CHECK(tdbg_run({"dump", run, "--steps", ":", "--mode", "GLOBAL"}).out == whole.out);
    CHECK(json::parse(whole.out)["steps"]["GLOBAL"] == json({0, 1, 2, 3}));
    for (const auto& bad : std::vector<std::vector<std::string>>{{"--steps", "2:2"}, {"--mode", "x"}}) {
        const run_result refused = tdbg_run({"dump", run, bad[0], bad[1]});
        CHECK(refused.status == 2);
        CHECK(refused.err.find(bad[0]) != std::string::npos);
    }
}
