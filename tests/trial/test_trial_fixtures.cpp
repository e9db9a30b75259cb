// The trial against the runs Python smdebug wrote: everything its reader
// returned (the golden files) must come back, and better where the golden
// records Python's bugs (int8 read as uint8, a value lost with raw+shape,
// matrix norms).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden.hpp"
#include "support.hpp"
#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::mode;
using nlohmann::json;

namespace {

std::vector<std::int64_t> ints(const json& list) {
    std::vector<std::int64_t> out;
    for (const auto& v : list) {
        out.push_back(v.get<std::int64_t>());
    }
    return out;
}

std::vector<std::string> strings(const json& list) {
    std::vector<std::string> out;
    for (const auto& v : list) {
        out.push_back(v.get<std::string>());
    }
    return out;
}

std::vector<std::size_t> shape_of(const json& list) {
    std::vector<std::size_t> out;
    for (const auto& v : list) {
        out.push_back(v.get<std::size_t>());
    }
    return out;
}

// The flattened elements of a golden nested list (or scalar).
void flatten(const json& v, std::vector<double>& out) {
    if (v.is_array()) {
        for (const auto& item : v) {
            flatten(item, out);
        }
    } else {
        out.push_back(tdbg::test::golden_number(v));
    }
}

// The element-wise reduction `name` ("abs_l2", "mean", ...) of `value`, computed here in long double.
double expected_reduction(const tdbg::tensor_value& value, const std::string& name) {
    const bool abs = name.rfind("abs_", 0) == 0;
    const std::string kind = abs ? name.substr(4) : name;
    long double sum = 0, sum_abs = 0, sum_sq = 0, prod = 1;
    long double lo = INFINITY, hi = -INFINITY;
    const std::size_t n = value.size();
    for (std::size_t i = 0; i < n; ++i) {
        long double x = tdbg::test::element(value, i);
        if (abs) {
            x = std::fabs(x);
        }
        sum += x;
        sum_abs += std::fabs(x);
        sum_sq += x * x;
        prod *= x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    const long double mean = sum / static_cast<long double>(n);
    long double var = 0;
    for (std::size_t i = 0; i < n; ++i) {
        long double x = tdbg::test::element(value, i);
        x = abs ? std::fabs(x) : x;
        var += (x - mean) * (x - mean);
    }
    var /= static_cast<long double>(n);
    if (kind == "min") return static_cast<double>(lo);
    if (kind == "max") return static_cast<double>(hi);
    if (kind == "mean") return static_cast<double>(mean);
    if (kind == "sum") return static_cast<double>(sum);
    if (kind == "prod") return static_cast<double>(prod);
    if (kind == "variance") return static_cast<double>(var);
    if (kind == "std") return static_cast<double>(std::sqrt(var));
    if (kind == "l1") return static_cast<double>(sum_abs);
    return static_cast<double>(std::sqrt(sum_sq));
}

mode mode_named(const std::string& name) { return tdbg::parse_mode(name); }

} // namespace

TEST_CASE("trial on fixtures: steps per mode, modes, workers, num_workers") {
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        CHECK(t.name() == golden["trial_name"].get<std::string>());
        CHECK(t.loaded_all_steps());
        CHECK(t.num_workers() == golden["num_workers"].get<std::size_t>());
        CHECK(t.workers() == strings(golden["workers"]));
        std::vector<std::string> modes;
        for (mode m : t.modes()) {
            modes.emplace_back(tdbg::mode_name(m));
        }
        std::sort(modes.begin(), modes.end());
        CHECK(modes == strings(golden["modes"]));
        for (const auto& [mode_text, list] : golden["steps"].items()) {
            INFO("mode " << mode_text);
            CHECK(t.steps(mode_named(mode_text)) == ints(list));
            CHECK(t.steps(mode_named(mode_text), true) == ints(list));
        }
    }
}

