// A run that cannot be read is an error, never a run with less in it: an event file the index
// lists but that is missing or unreadable, an index directory that cannot be listed, an index
// file that is not a regular file, a link out of the run. A rule evaluation that meets one ends
// in status Error; it never skips the step as "not saved".

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "golden.hpp"
#include "run_writer.hpp"
#include "storage/unprivileged.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"
#include "tdbg/trial/unreadable_event_file.hpp"

namespace fs = std::filesystem;
using tdbg::test::iota_value;
using tdbg::test::saved_tensor;

// The rule engine skips a step on these (invoke.ipp); an unreadable file must be none of them.
static_assert(!std::is_base_of_v<tdbg::tensor_unavailable_for_step, tdbg::unreadable_event_file>);
static_assert(!std::is_base_of_v<tdbg::tensor_unavailable, tdbg::unreadable_event_file>);
static_assert(!std::is_base_of_v<tdbg::step_unavailable, tdbg::unreadable_event_file>);
static_assert(!std::is_base_of_v<tdbg::no_more_data, tdbg::unreadable_event_file>);
static_assert(std::is_base_of_v<tdbg::storage_error, tdbg::unreadable_event_file>);

namespace {

// Reads "w" at every step; never met.
class reads_w : public tdbg::rules::rule<reads_w> {
public:
    static constexpr std::string_view rule_name = "ReadsW";
    explicit reads_w(tdbg::trial base) : rule(std::move(base), tdbg::rules::rule_params()) {}
    bool invoke_at_step(std::int64_t step) {
        (void)value("w", step);
        return false;
    }
};

// Steps 0..n-1 of one worker, each with "w"; finished unless `live`.
void write_run(const fs::path& dir, int n, bool live = false) {
    const tdbg::test::run_writer w(dir);
    w.collections("worker_0", 1);
    for (int step = 0; step < n; ++step) {
        w.step(step, "worker_0", tdbg::mode::train, step, {saved_tensor{"w", iota_value(static_cast<float>(step), 4), {}, {}}});
    }
    if (!live) {
        w.end();
    }
}

// The elements of a float32 value.
std::vector<float> floats(const tdbg::tensor_value& v) {
    const float* p = v.data_as<float>();
    return {p, p + v.size()};
}

std::string event_path(const fs::path& dir, std::int64_t step) {
    return (dir / tdbg::format::event_file_key(step, "worker_0")).string();
}

// A local storage whose index listings fail on demand, as an unreadable directory's do.
class failing_listing_storage {
public:
    explicit failing_listing_storage(fs::path root) : inner_(std::move(root)) {}
    void put(const std::string& key, std::string_view bytes) const { inner_.put(key, bytes); }
    [[nodiscard]] tdbg::local_storage::writer open_write(const std::string& key) const { return inner_.open_write(key); }
    [[nodiscard]] std::string read(const std::string& key) const { return inner_.read(key); }
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        return inner_.read_range(key, offset, length);
    }
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const {
        if (fail->load() && prefix.rfind("index", 0) == 0) {
            throw tdbg::storage_error("cannot list the directory " + inner_.describe() +
                                      "/index/000000000: Permission denied (injected)");
        }
        return inner_.list(prefix, start_after);
    }
    [[nodiscard]] bool exists(const std::string& key) const { return inner_.exists(key); }
    [[nodiscard]] std::string describe() const { return inner_.describe(); }

    std::shared_ptr<std::atomic<bool>> fail = std::make_shared<std::atomic<bool>>(false);

private:
    tdbg::local_storage inner_;
};

} // namespace

