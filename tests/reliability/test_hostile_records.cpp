// Hostile records: memory (docs/reliability.md). A record that is small on disk but costly
// to hold — a DT_STRING tensor of millions of empty strings (two bytes an element), an Event
// whose Summary holds millions of small values before its tensor's, a TensorProto with
// millions of values in a typed field its dtype does not read — is read by `tdbg show`,
// `dump`, `rules` and `report` in at most twice its size and a constant: the strings are
// viewed in the record, the Event refused at its second summary value, before it is read,
// the foreign values counted, never kept.
// Each command runs under `ulimit -v` of the program's own start (its libraries mapped), twice
// the record, and a constant; reading a std::string per string, or every summary value, needs
// many times more.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hostile_records.hpp"
#include "support.hpp"
#include "tdbg/core/detail/sha256.hpp"

namespace fs = std::filesystem;
namespace hostile = tdbg::test::hostile;

namespace {

// `tdbg args...` under `ulimit -v kilobytes`, its output kept.
tdbg::test::command_result hostile_limited_run(std::uint64_t kilobytes, const std::vector<std::string>& args) {
    std::string command = "ulimit -v " + std::to_string(kilobytes) + " && exec " + tdbg::test::shell_quote(TDBG_CLI_PATH);
    for (const auto& a : args) {
        command += " " + tdbg::test::shell_quote(a);
    }
    return tdbg::test::run_shell(command);
}

// The smallest limit, in KiB, under which `tdbg --version` runs: the program's libraries mapped.
std::uint64_t hostile_start_kilobytes() {
    std::uint64_t kb = 16 * 1024;
    while (kb < 512 * 1024 && hostile_limited_run(kb, {"--version"}).status != 0) {
        kb += 1024;
    }
    REQUIRE(kb < 512 * 1024);
    return kb;
}

// Above twice the record: the program's start, and room for its own work (threads' stacks,
// the index, a page), which does not grow with the record.
constexpr std::uint64_t hostile_constant_kilobytes = 64 * 1024;

} // namespace

TEST_CASE("hostile records: a tensor of millions of empty strings is read in twice its record") {
#if defined(__SANITIZE_ADDRESS__)
    TDBG_SKIP("AddressSanitizer reserves terabytes of address space at start: a ulimit -v cannot apply to it");
#endif
    tdbg::test::temp_dir dir("hostile_strings");
    const fs::path run = dir.path() / "run";
    constexpr std::size_t count = 8'000'000; // a 16 MB record; a std::string each is 256 MB
    const std::uint64_t record = hostile::write_one_record_run(run, "names", hostile::empty_strings_event("names", count));
    REQUIRE(record > 2 * count);
    const std::uint64_t limit = hostile_start_kilobytes() + 2 * record / 1024 + hostile_constant_kilobytes;
    INFO("record of " << record << " bytes, ulimit -v " << limit << " KiB");

    const auto show = hostile_limited_run(limit, {"show", run.string(), "names"});
    INFO("tdbg show: exit " << show.status << "\n" << show.out.substr(0, 2000) << show.err);
    REQUIRE(show.status == 0);
    CHECK(show.out == "names  step 0 (TRAIN step 0)  str [8000000]\n['' '' '' ... '' '' '']\n");

    const auto dump = hostile_limited_run(limit, {"dump", run.string()});
    INFO("tdbg dump: exit " << dump.status << "\n" << dump.err);
    REQUIRE(dump.status == 0);
    const auto doc = nlohmann::json::parse(dump.out);
    const auto& entry = doc["tensors"]["names"]["entries"][0];
    CHECK(entry["dtype"] == "str");
    CHECK(entry["size"] == count);
    CHECK(entry["shape"] == nlohmann::json::array({count}));
    // Each element's bytes (none) followed by NUL.
    tdbg::detail::sha256 nuls;
    const std::string block(1 << 16, '\0');
    for (std::size_t left = count; left > 0;) {
        const std::size_t n = std::min(left, block.size());
        nuls.update(std::string_view(block.data(), n));
        left -= n;
    }
    CHECK(entry["sha256"] == nuls.hex_digest());
    CHECK(entry["reductions"]["max"]["unavailable"] == "dtype_mismatch");

    // AllZero reads the value, which is no number: nothing evaluated, exit 2, and said why.
    const auto rules = hostile_limited_run(limit, {"rules", run.string(), "--rule", "AllZero", "--param", "tensor_regex=.*"});
    INFO("tdbg rules: exit " << rules.status << "\n" << rules.out << rules.err);
    CHECK(rules.status == 2);
    CHECK(rules.out.find("AllZero: NothingEvaluated") != std::string::npos);
    CHECK(rules.err.find("out of memory") == std::string::npos);

    const fs::path page = dir.path() / "page.html";
    const auto report = hostile_limited_run(limit, {"report", run.string(), "--rule", "AllZero", "--param",
                                            "tensor_regex=.*", "-o", page.string()});
    INFO("tdbg report: exit " << report.status << "\n" << report.out << report.err);
    REQUIRE(report.status == 0);
    CHECK(report.out.find("1 of 1 tensors, 1 rule") != std::string::npos);
    CHECK(tdbg::test::read_file(page).find("names") != std::string::npos);
}