TEST_CASE("trial on fixtures: mode, mode_step and global_step of every step") {
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        std::size_t checked = 0;
        for (const auto& [step_text, info] : golden["global_step_to_mode"].items()) {
            const std::int64_t step = std::stoll(step_text);
            const mode m = mode_named(info["mode"].get<std::string>());
            const auto mode_step = info["mode_step"].get<std::int64_t>();
            CHECK(t.mode(step) == std::optional<mode>(m));
            CHECK(t.mode_step(step) == std::optional<std::int64_t>(mode_step));
            CHECK(t.global_step(m, mode_step) == std::optional<std::int64_t>(step));
            ++checked;
        }
        CHECK(checked == golden["steps"]["GLOBAL"].size());
        CHECK_FALSE(t.mode(100000).has_value());
        CHECK_FALSE(t.mode_step(-1).has_value());
        CHECK_FALSE(t.global_step(mode::predict, 0).has_value());
    }
}

TEST_CASE("trial on fixtures: tensor names overall, per mode, per step and per collection") {
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        CHECK(t.tensor_names() == strings(golden["tensor_names"]));
        for (const auto& [mode_text, list] : golden["tensor_names_by_mode"].items()) {
            INFO("mode " << mode_text);
            CHECK(t.tensor_names(std::nullopt, mode_named(mode_text)) == strings(list));
        }
        for (const auto& [name, c] : golden["collections"].items()) {
            INFO("collection " << name);
            CHECK(t.tensor_names(std::nullopt, mode::global, std::nullopt, name) == strings(c["trial_tensor_names"]));
            REQUIRE(t.collections().count(name) == 1);
            const auto& spec = t.collections().at(name);
            CHECK(spec.include_regex == strings(c["include_regex"]));
            std::vector<std::string> listed = spec.tensor_names;
            std::sort(listed.begin(), listed.end());
            CHECK(listed == strings(c["tensor_names_in_file"]));
            CHECK(spec.reduction_config.save_raw_tensor == c["reduction_config"]["save_raw_tensor"].get<bool>());
            CHECK(spec.reduction_config.save_shape == c["reduction_config"]["save_shape"].get<bool>());
            CHECK(spec.save_histogram == c["save_histogram"].get<bool>());
        }
        CHECK(t.collections().size() == golden["collections"].size());
        // Per step: the tensors whose golden entries include that global step.
        std::map<std::int64_t, std::set<std::string>> by_step;
        for (const auto& [name, tensor] : golden["tensors"].items()) {
            for (const auto& e : tensor["entries"]) {
                by_step[e["step"].get<std::int64_t>()].insert(name);
            }
        }
        for (const auto& [step, names] : by_step) {
            INFO("step " << step);
            CHECK(t.tensor_names(step) == std::vector<std::string>(names.begin(), names.end()));
            const auto m = *t.mode(step);
            CHECK(t.tensor_names(*t.mode_step(step), m) == std::vector<std::string>(names.begin(), names.end()));
        }
    }
}

TEST_CASE("trial on fixtures: tensor_names with named filters and several regular expressions, mode_modestep") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    tdbg::tensor_name_query q;
    q.regex = {"^red/", "scalar$"};
    CHECK(t.tensor_names(q) == std::vector<std::string>{"raw/f32_scalar", "raw/i64_scalar", "red/f32_3d", "red/f64_1d",
                                                        "red/i32_1d"});
    q.step = 5; // global step 5 holds only scalar/lr
    CHECK(t.tensor_names(q).empty());
    q.regex = {"lr", "no match"};
    CHECK(t.tensor_names(q) == std::vector<std::string>{"scalar/lr"});
    tdbg::tensor_name_query eval;
    eval.mode = mode::eval;
    eval.regex = {"^grad/", "^loss$"};
    CHECK(t.tensor_names(eval) == std::vector<std::string>{"loss"});
    // The positional form is the one-regex query.
    CHECK(t.tensor_names(std::nullopt, mode::eval, std::string("^loss$")) == t.tensor_names(eval));
    tdbg::tensor_name_query both;
    both.regex = {"x"};
    both.collection = "losses";
    CHECK_THROWS_AS(t.tensor_names(both), tdbg::config_error);
    tdbg::tensor_name_query collection;
    collection.collection = "losses";
    CHECK(t.tensor_names(collection) == std::vector<std::string>{"loss"});

    // smdebug's mode_modestep: global step 6 is EVAL step 0, 12 is TRAIN step 8.
    CHECK(t.mode_modestep(6) == std::pair<mode, std::int64_t>{mode::eval, 0});
    CHECK(t.mode_modestep(12) == std::pair<mode, std::int64_t>{mode::train, 8});
    CHECK_FALSE(t.mode_modestep(99).has_value());
}

