#pragma once
// Shared by the tests of tdbg::cuda::device_saver (host_ops and the CUDA runtime): the same
// tensors of every dtype, saved by hook.save_tensor in one run and through a device_saver in
// another, two steps each, with every reduction, raw values and TensorBoard histograms.

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "run_records.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/cuda/save.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/reduce/convention.hpp"

namespace tdbg::test {

/// Tensors of every dtype a device holds, at `step`: negative values and zeros, one element, a
/// NaN, an infinity, an empty tensor.
inline std::vector<std::pair<std::string, tdbg::tensor_value>> device_tensors(int step) {
    std::vector<double> base(48);
    for (std::size_t i = 0; i < base.size(); ++i) {
        base[i] = (-3.0 + 8.0 * static_cast<double>(i) / 47.0) * (1.0 + 0.25 * step) * 3;
    }
    std::vector<std::pair<std::string, tdbg::tensor_value>> out;
    for (const dtype type :
         {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16, dtype::int8, dtype::int16, dtype::int32,
          dtype::int64, dtype::uint8, dtype::uint16, dtype::uint32, dtype::uint64, dtype::boolean}) {
        tensor_value v = visit_dtype(type, [&](auto tag) -> tensor_value {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, std::string> || is_complex_element_v<T>) {
                return tensor_value();
            } else {
                std::vector<T> data;
                for (const double x : base) {
                    const double y = std::is_unsigned_v<T> || std::is_same_v<T, bool> ? std::abs(x) * 7 : x;
                    if constexpr (std::is_same_v<T, bool>) {
                        data.push_back(y > 20);
                    } else if constexpr (std::is_integral_v<T>) {
                        data.push_back(static_cast<T>(std::trunc(y)));
                    } else {
                        data.push_back(T(static_cast<float>(y)));
                    }
                }
                return tensor_value(std::move(data), {6, 8});
            }
        });
        out.emplace_back("t_" + std::string(dtype_name(type)), std::move(v));
    }
    out.emplace_back("single_float", tensor_value(std::vector<float>{2.5F}, {1}));
    out.emplace_back("with_nan", tensor_value(std::vector<float>{1.0F, std::nanf(""), -2.0F}, {3}));
    out.emplace_back("with_inf",
                     tensor_value(std::vector<float>{1.0F, std::numeric_limits<float>::infinity(), -2.0F}, {3}));
    out.emplace_back("empty_float", tensor_value(std::vector<float>{}, {0, 4}));
    return out;
}

/// Two steps of device_tensors saved by hook.save_tensor, reductions stored by `convention`.
inline void write_saved_run(const std::filesystem::path& dir, reduction_convention convention) {
    hook h(everything(dir));
    save_everything(h);
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        for (const auto& [name, value] : device_tensors(step)) {
            h.save_tensor(name, value, {}, convention);
        }
    }
    h.close();
}

/// Where a test puts a tensor's bytes for the device operations to read: their own address for
/// host_ops; a copy in device memory for the CUDA runtime's, kept until the run is closed.
using placement = std::function<const void*(const tensor_value&)>;

/// The same run through a device_saver with `ops` on `stream`, one launch per step.
inline void write_device_run(
    const std::filesystem::path& dir, reduction_convention convention, std::shared_ptr<cuda::device_ops> ops,
    CUstream_st* stream,
    const placement& place = [](const tensor_value& v) -> const void* { return v.bytes().data(); }) {
    hook h(everything(dir));
    save_everything(h);
    cuda::device_saver_options options;
    options.convention = convention;
    cuda::device_saver saver(h, std::move(ops), options);
    std::vector<std::vector<std::pair<std::string, tensor_value>>> kept; // host values, alive to the end
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        kept.push_back(device_tensors(step));
        for (const auto& [name, value] : kept.back()) {
            saver.add(name, value.size() == 0 ? nullptr : place(value), value.type(), value.shape());
        }
        saver.launch(stream);
    }
    h.close();
}

} // namespace tdbg::test
