// Every record of every event file in the reference runs written by Python
// smdebug: decoded, compared with what smdebug's own reader returned (the
// golden files), and re-encoded to the identical bytes.

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "hook_paths.hpp"
#include "support.hpp"
#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/format/detail/event_pieces.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"

using namespace tdbg;
using namespace tdbg::format;
namespace fs = std::filesystem;

namespace {

using tdbg::test::read_file;

// The golden's numbers: a JSON number, or "nan" / "inf" / "-inf".
double golden_number(const nlohmann::json& j) {
    if (j.is_string()) {
        const std::string s = j.get<std::string>();
        if (s == "nan") {
            return std::nan("");
        }
        return s == "-inf" ? -HUGE_VAL : HUGE_VAL;
    }
    return j.get<double>();
}

double element_as_double(const tensor_value& v) {
    return visit_dtype(v.type(), [&](auto tag) -> double {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_arithmetic_v<T>) {
            return static_cast<double>(v.data_as<T>()[0]);
        } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
            return static_cast<double>(v.data_as<T>()[0].value());
        } else {
            FAIL("a stored reduction of dtype " << dtype_name(v.type()));
            return 0.0;
        }
    });
}

// smdebug's reader maps DT_INT8 to numpy uint8 (its as_dtype table), so the
// golden files say "uint8" where the event holds int8; the bytes (and so the
// sha256) are the same.
std::string golden_dtype_name(dtype d) { return d == dtype::int8 ? "uint8" : std::string(dtype_name(d)); }

using entry_key = std::tuple<std::string, std::int64_t, std::string>; // tensor, step, worker

} // namespace

TEST_CASE("every fixture event record decodes to smdebug's values and re-encodes to the same bytes") {
    const auto fixtures = test::fixtures_dir();
    for (const char* run : test::fixture_runs) {
        INFO("run " << run);
        const fs::path root = fixtures / run;
        const nlohmann::json golden = nlohmann::json::parse(read_file(fixtures / (std::string(run) + ".golden.json")));
        std::map<entry_key, const nlohmann::json*> entries;
        std::set<entry_key> want_values;
        std::set<std::tuple<std::string, std::int64_t, std::string, std::string>> want_stored;
        for (const auto& [name, tensor] : golden.at("tensors").items()) {
            for (const auto& e : tensor.at("entries")) {
                const entry_key key{name, e.at("step").get<std::int64_t>(), e.at("worker").get<std::string>()};
                entries[key] = &e;
                if (e.contains("sha256") && e.at("sha256").is_string()) {
                    want_values.insert(key);
                }
                for (const auto& [red, r] : e.at("reductions").items()) {
                    if (r.contains("source") && r.at("source") == "stored") {
                        want_stored.emplace(name, std::get<1>(key), std::get<2>(key), red);
                    }
                }
            }
        }

        std::set<entry_key> seen_values;
        std::set<std::tuple<std::string, std::int64_t, std::string, std::string>> seen_stored;
        int records = 0;
        int without_value = 0;
        for (const auto& file : fs::recursive_directory_iterator(root / "events")) {
            if (!file.is_regular_file()) {
                continue;
            }
            const std::string key = fs::relative(file.path(), root).generic_string();
            const auto where = parse_event_file_key(key);
            REQUIRE(where);
            const auto data = std::make_shared<const std::string>(read_file(file.path()));
            record_reader reader(*data, key);
            while (const auto rec = reader.next()) {
                ++records;
                const tensor_event ev = decode_tensor_event(rec->payload, data, key, rec->payload_offset());
                INFO(key << " at byte " << rec->offset << ": " << ev.tag);
                // Exact bytes: the payload, and the whole record with smdebug's constant footer.
                const std::string payload = encode_tensor_event(ev);
                CHECK(payload == rec->payload);
                const std::string_view original = std::string_view(*data).substr(rec->offset, rec->size());
                std::string framed;
                append_record(framed, payload, footer_kind::smdebug_constant);
                CHECK(framed == original);
                // The hook's paths: pieces over the tensor's memory, and a small record in place.
                CHECK(tdbg::test::framed_by_pieces(ev) == original);
                CHECK(tdbg::test::framed_in_place(ev) == original);

                CHECK(ev.step == where->step);
                REQUIRE(ev.mode);
                REQUIRE(ev.mode_step);
                if (const auto red = parse_reduction_tensor_name(ev.tag)) {
                    const entry_key base{red->second, ev.step, where->worker};
                    REQUIRE(entries.count(base) == 1);
                    const nlohmann::json& e = *entries[base];
                    CHECK(e.at("mode") == std::string(mode_name(*ev.mode)));
                    CHECK(e.at("mode_step") == *ev.mode_step);
                    const std::string red_name = reduction_name(red->first);
                    const nlohmann::json& r = e.at("reductions").at(red_name);
                    REQUIRE(r.value("source", "") == "stored");
                    CHECK(r.at("dtype") == golden_dtype_name(ev.value.type()));
                    CHECK(r.at("shape").get<std::vector<std::size_t>>() == ev.value.shape());
                    REQUIRE(ev.value.size() == 1);
                    const double want = golden_number(r.at("value"));
                    const double got = element_as_double(ev.value);
                    CHECK(((std::isnan(want) && std::isnan(got)) || want == got));
                    seen_stored.emplace(red->second, ev.step, where->worker, red_name);
                    continue;
                }
                const entry_key k{ev.tag, ev.step, where->worker};
                REQUIRE(entries.count(k) == 1);
                const nlohmann::json& e = *entries[k];
                CHECK(e.at("mode") == std::string(mode_name(*ev.mode)));
                CHECK(e.at("mode_step") == *ev.mode_step);
                if (!want_values.count(k)) {
                    // smdebug's reader drops the value when the index also lists the shape
                    // (save_raw_tensor and save_shape together); the record is still there.
                    CHECK(e.value("value_unavailable", false));
                    CHECK(e.at("shape_source") == "index");
                    ++without_value;
                    continue;
                }
                CHECK(e.at("dtype") == golden_dtype_name(ev.value.type()));
                CHECK(e.at("shape").get<std::vector<std::size_t>>() == ev.value.shape());
                CHECK(e.at("size") == ev.value.size());
                CHECK(e.at("nbytes") == ev.value.nbytes());
                CHECK(e.at("sha256") == tdbg::detail::sha256_hex(ev.value.bytes()));
                seen_values.insert(k);
            }
        }
        CHECK(records > 100);
        // Every value and every stored reduction smdebug's reader found came from exactly these records.
        CHECK(seen_values == want_values);
        CHECK(seen_stored == want_stored);
        if (std::string(run) == "core_modes_workers") {
            CHECK(without_value > 0); // quirk/raw_and_shape
        } else {
            CHECK(without_value == 0);
        }
    }
}