TEST_CASE("trial on fixtures: tensor_names filters by regex, and refuses regex with collection") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    CHECK(t.tensor_names(std::nullopt, mode::global, std::string("^red/")) ==
          std::vector<std::string>{"red/f32_3d", "red/f64_1d", "red/i32_1d"});
    // Searched, not fully matched, as Python's re.search.
    CHECK(t.tensor_names(std::nullopt, mode::global, std::string("scalar")) ==
          std::vector<std::string>{"raw/f32_scalar", "raw/i64_scalar", "scalar/lr"});
    CHECK(t.tensor_names(std::nullopt, mode::eval, std::string("^grad/")).empty());
    CHECK(t.tensor_names(std::int64_t{5}) == std::vector<std::string>{"scalar/lr"});
    CHECK(t.tensor_names(std::nullopt, mode::global, std::nullopt, std::string("no_such_collection")).empty());
    CHECK_THROWS_AS(t.tensor_names(std::nullopt, mode::global, std::string("x"), std::string("losses")), tdbg::config_error);
    CHECK_THROWS_AS(t.tensor_names(std::nullopt, mode::global, std::string("(")), tdbg::config_error);
    CHECK(t.collection("losses").include_regex == std::vector<std::string>{"^loss$"});
    CHECK(t.collection("no_such_collection").tensor_names.empty());
}

TEST_CASE("trial on fixtures: tensor steps and workers per step match the golden entries") {
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        for (const auto& [name, g] : golden["tensors"].items()) {
            INFO("tensor " << name);
            const auto tensor = t.tensor(name);
            CHECK(tensor.name() == name);
            for (const auto& [mode_text, list] : g["steps"].items()) {
                CHECK(tensor.steps(mode_named(mode_text)) == ints(list));
            }
            std::map<std::int64_t, std::vector<std::string>> workers;
            for (const auto& e : g["entries"]) {
                workers[e["step"].get<std::int64_t>()].push_back(e["worker"].get<std::string>());
            }
            for (const auto& [step, list] : workers) {
                CHECK(tensor.workers(step) == list);
                const auto m = *t.mode(step);
                CHECK(tensor.workers(*t.mode_step(step), m) == list);
            }
            const auto all = tensor.steps();
            if (!all.empty()) {
                CHECK(tensor.prev_steps(all.back(), 2) ==
                      std::vector<std::int64_t>(all.end() - std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(all.size())), all.end()));
                CHECK(tensor.prev_steps(all.back()) == all);
                CHECK(tensor.prev_steps(all.front(), 5) == std::vector<std::int64_t>{all.front()});
            }
        }
    }
}

TEST_CASE("trial on fixtures: every value matches the golden sha256, dtype, shape and elements") {
    std::size_t values = 0;
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        for (const auto& [name, g] : golden["tensors"].items()) {
            const auto tensor = t.tensor(name);
            for (const auto& e : g["entries"]) {
                const auto step = e["step"].get<std::int64_t>();
                const auto worker = e["worker"].get<std::string>();
                INFO("tensor " << name << " step " << step << " " << worker);
                if (e.value("value_unavailable", false)) {
                    continue; // see the quirk test below
                }
                const tdbg::tensor_value v = tensor.value(step, mode::global, worker);
                ++values;
                CHECK(tdbg::detail::sha256_hex(v.bytes()) == e["sha256"].get<std::string>());
                CHECK(v.size() == e["size"].get<std::size_t>());
                CHECK(v.nbytes() == e["nbytes"].get<std::size_t>());
                CHECK(v.shape() == shape_of(e["shape"]));
                const std::string want_dtype = e["dtype"].get<std::string>();
                // Python reads int8 back as uint8; tdbg reads what was written.
                CHECK(std::string(tdbg::dtype_name(v.type())) == (name == "raw/i8_1d" ? "int8" : want_dtype));
                // The same value by mode step.
                const auto m = mode_named(e["mode"].get<std::string>());
                const tdbg::tensor_value by_mode = tensor.value(e["mode_step"].get<std::int64_t>(), m, worker);
                CHECK(by_mode.bytes() == v.bytes());
                if (e.contains("value")) {
                    std::vector<double> want;
                    flatten(e["value"], want);
                    REQUIRE(want.size() == v.size());
                    for (std::size_t i = 0; i < want.size(); ++i) {
                        double w = want[i];
                        if (name == "raw/i8_1d" && w > 127) {
                            w -= 256; // the same byte, read as int8
                        }
                        const double got = tdbg::test::element(v, i);
                        CHECK((got == w || (std::isnan(got) && std::isnan(w))));
                    }
                }
            }
        }
    }
    CHECK(values > 500);
}

