#pragma once
// Compares `tdbg dump --json` of a run with what Python smdebug's reader
// returned for it (dump_trial.py's "smdebug-golden/1" document), allowing
// only the differences where tdbg reads better: int8 read as int8, a value
// saved with its shape, element-wise norms, and computed reductions at least
// as close to the exact value as numpy's. Shared by the fixture tests
// (tests/trial) and the live cross-checks with Python smdebug (tests/smdebug).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::test {

/// A golden number ("nan", "inf" and "-inf" are strings there) as a double.
inline double golden_number(const nlohmann::json& v) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "nan") {
            return std::nan("");
        }
        return s == "-inf" ? -INFINITY : INFINITY;
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? 1.0 : 0.0;
    }
    return v.get<double>();
}

/// Our dump against Python's golden (see the file comment); `problems` lists what differs.
struct golden_checker {
    std::filesystem::path run_dir;
    std::vector<std::string> problems;
    std::size_t int8_entries = 0;
    std::size_t recovered_values = 0;
    std::size_t better_results = 0;
    std::size_t computed_compared = 0;
    std::size_t at_least_as_close = 0; // computed reductions that differ from numpy's and are no farther from exact
    std::size_t float64_ulps_behind = 0;
    std::size_t other_worker_collections = 0; // collections Python read from another worker's file // float64 ones up to 4 ulps farther from exact than numpy's pairwise sums
    std::optional<tdbg::trial> reader;

    void fail(const std::string& where, const std::string& what) {
        if (problems.size() < 40) {
            problems.push_back(where + ": " + what);
        }
    }

    static void flatten(const nlohmann::json& v, std::vector<long double>& out) {
        if (v.is_array()) {
            for (const auto& item : v) {
                flatten(item, out);
            }
        } else {
            out.push_back(static_cast<long double>(golden_number(v)));
        }
    }

    // A reduction of the listed elements, by definition (element-wise norms, ddof=0).
    static double exact(const std::vector<long double>& xs, const std::string& name) {
        const bool abs = name.rfind("abs_", 0) == 0;
        const std::string kind = abs ? name.substr(4) : name;
        long double sum = 0, sq = 0, prod = 1, lo = INFINITY, hi = -INFINITY, l1 = 0;
        for (long double x : xs) {
            x = abs ? std::fabs(x) : x;
            sum += x;
            sq += x * x;
            prod *= x;
            l1 += std::fabs(x);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        const long double mean = sum / static_cast<long double>(xs.size());
        long double var = 0;
        for (long double x : xs) {
            x = abs ? std::fabs(x) : x;
            var += (x - mean) * (x - mean);
        }
        var /= static_cast<long double>(xs.size());
        const long double r = kind == "min" ? lo : kind == "max" ? hi : kind == "mean" ? mean : kind == "sum" ? sum
                            : kind == "prod" ? prod : kind == "variance" ? var : kind == "std" ? std::sqrt(var)
                            : kind == "l1" ? l1 : std::sqrt(sq);
        return static_cast<double>(r);
    }

    static bool near(double a, double b, double rtol, double atol) {
        if (std::isnan(a) || std::isnan(b)) {
            return std::isnan(a) && std::isnan(b);
        }
        if (std::isinf(a) || std::isinf(b)) {
            return a == b;
        }
        return std::fabs(a - b) <= atol + rtol * std::max(std::fabs(a), std::fabs(b));
    }

    // Our computed reduction against the definition, on our own listed value (when listed).
    void check_against_definition(const std::string& where, const nlohmann::json& ours_entry, const std::string& name, const nlohmann::json& ours) {
        if (!ours_entry.contains("value")) {
            return; // more than 16 elements: nothing listed to recompute from
        }
        std::vector<long double> xs;
        flatten(ours_entry["value"], xs);
        const double want = exact(xs, name);
        const double got = golden_number(ours["value"]);
        const std::string dt = ours["dtype"].get<std::string>();
        const double rtol = dt == "float16" ? 2e-3 : dt == "float32" ? 1e-5 : 1e-12;
        if (!near(got, want, name.find("prod") != std::string::npos ? rtol * 10 : rtol, dt == "float32" ? 1e-44 : 0)) {
            fail(where, "computed " + ours.dump() + " but the definition gives " + std::to_string(want));
        }
    }

    // The elements of `tensor`'s value in entry `g`, read through tdbg's trial (their
    // bytes are checked against the golden sha256 above), or nothing when it has none.
    std::optional<std::vector<long double>> elements(const std::string& tensor, const nlohmann::json& g) {
        if (!reader) {
            reader.emplace(tdbg::create_trial(run_dir.string()));
        }
        try {
            const auto value = reader->tensor(tensor).value(g["step"].get<std::int64_t>(),
                                                            tdbg::parse_mode(g["mode"].get<std::string>()),
                                                            g["worker"].get<std::string>());
            return tdbg::visit_dtype(value.type(), [&](auto tag) -> std::optional<std::vector<long double>> {
                using T = typename decltype(tag)::type;
                if constexpr (std::is_same_v<T, tdbg::float16> || std::is_same_v<T, tdbg::bfloat16>) {
                    std::vector<long double> xs;
                    for (std::size_t i = 0; i < value.size(); ++i) {
                        xs.push_back(static_cast<long double>(value.data_as<T>()[i].value()));
                    }
                    return xs;
                } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
                    std::vector<long double> xs;
                    for (std::size_t i = 0; i < value.size(); ++i) {
                        xs.push_back(static_cast<long double>(value.data_as<T>()[i]));
                    }
                    return xs;
                } else {
                    return std::nullopt; // bool, complex, string: no exact arithmetic here
                }
            });
        } catch (const tdbg::error&) {
            return std::nullopt;
        }
    }

