// Our reductions of the fixtures' raw values against the values numpy
// computed for them (golden entries with "source": "computed").
//
// Skipped on purpose: l1/l2 of 2-D values (smdebug's reader computes matrix
// norms there, tdbg element-wise norms) and the norms smdebug could not
// compute ("unavailable": 0-d and 3-D values). Stored reductions come from
// other code (torch, ddof=1) and are not compared.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference.hpp"
#include "support.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/reduce/compute.hpp"

using tdbg::dtype;
using tdbg::tensor_value;
using json = nlohmann::json;

namespace {

using entry_key = std::tuple<std::string, std::int64_t, std::string>; // tensor, step, worker

// Every tensor of a run's event files, by (name, step, worker).
std::map<entry_key, tensor_value> read_events(const std::filesystem::path& run, std::size_t& failures) {
    std::map<entry_key, tensor_value> out;
    for (const auto& file : std::filesystem::recursive_directory_iterator(run / "events")) {
        if (file.path().extension() != ".tfevents") {
            continue;
        }
        std::ifstream in(file.path(), std::ios::binary);
        auto data = std::make_shared<std::string>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        const std::string worker = file.path().stem().string().substr(13); // "000000000007_worker_0"
        try {
            tdbg::format::record_reader reader(*data, file.path().string());
            while (const auto record = reader.next()) {
                const auto e =
                    tdbg::format::decode_event(record->payload, file.path().string(), record->payload_offset(), data);
                for (const auto& v : e.values) {
                    if (v.tensor) {
                        out[{v.tag, e.step, worker}] = *v.tensor;
                    }
                }
            }
        } catch (const tdbg::error& err) {
            ++failures;
            WARN("could not decode " << file.path().string() << ": " << err.what());
        }
    }
    return out;
}

double json_number(const json& v) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "nan") {
            return std::numeric_limits<double>::quiet_NaN();
        }
        return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? 1.0 : 0.0;
    }
    return v.get<double>();
}

void flatten(const json& v, std::vector<double>& out) {
    if (v.is_array()) {
        for (const auto& x : v) {
            flatten(x, out);
        }
    } else {
        out.push_back(json_number(v));
    }
}

// A tensor of `type` and `shape` from the golden's "value" (nested lists).
tensor_value from_json_value(const json& value, dtype type, const tensor_value::shape_type& shape) {
    std::vector<double> flat;
    flatten(value, flat);
    return tdbg::visit_dtype(type, [&](auto tag) -> tensor_value {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>) {
            std::vector<bool> v;
            for (const double x : flat) {
                v.push_back(x != 0);
            }
            return tensor_value(v, shape);
        } else if constexpr (tdbg::test::is_half_type<T>) {
            std::vector<T> v;
            for (const double x : flat) {
                v.push_back(T(static_cast<float>(x)));
            }
            return tensor_value(std::move(v), shape);
        } else if constexpr (std::is_arithmetic_v<T>) {
            std::vector<T> v;
            for (const double x : flat) {
                v.push_back(static_cast<T>(x));
            }
            return tensor_value(std::move(v), shape);
        } else {
            FAIL("unexpected dtype in the golden values");
            return tensor_value();
        }
    });
}

// Σ|x| and max|x| of a value, as scales for absolute tolerances.
std::pair<double, double> magnitudes(const tensor_value& v) {
    if (v.size() == 0) {
        return {0, 0};
    }
    const auto l1 = tdbg::test::scalar_value(tdbg::compute_reduction(v, {tdbg::reduction_kind::l1, false})).first;
    const auto top = tdbg::test::scalar_value(tdbg::compute_reduction(v, {tdbg::reduction_kind::max, true})).first;
    return {static_cast<double>(l1), static_cast<double>(top)};
}