TEST_CASE("trial on fixtures: int8 is read as int8") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    const auto v = t.tensor("raw/i8_1d").value(0);
    REQUIRE(v.type() == tdbg::dtype::int8);
    const auto* p = v.data_as<std::int8_t>();
    CHECK(std::vector<int>(p, p + v.size()) == std::vector<int>{-3, -1, 0, 5});
    CHECK(tdbg::test::element(t.tensor("raw/i8_1d").reduction_value(0, "min"), 0) == -3);
    CHECK(tdbg::test::element(t.tensor("raw/i8_1d").reduction_value(0, "sum"), 0) == 1);
}

TEST_CASE("trial on fixtures: a value saved with its shape is read (Python loses it)") {
    const json golden = tdbg::test::load_golden("core_modes_workers");
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    const auto tensor = t.tensor("quirk/raw_and_shape");
    std::size_t checked = 0;
    for (const auto& e : golden["tensors"]["quirk/raw_and_shape"]["entries"]) {
        const auto step = e["step"].get<std::int64_t>();
        const auto worker = e["worker"].get<std::string>();
        CHECK(e["value_unavailable"].get<bool>()); // Python found none
        const auto v = tensor.value(step, mode::global, worker);
        CHECK(v.shape() == shape_of(e["shape"]));
        CHECK(tensor.shape(step, mode::global, worker) == shape_of(e["shape"]));
        CHECK(v.type() == tdbg::dtype::float32);
        // The shape comes from the index, as in Python.
        bool listed = false;
        for (const auto& info : tensor.entries()) {
            if (info.step == step && info.worker == worker) {
                listed = info.has_value && info.stored_shape == shape_of(e["shape"]);
            }
        }
        CHECK(listed);
        // A computed reduction agrees with the value.
        const double mean = tdbg::test::element(tensor.reduction_value(step, "mean", mode::global, worker), 0);
        CHECK(tdbg::test::close(mean, expected_reduction(v, "mean"), 1e-5, expected_reduction(v, "abs_mean")));
        ++checked;
    }
    CHECK(checked == 22);
}

TEST_CASE("trial on fixtures: shapes from the index and from the value") {
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        for (const auto& [name, g] : golden["tensors"].items()) {
            const auto tensor = t.tensor(name);
            std::map<std::pair<std::int64_t, std::string>, tdbg::tensor_step_info> infos;
            for (auto& info : tensor.entries()) {
                infos[{info.step, info.worker}] = info;
            }
            CHECK(infos.size() == g["entries"].size());
            for (const auto& e : g["entries"]) {
                const auto step = e["step"].get<std::int64_t>();
                const auto worker = e["worker"].get<std::string>();
                INFO("tensor " << name << " step " << step << " " << worker);
                if (e["shape"].is_null()) {
                    CHECK_THROWS_AS(tensor.shape(step, mode::global, worker), tdbg::shape_unavailable_for_step);
                    continue;
                }
                CHECK(tensor.shape(step, mode::global, worker) == shape_of(e["shape"]));
                const auto& info = infos.at({step, worker});
                CHECK(info.stored_shape.has_value() == (e["shape_source"].get<std::string>() == "index"));
                CHECK(info.step_mode == mode_named(e["mode"].get<std::string>()));
                CHECK(info.mode_step == e["mode_step"].get<std::int64_t>());
            }
        }
    }
}