    // Half a unit in the last place of `x` in numpy dtype `dt`: how far a correctly
    // rounded result may lie from the exact value.
    static double half_ulp(const std::string& dt, double x) {
        const int digits = dt == "float16" ? 11 : dt == "float32" ? 24 : 53;
        const double magnitude = std::max(std::fabs(x), dt == "float16" ? 6.1e-5 : dt == "float32" ? 1.2e-38 : 2.3e-308);
        return std::ldexp(1.0, std::ilogb(magnitude) - digits);
    }

    // True when the run's index lists `tensor` at (step, worker) both with a value and with a shape.
    bool index_has_value_and_shape(const std::string& tensor, std::int64_t step, const std::string& worker) const {
        char dir[32];
        char file[32];
        std::snprintf(dir, sizeof dir, "%09lld", static_cast<long long>(step / 1000));
        std::snprintf(file, sizeof file, "%012lld", static_cast<long long>(step));
        const auto path = run_dir / "index" / dir / (std::string(file) + "_" + worker + ".json");
        const nlohmann::json index = nlohmann::json::parse(read_file(path));
        bool value = false;
        bool shape = false;
        for (const auto& t : index["tensor_payload"]) {
            value = value || t["tensorname"] == tensor;
        }
        for (const auto& s : index["shape_payload"]) {
            shape = shape || s["tensorname"] == tensor;
        }
        return value && shape;
    }

