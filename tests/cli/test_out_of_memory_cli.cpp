// The command line out of memory (docs/reliability.md, "Out of memory"): under address-space
// limits from just enough to start to enough to finish, `tdbg rules`, `tdbg diff` and `tdbg ls`
// over runs of 4 MB tensors exit 0, 1 or 2 and never abort (no std::terminate from an allocation
// in a noexcept function or on a thread): out of memory is an error like any other.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>
#include <string>
#include <vector>

#include "support.hpp"
#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/hook/hook.hpp"

namespace fs = std::filesystem;

namespace {

// `tdbg args...` under `ulimit -v megabytes`.
tdbg::test::command_result limited_run(int megabytes, const std::vector<std::string>& args, bool keep_output = false) {
    std::string command = "ulimit -v " + std::to_string(megabytes * 1024) + " && exec " +
                          tdbg::test::shell_quote(TDBG_CLI_PATH);
    for (const auto& a : args) {
        command += " " + tdbg::test::shell_quote(a);
    }
    return tdbg::test::run_shell(keep_output ? command : command + " >/dev/null");
}

// A run of 3 tensors of 1M floats (4 MB each) at 2 steps, each value `scale` times its index.
void write_big_run(const fs::path& dir, float scale) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    tdbg::hook h(o);
    std::vector<float> values(std::size_t{1} << 20U);
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        for (const char* name : {"a", "b", "c"}) {
            for (std::size_t i = 0; i < values.size(); ++i) {
                values[i] = scale * static_cast<float>(i + static_cast<std::size_t>(step));
            }
            h.save_tensor(name, values.data(), {values.size()});
        }
    }
    h.close();
}

} // namespace

TEST_CASE("out of memory: under address-space limits the command line exits 0, 1 or 2, never by a signal") {
#if defined(__SANITIZE_ADDRESS__)
    TDBG_SKIP("AddressSanitizer reserves terabytes of address space at start: a ulimit -v cannot apply to it");
#endif
    tdbg::test::temp_dir dir("out_of_memory");
    write_big_run(dir.path() / "a", 1.0F);
    write_big_run(dir.path() / "b", 2.0F);
    // The smallest limit the program starts under (its libraries mapped).
    int start = 16;
    while (start < 512 && limited_run(start, {"--version"}).status != 0) {
        ++start;
    }
    REQUIRE(start < 512);
    const std::vector<std::vector<std::string>> commands{
        {"rules", (dir.path() / "a").string(), "--rule", "ExplodingTensor", "--rule", "AllZero"},
        {"diff", (dir.path() / "a").string(), (dir.path() / "b").string()},
        {"ls", (dir.path() / "a").string()},
    };
    int out_of_memory = 0;
    int finished = 0;
    for (int megabytes = start; megabytes <= start + 96; megabytes += 4) {
        for (const auto& args : commands) {
            const auto r = limited_run(megabytes, args);
            INFO("ulimit -v " << megabytes << " MB: tdbg " << args.front() << ": exit " << r.status << "\n" << r.err);
            CHECK(r.status >= 0);
            CHECK(r.status <= 2);
            out_of_memory += r.status == 2 ? 1 : 0;
            finished += r.status < 2 ? 1 : 0;
        }
    }
    // The sweep reaches both ends: limits too small for the work, and enough to finish it.
    CHECK(out_of_memory > 0);
    CHECK(finished > 0);
}

TEST_CASE("out of memory: tdbg ls and tdbg dump of a tensor larger than their memory limit hold pieces of it only") {
#if defined(__SANITIZE_ADDRESS__)
    TDBG_SKIP("AddressSanitizer reserves terabytes of address space at start: a ulimit -v cannot apply to it");
#endif
    tdbg::test::temp_dir dir("huge_tensor");
    const fs::path run = dir.path() / "run";
    // 96 MiB of float32, each element its index modulo 1000.
    std::vector<float> values(std::size_t{24} << 20U);
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<float>(i % 1000);
    }
    {
        tdbg::hook_options o;
        o.out_dir = run.string();
        o.save_all = true;
        o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
        tdbg::hook h(o);
        h.begin_step();
        h.save_tensor("huge", values.data(), {values.size() / 4, 4});
        h.close();
    }
    const std::string digest = tdbg::detail::sha256_hex(
        std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    values = {};
    int start = 16;
    while (start < 512 && limited_run(start, {"--version"}).status != 0) {
        ++start;
    }
    REQUIRE(start < 512);
    // A limit well below the tensor's 96 MiB: reading it whole would need more.
    const int limit = start + 48;
    const auto ls = limited_run(limit, {"ls", run.string()}, true);
    INFO("tdbg ls under ulimit -v " << limit << " MB:\n" << ls.out << ls.err);
    REQUIRE(ls.status == 0);
    CHECK(ls.out.find("float32  [6291456, 4]") != std::string::npos);
    const auto dump = limited_run(limit, {"dump", run.string(), "--tensors", "^huge$"}, true);
    INFO("tdbg dump under ulimit -v " << limit << " MB:\n" << dump.err);
    REQUIRE(dump.status == 0);
    const nlohmann::json doc = nlohmann::json::parse(dump.out);
    const auto& entry = doc["tensors"]["huge"]["entries"][0];
    CHECK(entry["sha256"] == digest);
    CHECK(entry["shape"] == nlohmann::json::array({6291456, 4}));
    CHECK(entry["reductions"]["max"]["value"] == 999.0);
    CHECK(entry["reductions"]["min"]["value"] == 0.0);
    CHECK(entry["reductions"]["mean"]["source"] == "computed");
}
