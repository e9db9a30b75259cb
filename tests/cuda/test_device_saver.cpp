// tdbg::cuda::device_saver, the save path of tensors in device memory, run with host_ops (the
// device operations done on the host, in the kernels' own arithmetic) so that a machine without
// a GPU covers it: for every dtype, it must write what hook.save_tensor writes of the same
// values, record for record and histogram for histogram, under numpy's and PyTorch's
// conventions; raw values go through a bounded pool that blocks or drops by the hook's policy;
// a device error while launching is a write error, not a crash. test_device_saver_gpu.cpp runs
// the first check with the CUDA runtime where a GPU is visible.

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "device_saver_support.hpp"
#include "run_records.hpp"
#include "support.hpp"
#include "tdbg/cuda/host_ops.hpp"
#include "tdbg/cuda/save.hpp"
#include "tdbg/hook/hook.hpp"

namespace fs = std::filesystem;
using tdbg::test::temp_dir;

namespace {

// A hook with two collections of four tensors, raw and mean every step.
tdbg::hook_options two_collections(const fs::path& dir, tdbg::full_queue_policy policy) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"weights", "biases"};
    o.on_full_queue = policy;
    return o;
}

// device_ops whose reduction pass fails, as a device out of memory would.
class failing_ops final : public tdbg::cuda::device_ops {
public:
    void* device_alloc(std::size_t n, CUstream_st* stream) override { return host_.device_alloc(n, stream); }
    void device_free(void* p, CUstream_st* stream) override { host_.device_free(p, stream); }
    void* host_alloc(std::size_t n) override { return host_.host_alloc(n); }
    void host_free(void* p) noexcept override { host_.host_free(p); }
    void reduce(const tdbg::cuda::device_tensor* /*tensors*/, std::size_t /*n*/, tdbg::cuda::tensor_stats* /*out*/,
                CUstream_st* /*stream*/) override {
        throw tdbg::error("tdbg::cuda: launching the reduction kernel: out of memory (cudaErrorMemoryAllocation)");
    }
    void histogram(const tdbg::cuda::device_tensor& tensor, std::uint64_t* counts, CUstream_st* stream) override {
        host_.histogram(tensor, counts, stream);
    }
    void copy_to_host(void* host, const void* device, std::size_t n, CUstream_st* stream) override {
        host_.copy_to_host(host, device, n, stream);
    }
    std::function<void()> record_event(CUstream_st* stream) override { return host_.record_event(stream); }
    [[nodiscard]] std::size_t outstanding() const noexcept { return host_.outstanding(); }

private:
    tdbg::cuda::host_ops host_;
};

} // namespace

TEST_CASE("device_saver (host_ops): the records and histograms hook.save_tensor writes, for every dtype") {
    for (const auto convention : {tdbg::reduction_convention::numpy, tdbg::reduction_convention::pytorch}) {
        const std::string name = convention == tdbg::reduction_convention::numpy ? "numpy" : "pytorch";
        INFO("convention " << name);
        temp_dir dir;
        tdbg::test::write_saved_run(dir.path() / "cpu", convention);
        auto ops = std::make_shared<tdbg::cuda::host_ops>();
        tdbg::test::write_device_run(dir.path() / "device", convention, ops, nullptr);
        CHECK(ops->outstanding() == 0); // every scratch buffer and pool block given back

        const auto expected = tdbg::test::records_of(dir.path() / "cpu");
        REQUIRE(expected.size() >= 200);
        const std::vector<std::string> diff = tdbg::test::differences(dir.path() / "cpu", dir.path() / "device");
        INFO(fmt::format("{} differences:\n{}", diff.size(), fmt::join(diff, "\n")));
        CHECK(diff.empty());
        CHECK(tdbg::test::records_of(dir.path() / "device").size() == expected.size());

        REQUIRE(tdbg::test::histograms_of(dir.path() / "cpu").size() >= 20);
        const std::vector<std::string> histograms =
            tdbg::test::histogram_differences(dir.path() / "cpu", dir.path() / "device");
        INFO(fmt::format("{} histogram differences:\n{}", histograms.size(), fmt::join(histograms, "\n")));
        CHECK(histograms.empty());
    }
}