    void compare_entry(const std::string& tensor, const nlohmann::json& g, const nlohmann::json& o) {
        const std::string where = tensor + " step " + g["step"].dump() + " " + g["worker"].get<std::string>();
        for (const char* key : {"step", "mode", "mode_step", "worker", "shape", "shape_source", "stored_reductions"}) {
            if (g[key] != o[key]) {
                fail(where, std::string(key) + ": golden " + g[key].dump() + ", ours " + o[key].dump());
            }
        }
        const bool int8 = g["dtype"] == "uint8" && o["dtype"] == "int8";
        const bool recovered = g.value("value_unavailable", false) && !o.value("value_unavailable", false);
        if (int8) {
            ++int8_entries;
            for (const char* key : {"size", "nbytes", "sha256"}) {
                if (g[key] != o[key]) {
                    fail(where, std::string(key) + " differs");
                }
            }
            if (g.contains("value")) {
                std::vector<long double> gv, ov;
                flatten(g["value"], gv);
                flatten(o["value"], ov);
                for (auto& x : gv) {
                    x = x > 127 ? x - 256 : x; // the same byte, signed
                }
                if (gv != ov) {
                    fail(where, "int8 values differ from the golden's bytes");
                }
            }
        } else if (recovered) {
            ++recovered_values;
            if (!index_has_value_and_shape(tensor, g["step"].get<std::int64_t>(), g["worker"].get<std::string>())) {
                fail(where, "a value where Python found none, but the index does not list both value and shape");
            }
            if (!o.contains("sha256") || !o.contains("dtype") || o["dtype"].is_null()) {
                fail(where, "recovered value without dtype or hash");
            }
        } else {
            for (const char* key : {"dtype", "size", "nbytes", "sha256", "value", "value_unavailable"}) {
                if (g.contains(key) != o.contains(key) || (g.contains(key) && g[key] != o[key])) {
                    fail(where, std::string(key) + ": golden " + (g.contains(key) ? g[key].dump() : "absent") + ", ours " +
                                    (o.contains(key) ? o[key].dump() : "absent"));
                }
            }
        }
        const bool two_d = g["shape"].is_array() && g["shape"].size() == 2;
        for (const auto& [name, gr] : g["reductions"].items()) {
            const std::string at = where + " " + name;
            if (!o["reductions"].contains(name)) {
                fail(at, "missing");
                continue;
            }
            const nlohmann::json& orr = o["reductions"][name];
            const bool norm = name.find("l1") != std::string::npos || name.find("l2") != std::string::npos;
            if (gr.contains("unavailable")) {
                const std::string why = gr["unavailable"].get<std::string>();
                // numpy's matrix norms raise for 0-d and 3-D+ values, and its linalg refuses float16.
                const bool norm_failed = norm && (why.rfind("ValueError", 0) == 0 ||
                                                  why.find("float16 is unsupported in linalg") != std::string::npos);
                if ((recovered || norm_failed) && orr.value("source", "") == "computed") {
                    better_results += norm_failed ? 1 : 0;
                    check_against_definition(at, o, name, orr);
                } else if (gr != orr) {
                    fail(at, "golden " + gr.dump() + ", ours " + orr.dump());
                }
                continue;
            }
            if (gr["source"] == "stored") {
                if (gr != orr) {
                    fail(at, "stored reduction: golden " + gr.dump() + ", ours " + orr.dump());
                }
                continue;
            }
            // Computed by numpy, and by us.
            if (orr.value("source", "") != "computed" || orr["shape"] != gr["shape"]) {
                fail(at, "golden " + gr.dump() + ", ours " + orr.dump());
                continue;
            }
            if (int8) {
                std::string want = gr["dtype"].get<std::string>();
                want = want == "uint8" ? "int8" : want == "uint64" ? "int64" : want;
                if (orr["dtype"] != want) {
                    fail(at, "dtype " + orr["dtype"].dump() + ", expected " + want);
                }
                check_against_definition(at, o, name, orr);
                continue;
            }
            if (gr["dtype"] != orr["dtype"]) {
                fail(at, "dtype: golden " + gr["dtype"].dump() + ", ours " + orr["dtype"].dump());
                continue;
            }
            if (norm && two_d) {
                ++better_results; // numpy used the matrix norm here; ours is element-wise
                check_against_definition(at, o, name, orr);
                continue;
            }
            ++computed_compared;
            const std::string dt = gr["dtype"].get<std::string>();
            if (gr["value"].is_array()) {
                // A complex result, [real, imag]: each part within float64's rounding of the other's scale.
                const double re = golden_number(gr["value"][0]);
                const double im = golden_number(gr["value"][1]);
                const double magnitude = std::max(std::fabs(re), std::fabs(im));
                if (!orr["value"].is_array() || orr["value"].size() != 2 ||
                    !near(golden_number(orr["value"][0]), re, 0, 1e-12 * magnitude) ||
                    !near(golden_number(orr["value"][1]), im, 0, 1e-12 * magnitude)) {
                    fail(at, "complex: golden " + gr.dump() + ", ours " + orr.dump());
                }
                continue;
            }
            const double rtol = dt == "float16" ? 4e-3 : dt == "float32" ? 2e-5 : 1e-10;
            // Sums that cancel are compared relative to the magnitude of the terms.
            double scale = 0;
            for (const char* m : {"abs_sum", "abs_l1", "abs_max"}) {
                if (g["reductions"][m].contains("value")) {
                    scale = std::max(scale, std::fabs(golden_number(g["reductions"][m]["value"])));
                }
            }
            const bool prod = name.find("prod") != std::string::npos;
            const double got = golden_number(orr["value"]);
            const double want = golden_number(gr["value"]);
            if (got != want && !(std::isnan(got) && std::isnan(want))) {
                // Both are roundings of one exact value: ours must be no farther from it than numpy's.
                if (const auto xs = elements(tensor, o)) {
                    const double e = exact(*xs, name);
                    if (std::fabs(got - e) <= std::fabs(want - e) + half_ulp(dt, e)) {
                        ++at_least_as_close;
                    } else if (dt == "float64" && std::fabs(got - e) <= std::fabs(want - e) + 8 * half_ulp(dt, e)) {
                        // float64 is accumulated in float64, in order; numpy sums pairwise and can be
                        // a few units in the last place closer (README: where tdbg and smdebug differ).
                        ++float64_ulps_behind;
                    } else {
                        fail(at, "ours " + orr.dump() + " is farther than numpy's " + gr.dump() +
                                     " from the exact " + std::to_string(e));
                    }
                    continue;
                }
            }
            if (!near(got, want, prod ? rtol * 50 : rtol * 5, prod ? 0 : rtol * scale)) {
                // numpy squares float32 in float32: below ~1e-19 the squares fall under float32's
                // normal range and numpy's std, variance and l2 lose digits or become 0; ours are
                // computed wider. Check ours by the definition when the value is listed, else by
                // how our own reductions of the entry fit together.
                const bool squares = name.find("std") != std::string::npos || name.find("variance") != std::string::npos;
                const double abs_max = golden_number(o["reductions"]["abs_max"]["value"]);
                if (o.contains("value")) {
                    check_against_definition(at, o, name, orr);
                } else if (dt == "float32" && squares && abs_max < 1e-18) {
                    const std::string prefix = name.rfind("abs_", 0) == 0 ? "abs_" : "";
                    const double ours_std = golden_number(o["reductions"][prefix + "std"]["value"]);
                    const double ours_var = golden_number(o["reductions"][prefix + "variance"]["value"]);
                    if (!(ours_std > 0 && ours_std <= abs_max && near(ours_var, ours_std * ours_std, 1e-3, 1e-44))) {
                        fail(at, "tiny values: our std " + std::to_string(ours_std) + " and variance " +
                                     std::to_string(ours_var) + " do not fit together");
                    }
                    ++better_results;
                } else {
                    fail(at, "computed: golden " + gr.dump() + ", ours " + orr.dump());
                }
            }
        }
    }

