// A shared machine (docs/reliability.md, "A shared machine: nobody else's links or
// directories"): in a sticky, world-writable folder such as /tmp, another user gets there first,
// making the trainer's run directory, or placing links at the names of the files the hook is
// about to write (its temporary names, the SageMaker metrics file, the training state file)
// that point at the victim's own files. Whatever they placed, no byte of the victim's files
// changes: a directory of theirs is refused, naming it and its owner, a temporary file is
// created new under a name nobody can guess, and a link is replaced, never written through.

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "storage/shared_machine.hpp"
#include "support.hpp"
#include "tdbg/format/job_claim.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/storage/detail/owned_directory.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace fs = std::filesystem;
using tdbg::test::shared_machine;

namespace {

// The keys a one-worker hook of two steps writes: claim, collections, two event and two index
// files, the end marker.
std::vector<std::string> run_keys() {
    return {tdbg::format::claim_key("worker_0"),
            tdbg::format::collections_file_key("worker_0"),
            tdbg::format::event_file_key(0, "worker_0"),
            tdbg::format::event_file_key(1, "worker_0"),
            tdbg::format::index_file_key(0, "worker_0"),
            tdbg::format::index_file_key(1, "worker_0"),
            std::string(tdbg::format::end_marker_key)};
}

// The number this process's next local_storage temporary file would carry, were the names
// `<file>.<pid>.<n>.tmp` with a counter, as they were: read off a probe's temporary file. 0
// where the name carries no such number (names nobody can guess).
std::uint64_t next_temporary_number(const fs::path& scratch) {
    const tdbg::local_storage probe(scratch);
    std::uint64_t n = 0;
    {
        auto w = probe.open_write("probe");
        for (const auto& entry : fs::directory_iterator(scratch)) {
            const std::string name = entry.path().filename().string(); // probe.<pid>.<n>.tmp
            const std::string head = "probe." + std::to_string(::getpid()) + ".";
            if (name.rfind(head, 0) != 0 || name.size() < head.size() + 5) {
                continue;
            }
            const std::string middle = name.substr(head.size(), name.size() - head.size() - 4);
            if (!middle.empty() && middle.size() < 10 && middle.find_first_not_of("0123456789") == std::string::npos) {
                n = std::stoull(middle) + 1;
            }
        }
    }
    fs::remove_all(scratch);
    return n;
}

// The temporary names of `final_path` this process could use next, were they guessable (to be
// called in this process, not in the other user's child: the names carry the pid).
std::vector<fs::path> guessed_temporaries(const fs::path& final_path, std::uint64_t from) {
    std::vector<fs::path> out;
    for (std::uint64_t n = from; n < from + 48; ++n) {
        fs::path p = final_path;
        p += "." + std::to_string(::getpid()) + "." + std::to_string(n) + ".tmp";
        out.push_back(p);
    }
    return out;
}

tdbg::hook_options two_step_options(const fs::path& run) {
    tdbg::hook_options o;
    o.out_dir = run.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.sagemaker_metrics_dir = "";
    return o;
}

// Two steps of a scalar each, then close; the hook's write error, if any.
std::optional<std::string> train_two_steps(const tdbg::hook_options& options) {
    tdbg::hook h(options);
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        h.save_scalar("loss", 0.5 * step, true);
    }
    h.close();
    return h.write_error();
}

const std::string other_user = tdbg::detail::user_description(65534);

} // namespace