TEST_CASE("device_saver (host_ops): one event per launch, and a tensor the step does not save is not queued") {
    temp_dir dir;
    tdbg::hook hook(two_collections(dir.path(), tdbg::full_queue_policy::block));
    auto ops = std::make_shared<tdbg::cuda::host_ops>();
    tdbg::cuda::device_saver saver(hook, ops);
    const std::vector<float> w(12, 0.5F);
    hook.begin_step();
    CHECK(saver.add("fc.weight", w.data(), tdbg::dtype::float32, {3, 4}));
    CHECK_FALSE(saver.add("activations", w.data(), tdbg::dtype::float32, {3, 4})); // in no saved collection
    CHECK(saver.queued() == 1);
    saver.launch(nullptr);
    CHECK(saver.queued() == 0);
    CHECK(ops->events() == 1);
    saver.launch(nullptr); // nothing queued: no device work
    CHECK(ops->events() == 1);
    CHECK_THROWS_WITH(saver.add("fc.bias", nullptr, tdbg::dtype::float32, {3}),
                      Catch::Contains("'fc.bias'") && Catch::Contains("null pointer"));
    hook.close();
    const auto records = tdbg::test::records_of(dir.path());
    CHECK(records.size() == 1);
    CHECK(records.at({0, "fc.weight"}).data_as<float>()[11] == 0.5F);
}

TEST_CASE("device_saver (host_ops): raw values through a bounded pool: a full pool blocks, or drops by the policy") {
    temp_dir dir;
    const std::vector<float> weight(32 * 32, 0.25F); // 4 KiB, a pool block
    const std::vector<float> bias(32, -1.0F);
    const auto run = [&](const std::string& name, tdbg::full_queue_policy policy) {
        tdbg::hook hook(two_collections(dir.path() / name, policy));
        for (const char* collection : {"weights", "biases"}) {
            hook.get_collection(collection).set_reduction_config(tdbg::reduction_config::parse("mean", true));
        }
        tdbg::cuda::device_saver_options options;
        options.pinned_pool_bytes = 1024; // less than one weight
        auto ops = std::make_shared<tdbg::cuda::host_ops>();
        tdbg::cuda::device_saver saver(hook, ops, options);
        for (int step = 0; step < 3; ++step) {
            hook.begin_step();
            for (const char* layer : {"fc0", "fc1"}) {
                saver.add(fmt::format("{}.weight", layer), weight.data(), tdbg::dtype::float32, {32, 32});
                saver.add(fmt::format("{}.bias", layer), bias.data(), tdbg::dtype::float32, {32});
            }
            saver.launch(nullptr);
            hook.flush(); // the writer has written them: the pool is empty again
            CHECK(saver.pinned_bytes_in_use() == 0);
        }
        hook.close();
        return std::make_pair(saver.dropped(), tdbg::test::records_of(dir.path() / name));
    };

    const auto [blocked_drops, blocked] = run("block", tdbg::full_queue_policy::block);
    CHECK(blocked_drops == 0);
    for (std::int64_t step = 0; step < 3; ++step) {
        for (const char* name : {"fc0.weight", "fc1.weight", "fc0.bias", "fc1.bias"}) {
            INFO(name << " at step " << step);
            CHECK(blocked.count({step, name}) == 1);
            CHECK(blocked.count({step, tdbg::test::reduction_of("mean", name)}) == 1);
        }
    }
    // Drop: in each launch the first raw value takes the whole pool (a request larger than the
    // pool is served when nothing else is lent); the other three are dropped, their means kept.
    const auto [dropped, kept] = run("drop", tdbg::full_queue_policy::drop);
    CHECK(dropped == 9);
    for (std::int64_t step = 0; step < 3; ++step) {
        std::size_t raw = 0;
        for (const char* name : {"fc0.weight", "fc1.weight", "fc0.bias", "fc1.bias"}) {
            raw += kept.count({step, name});
            CHECK(kept.count({step, tdbg::test::reduction_of("mean", name)}) == 1);
        }
        CHECK(raw == 1);
    }
}

TEST_CASE("device_saver: a device error while launching is a write error of the batch, earlier steps are kept") {
    temp_dir dir;
    tdbg::hook hook(two_collections(dir.path(), tdbg::full_queue_policy::block));
    hook.get_collection("weights").set_reduction_config(tdbg::reduction_config::parse("mean", true));
    auto ops = std::make_shared<failing_ops>();
    const std::vector<float> w(6, 2.0F);
    {
        tdbg::cuda::device_saver saver(hook, ops);
        hook.begin_step();
        hook.save_tensor("fc.weight", tdbg::tensor_value(w, {2, 3})); // step 0, from the CPU
        hook.begin_step();
        REQUIRE(saver.add("fc.weight", w.data(), tdbg::dtype::float32, {2, 3}));
        CHECK_NOTHROW(saver.launch(nullptr)); // training goes on
        hook.close();
    }
    REQUIRE(hook.write_error());
    CHECK_THAT(*hook.write_error(), Catch::Contains("'fc.weight'") && Catch::Contains("out of memory"));
    CHECK(ops->outstanding() == 0); // the scratch buffer and the pool's blocks were given back
    const auto records = tdbg::test::records_of(dir.path());
    CHECK(records.count({0, "fc.weight"}) == 1);
    CHECK(records.count({1, "fc.weight"}) == 0);
}