// numpy's float16/float32 results carry their own rounding; ours are rounded once from double.
bool close_to_numpy(double got, double want, dtype type, tdbg::reduction r, std::pair<double, double> mag) {
    if (std::isnan(want) || std::isnan(got)) {
        return std::isnan(want) && std::isnan(got);
    }
    if (std::isinf(want) || std::isinf(got)) {
        return got == want;
    }
    if (tdbg::is_integer(type) || type == dtype::boolean) {
        return got == want;
    }
    const double rel = type == dtype::float16 ? 2e-3 : (type == dtype::float32 ? 2e-5 : 1e-12);
    const auto [l1, top] = mag;
    double scale = 0;
    switch (r.kind) {
    case tdbg::reduction_kind::sum:
    case tdbg::reduction_kind::l1: scale = l1; break;
    case tdbg::reduction_kind::variance: scale = top * top; break;
    case tdbg::reduction_kind::prod: scale = 0; break;
    default: scale = top; break;
    }
    // Results in the subnormal range have only a few digits.
    const double denorm = type == dtype::float16 ? 6e-8 : (type == dtype::float32 ? 1.5e-45 : 5e-324);
    if (std::fabs(got - want) <= rel * std::fabs(want) + rel * 0.1 * scale + 4 * denorm) {
        return true;
    }
    // numpy squares float16/float32 values in their own type: below the
    // smallest normal (squared) they lose digits or vanish (vanishing_run's
    // gradients). tdbg squares in double; check only that ours is in range.
    const double smallest_normal = type == dtype::float16 ? 6.1e-5 : std::numeric_limits<float>::min();
    const bool squares = r.kind == tdbg::reduction_kind::std || r.kind == tdbg::reduction_kind::variance ||
                         r.kind == tdbg::reduction_kind::l2;
    if (squares && type != dtype::float64 && top * top < smallest_normal * 0x1p24) {
        const double bound = r.kind == tdbg::reduction_kind::variance ? top * top
                             : r.kind == tdbg::reduction_kind::l2     ? l1
                                                                      : top;
        return got >= 0 && got <= bound * (1 + rel);
    }
    return false;
}

} // namespace

TEST_CASE("reductions of the fixtures' raw values match what numpy computed") {
    const auto fixtures = tdbg::test::fixtures_dir();
    std::size_t compared = 0;
    std::size_t from_events = 0;
    for (const char* run : tdbg::test::fixture_runs) {
        std::ifstream in(fixtures / (std::string(run) + ".golden.json"));
        REQUIRE(in.good());
        const json golden = json::parse(in);
        std::size_t failures = 0;
        const auto events = read_events(fixtures / run, failures);
        CHECK(failures == 0);
        for (const auto& [name, tensor] : golden.at("tensors").items()) {
            for (const json& entry : tensor.at("entries")) {
                if (!entry.contains("dtype") || entry.at("dtype").is_null() || !entry.contains("reductions")) {
                    continue;
                }
                const auto type = tdbg::dtype_from_name(entry.at("dtype").get<std::string>());
                REQUIRE(type);
                tensor_value::shape_type shape;
                for (const auto& d : entry.at("shape")) {
                    shape.push_back(d.get<std::size_t>());
                }
                std::optional<tensor_value> value;
                const auto found =
                    events.find({name, entry.at("step").get<std::int64_t>(), entry.at("worker").get<std::string>()});
                if (found != events.end()) {
                    // smdebug's reader returns int8 tensors as uint8: reduce the bytes as it saw them.
                    value = tensor_value::from_bytes(*type, shape, found->second.bytes());
                    ++from_events;
                } else if (entry.contains("value")) {
                    value = from_json_value(entry.at("value"), *type, shape);
                } else {
                    continue;
                }
                const auto mag = magnitudes(*value);
                for (const auto& [rname, red] : entry.at("reductions").items()) {
                    if (!red.contains("source") || red.at("source") != "computed") {
                        continue;
                    }
                    const auto r = tdbg::parse_reduction(rname);
                    REQUIRE(r);
                    if (tdbg::is_norm(r->kind) && value->dimension() == 2) {
                        continue; // matrix norms in smdebug's reader
                    }
                    INFO(run << " " << name << " step " << entry.at("step") << " " << entry.at("worker") << " "
                             << rname);
                    const tensor_value got = tdbg::compute_reduction(*value, *r);
                    const auto want_type = tdbg::dtype_from_name(red.at("dtype").get<std::string>());
                    CHECK(want_type == got.type());
                    const double want = json_number(red.at("value"));
                    const double have = static_cast<double>(tdbg::test::scalar_value(got).first);
                    INFO("got " << have << ", numpy " << want);
                    CHECK(close_to_numpy(have, want, got.type(), *r, mag));
                    ++compared;
                }
            }
        }
    }
    INFO("compared " << compared << " reductions, " << from_events << " values from event files");
    CHECK(compared > 5000);
    CHECK(from_events > 500);
}