    // The tensor names of collection `name` in each worker's collections file of the run.
    std::vector<nlohmann::json> names_in_worker_files(const std::string& name) const {
        std::vector<nlohmann::json> out;
        const auto dir = run_dir / "collections" / "000000000";
        std::error_code ec;
        for (const auto& file : std::filesystem::directory_iterator(dir, ec)) {
            const auto doc = nlohmann::json::parse(read_file(file.path()));
            for (const auto& c : doc["collections"]) {
                if (c["name"] == name) {
                    auto names = c["tensor_names"];
                    std::sort(names.begin(), names.end());
                    out.push_back(names);
                }
            }
        }
        return out;
    }

    // smdebug reads the first collections file the directory lists (os.listdir order), tdbg the
    // first by name: where the workers' files differ, Python's may be another worker's file.
    void compare_collections(const nlohmann::json& golden, const nlohmann::json& ours) {
        if (golden.size() != ours.size()) {
            fail("collections", "golden has " + std::to_string(golden.size()) + ", ours " + std::to_string(ours.size()));
        }
        for (const auto& [name, g] : golden.items()) {
            if (!ours.contains(name)) {
                fail("collections", name + " missing");
                continue;
            }
            auto o = ours[name];
            auto expected = g;
            const auto files = names_in_worker_files(name);
            if (g["tensor_names_in_file"] != o["tensor_names_in_file"] &&
                std::find(files.begin(), files.end(), g["tensor_names_in_file"]) != files.end()) {
                ++other_worker_collections;
                expected.erase("tensor_names_in_file");
                o.erase("tensor_names_in_file");
            }
            if (expected != o) {
                fail("collections", name + ": golden " + g.dump().substr(0, 300) + "\nours " + ours[name].dump().substr(0, 300));
            }
        }
    }

