// tdbg::cuda::device_saver with the CUDA runtime (runtime_ops): plain device buffers, no torch,
// saved on a stream of their own. The run must hold what hook.save_tensor writes of the same
// values (test_device_saver.cpp checks the same with host_ops everywhere): reductions from the
// fused kernel, raw values copied through page-locked memory, histogram counts binned on the
// device. Skips without a device, or fails when TDBG_REQUIRE_CUDA=1.

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "device_saver_support.hpp"
#include "device_support.hpp"
#include "run_records.hpp"
#include "support.hpp"
#include "tdbg/cuda/device_ops.hpp"
#include "tdbg/cuda/save.hpp"

using tdbg::test::temp_dir;

TEST_CASE("device_saver (CUDA runtime): plain device buffers give the records and histograms hook.save_tensor writes") {
    TDBG_REQUIRE_DEVICE();
    for (const auto convention : {tdbg::reduction_convention::numpy, tdbg::reduction_convention::pytorch}) {
        INFO("convention " << (convention == tdbg::reduction_convention::numpy ? "numpy" : "pytorch"));
        temp_dir dir;
        tdbg::test::write_saved_run(dir.path() / "cpu", convention);
        std::vector<std::unique_ptr<tdbg::test::device_memory>> buffers; // alive until the run is closed
        const tdbg::test::stream s;
        const auto to_device = [&buffers](const tdbg::tensor_value& v) -> const void* {
            buffers.push_back(std::make_unique<tdbg::test::device_memory>(v.nbytes()));
            tdbg::test::check_cuda(
                cudaMemcpy(buffers.back()->get(), v.bytes().data(), v.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
            return buffers.back()->get();
        };
        tdbg::test::write_device_run(dir.path() / "device", convention, tdbg::cuda::runtime_ops(), s.get(), to_device);

        const std::vector<std::string> diff = tdbg::test::differences(dir.path() / "cpu", dir.path() / "device");
        INFO(fmt::format("{} differences:\n{}", diff.size(), fmt::join(diff, "\n")));
        CHECK(diff.empty());
        REQUIRE(tdbg::test::histograms_of(dir.path() / "cpu").size() >= 20);
        const std::vector<std::string> histograms =
            tdbg::test::histogram_differences(dir.path() / "cpu", dir.path() / "device");
        INFO(fmt::format("{} histogram differences:\n{}", histograms.size(), fmt::join(histograms, "\n")));
        CHECK(histograms.empty());
    }
}
