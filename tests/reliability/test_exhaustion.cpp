// The writer's promises when the process runs out of file descriptors or the
// disk fills up, tried with the real trainer in a child process: a bounded
// number of open files per hook, training that finishes, and a run that
// `tdbg ls` and `tdbg dump` read as a prefix of the steps trained, with no
// event file that no index names, no temporary file and no end marker.

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "run_check.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"

using tdbg::test::run_shell;
using tdbg::test::shell_quote;
using tdbg::test::temp_dir;
namespace reliability = tdbg::test::reliability;
namespace fs = std::filesystem;

namespace {

std::string trainer(const fs::path& run, int steps) {
    return shell_quote(TDBG_RELIABILITY_TRAINER) + " " + shell_quote(run.string()) + " " + std::to_string(steps);
}

// `tdbg ls` and `tdbg dump --json` read the run, and it holds exactly `steps` (0, 1, ...).
void check_cli_reads(const fs::path& run, std::size_t steps) {
    const auto ls = run_shell(shell_quote(TDBG_CLI_PATH) + " ls " + shell_quote(run.string()));
    INFO(ls.err);
    CHECK(ls.status == 0);
    const auto dump = run_shell(shell_quote(TDBG_CLI_PATH) + " dump --json " + shell_quote(run.string()) + " >/dev/null");
    INFO(dump.err);
    CHECK(dump.status == 0);
    const auto published = reliability::published_steps(run);
    CHECK(published.size() == steps);
    std::int64_t expected = 0;
    std::set<std::string> indexed;
    for (const std::int64_t s : published) {
        CHECK(s == expected++);
        indexed.insert(tdbg::format::event_file_key(s, "worker_0"));
    }
    CHECK(reliability::event_files(run) == indexed);
    CHECK(tdbg::test::temporary_files(run) == 0);
    if (steps > 0) {
        CHECK(reliability::check_published_run(run) == steps);
    }
}

} // namespace

TEST_CASE("exhaustion: a trainer under ulimit -n 24 writes every step (open files do not grow with the queue)") {
    temp_dir dir("nofile");
    const fs::path run = dir.path() / "run";
    constexpr int steps = 300;
    // Steps are queued far faster than the disk takes them: a writer that opened a file
    // per queued step ran out of descriptors here.
    const auto r = run_shell("ulimit -n 24 && exec " + trainer(run, steps));
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("saving stopped") == std::string::npos);
    CHECK(fs::exists(run / tdbg::format::end_marker_key));
    check_cli_reads(run, steps);
}

TEST_CASE("exhaustion: a trainer on a full tmpfs finishes, and its run reads as a prefix of the steps trained") {
    temp_dir dir("full_tmpfs");
    const fs::path mount = dir.path() / "mnt";
    fs::create_directories(mount);
    // A private mount namespace (as an unprivileged user where allowed), so that the
    // test needs no root and leaves nothing mounted. The run is copied out before the
    // namespace, and its tmpfs, go away.
    const auto probe = run_shell("unshare --user --map-root-user --mount true");
    if (probe.status != 0) {
        TDBG_SKIP("cannot make a private mount namespace here (unshare --user --mount): " << probe.err);
    }
    for (const char* size : {"300k", "2m"}) {
        INFO("tmpfs of " << size);
        const fs::path copy = dir.path() / (std::string("run_") + size);
        const std::string script = "mount -t tmpfs -o size=" + std::string(size) + " tdbg_full " +
                                   shell_quote(mount.string()) + " && " + trainer(mount / "run", 200) +
                                   "; status=$?; cp -a " + shell_quote((mount / "run").string()) + " " +
                                   shell_quote(copy.string()) + "; df -k " + shell_quote(mount.string()) +
                                   " >&2; exit $status";
        const auto r = run_shell("unshare --user --map-root-user --mount sh -c " + shell_quote(script));
        INFO(r.out << r.err);
        REQUIRE(r.status == 0); // training went on
        CHECK(r.out.find("saving stopped") != std::string::npos);
        CHECK(r.out.find("No space left on device") != std::string::npos);
        CHECK_FALSE(fs::exists(copy / tdbg::format::end_marker_key));
        const auto published = reliability::published_steps(copy);
        CHECK(published.size() < 200);
        if (published.empty()) {
            // Nothing published: no index file (an index directory made for the one that
            // could not be written may remain, empty), and no event file nothing reads.
            std::size_t index_files = 0;
            if (fs::exists(copy / "index")) {
                for (const auto& entry : fs::recursive_directory_iterator(copy / "index")) {
                    index_files += entry.is_directory() ? 0 : 1;
                }
            }
            CHECK(index_files == 0);
            CHECK(reliability::event_files(copy).empty());
            continue;
        }
        CHECK(fs::exists(copy / tdbg::format::collections_file_key("worker_0")));
        check_cli_reads(copy, published.size());
    }
}
