// `tdbg rules` and `tdbg report` never write an output over what they read (docs/reliability.md,
// "Outputs"): a path inside the run, the rule configuration, a file two outputs share. Each is
// refused with exit status 2, naming the option and what it would overwrite, before anything
// is written; what the command reads is left byte for byte as it was.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "storage/shared_machine.hpp"
#include "support.hpp"
#include "tdbg/storage/detail/owned_directory.hpp"

namespace fs = std::filesystem;
using tdbg::test::command_result;
using tdbg::test::read_file;

namespace {

command_result tdbg_run(const std::vector<std::string>& args) { return tdbg::test::run_program(TDBG_CLI_PATH, args); }

// A copy of the vanishing_run fixture in `dir`, writable.
fs::path outputs_run(const fs::path& dir) {
    const fs::path run = dir / "run";
    fs::copy(tdbg::test::fixtures_dir() / "vanishing_run", run, fs::copy_options::recursive);
    for (const auto& entry : fs::recursive_directory_iterator(run)) {
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    }
    return run;
}

// `args` exits 2 with `message` on stderr, and `file` holds what it held before.
void check_refused(const std::vector<std::string>& args, const std::string& message, const fs::path& file) {
    const std::string before = read_file(file);
    const command_result r = tdbg_run(args);
    INFO("exit " << r.status << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
    CHECK(read_file(file) == before);
}

} // namespace

TEST_CASE("outputs: a report or a rules file inside the run it reads is refused, the run left as it was") {
    tdbg::test::temp_dir dir("outputs_inside_run");
    const fs::path run = outputs_run(dir.path());
    const fs::path collections = run / "collections" / "000000000" / "worker_0_collections.json";
    check_refused({"report", run.string(), "-o", collections.string()},
                  "-o " + collections.string() + ": refused, it lies inside the run " + run.string(), collections);
    const fs::path index = run / "index" / "000000000" / "000000000003_worker_0.json";
    check_refused({"rules", run.string(), "--rule", "VanishingGradient", "--junit", index.string()},
                  "--junit " + index.string() + ": refused, it lies inside the run", index);
    check_refused({"rules", run.string(), "--rule", "VanishingGradient", "--sarif", index.string()},
                  "--sarif " + index.string() + ": refused", index);
    // Through a symbolic link outside the run that leads into it.
    fs::create_symlink(index, dir.path() / "looks_outside.xml");
    check_refused({"rules", run.string(), "--rule", "VanishingGradient", "-o", (dir.path() / "looks_outside.xml").string()},
                  "refused, it lies inside the run", index);
    // A new file inside the run, and the run's directory itself.
    const command_result inside = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient", "-o",
                                            (run / "results.txt").string()});
    CHECK(inside.status == 2);
    CHECK_FALSE(fs::exists(run / "results.txt"));
    const command_result itself = tdbg_run({"report", run.string(), "-o", run.string()});
    CHECK(itself.status == 2);
    CHECK_THAT(itself.err, Catch::Contains("lies inside the run"));
    // The same run read the same way afterwards.
    CHECK(tdbg_run({"ls", run.string()}).status == 0);
}

TEST_CASE("outputs: a rules output that is the configuration it reads, or another output's file, is refused") {
    tdbg::test::temp_dir dir("outputs_inputs");
    const fs::path run = outputs_run(dir.path());
    const fs::path config = dir.path() / "rules.json";
    tdbg::test::write_file(config, R"([{"RuleConfigurationName": "vanishing", "RuleParameters": )"
                                   R"({"rule_to_invoke": "VanishingGradient"}}])");
    check_refused({"rules", run.string(), "--config", config.string(), "-o", config.string()},
                  "-o " + config.string() + ": refused, it is the file " + config.string() + " that this command reads",
                  config);
    // A hard link to it is the same file.
    fs::create_hard_link(config, dir.path() / "same.json");
    check_refused({"rules", run.string(), "--config", config.string(), "--junit", (dir.path() / "same.json").string()},
                  "refused, it is the file", config);
    check_refused({"report", run.string(), "--config", config.string(), "-o", config.string()}, "refused, it is the file",
                  config);
    // Two outputs on one file: one would replace the other.
    const command_result twice = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient", "-o",
                                           (dir.path() / "out.txt").string(), "--junit", (dir.path() / "out.txt").string()});
    CHECK(twice.status == 2);
    CHECK_THAT(twice.err, Catch::Contains("-o " + (dir.path() / "out.txt").string() + " and --junit " +
                                          (dir.path() / "out.txt").string() + " name the same file"));
    CHECK_FALSE(fs::exists(dir.path() / "out.txt"));
}