TEST_CASE("shared machine: a run directory another user made first, with links at the hook's temporary names, is "
          "refused naming it and its owner, and the victim's files are untouched") {
    shared_machine machine("shared_run_dir");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    const std::uint64_t next = next_temporary_number(machine.shared() / "probe");
    const fs::path run = machine.shared() / "run";
    const std::vector<std::string> keys = run_keys();
    std::vector<fs::path> victims;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        victims.push_back(machine.victim_file("victim_" + std::to_string(i), "the victim's file " + std::to_string(i)));
    }
    const bool links = GENERATE(true, false);
    INFO((links ? "links to the victim's files" : "plain files of the other user's, mode 0666") << " at the temporary names");
    // The other user: the run directory and its folders (mode 0777), and at each temporary name
    // the hook could use, a link to one of the victim's files, or a file of their own.
    std::vector<std::vector<fs::path>> temporaries;
    for (const std::string& key : keys) {
        temporaries.push_back(guessed_temporaries(run / key, next));
    }
    REQUIRE(shared_machine::as_other_user([&] {
        int failed = tdbg::test::make_directory(run, 0777);
        for (const char* dir : {".tdbg", ".tdbg/claims", "collections", "collections/000000000", "events",
                                "events/000000000000", "events/000000000001", "index", "index/000000000"}) {
            failed |= tdbg::test::make_directory(run / dir, 0777);
        }
        for (std::size_t i = 0; i < keys.size(); ++i) {
            for (const fs::path& temp : temporaries[i]) {
                failed |= links ? tdbg::test::make_link(victims[i], temp) : tdbg::test::make_file(temp, "theirs", 0666);
            }
        }
        return failed;
    }));
    const std::optional<std::string> error = train_two_steps(two_step_options(run));
    INFO(machine.victim_changes());
    CHECK(machine.victim_changes().empty());
    REQUIRE(error.has_value());
    CHECK_THAT(*error, Catch::Contains(run.string() + ": a directory owned by " + other_user) &&
                           Catch::Contains("refused"));
    // Nothing of the victim's in the other user's directory: every entry is theirs.
    for (const auto& entry : fs::recursive_directory_iterator(run)) {
        struct stat st {};
        REQUIRE(::lstat(entry.path().c_str(), &st) == 0);
        INFO(entry.path());
        CHECK(st.st_uid == 65534U);
    }
}