TEST_CASE("unreadable runs: a missing event file is an unreadable_event_file naming it, never tensor_unavailable_for_step") {
    tdbg::test::temp_dir dir("unreadable_missing");
    write_run(dir.path(), 3);
    fs::remove(event_path(dir.path(), 1));
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(floats(t.tensor("w").value(0)) == std::vector<float>{0, 1, 2, 3});
    CHECK(floats(t.tensor("w").value(2)) == std::vector<float>{2, 3, 4, 5});
    try {
        (void)t.tensor("w").value(1);
        FAIL("a missing event file was read");
    } catch (const tdbg::tensor_unavailable_for_step& e) {
        FAIL("a missing event file reads as 'not saved': " << e.what());
    } catch (const tdbg::unreadable_event_file& e) {
        CHECK(e.file() == event_path(dir.path(), 1));
        const std::string what = e.what();
        CHECK(what.find(event_path(dir.path(), 1)) != std::string::npos);
        CHECK(what.find("tensor 'w'") != std::string::npos);
        CHECK(what.find("does not exist") != std::string::npos);
    }
    // Every read of its value says so: reductions computed from it, and its shape.
    CHECK_THROWS_AS(t.tensor("w").reduction_value(1, "mean"), tdbg::unreadable_event_file);
    CHECK_THROWS_AS(t.tensor("w").shape(1), tdbg::unreadable_event_file);
    CHECK_THROWS_AS(t.tensor("w").values(), tdbg::unreadable_event_file);
}

TEST_CASE("unreadable runs: a rule over a step whose event file is missing ends in Error, the step is not skipped") {
    tdbg::test::temp_dir dir("unreadable_rule");
    write_run(dir.path(), 4);
    fs::remove(event_path(dir.path(), 2));
    const auto t = tdbg::create_trial(dir.path().string());
    reads_w direct(t);
    CHECK_THROWS_AS(tdbg::rules::invoke_rule(direct), tdbg::unreadable_event_file);

    tdbg::rules::any_rule r = reads_w(t);
    tdbg::rules::invoke_options options;
    options.threads = 1;
    const auto result = r.evaluate(options);
    CHECK(result.status() == tdbg::rules::evaluation_status::error);
    CHECK(result.error.find(event_path(dir.path(), 2)) != std::string::npos);
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0, 1});
    CHECK(result.skipped_steps.empty());
    CHECK(result.all_skipped_steps().empty());
}

TEST_CASE("unreadable runs: VanishingGradient over a run whose event files are gone is an Error, not NoIssuesFound") {
    tdbg::test::temp_dir dir("unreadable_vanishing");
    const fs::path run = dir.path() / "run";
    fs::copy(tdbg::test::fixture_run("vanishing_run"), run, fs::copy_options::recursive);
    for (const auto& entry : fs::directory_iterator(run / "events")) {
        fs::remove_all(entry.path()); // rm events/*
    }
    tdbg::rules::any_rule r = tdbg::rules::vanishing_gradient(tdbg::create_trial(run.string()));
    const auto result = r.evaluate();
    CHECK(result.status() == tdbg::rules::evaluation_status::error);
    CHECK(result.error.find((run / "events" / "000000000000").string()) != std::string::npos);
    CHECK(result.all_skipped_steps().empty());
    CHECK(result.triggered_steps.empty());
}

TEST_CASE("unreadable runs: an index that cannot be listed is an error for the trial and the rule, never a run without steps") {
    tdbg::test::temp_dir dir("unreadable_listing");
    write_run(dir.path(), 3, true);
    failing_listing_storage storage(dir.path());
    const auto fail = storage.fail;

    fail->store(true);
    CHECK_THROWS_AS(tdbg::open_trial(storage, "failing"), tdbg::storage_error);
    CHECK_THROWS_WITH(tdbg::open_trial(storage, "failing"), Catch::Contains("index/000000000: Permission denied"));

    fail->store(false);
    const tdbg::trial t = tdbg::open_trial(storage, "failing");
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2});
    fail->store(true); // the live run's next listing fails
    CHECK_THROWS_AS(t.refresh(), tdbg::storage_error);
    tdbg::rules::any_rule r = reads_w(t);
    tdbg::rules::invoke_options options;
    options.end_step = 5;
    const auto result = r.evaluate(options);
    CHECK(result.status() == tdbg::rules::evaluation_status::error);
    CHECK(result.error.find("index/000000000: Permission denied") != std::string::npos);
}

