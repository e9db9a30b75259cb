// The `tdbg` gate never passes a run it cannot read: a listed event file that is missing, an
// index directory that cannot be listed, an index, event or collections file that is not a
// regular file, a link out of the run. `ls`, `dump` and `rules` exit 2 with a message naming
// the file (and where a link leads); `rules` reports the evaluation as Error, never skips.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "storage/unprivileged.hpp"
#include "support.hpp"
#include "trial/golden.hpp"

namespace fs = std::filesystem;
using tdbg::test::command_result;

namespace {

// The tdbg program with `args`, bounded in time: a FIFO read by mistake would block it.
command_result tdbg_run(const std::vector<std::string>& args, const std::string& as = {},
                        const std::string& program = TDBG_CLI_PATH) {
    std::string command = as + "timeout 120 " + tdbg::test::shell_quote(program);
    for (const auto& a : args) {
        command += " " + tdbg::test::shell_quote(a);
    }
    return tdbg::test::run_shell(command);
}

// A copy of the vanishing_run fixture in `dir`.
fs::path copy_vanishing_run(const fs::path& dir) {
    const fs::path run = dir / "run";
    fs::copy(tdbg::test::fixture_run("vanishing_run"), run, fs::copy_options::recursive);
    for (const auto& entry : fs::recursive_directory_iterator(run)) {
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    }
    return run;
}

// `ls`, `dump --json` and `rules` over `run` all exit 2 with `message` on stderr.
void check_refused(const fs::path& run, const std::string& message, const std::string& as = {},
                   const std::string& program = TDBG_CLI_PATH) {
    const std::vector<std::vector<std::string>> commands{
        {"ls", run.string()}, {"dump", run.string(), "--json"}, {"rules", run.string(), "--rule", "VanishingGradient"}};
    for (const auto& args : commands) {
        const command_result r = tdbg_run(args, as, program);
        INFO(args.front() << ": exit " << r.status << "\nstdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.status == 2);
        CHECK((r.err + r.out).find(message) != std::string::npos);
        CHECK(r.out.find("NoIssuesFound") == std::string::npos);
    }
}

} // namespace

TEST_CASE("tdbg rules: a run whose event files are gone is an Error with exit status 2, never NoIssuesFound") {
    tdbg::test::temp_dir dir("cli_no_events");
    const fs::path run = copy_vanishing_run(dir.path());
    for (const auto& entry : fs::directory_iterator(run / "events")) {
        fs::remove_all(entry.path()); // rm events/*
    }
    const std::string missing = (run / "events" / "000000000000" / "000000000000_worker_0.tfevents").string();
    const command_result rules = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient"});
    INFO(rules.out << rules.err);
    CHECK(rules.status == 2);
    CHECK(rules.out.find("VanishingGradient: Error") != std::string::npos);
    CHECK(rules.out.find(missing + ": the event file that the index lists") != std::string::npos);
    CHECK(rules.out.find("skipped") == std::string::npos);
    const command_result json = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient", "--json"});
    CHECK(json.status == 2);
    CHECK(json.out.find("\"Error\"") != std::string::npos);
    CHECK(json.out.find("TensorUnavailableForStep") == std::string::npos);
    const command_result dump = tdbg_run({"dump", run.string(), "--json"});
    CHECK(dump.status == 2);
    CHECK(dump.err.find("_worker_0.tfevents: the event file that the index lists") != std::string::npos);
}

TEST_CASE("tdbg: an index directory that is a link that cannot be followed is an error with exit status 2 naming it") {
    tdbg::test::temp_dir dir("cli_unlistable");
    const fs::path run = copy_vanishing_run(dir.path());
    // A link to itself cannot be listed even by root.
    const fs::path index_dir = run / "index" / "000000000";
    fs::rename(index_dir, run / "index_moved");
    fs::create_directory_symlink("000000000", index_dir);
    check_refused(run, index_dir.string() + ": a symbolic link to '000000000' that cannot be followed");
    fs::remove(index_dir);
    fs::rename(run / "index_moved", index_dir);
}

TEST_CASE("tdbg: an index directory without permissions is an error with exit status 2 naming it") {
    // As a user permissions apply to (root gives itself up with setpriv), with the run and a copy
    // of the program where that user reaches them, wherever the build tree lies.
    const tdbg::test::unprivileged_scratch dir("cli_unreadable");
    if (const std::string why = dir.why_unreachable(); !why.empty()) {
        TDBG_SKIP(why << ": the permission case is left out");
    }
    std::string as;
    std::string program = TDBG_CLI_PATH;
    if (::geteuid() == 0) {
        if (tdbg::test::run_shell("setpriv --reuid=65534 --regid=65534 --clear-groups true").status != 0) {
            TDBG_SKIP("running as root without setpriv (util-linux) to give root up: the permission case is left out");
        }
        as = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
        program = (dir.path() / "tdbg").string();
        fs::copy_file(TDBG_CLI_PATH, program);
        fs::permissions(program, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
        if (tdbg::test::run_shell(as + "test -x " + tdbg::test::shell_quote(program)).status != 0) {
            TDBG_SKIP("user 65534 cannot run a program from " << dir.path().string()
                                                               << " (mounted noexec?): the permission case is left out");
        }
    }
    const fs::path run = copy_vanishing_run(dir.path());
    const fs::path index_dir = run / "index" / "000000000";
    fs::permissions(index_dir, fs::perms::none);
    check_refused(run, "cannot list the directory " + index_dir.string() + ": Permission denied", as, program);
    fs::permissions(index_dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
    const command_result readable = tdbg_run({"ls", run.string()}, as, program);
    CHECK(readable.status == 0);
}

TEST_CASE("tdbg: an index file filed under another step is an error with exit status 2 naming it and both steps") {
    tdbg::test::temp_dir dir("cli_misfiled");
    const fs::path run = copy_vanishing_run(dir.path());
    const fs::path index6 = run / "index" / "000000000" / "000000000006_worker_0.json";
    // Step 6's index as a duplicate of step 5's, in the folder of steps 1000-1999.
    const fs::path elsewhere = run / "index" / "000000001" / "000000000005_worker_0.json";
    fs::create_directories(elsewhere.parent_path());
    fs::copy_file(index6, elsewhere);
    check_refused(run, "misfiled index file " + elsewhere.string() +
                           ": its name says step 5, whose index belongs in index/000000000/, but it is filed in "
                           "000000001/, the folder of steps 1000 to 1999");
    fs::remove_all(elsewhere.parent_path());
    CHECK(tdbg_run({"ls", run.string()}).status == 0);
}

TEST_CASE("tdbg: an index, event or collections file that is a FIFO is an error with exit status 2 naming it") {
    tdbg::test::temp_dir dir("cli_fifo");
    const fs::path run = copy_vanishing_run(dir.path());
    for (const fs::path& file : {run / "index" / "000000000" / "000000000005_worker_0.json",
                                 run / "collections" / "000000000" / "worker_0_collections.json"}) {
        INFO(file);
        const fs::path saved = dir.path() / "saved";
        fs::rename(file, saved);
        REQUIRE(::mkfifo(file.c_str(), 0644) == 0);
        check_refused(run, file.string() + ": a FIFO, not a regular file");
        fs::remove(file);
        fs::rename(saved, file);
    }
    // An event file is opened by the index's key, never listed: refused without blocking.
    const fs::path event = run / "events" / "000000000005" / "000000000005_worker_0.tfevents";
    fs::remove(event);
    REQUIRE(::mkfifo(event.c_str(), 0644) == 0);
    const command_result rules = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient"});
    INFO(rules.out << rules.err);
    CHECK(rules.status == 2);
    CHECK(rules.out.find("VanishingGradient: Error") != std::string::npos);
    CHECK(rules.out.find(event.string() + ": a FIFO, not a regular file") != std::string::npos);
    const command_result dump = tdbg_run({"dump", run.string(), "--json"});
    CHECK(dump.status == 2);
    CHECK(dump.err.find(event.string() + ": a FIFO") != std::string::npos);
}

TEST_CASE("tdbg: links that leave the run are refused with exit status 2 naming where they lead, links inside are followed") {
    tdbg::test::temp_dir dir("cli_links");
    const fs::path run = fs::absolute(copy_vanishing_run(dir.path()));
    const command_result before = tdbg_run({"dump", run.string(), "--json"});
    REQUIRE(before.status == 0);
    const command_result rules_before = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient"});
    REQUIRE(rules_before.status == 1); // VanishingGradient triggers on this run

    // Inside the run: followed, the same reading.
    fs::create_directories(run / "data");
    fs::rename(run / "events", run / "data" / "events");
    fs::create_directory_symlink("data/events", run / "events");
    const command_result inside = tdbg_run({"dump", run.string(), "--json"});
    CHECK(inside.status == 0);
    CHECK(inside.out == before.out);
    CHECK(tdbg_run({"rules", run.string(), "--rule", "VanishingGradient"}).out == rules_before.out);

    // events/ out of the run.
    const fs::path outside = fs::absolute(dir.path() / "outside");
    fs::create_directories(outside);
    fs::rename(run / "data" / "events", outside / "events");
    fs::remove(run / "events");
    fs::create_directory_symlink("../outside/events", run / "events");
    const std::string refused = (run / "events").string() + ": a symbolic link to '../outside/events', which leads out "
                                "of the run directory " + run.string() + " (to " + (outside / "events").string() + ")";
    const command_result rules = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient"});
    INFO(rules.out << rules.err);
    CHECK(rules.status == 2);
    CHECK(rules.out.find("VanishingGradient: Error") != std::string::npos);
    CHECK(rules.out.find(refused) != std::string::npos);
    const command_result dump = tdbg_run({"dump", run.string(), "--json"});
    CHECK(dump.status == 2);
    CHECK(dump.err.find(refused) != std::string::npos);

    // index/ out of the run: every command refuses it.
    fs::rename(run / "index", outside / "index");
    fs::create_directory_symlink(outside / "index", run / "index");
    check_refused(run, (run / "index").string() + ": a symbolic link to '" + (outside / "index").string() +
                           "', which leads out of the run directory");
}
