// torch_hook's device path, run on CPU tensors through torch_hook_options::force_device_path so
// that a machine without a GPU covers it: the reductions by torch operations, the histogram
// counts, the raw copies through the bounded pool of host memory and the deferred saves must
// write what the CPU path writes, record for record, for every dtype torch has on CUDA; a full
// pool blocks or drops as the hook's full-queue policy says; a device error is a write error.
// The same checks run on CUDA tensors where a GPU is visible (skipped otherwise).

// libtorch first: its logging (glog) defines CHECK(condition), which Catch2's CHECK replaces below.
#include <torch/cuda.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include "tdbg/integrations/libtorch.hpp"
#ifndef CATCH_VERSION_MAJOR // in a unity build Catch2 may be in already, and CHECK its own
#undef CHECK
#endif

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "run_records.hpp"
#include "support.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace fs = std::filesystem;
using tdbg::test::differences;
using tdbg::test::element;
using tdbg::test::everything;
using tdbg::test::histograms_of;
using tdbg::test::records_of;
using tdbg::test::reduction_of;
using tdbg::test::save_everything;
using tdbg::test::temp_dir;

namespace {

// Tensors of every dtype torch has on CUDA, with negative values, zeros and a one-element tensor.
std::vector<std::pair<std::string, torch::Tensor>> tensors_of_every_dtype(const torch::Device& device, int step) {
    const auto base = torch::linspace(-3.0, 5.0, 48, torch::kDouble).reshape({6, 8}) * (1.0 + 0.25 * step);
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto type : {torch::kFloat, torch::kDouble, torch::kHalf, torch::kBFloat16, torch::kInt8, torch::kInt16,
                            torch::kInt, torch::kLong, torch::kByte, torch::kBool}) {
        torch::Tensor t = type == torch::kByte ? (base.abs() * 7).to(type) : (base * 3).to(type);
        out.emplace_back(fmt::format("t_{}", c10::toString(type)), t.to(device));
    }
    out.emplace_back("single_float", torch::full({1}, 2.5F).to(device));
    out.emplace_back("strided_float", (base.to(torch::kFloat).t() / 7).to(device)); // not contiguous
    out.emplace_back("with_nan", torch::tensor({1.0F, NAN, -2.0F}).to(device));
    out.emplace_back("with_inf", torch::tensor({1.0F, INFINITY, -2.0F}).to(device));
    return out;
}

// Two steps of tensors_of_every_dtype saved through torch_hook with `options`.
void write_run(const fs::path& dir, const torch::Device& device, tdbg::torch_hook_options options) {
    tdbg::hook hook(everything(dir));
    save_everything(hook);
    tdbg::torch_hook th(hook, options);
    for (int step = 0; step < 2; ++step) {
        hook.begin_step();
        for (const auto& [name, tensor] : tensors_of_every_dtype(device, step)) {
            th.save_tensor(name, tensor);
        }
    }
    hook.close();
}

} // namespace

TEST_CASE("the device path forced on CPU tensors writes the CPU path's records, for every dtype") {
    temp_dir dir;
    write_run(dir.path() / "cpu", torch::kCPU, {});
    tdbg::torch_hook_options forced;
    forced.force_device_path = true;
    write_run(dir.path() / "device", torch::kCPU, forced);

    const auto cpu = records_of(dir.path() / "cpu");
    // The CPU path itself writes PyTorch's records: 0-d reductions, unbiased std, torch's dtypes.
    const auto& std_f32 = cpu.at({0, reduction_of("std", "t_Float")});
    CHECK(std_f32.dimension() == 0);
    const auto values = torch::linspace(-3.0, 5.0, 48, torch::kDouble) * 3;
    CHECK(element(std_f32, 0) == Approx(values.std(/*unbiased=*/true).item<double>()).epsilon(1e-6));
    CHECK(cpu.at({0, reduction_of("sum", "t_Byte")}).type() == tdbg::dtype::int64);
    CHECK(cpu.count({0, reduction_of("mean", "t_Int")}) == 0); // torch has no mean of integers
    CHECK(cpu.count({0, reduction_of("abs_max", "t_Bool")}) == 0); // nor abs of bool
    CHECK(std::isnan(element(cpu.at({0, reduction_of("std", "single_float")}), 0))); // unbiased std of one value
    CHECK(element(cpu.at({0, reduction_of("l2", "with_inf")}), 0) == INFINITY);
    CHECK(std::isnan(element(cpu.at({0, reduction_of("max", "with_nan")}), 0)));

    const std::vector<std::string> diff = differences(dir.path() / "cpu", dir.path() / "device");
    INFO(fmt::format("{} differences:\n{}", diff.size(), fmt::join(diff, "\n")));
    CHECK(diff.empty());
    CHECK(records_of(dir.path() / "device").size() == cpu.size());

    REQUIRE(histograms_of(dir.path() / "cpu").size() >= 20);
    const std::vector<std::string> histogram_diff =
        tdbg::test::histogram_differences(dir.path() / "cpu", dir.path() / "device");
    INFO(fmt::format("{} differences:\n{}", histogram_diff.size(), fmt::join(histogram_diff, "\n")));
    CHECK(histogram_diff.empty());
}

