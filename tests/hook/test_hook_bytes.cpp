// Byte-level: the records tdbg writes for known tensors are the records
// Python smdebug wrote for them, but for the wall time.

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::read_record;
using tdbg::test::temp_dir;
using json = nlohmann::json;

namespace {

const json& golden_value(const json& golden, const std::string& tensor, std::int64_t step, const std::string& worker) {
    for (const auto& e : golden["tensors"][tensor]["entries"]) {
        if (e["step"] == step && e["worker"] == worker) {
            return e["value"];
        }
    }
    FAIL("no golden value for " << tensor);
    return golden;
}

// Compares two whole records, the 8 bytes of Event.wall_time (payload field 1,
// right after the 12-byte header and its tag byte) excepted.
void check_same_record_but_wall_time(std::string ours, const std::string& theirs) {
    REQUIRE(ours.size() == theirs.size());
    REQUIRE(ours.size() > 21);
    CHECK(static_cast<unsigned char>(ours[12]) == 0x09); // field 1, 64-bit
    CHECK(static_cast<unsigned char>(theirs[12]) == 0x09);
    ours.replace(13, 8, theirs.substr(13, 8));
    CHECK(ours == theirs);
}

} // namespace

TEST_CASE("bytes: records equal smdebug's for raw tensors of the 8 dtypes its run holds, a scalar and stored reductions") {
    const auto fixtures = tdbg::test::fixtures_dir();
    const auto fixture = fixtures / "core_modes_workers";
    const json golden = json::parse(tdbg::test::read_file(fixtures / "core_modes_workers.golden.json"));
    temp_dir dir("hook_bytes");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_all = true;
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    collection mixed("mixed");
    mixed.include("^mixed/");
    mixed.set_reduction_config(reduction_config::parse("min,max", true));
    o.collections.push_back(mixed);
    {
        hook h(o);
        h.set_mode(mode::train);
        h.begin_step();
        const auto f64 = golden_value(golden, "raw/f64_1d", 0, "worker_0").get<std::vector<double>>();
        h.save_tensor("raw/f64_1d", tensor_value(f64));
        std::vector<std::int32_t> i32;
        for (const auto& a : golden_value(golden, "raw/i32_3d", 0, "worker_0")) {
            for (const auto& b : a) {
                for (const auto& c : b) {
                    i32.push_back(c.get<std::int32_t>());
                }
            }
        }
        h.save_tensor("raw/i32_3d", tensor_value(i32, {2, 2, 3}));
        h.save_tensor("raw/bool_1d", tensor_value(golden_value(golden, "raw/bool_1d", 0, "worker_0").get<std::vector<bool>>()));
        std::vector<float16> f16;
        for (const auto& v : golden_value(golden, "raw/f16_1d", 0, "worker_0")) {
            f16.emplace_back(v.get<float>());
        }
        h.save_tensor("raw/f16_1d", tensor_value(f16));
        std::vector<std::int8_t> i8; // smdebug's reader shows int8 as uint8
        for (const auto& v : golden_value(golden, "raw/i8_1d", 0, "worker_0")) {
            i8.push_back(static_cast<std::int8_t>(static_cast<std::uint8_t>(v.get<int>())));
        }
        h.save_tensor("raw/i8_1d", tensor_value(i8));
        h.save_tensor("raw/u8_1d", tensor_value(golden_value(golden, "raw/u8_1d", 0, "worker_0").get<std::vector<std::uint8_t>>()));
        h.save_tensor("raw/i64_scalar",
                      tensor_value::scalar(golden_value(golden, "raw/i64_scalar", 0, "worker_0").get<std::int64_t>()));
        h.save_tensor("raw/f32_scalar",
                      tensor_value::scalar(golden_value(golden, "raw/f32_scalar", 0, "worker_0").get<float>()));
        // A typed pointer: its stored reductions come from compute_reductions_of<float>.
        const auto f32 = golden_value(golden, "mixed/f32_1d", 0, "worker_0").get<std::vector<float>>();
        h.save_tensor("mixed/f32_1d", f32.data(), {f32.size()});
        h.save_scalar("lr", golden_value(golden, "scalar/lr", 0, "worker_0")[0].get<double>());
        h.close();
    }
    const auto ours = read_indexes(dir.path() / "run").at({0, "worker_0"});
    const auto theirs = read_indexes(fixture).at({0, "worker_0"});
    for (const std::string name :
         {"raw/f64_1d", "raw/i32_3d", "raw/bool_1d", "raw/f16_1d", "raw/i8_1d", "raw/u8_1d", "raw/i64_scalar", "raw/f32_scalar",
          "mixed/f32_1d", "smdebug/reductions/min/mixed/f32_1d", "smdebug/reductions/max/mixed/f32_1d", "scalar/lr"}) {
        INFO(name);
        check_same_record_but_wall_time(read_record(dir.path() / "run", ours, name), read_record(fixture, theirs, name));
    }
}

