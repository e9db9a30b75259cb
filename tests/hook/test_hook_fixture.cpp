// A tdbg run with the schedule of the core_modes_workers fixture (written by
// Python smdebug's core hook) saves the same steps, modes, workers and tensor
// names, and the same stored reductions.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/hook/hook.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::temp_dir;
using json = nlohmann::json;

namespace {

double golden_number(const json& v) {
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
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
        out.push_back(golden_number(v));
    }
}

template <class T>
tensor_value typed(const std::vector<double>& values, const tensor_value::shape_type& shape) {
    std::vector<T> data;
    for (double v : values) {
        if constexpr (std::is_same_v<T, float16>) {
            data.push_back(float16(static_cast<float>(v)));
        } else {
            data.push_back(static_cast<T>(v));
        }
    }
    return tensor_value(std::move(data), shape);
}

tensor_value make_value(dtype type, const tensor_value::shape_type& shape, const std::vector<double>& values) {
    switch (type) {
    case dtype::float16: return typed<float16>(values, shape);
    case dtype::float32: return typed<float>(values, shape);
    case dtype::float64: return typed<double>(values, shape);
    case dtype::int8: return typed<std::int8_t>(values, shape);
    case dtype::uint8: return typed<std::uint8_t>(values, shape);
    case dtype::int32: return typed<std::int32_t>(values, shape);
    case dtype::int64: return typed<std::int64_t>(values, shape);
    case dtype::boolean: {
        std::vector<bool> b;
        for (double v : values) {
            b.push_back(v != 0.0);
        }
        return tensor_value(b, shape);
    }
    default: FAIL("unexpected dtype"); return {};
    }
}

// The element type of the fixture's tensors, from their names ("raw/f32_3d").
dtype dtype_of_name(const std::string& name) {
    const std::map<std::string, dtype> by_tag{{"f16", dtype::float16}, {"f32", dtype::float32}, {"f64", dtype::float64},
                                              {"i32", dtype::int32},   {"i64", dtype::int64},   {"i8", dtype::int8},
                                              {"u8", dtype::uint8},    {"bool", dtype::boolean}};
    for (const auto& [tag, type] : by_tag) {
        if (name.find("/" + tag + "_") != std::string::npos) {
            return type;
        }
    }
    return dtype::float32; // loss, weights/w0, grad/layer0, quirk/raw_and_shape
}

struct fixture_tensor {
    std::string name;
    dtype type = dtype::float32;
    tensor_value::shape_type shape;
    // Values by (global step, worker), where the golden file has them.
    std::map<std::pair<std::int64_t, std::string>, std::vector<double>> values;
};

collection from_spec(const format::collection_spec& spec, bool own_save_config) {
    collection c(spec.name);
    c.include(spec.include_regex);
    reduction_config r;
    for (const auto red : spec.reduction_config.reductions) {
        r.add(red);
    }
    r.save_raw_tensor = spec.reduction_config.save_raw_tensor;
    r.save_shape = spec.reduction_config.save_shape;
    c.set_reduction_config(r);
    if (own_save_config) {
        c.set_save_config(spec.save_config);
    }
    return c;
}

} // namespace