TEST_CASE("unreadable runs: an index directory without permissions is an error naming it (local run)") {
    // Where the user that permissions apply to can reach it, wherever the build tree lies.
    const tdbg::test::unprivileged_scratch dir("unreadable_permissions");
    if (const std::string why = dir.why_unreachable(); !why.empty()) {
        TDBG_SKIP(why);
    }
    write_run(dir.path(), 3);
    const fs::path locked = dir.path() / "index" / "000000000";
    fs::permissions(locked, fs::perms::none);
    const auto status = tdbg::test::run_unprivileged([&] {
        try {
            const auto t = tdbg::create_trial(dir.path().string());
            std::fprintf(stderr, "opened a run with an unreadable index directory: %zu steps\n", t.steps().size());
            return 1;
        } catch (const tdbg::storage_error& e) {
            return tdbg::test::permission_denied_status(e.what(), locked.string());
        }
    });
    fs::permissions(locked, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
}

TEST_CASE("unreadable runs: an index file or an event file that is a FIFO is an error naming it, and never blocks") {
    tdbg::test::temp_dir dir("unreadable_fifo");
    write_run(dir.path(), 3);
    // An event file: read by the index's key, never listed.
    const std::string event = event_path(dir.path(), 1);
    fs::remove(event);
    REQUIRE(::mkfifo(event.c_str(), 0644) == 0);
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK_THROWS_AS(t.tensor("w").value(1), tdbg::unreadable_event_file);
    CHECK_THROWS_WITH(t.tensor("w").value(1), Catch::Contains(event + ": a FIFO, not a regular file"));
    CHECK(floats(t.tensor("w").value(2)) == std::vector<float>{2, 3, 4, 5});
    // An index file: the step is not silently dropped.
    const fs::path index = dir.path() / tdbg::format::index_file_key(1, "worker_0");
    fs::remove(index);
    REQUIRE(::mkfifo(index.c_str(), 0644) == 0);
    CHECK_THROWS_AS(tdbg::create_trial(dir.path().string()), tdbg::storage_error);
    CHECK_THROWS_WITH(tdbg::create_trial(dir.path().string()), Catch::Contains(index.string() + ": a FIFO"));
}

TEST_CASE("unreadable runs: events or index linked out of the run are refused naming the link, links inside are followed") {
    tdbg::test::temp_dir dir("unreadable_links");
    const fs::path run = fs::absolute(dir.path() / "run");
    write_run(run, 3);
    // Inside: events/ moved into the run and linked to; the values read as before.
    fs::create_directories(run / "data");
    fs::rename(run / "events", run / "data" / "events");
    fs::create_directory_symlink("data/events", run / "events");
    {
        const auto t = tdbg::create_trial(run.string());
        CHECK(floats(t.tensor("w").value(1)) == std::vector<float>{1, 2, 3, 4});
    }
    // Outside: the same directory moved out of the run.
    const fs::path elsewhere = fs::absolute(dir.path() / "elsewhere");
    fs::create_directories(elsewhere);
    fs::rename(run / "data" / "events", elsewhere / "events");
    fs::remove(run / "events");
    fs::create_directory_symlink(elsewhere / "events", run / "events");
    {
        const auto t = tdbg::create_trial(run.string());
        const std::string what = tdbg::test::error_of([&] { (void)t.tensor("w").value(1); });
        CHECK_THROWS_AS(t.tensor("w").value(1), tdbg::unreadable_event_file);
        CHECK(what.find((run / "events").string() + ": a symbolic link to '" + (elsewhere / "events").string()) !=
              std::string::npos);
        CHECK(what.find("leads out of the run directory") != std::string::npos);
    }
    // The index linked out: refused when the trial opens.
    fs::rename(run / "index", elsewhere / "index");
    fs::create_directory_symlink("../elsewhere/index", run / "index");
    const std::string what = tdbg::test::error_of([&] { (void)tdbg::create_trial(run.string()); });
    CHECK(what.find((run / "index").string() + ": a symbolic link to '../elsewhere/index'") != std::string::npos);
    CHECK(what.find("leads out of the run directory") != std::string::npos);
}