TEST_CASE("trial on fixtures: stored reductions are read as saved") {
    std::size_t stored = 0;
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        for (const auto& [name, g] : golden["tensors"].items()) {
            const auto tensor = t.tensor(name);
            for (const auto& e : g["entries"]) {
                const auto step = e["step"].get<std::int64_t>();
                const auto worker = e["worker"].get<std::string>();
                INFO("tensor " << name << " step " << step << " " << worker);
                const auto saved = tensor.reduction_values(step, mode::global, worker);
                std::vector<std::string> names;
                for (const auto& item : saved) {
                    names.push_back(tdbg::reduction_name(item.first));
                }
                std::sort(names.begin(), names.end());
                CHECK(names == strings(e["stored_reductions"]));
                for (const auto& [which, value] : saved) {
                    const json& want = e["reductions"][tdbg::reduction_name(which)];
                    REQUIRE(want["source"].get<std::string>() == "stored");
                    CHECK(std::string(tdbg::dtype_name(value.type())) == want["dtype"].get<std::string>());
                    CHECK(value.shape() == shape_of(want["shape"]));
                    const double got = tdbg::test::element(value, 0);
                    const double w = tdbg::test::golden_number(want["value"]);
                    CHECK((got == w || (std::isnan(got) && std::isnan(w))));
                    // reduction_value prefers the stored one.
                    CHECK(tensor.reduction_value(step, which, mode::global, worker).bytes() == value.bytes());
                    ++stored;
                }
            }
        }
    }
    CHECK(stored > 300);
}

TEST_CASE("trial on fixtures: computed reductions match numpy's, with element-wise norms") {
    std::size_t computed = 0;
    std::size_t better = 0;
    for (const std::string run : tdbg::test::fixture_runs) {
        INFO("run " << run);
        const json golden = tdbg::test::load_golden(run);
        const auto t = tdbg::create_trial(tdbg::test::fixture_run(run).string());
        for (const auto& [name, g] : golden["tensors"].items()) {
            const auto tensor = t.tensor(name);
            for (const auto& e : g["entries"]) {
                const auto step = e["step"].get<std::int64_t>();
                const auto worker = e["worker"].get<std::string>();
                if (e.value("value_unavailable", false)) {
                    continue;
                }
                const auto value = tensor.value(step, mode::global, worker);
                const double scale = expected_reduction(value, "abs_max") * static_cast<double>(value.size());
                for (const auto& [red_name, want] : e["reductions"].items()) {
                    if (want.contains("source") && want["source"].get<std::string>() == "stored") {
                        continue;
                    }
                    INFO("tensor " << name << " step " << step << " " << worker << " " << red_name);
                    INFO("golden " << want.dump());
                    const auto got = tensor.reduction_value(step, red_name, mode::global, worker);
                    CHECK(got.shape().empty());
                    const double g_value = tdbg::test::element(got, 0);
                    const bool norm = red_name.find("l1") != std::string::npos || red_name.find("l2") != std::string::npos;
                    const bool python_failed = want.contains("unavailable");
                    const bool matrix_norm = norm && value.dimension() == 2;
                    const double expected = expected_reduction(value, red_name);
                    const double rtol = red_name.find("prod") != std::string::npos ? 1e-3 : 1e-4;
                    if (name == "raw/i8_1d" || python_failed || matrix_norm) {
                        // Python read uint8, failed, or used a matrix norm: check against the definition.
                        const double atol = got.type() == tdbg::dtype::float32 ? 1e-44 : 0.0;
                        CHECK((std::fabs(g_value - expected) <= atol ||
                               tdbg::test::close(g_value, expected, rtol, red_name.find("prod") != std::string::npos ? 0 : scale)));
                        ++better;
                    } else {
                        CHECK(std::string(tdbg::dtype_name(got.type())) == want["dtype"].get<std::string>());
                        const std::string dt = want["dtype"].get<std::string>();
                        const double w = tdbg::test::golden_number(want["value"]);
                        const double tol = tdbg::test::tolerance_for(dt);
                        const double s = red_name.find("prod") != std::string::npos ? 0 : scale;
                        // numpy squares float32 in float32, so tiny values underflow or lose digits
                        // there; tdbg accumulates wider and matches the exact value instead (up to
                        // the spacing of float32's subnormals).
                        const double atol = dt == "float32" ? 1e-44 : 0.0;
                        const bool like_numpy = tdbg::test::close(g_value, w, tol * 10, s);
                        const bool exact = std::fabs(g_value - expected) <= atol ||
                                           tdbg::test::close(g_value, expected, tol * 10, s);
                        INFO("got " << g_value << " exact " << expected);
                        CHECK((like_numpy || exact));
                    }
                    ++computed;
                }
            }
        }
    }
    CHECK(computed > 5000);
    CHECK(better > 400);
}