TEST_CASE("the core_modes_workers schedule saves what smdebug saved") {
    const auto fixtures = tdbg::test::fixtures_dir();
    const auto fixture = fixtures / "core_modes_workers";
    const json golden = json::parse(tdbg::test::read_file(fixtures / "core_modes_workers.golden.json"));
    const auto spec = format::parse_collections_file(
        tdbg::test::read_file(fixture / "collections/000000000/worker_0_collections.json"), "worker_0_collections.json");
    const auto theirs = read_indexes(fixture);

    // The hook's configuration, as the collections file records it: the hook's
    // save config is the one of "default" (which has none of its own).
    hook_options base;
    std::vector<collection> collections;
    std::vector<std::string> included;
    for (const auto& c : spec.collections) {
        if (c.name == "default") {
            base.save_config = c.save_config;
        }
    }
    for (const auto& c : spec.collections) {
        included.push_back(c.name);
        if (c.name != "default") {
            collections.push_back(from_spec(c, c.save_config != base.save_config));
        }
    }
    base.collections = collections;
    base.include_collections = included;
    base.include_workers = workers_to_save::all;
    base.num_workers = spec.num_workers;

    // Tensors in the order smdebug's run offered them, with golden values where known.
    std::vector<fixture_tensor> tensors;
    std::set<std::string> listed;
    for (const auto& loc : theirs.at({0, "worker_0"}).tensor_payload) {
        std::string name = loc.tensorname;
        if (const auto r = format::parse_reduction_tensor_name(name)) {
            name = r->second;
        }
        if (name != "scalar/lr" && listed.insert(name).second) {
            tensors.emplace_back().name = name;
        }
    }
    for (const auto& s : theirs.at({0, "worker_0"}).shape_payload) {
        if (listed.insert(s.tensorname).second) {
            tensors.emplace_back().name = s.tensorname;
        }
    }
    REQUIRE(tensors.size() == 20); // every tensor of the golden file but scalar/lr
    for (auto& t : tensors) {
        t.type = dtype_of_name(t.name);
        t.shape = {10}; // redns/f32_1d: smdebug kept neither its shape nor its value
        for (const auto& e : golden["tensors"][t.name]["entries"]) {
            if (e.contains("shape") && e["shape"].is_array()) {
                t.shape = e["shape"].get<tensor_value::shape_type>();
            }
            if (e.contains("value")) {
                std::vector<double> v;
                flatten(e["value"], v);
                if (t.type == dtype::int8) { // smdebug's reader returns int8 as uint8
                    for (double& x : v) {
                        x = x > 127 ? x - 256 : x;
                    }
                }
                t.values[{e["step"].get<std::int64_t>(), e["worker"].get<std::string>()}] = v;
            }
        }
    }
    std::map<std::int64_t, double> lr;
    for (const auto& e : golden["tensors"]["scalar/lr"]["entries"]) {
        lr[e["step"].get<std::int64_t>()] = e["value"][0].get<double>();
    }

    temp_dir dir("hook_core_fixture");
    const auto out = dir.path() / "run";
    base.out_dir = out.string();
    std::map<std::string, std::unique_ptr<hook>> hooks;
    for (const std::string worker : {"worker_0", "worker_1"}) {
        hook_options o = base;
        o.worker = worker;
        hooks[worker] = std::make_unique<hook>(o);
    }
    const auto& modes = golden["global_step_to_mode"];
    std::uint64_t seed = 12345;
    for (std::int64_t step = 0; step < static_cast<std::int64_t>(modes.size()); ++step) {
        const mode m = parse_mode(modes[std::to_string(step)]["mode"].get<std::string>());
        for (auto& [worker, h] : hooks) {
            if (h->current_mode() != m) {
                h->set_mode(m);
            }
            h->begin_step();
            CHECK(h->global_step() == step);
            CHECK(h->mode_step() == modes[std::to_string(step)]["mode_step"].get<std::int64_t>());
            for (const auto& t : tensors) {
                if (worker == "worker_1" && step == 2 && t.name == "raw/bool_1d") {
                    continue; // the fixture's worker_1 skips it there
                }
                std::vector<double> v;
                if (auto it = t.values.find({step, worker}); it != t.values.end()) {
                    v = it->second;
                } else {
                    for (std::size_t i = 0; i < tensor_value::element_count(t.shape); ++i) {
                        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                        v.push_back(static_cast<double>(static_cast<int>((seed >> 33U) % 200U) - 100) / 37.0);
                    }
                }
                h->save_tensor(t.name, make_value(t.type, t.shape, v));
            }
            h->save_scalar("lr", lr.at(step));
        }
    }
    for (auto& [worker, h] : hooks) {
        h->close();
    }

    const auto ours = read_indexes(out);
    REQUIRE(ours.size() == theirs.size());
    for (const auto& [key, index] : theirs) {
        INFO("step " << key.first << " " << key.second);
        REQUIRE(ours.count(key) == 1);
        const auto& mine = ours.at(key);
        CHECK(mine.mode == index.mode);
        CHECK(mine.mode_step == index.mode_step);
        CHECK(mine.event_file_name == index.event_file_name);
        auto want = tdbg::test::names_of(index);
        // numpy cannot take l1/l2 norms of a 3-D array, so smdebug stored none
        // for red/f32_3d; tdbg's norms are element-wise and it stores them.
        if (std::find(want.begin(), want.end(), "smdebug/reductions/min/red/f32_3d") != want.end()) {
            for (const char* norm : {"l1", "l2", "abs_l1", "abs_l2"}) {
                want.push_back(std::string("smdebug/reductions/") + norm + "/red/f32_3d");
            }
        }
        auto got = tdbg::test::names_of(mine);
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        CHECK(got == want);
        CHECK(mine.shape_payload == index.shape_payload);
    }

    // Values: raw tensors as given, stored reductions as smdebug stored them.
    std::size_t compared = 0;
    for (const auto& t : tensors) {
        for (const auto& e : golden["tensors"][t.name]["entries"]) {
            const std::pair<std::int64_t, std::string> key{e["step"].get<std::int64_t>(), e["worker"].get<std::string>()};
            const auto& index = ours.at(key);
            if (t.values.count(key) != 0) {
                const auto ev = tdbg::test::read_tensor(out, index, t.name);
                CHECK(ev.value.type() == t.type);
                CHECK(ev.value.shape() == t.shape);
                CHECK(ev.step == key.first);
                // The bytes written are those of the value the trainer saved.
                CHECK(ev.value.bytes() == make_value(t.type, t.shape, t.values.at(key)).bytes());
                ++compared;
            }
            for (const auto& [red, stored] : e["reductions"].items()) {
                if (!stored.contains("source") || stored["source"] != "stored" || t.values.count(key) == 0) {
                    continue;
                }
                INFO(t.name << " " << red << " at " << key.first);
                const auto ev = tdbg::test::read_tensor(out, index, "smdebug/reductions/" + red + "/" + t.name);
                CHECK(std::string(dtype_name(ev.value.type())) == stored["dtype"].get<std::string>());
                CHECK(ev.value.shape() == tensor_value::shape_type{1});
                REQUIRE(ev.value.type() == dtype::float32);
                CHECK(ev.value.data_as<float>()[0] == Approx(stored["value"].get<double>()).epsilon(1e-6));
                ++compared;
            }
        }
    }
    CHECK(compared > 200);
    CHECK(std::filesystem::exists(out / "collections/000000000/worker_1_collections.json"));
    const auto ours_spec = format::parse_collections_file(
        tdbg::test::read_file(out / "collections/000000000/worker_0_collections.json"), "ours");
    CHECK(ours_spec.num_workers == 2);
}