TEST_CASE("bytes: a typed save_tensor writes what the tensor_value one does, every reduction of the 15 dtypes it takes (all but string)") {
    const auto write = [](const std::filesystem::path& out, bool typed) {
        hook_options o;
        o.out_dir = out.string();
        o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
        collection all("all");
        all.include(".*");
        all.set_reduction_config(reduction_config::parse(
            "min,max,mean,std,variance,sum,prod,l1,l2,abs_min,abs_max,abs_mean,abs_std,abs_variance,abs_sum,"
            "abs_prod,abs_l1,abs_l2",
            true));
        o.collections.push_back(all);
        hook h(o);
        h.begin_step();
        // Each dtype's values in a std::array, which has data() for bool too.
        const auto save = [&](const std::string& name, const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            if (typed) {
                h.save_tensor(name, values.data(), {values.size()});
            } else {
                h.save_tensor(name, tensor_value(std::vector<T>(values.begin(), values.end())));
            }
        };
        save("f32", std::array<float, 4>{1.5F, -2.25F, 3.0F, 0.125F});
        save("f64", std::array<double, 3>{-1e8, 1e8 + 3, 7.5});
        save("i8", std::array<std::int8_t, 3>{-128, 5, 127});
        save("i16", std::array<std::int16_t, 3>{-32768, 300, 32767});
        save("i32", std::array<std::int32_t, 4>{-3, 9, 27, -81});
        save("i64", std::array<std::int64_t, 2>{std::int64_t{1} << 40, -5});
        save("u8", std::array<std::uint8_t, 4>{0, 200, 255, 3});
        save("u16", std::array<std::uint16_t, 3>{0, 40000, 65535});
        save("u32", std::array<std::uint32_t, 3>{0, 3000000000U, 7});
        save("u64", std::array<std::uint64_t, 2>{std::uint64_t{1} << 63U, 9});
        save("bool", std::array<bool, 3>{true, false, true});
        save("f16", std::array<float16, 3>{float16(0.5F), float16(-3.0F), float16(1024.0F)});
        save("bf16", std::array<bfloat16, 3>{bfloat16(0.5F), bfloat16(-3.0F), bfloat16(1024.0F)});
        save("c64", std::array<std::complex<float>, 2>{std::complex<float>{1.0F, -2.0F}, std::complex<float>{0.5F, 4.0F}});
        save("c128", std::array<std::complex<double>, 2>{std::complex<double>{1.0, -2.0}, std::complex<double>{0.5, 4.0}});
        h.close();
    };
    temp_dir dir("hook_bytes_typed");
    write(dir.path() / "typed", true);
    write(dir.path() / "erased", false);
    const auto typed = read_indexes(dir.path() / "typed").at({0, "worker_0"});
    const auto erased = read_indexes(dir.path() / "erased").at({0, "worker_0"});
    const auto names = tdbg::test::names_of(typed);
    CHECK(names == tdbg::test::names_of(erased));
    for (const char* raw : {"f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool", "f16", "bf16",
                            "c64", "c128"}) {
        CHECK(std::count(names.begin(), names.end(), raw) == 1);
    }
    CHECK(names.size() > 15 * 10); // the raw tensors and their reductions (complex and bool have fewer)
    for (const std::string& name : names) {
        if (name.rfind("shape:", 0) == 0) {
            continue;
        }
        INFO(name);
        check_same_record_but_wall_time(read_record(dir.path() / "typed", typed, name),
                                        read_record(dir.path() / "erased", erased, name));
    }
}

TEST_CASE("bytes: a 0-d loss record equals the PyTorch hook's") {
    const auto fixtures = tdbg::test::fixtures_dir();
    const json golden = json::parse(tdbg::test::read_file(fixtures / "pytorch_mlp.golden.json"));
    temp_dir dir("hook_bytes_loss");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{5, {}, 0, std::nullopt});
    {
        hook h(o);
        h.set_mode(mode::train);
        h.begin_step();
        const float loss = golden_value(golden, "CrossEntropyLoss_output_0", 0, "worker_0").get<float>();
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(loss));
        h.close();
    }
    const auto ours = read_indexes(dir.path() / "run").at({0, "worker_0"});
    const auto theirs = read_indexes(fixtures / "pytorch_mlp").at({0, "worker_0"});
    check_same_record_but_wall_time(read_record(dir.path() / "run", ours, "CrossEntropyLoss_output_0"),
                                    read_record(fixtures / "pytorch_mlp", theirs, "CrossEntropyLoss_output_0"));
}