TEST_CASE("the device path copies raw values through a bounded pool: a full pool blocks, or drops by the policy") {
    temp_dir dir;
    const auto run = [&](const std::string& name, tdbg::full_queue_policy policy) {
        tdbg::hook_options o;
        o.out_dir = (dir.path() / name).string();
        o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
        o.include_collections = {"weights", "biases"};
        o.on_full_queue = policy;
        tdbg::hook hook(o);
        for (const char* name : {"weights", "biases"}) {
            hook.get_collection(name).set_reduction_config(tdbg::reduction_config::parse("mean", true));
        }
        tdbg::torch_hook_options options;
        options.force_device_path = true;
        options.pinned_pool_bytes = 1024; // less than one 4 KiB weight
        tdbg::torch_hook th(hook, options);
        torch::nn::Sequential net(torch::nn::Linear(32, 32), torch::nn::Linear(32, 32));
        th.register_module(*net, "Net");
        for (int step = 0; step < 3; ++step) {
            th.begin_step(); // the two weights and two biases as one batch
            hook.flush(); // the writer has written them: the pool is empty again
            CHECK(th.pinned_bytes_in_use() == 0);
        }
        hook.close();
        CHECK(th.pinned_bytes_in_use() == 0);
        return std::make_pair(th.dropped_tensors(), records_of(dir.path() / name));
    };

    const auto [blocked_drops, blocked] = run("block", tdbg::full_queue_policy::block);
    CHECK(blocked_drops == 0);
    for (std::int64_t step = 0; step < 3; ++step) {
        for (const char* name : {"Net_0.weight", "Net_1.weight", "Net_0.bias", "Net_1.bias"}) {
            INFO(name << " at step " << step);
            CHECK(blocked.count({step, name}) == 1);
            CHECK(blocked.count({step, reduction_of("mean", name)}) == 1);
        }
    }

    // Drop: in each batch (the pool empty at its start) the first raw value takes the whole pool (a request larger than
    // the pool is served when nothing else is lent); the other three find it full and are dropped, their reductions
    // still written.
    const auto [dropped, kept] = run("drop", tdbg::full_queue_policy::drop);
    CHECK(dropped == 9);
    for (std::int64_t step = 0; step < 3; ++step) {
        std::size_t raw = 0;
        for (const char* name : {"Net_0.weight", "Net_1.weight", "Net_0.bias", "Net_1.bias"}) {
            raw += kept.count({step, name});
            CHECK(kept.count({step, reduction_of("mean", name)}) == 1);
        }
        CHECK(raw == 1);
    }
}

TEST_CASE("the device path on CUDA tensors writes the CPU path's records (where a GPU is visible)") {
    if (!torch::cuda::is_available()) {
        const char* require = std::getenv("TDBG_REQUIRE_CUDA");
        if (require != nullptr && std::string(require) == "1") {
            FAIL("TDBG_REQUIRE_CUDA=1 but torch sees no CUDA device");
        }
        TDBG_SKIP("torch sees no CUDA device (this libtorch was built without CUDA, or no GPU is visible)");
    }
    temp_dir dir;
    write_run(dir.path() / "cpu", torch::kCPU, {});
    for (const auto reducer : {tdbg::device_reducer::automatic, tdbg::device_reducer::torch_ops}) {
        const std::string name = reducer == tdbg::device_reducer::automatic ? "automatic" : "torch_ops";
        tdbg::torch_hook_options options;
        options.reducer = reducer;
        write_run(dir.path() / name, torch::kCUDA, options);
        const std::vector<std::string> diff = differences(dir.path() / "cpu", dir.path() / name);
        INFO(fmt::format("reducer {}: {} differences:\n{}", name, diff.size(), fmt::join(diff, "\n")));
        CHECK(diff.empty());
    }
}