TEST_CASE("shared machine: in a sticky run directory, the hook creates its files new and publishes the whole run, "
          "whatever links another user placed at its temporary and final names") {
    shared_machine machine("shared_sticky_run");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    const std::uint64_t next = next_temporary_number(machine.shared() / "probe");
    // The run directory is the sticky folder itself (as out_dir=/tmp would be): others may add
    // entries, but neither remove nor rename the hook's.
    const fs::path run = machine.shared();
    const fs::path marker = machine.victim_file("marker", "the victim's marker");
    const fs::path final_file = machine.victim_file("final", "the victim's final");
    const std::vector<fs::path> temporaries = guessed_temporaries(run / tdbg::format::end_marker_key, next);
    REQUIRE(shared_machine::as_other_user([&] {
        int failed = 0;
        for (const fs::path& temp : temporaries) {
            failed |= tdbg::test::make_link(marker, temp);
        }
        return failed | tdbg::test::make_link(final_file, run / "final.json");
    }));
    const std::optional<std::string> error = train_two_steps(two_step_options(run));
    CHECK_FALSE(error.has_value());
    INFO(machine.victim_changes());
    CHECK(machine.victim_changes().empty());
    CHECK(tdbg::create_trial(run.string()).steps() == std::vector<std::int64_t>{0, 1});
    // At a final name, their link is replaced by the file, as a rename replaces a name.
    tdbg::local_storage(run).put("final.json", "ours");
    CHECK(machine.victim_changes().empty());
    struct stat st {};
    REQUIRE(::lstat((run / "final.json").c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK(st.st_uid == ::geteuid());
    CHECK(tdbg::test::read_file(run / "final.json") == "ours");
}

TEST_CASE("shared machine: a directory another user made inside a sticky run directory is refused naming it and "
          "its owner") {
    shared_machine machine("shared_sticky_subdir");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    const fs::path run = machine.shared();
    const fs::path victim_dir = machine.shared() / ".." / "private";
    machine.victim_file("000000000000_worker_0.json", "the victim's index");
    // `index` a directory of theirs (0777), and `collections` a link of theirs to the victim's folder.
    REQUIRE(shared_machine::as_other_user([&] {
        return tdbg::test::make_directory(run / "index", 0777) |
               tdbg::test::make_link(fs::weakly_canonical(victim_dir), run / "collections");
    }));
    // The hook stops at the first it meets (reading, a link out of the run is refused too).
    const std::optional<std::string> error = train_two_steps(two_step_options(run));
    REQUIRE(error.has_value());
    CHECK_THAT(*error, Catch::Contains(run.string()) && Catch::Contains("refused"));
    INFO(machine.victim_changes());
    CHECK(machine.victim_changes().empty());
    // Each refused as the storage meets it, naming it.
    const tdbg::local_storage storage(run);
    CHECK_THROWS_WITH(storage.put(tdbg::format::index_file_key(0, "worker_0"), "{}"),
                      Catch::Contains((run / "index").string() + ": a directory owned by " + other_user));
    CHECK_THROWS_WITH(storage.put(tdbg::format::collections_file_key("worker_0"), "{}"),
                      Catch::Contains((run / "collections").string() + ": a symbolic link owned by " + other_user) &&
                          Catch::Contains("sticky, world-writable directory"));
    CHECK(machine.victim_changes().empty());
}

TEST_CASE("shared machine: the SageMaker metrics file is never appended through another user's link, and training "
          "goes on") {
    shared_machine machine("shared_metrics");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    tdbg::test::temp_dir dir("shared_metrics_run");
    const fs::path metrics = machine.shared(); // a sticky folder: SAGEMAKER_METRICS_DIRECTORY=/tmp
    const fs::path victim = machine.victim_file("metrics", "the victim's metrics\n");
    const fs::path planted = metrics / (std::to_string(::getpid()) + ".json");
    REQUIRE(shared_machine::as_other_user([&] { return tdbg::test::make_link(victim, planted); }));
    tdbg::hook_options options = two_step_options(dir.path() / "run");
    options.sagemaker_metrics_dir = metrics.string();
    std::vector<std::string> logged;
    options.log = [&](std::string_view line) { logged.emplace_back(line); };
    (void)train_two_steps(options); // the run is written; the metrics are not
    INFO(machine.victim_changes());
    CHECK(machine.victim_changes().empty());
    std::string said;
    for (const std::string& line : logged) {
        if (line.find("SageMaker metrics") != std::string::npos) {
            said += line;
        }
    }
    CHECK_THAT(said, Catch::Contains(planted.string() + ": a symbolic link of " + other_user + ": refused"));
    CHECK(tdbg::create_trial((dir.path() / "run").string()).steps() == std::vector<std::int64_t>{0, 1});
    CHECK(fs::is_symlink(planted));
}

TEST_CASE("shared machine: a TensorBoard directory another user made first is refused naming it and its owner") {
    shared_machine machine("shared_tensorboard");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    tdbg::test::temp_dir dir("shared_tensorboard_run");
    const fs::path tb = machine.shared() / "tb";
    REQUIRE(shared_machine::as_other_user([&] { return tdbg::test::make_directory(tb, 0777); }));
    tdbg::hook_options options = two_step_options(dir.path() / "run");
    options.export_tensorboard = true;
    options.tensorboard_dir = tb.string(); // absolute: a local directory of its own
    const std::optional<std::string> error = train_two_steps(options);
    REQUIRE(error.has_value());
    CHECK_THAT(*error, Catch::Contains(tb.string() + ": a directory owned by " + other_user) &&
                           Catch::Contains("refused"));
    CHECK(fs::is_empty(tb));
}

TEST_CASE("shared machine: the training state file replaces another user's link at metadata.json, never writes "
          "through it") {
    shared_machine machine("shared_state");
    if (const std::string why = machine.why_not(); !why.empty()) {
        TDBG_SKIP(why);
    }
    tdbg::test::temp_dir dir("shared_state_run");
    const fs::path checkpoints = machine.shared(); // a sticky checkpoint folder
    const fs::path victim = machine.victim_file("states.json", "[]");
    const fs::path states = checkpoints / "metadata.json";
    REQUIRE(shared_machine::as_other_user([&] { return tdbg::test::make_link(victim, states); }));
    const fs::path config = dir.path() / "checkpointconfig.json";
    tdbg::test::write_file(config, R"({"LocalPath": ")" + checkpoints.string() + R"("})");
    tdbg::hook_options options = two_step_options(dir.path() / "run");
    options.checkpoint_config_file = config.string();
    {
        tdbg::hook h(options);
        h.begin_step();
        tdbg::test::write_file(checkpoints / "model.pt", "weights"); // a checkpoint: the state is written
        h.begin_step();
        h.close();
        CHECK_FALSE(h.write_error().has_value());
    }
    INFO(machine.victim_changes());
    CHECK(machine.victim_changes().empty());
    struct stat st {};
    REQUIRE(::lstat(states.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK_THAT(tdbg::test::read_file(states), Catch::Contains("\"training-run\": 0"));
}

TEST_CASE("shared machine: links at a run's temporary names are never written through: put, put_if_absent and the "
          "stop marker") {
    // No second user needed: links inside a run of the victim's own (a copied or unpacked run).
    tdbg::test::temp_dir dir("shared_stop_marker");
    const std::uint64_t next = next_temporary_number(dir.path() / "probe");
    const fs::path run = dir.path() / "run";
    fs::create_directories(run / "index");
    const fs::path victim = dir.path() / "victim";
    tdbg::test::write_file(victim, "the victim's file");
    fs::permissions(victim, fs::perms::owner_read | fs::perms::owner_write);
    const std::string marker(tdbg::format::stop_marker_key);
    for (const std::string& key : {marker, std::string("index/put"), std::string("index/absent")}) {
        for (const fs::path& temp : guessed_temporaries(run / key, next)) {
            fs::create_symlink(victim, temp);
        }
    }
    const tdbg::local_storage storage(run);
    tdbg::rules::trigger t;
    t.rule = "LossNotDecreasing";
    t.step = 7;
    t.reason = "the loss stopped decreasing";
    tdbg::rules::write_stop_marker(storage, t);
    storage.put("index/put", "put");
    CHECK(storage.put_if_absent("index/absent", "absent"));
    CHECK(tdbg::test::read_file(victim) == "the victim's file");
    CHECK((fs::status(victim).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
    CHECK(tdbg::parse_stop_marker(storage.read(marker)).step == 7);
    CHECK(storage.read("index/put") == "put");
    CHECK(storage.read("index/absent") == "absent");
    CHECK_FALSE(fs::is_symlink(run / marker));
}

TEST_CASE("shared machine: a run directory of one's own is written as before, one that every user can write into "
          "is refused, and written once sticky") {
    tdbg::test::temp_dir dir("shared_own_dirs");
    const fs::path run = dir.path() / "run";
    CHECK_FALSE(train_two_steps(two_step_options(run)).has_value());
    CHECK(tdbg::create_trial(run.string()).steps() == std::vector<std::int64_t>{0, 1});
    // Open to every user's writes, not sticky: refused, naming it and its mode.
    const fs::path open_run = dir.path() / "open";
    fs::create_directories(open_run);
    fs::permissions(open_run, fs::perms::all);
    const std::optional<std::string> error = train_two_steps(two_step_options(open_run));
    REQUIRE(error.has_value());
    CHECK_THAT(*error, Catch::Contains(open_run.string() + ": a directory of " +
                                       tdbg::detail::user_description(::geteuid()) +
                                       " that every user can write into (mode 0777), and not sticky: refused"));
    CHECK(fs::is_empty(open_run));
    // Made sticky, it is written.
    fs::permissions(open_run, fs::perms::all | fs::perms::sticky_bit);
    CHECK_FALSE(train_two_steps(two_step_options(open_run)).has_value());
    CHECK(tdbg::create_trial(open_run.string()).steps() == std::vector<std::int64_t>{0, 1});
}