    void compare(const nlohmann::json& golden, const nlohmann::json& ours) {
        for (const auto& [key, value] : golden.items()) {
            if (!ours.contains(key)) {
                fail("top level", "missing key " + key);
            } else if (key == "producer") {
                const std::string p = ours[key].get<std::string>();
                if (p.rfind("tdbg ", 0) != 0 || p.find("(C++)") == std::string::npos) {
                    fail("producer", p);
                }
            } else if (key == "collections" && value != ours[key]) {
                compare_collections(value, ours[key]);
            } else if (key != "tensors" && value != ours[key]) {
                fail("top level", key + ": golden " + value.dump().substr(0, 300) + "\nours " + ours[key].dump().substr(0, 300));
            }
        }
        for (const auto& [key, value] : ours.items()) {
            if (!golden.contains(key)) {
                fail("top level", "extra key " + key);
            }
        }
        for (const auto& [name, gt] : golden["tensors"].items()) {
            if (!ours["tensors"].contains(name)) {
                fail(name, "tensor missing");
                continue;
            }
            const nlohmann::json& ot = ours["tensors"][name];
            if (gt["steps"] != ot["steps"]) {
                fail(name, "steps differ");
            }
            if (gt["entries"].size() != ot["entries"].size()) {
                fail(name, "entry count differs");
                continue;
            }
            for (std::size_t i = 0; i < gt["entries"].size(); ++i) {
                compare_entry(name, gt["entries"][i], ot["entries"][i]);
            }
        }
        if (ours["tensors"].size() != golden["tensors"].size()) {
            fail("tensors", "different number of tensors");
        }
    }
};


/// Checks `dump`, the output of `tdbg dump RUN --json`, against `golden_text`
/// (Python's reading of the same run) with Catch2 assertions: the same layout,
/// no difference but those in tdbg's favour, and the same lines by far.
/// Returns the checker, whose counts say what was compared.
inline golden_checker check_dump_text(const std::filesystem::path& run_dir, const std::string& dump,
                                      const std::string& golden_text) {
    // Laid out as the golden file: json.dumps(indent=1, sort_keys=True) and a newline.
    CHECK(dump.substr(0, 18) == golden_text.substr(0, 18));
    CHECK((!dump.empty() && dump.back() == '\n'));
    const nlohmann::json ours = nlohmann::json::parse(dump);
    CHECK(ours["format"] == "smdebug-golden/1");
    golden_checker c;
    c.run_dir = run_dir;
    c.compare(nlohmann::json::parse(golden_text), ours);
    for (const auto& p : c.problems) {
        UNSCOPED_INFO(p);
    }
    CHECK(c.problems.empty());
    INFO("computed reductions that differ from numpy's and are at least as close to exact: " << c.at_least_as_close);
    // float64: a few entries (18 over the three fixture runs) are 1-4 ulps behind numpy's pairwise sums.
    CHECK(c.float64_ulps_behind <= 24);
    // Same lines, by far: same keys, same order, same indentation and number formatting.
    std::multiset<std::string> golden_lines;
    std::istringstream b(golden_text);
    for (std::string line; std::getline(b, line);) {
        golden_lines.insert(line);
    }
    std::istringstream a(dump);
    std::size_t same = 0;
    std::size_t lines = 0;
    for (std::string line; std::getline(a, line); ++lines) {
        auto it = golden_lines.find(line);
        if (it != golden_lines.end()) {
            golden_lines.erase(it);
            ++same;
        }
    }
    CHECK(static_cast<double>(same) > 0.9 * static_cast<double>(lines));
    return c;
}

} // namespace tdbg::test
