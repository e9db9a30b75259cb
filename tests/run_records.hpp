#pragma once
// Shared by the tests of the device paths (torch_hook's, tdbg::cuda::device_saver): a run's
// records and TensorBoard histograms read back from its files, and the comparison of two runs
// that must hold the same records (raw values bit for bit, reductions within the tolerance of
// a different, correct order of summation).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::test {

namespace fs = std::filesystem;

// Every tensor record of a run's event files, by (step, tensor name).
inline std::map<std::pair<std::int64_t, std::string>, tdbg::tensor_value> records_of(const fs::path& run) {
    const tdbg::local_storage storage(run);
    std::map<std::pair<std::int64_t, std::string>, tdbg::tensor_value> out;
    for (const std::string& key : storage.list("events/")) {
        if (!tdbg::format::parse_event_file_key(key)) {
            continue;
        }
        const std::string data = storage.read(key);
        tdbg::format::record_reader reader(data, key);
        while (const auto rec = reader.next()) {
            auto ev = tdbg::format::decode_tensor_event(rec->payload, nullptr, key, rec->payload_offset());
            out.emplace(std::make_pair(ev.step, ev.tag), std::move(ev.value));
        }
    }
    return out;
}

// Every TensorBoard histogram of a run (tensorboard/<MODE>/...), by (step, tag).
inline std::map<std::pair<std::int64_t, std::string>, tdbg::format::histogram> histograms_of(const fs::path& run) {
    std::map<std::pair<std::int64_t, std::string>, tdbg::format::histogram> out;
    const fs::path dir = run / "tensorboard";
    if (!fs::exists(dir)) {
        return out;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file()) {
            continue;
        }
        const tdbg::local_storage storage(entry.path().parent_path());
        const std::string key = entry.path().filename().string();
        const std::string data = storage.read(key);
        tdbg::format::record_reader reader(data, key);
        while (const auto rec = reader.next()) {
            const auto ev = tdbg::format::decode_event(rec->payload, key, rec->payload_offset(), nullptr);
            for (const auto& v : ev.values) {
                if (v.histo) {
                    out.emplace(std::make_pair(ev.step, v.tag), *v.histo);
                }
            }
        }
    }
    return out;
}

// smdebug's name of reduction `r` (as "abs_mean") of tensor `name`.
inline std::string reduction_of(const std::string& r, const std::string& name) {
    return fmt::format("smdebug/reductions/{}/{}", r, name);
}

inline double element(const tdbg::tensor_value& v, std::size_t i) {
    return tdbg::visit_dtype(v.type(), [&](auto tag) -> double {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            return 0.0;
        } else if constexpr (tdbg::is_complex_element_v<T>) {
            return std::abs(v.data_as<T>()[i]);
        } else {
            return tdbg::as_double(v.data_as<T>()[i]);
        }
    });
}

// Relative tolerance of a value computed in `type` by different (correct) summation orders.
inline double tolerance_of(tdbg::dtype type) {
    switch (type) {
    case tdbg::dtype::float16: return 4e-3;
    case tdbg::dtype::bfloat16: return 3e-2;
    case tdbg::dtype::float32:
    case tdbg::dtype::complex64: return 2e-5;
    default: return 1e-10;
    }
}

// The records of the two runs: the same names and steps, dtypes and shapes; raw values bit for
// bit, reductions within the dtype's tolerance. Returns the differences, one line each.
inline std::vector<std::string> differences(const fs::path& expected_run, const fs::path& actual_run) {
    const auto expected = records_of(expected_run);
    const auto actual = records_of(actual_run);
    std::vector<std::string> out;
    for (const auto& [key, value] : expected) {
        const auto it = actual.find(key);
        if (it == actual.end()) {
            out.push_back(fmt::format("step {} '{}': missing", key.first, key.second));
            continue;
        }
        const tdbg::tensor_value& got = it->second;
        if (got.type() != value.type() || got.shape() != value.shape()) {
            out.push_back(fmt::format("step {} '{}': {} of {} dims, expected {} of {} dims", key.first, key.second,
                                      tdbg::dtype_name(got.type()), got.dimension(), tdbg::dtype_name(value.type()),
                                      value.dimension()));
            continue;
        }
        const bool reduction = tdbg::format::parse_reduction_tensor_name(key.second).has_value();
        if (!reduction) {
            if (got.bytes() != value.bytes()) {
                out.push_back(fmt::format("step {} '{}': raw bytes differ", key.first, key.second));
            }
            continue;
        }
        const double a = element(value, 0);
        const double b = element(got, 0);
        const bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                          std::abs(a - b) <= tolerance_of(value.type()) * std::max(std::abs(a), std::abs(b));
        if (!same) {
            out.push_back(fmt::format("step {} '{}': {} where the CPU path wrote {}", key.first, key.second, b, a));
        }
    }
    for (const auto& [key, value] : actual) {
        if (expected.count(key) == 0) {
            out.push_back(fmt::format("step {} '{}': not written by the CPU path", key.first, key.second));
        }
    }
    return out;
}

// A hook saving everything: every reduction and its abs_ form, raw values, TensorBoard histograms.
inline tdbg::hook_options everything(const fs::path& dir) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"everything"};
    o.export_tensorboard = true;
    return o;
}

inline void save_everything(tdbg::hook& hook) {
    tdbg::collection& c = hook.get_collection("everything");
    c.include(".*");
    c.set_reduction_config(tdbg::reduction_config::parse(
        "min,max,mean,std,variance,sum,prod,l1_norm,l2_norm,abs_min,abs_max,abs_mean,abs_std,abs_variance,abs_sum,"
        "abs_prod,abs_l1_norm,abs_l2_norm",
        /*save_raw_tensor=*/true, /*save_shape=*/true));
    c.set_save_histogram(true);
}

// The TensorBoard histograms of the two runs: the same ones, with the same buckets and counts;
// min and max equal (NaN where a value was NaN), sums within 1e-12 relative (another order of
// summation). Returns the differences, one line each.
inline std::vector<std::string> histogram_differences(const fs::path& expected_run, const fs::path& actual_run) {
    const auto expected = histograms_of(expected_run);
    const auto actual = histograms_of(actual_run);
    std::vector<std::string> out;
    const auto same = [](double a, double b, double rtol) {
        return (std::isnan(a) && std::isnan(b)) || a == b || std::abs(a - b) <= rtol * std::abs(a);
    };
    for (const auto& [key, h] : expected) {
        const auto it = actual.find(key);
        const std::string where = fmt::format("histogram of '{}' at step {}", key.second, key.first);
        if (it == actual.end()) {
            out.push_back(where + ": missing");
            continue;
        }
        const tdbg::format::histogram& d = it->second;
        if (d.bucket != h.bucket || d.bucket_limit != h.bucket_limit || d.num != h.num) {
            out.push_back(where + ": other buckets or counts");
        }
        if (!same(d.sum, h.sum, 1e-12) || !same(d.sum_squares, h.sum_squares, 1e-12)) {
            out.push_back(fmt::format("{}: sums {}, {} where {}, {} were expected", where, d.sum, d.sum_squares, h.sum,
                                      h.sum_squares));
        }
        if (!same(d.min, h.min, 0) || !same(d.max, h.max, 0)) {
            out.push_back(
                fmt::format("{}: min {}, max {} where {}, {} were expected", where, d.min, d.max, h.min, h.max));
        }
    }
    for (const auto& [key, h] : actual) {
        if (expected.count(key) == 0) {
            out.push_back(fmt::format("histogram of '{}' at step {}: not expected", key.second, key.first));
        }
    }
    return out;
}

} // namespace tdbg::test