TEST_CASE("hostile records: an Event of millions of summary values is refused at its second, in twice its record") {
#if defined(__SANITIZE_ADDRESS__)
    TDBG_SKIP("AddressSanitizer reserves terabytes of address space at start: a ulimit -v cannot apply to it");
#endif
    tdbg::test::temp_dir dir("hostile_values");
    const fs::path run = dir.path() / "run";
    constexpr std::size_t count = 1'000'000; // 21 MB; a summary_value each is over 200 MB
    const std::uint64_t record = hostile::write_one_record_run(run, "w", hostile::many_values_event("w", count));
    REQUIRE(record > 20 * count);
    const std::uint64_t limit = hostile_start_kilobytes() + 2 * record / 1024 + hostile_constant_kilobytes;
    INFO("record of " << record << " bytes, ulimit -v " << limit << " KiB");
    // Where the second value starts: the record's header (12 bytes), the Event's summary key
    // and length (1 + 4 bytes), the first value (its key, its length and 19 bytes).
    const std::string refusal = "events/000000000000/000000000000_worker_0.tfevents at byte 38: expected an Event "
                                "with one tensor summary, found a second summary value";

    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"show", run.string(), "w"}, std::vector<std::string>{"dump", run.string()},
          std::vector<std::string>{"rules", run.string(), "--rule", "AllZero", "--param", "tensor_regex=.*"}}) {
        const auto r = hostile_limited_run(limit, args);
        INFO("tdbg " << args.front() << ": exit " << r.status << "\n" << r.out << r.err);
        CHECK(r.status == 2);
        CHECK((r.out + r.err).find(refusal) != std::string::npos);
    }
    const fs::path page = dir.path() / "page.html";
    const auto report =
        hostile_limited_run(limit, {"report", run.string(), "--rule", "AllZero", "--param", "tensor_regex=.*", "-o", page.string()});
    INFO("tdbg report: exit " << report.status << "\n" << report.out << report.err);
    CHECK(report.status == 0);
    CHECK(report.err.find("warning: rule AllZero could not be evaluated: " + refusal) != std::string::npos);
    CHECK(fs::exists(page));
}

TEST_CASE("hostile records: values in a typed field the dtype does not read are counted, never kept") {
#if defined(__SANITIZE_ADDRESS__)
    TDBG_SKIP("AddressSanitizer reserves terabytes of address space at start: a ulimit -v cannot apply to it");
#endif
    tdbg::test::temp_dir dir("hostile_typed");
    const fs::path run = dir.path() / "run";
    constexpr std::size_t count = 16'000'000; // a 16 MB record; as int64s, 128 MB
    const std::uint64_t record = hostile::write_one_record_run(run, "f", hostile::foreign_values_event("f", count));
    const std::uint64_t limit = hostile_start_kilobytes() + 2 * record / 1024 + hostile_constant_kilobytes;
    INFO("record of " << record << " bytes, ulimit -v " << limit << " KiB");
    const auto show = hostile_limited_run(limit, {"show", run.string(), "f"});
    INFO("tdbg show: exit " << show.status << "\n" << show.out << show.err);
    CHECK(show.status == 0);
    CHECK(show.out == "f  step 0 (TRAIN step 0)  float32 [2]\n[1. 2.]\n");
    const auto dump = hostile_limited_run(limit, {"dump", run.string()});
    INFO("tdbg dump: exit " << dump.status << "\n" << dump.err);
    REQUIRE(dump.status == 0);
    CHECK(nlohmann::json::parse(dump.out)["tensors"]["f"]["entries"][0]["value"] == nlohmann::json::array({1.0, 2.0}));
}