TEST_CASE("outputs: files written in place and outputs beside the run are written as before") {
    tdbg::test::temp_dir dir("outputs_allowed");
    const fs::path run = outputs_run(dir.path());
    // Two outputs to /dev/null, and a results file next to the run (a name that starts as the run's).
    const command_result r = tdbg_run({"rules", run.string(), "--rule", "VanishingGradient", "--junit", "/dev/null",
                                       "--sarif", "/dev/null", "-o", (dir.path() / "run.txt").string()});
    INFO(r.err);
    CHECK(r.status == 1); // VanishingGradient triggers on this run
    CHECK_THAT(read_file(dir.path() / "run.txt"), Catch::Contains("VanishingGradient"));
}

// A shared machine (docs/reliability.md, "A shared machine: nobody else's links or directories"):
// in a sticky, world-writable folder such as /tmp, another user placed links at the names the
// outputs will have, pointing at the victim's own files. The command resolves links itself and
// renames over what they name, where the kernel's fs.protected_symlinks never sees it: each such
// link is refused as the kernel would refuse it, naming it and its owner.
TEST_CASE("outputs: another user's link in a sticky, world-writable folder is refused naming it and its owner, the "
          "file it names left as it was") {
    tdbg::test::shared_machine machine("outputs_shared_links");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    tdbg::test::temp_dir dir("outputs_shared_run");
    const fs::path run = outputs_run(dir.path());
    const std::vector<std::string> names = {"report.html", "rules.txt", "junit.xml", "results.sarif", "progress.jsonl"};
    std::vector<fs::path> victims;
    for (const std::string& name : names) {
        victims.push_back(machine.victim_file(name, "the victim's " + name));
    }
    const fs::path shared = machine.shared();
    REQUIRE(tdbg::test::shared_machine::as_other_user([&] {
        int failed = 0;
        for (std::size_t i = 0; i < names.size(); ++i) {
            failed |= tdbg::test::make_link(victims[i], shared / names[i]);
        }
        return failed;
    }));
    const std::string rule = "VanishingGradient";
    const std::vector<std::vector<std::string>> commands = {
        {"report", run.string(), "-o", (shared / names[0]).string()},
        {"rules", run.string(), "--rule", rule, "-o", (shared / names[1]).string()},
        {"rules", run.string(), "--rule", rule, "--junit", (shared / names[2]).string()},
        {"rules", run.string(), "--rule", rule, "--sarif", (shared / names[3]).string()},
        {"rules", run.string(), "--rule", rule, "--progress", (shared / names[4]).string()},
    };
    const std::string other_user = tdbg::detail::user_description(65534);
    for (std::size_t i = 0; i < commands.size(); ++i) {
        const command_result r = tdbg_run(commands[i]);
        INFO(commands[i][0] << " " << commands[i][2] << "\nexit " << r.status << "\nstderr: " << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Contains((shared / names[i]).string() + ": a symbolic link owned by " + other_user +
                                          " in the sticky, world-writable directory " + shared.string() +
                                          ": refused"));
        INFO(machine.victim_changes());
        CHECK(machine.victim_changes().empty());
        CHECK(fs::is_symlink(shared / names[i]));
    }
}

TEST_CASE("outputs: a link that the kernel would follow is written through as before: one's own in a sticky folder, "
          "another user's in a folder they cannot write, or the folder owner's") {
    tdbg::test::shared_machine machine("outputs_followed_links");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    tdbg::test::temp_dir dir("outputs_followed_run");
    const fs::path run = outputs_run(dir.path());
    const fs::path shared = machine.shared();
    // Their own sticky, world-writable folder, with their link in it (the folder's owner's).
    const fs::path theirs = shared / "theirs";
    REQUIRE(tdbg::test::shared_machine::as_other_user([&] {
        return tdbg::test::make_directory(theirs, 01777) | tdbg::test::make_link(dir.path() / "c.html", theirs / "c.html");
    }));
    // Our link in the sticky folder, and their link (chown'ed to them) in a folder of ours.
    fs::create_symlink(dir.path() / "a.html", shared / "a.html");
    const fs::path ours = dir.path() / "ours";
    fs::create_directories(ours);
    fs::create_symlink(dir.path() / "b.html", ours / "b.html");
    REQUIRE(::lchown((ours / "b.html").c_str(), 65534, 65534) == 0);
    for (const fs::path& link : {shared / "a.html", ours / "b.html", theirs / "c.html"}) {
        const command_result r = tdbg_run({"report", run.string(), "-o", link.string()});
        INFO(link << "\nexit " << r.status << "\nstderr: " << r.err);
        CHECK(r.status == 0);
        CHECK(fs::is_symlink(link));
        CHECK_THAT(read_file(fs::read_symlink(link)), Catch::Contains("<html"));
    }
}
