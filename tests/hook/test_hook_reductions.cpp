#include <catch2/catch.hpp>

#include <cmath>

#include <xtensor/xarray.hpp>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/reduce/reduction_set.hpp"

using namespace tdbg;
using tdbg::test::read_indexes;
using tdbg::test::read_tensor;
using tdbg::test::temp_dir;

namespace {
hook_options every_step(const temp_dir& dir) {
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    return o;
}

template <class T>
T stored(const std::filesystem::path& run, const format::index_file& index, const std::string& name, dtype want) {
    INFO(name);
    const auto ev = read_tensor(run, index, name);
    CHECK(ev.value.type() == want);
    CHECK(ev.value.shape() == tensor_value::shape_type{1}); // smdebug's core hook stores (1,)
    return ev.value.data_as<T>()[0];
}
} // namespace

TEST_CASE("reductions are stored as smdebug/reductions/<r>/<name> with numpy's dtypes, without the raw tensor") {
    temp_dir dir("hook_reductions");
    auto o = every_step(dir);
    collection stats("stats");
    stats.include("^stats/");
    stats.set_reduction_config(
        reduction_config::parse("min,max,mean,std,variance,sum,prod,l1_norm,l2_norm,abs_mean,abs_min", false, true));
    o.collections.push_back(stats);
    {
        hook h(o);
        h.begin_step();
        h.save_tensor("stats/f:0", xt::xarray<float>{-3.0F, 1.0F, 2.0F, 4.0F});
        h.save_tensor("stats/i", xt::xarray<std::int32_t>{{-2, 3, 5}});
        h.close();
    }
    const auto run = dir.path() / "run";
    const auto index = read_indexes(run).at({0, "worker_0"});
    // The raw tensors are not saved; their shapes are; ":0" leaves reduction names.
    for (const auto& t : index.tensor_payload) {
        CHECK(t.tensorname.rfind("smdebug/reductions/", 0) == 0);
    }
    REQUIRE(index.shape_payload.size() == 2);
    CHECK(index.shape_payload[0].tensorname == "stats/f:0");
    CHECK(index.shape_payload[0].shape == std::vector<std::int64_t>{4});
    CHECK(index.shape_payload[1].shape == std::vector<std::int64_t>{1, 3});

    const std::string f = "/stats/f";
    CHECK(stored<float>(run, index, "smdebug/reductions/min" + f, dtype::float32) == -3.0F);
    CHECK(stored<float>(run, index, "smdebug/reductions/max" + f, dtype::float32) == 4.0F);
    CHECK(stored<float>(run, index, "smdebug/reductions/mean" + f, dtype::float32) == 1.0F);
    CHECK(stored<float>(run, index, "smdebug/reductions/variance" + f, dtype::float32) == Approx(6.5)); // ddof=0
    CHECK(stored<float>(run, index, "smdebug/reductions/std" + f, dtype::float32) == Approx(std::sqrt(6.5)));
    CHECK(stored<float>(run, index, "smdebug/reductions/sum" + f, dtype::float32) == 4.0F);
    CHECK(stored<float>(run, index, "smdebug/reductions/prod" + f, dtype::float32) == -24.0F);
    CHECK(stored<float>(run, index, "smdebug/reductions/l1" + f, dtype::float32) == 10.0F);
    CHECK(stored<float>(run, index, "smdebug/reductions/l2" + f, dtype::float32) == Approx(std::sqrt(30.0)));
    CHECK(stored<float>(run, index, "smdebug/reductions/abs_mean" + f, dtype::float32) == 2.5F);
    CHECK(stored<float>(run, index, "smdebug/reductions/abs_min" + f, dtype::float32) == 1.0F);

    const std::string i = "/stats/i";
    CHECK(stored<std::int32_t>(run, index, "smdebug/reductions/min" + i, dtype::int32) == -2);
    CHECK(stored<std::int64_t>(run, index, "smdebug/reductions/sum" + i, dtype::int64) == 6);
    CHECK(stored<std::int64_t>(run, index, "smdebug/reductions/prod" + i, dtype::int64) == -30);
    CHECK(stored<double>(run, index, "smdebug/reductions/mean" + i, dtype::float64) == 2.0);
    CHECK(stored<double>(run, index, "smdebug/reductions/l2" + i, dtype::float64) == Approx(std::sqrt(38.0)));
}

TEST_CASE("a collection with a compile-time reduction set stores what the run-time config stores") {
    temp_dir dir("hook_reduction_set");
    auto o = every_step(dir);
    using stats = reduce::reduction_set<reduce::max, reduce::abs_l2, reduce::mean, reduce::abs_variance>;
    collection fused("fused");
    fused.include("^fused/").set_reduction_set<stats>(true);
    REQUIRE(fused.reduction_config());
    CHECK(fused.reduction_config()->to_string() == "max,mean,abs_variance,abs_l2_norm");
    collection runtime("runtime");
    runtime.include("^runtime/").set_reduction_config(reduction_config::parse("max,abs_l2_norm,mean,abs_variance", true));
    o.collections = {fused, runtime};
    xt::xarray<double> data = xt::linspace<double>(-2.0, 3.0, 1001);
    {
        hook h(o);
        h.begin_step();
        h.save_tensor("fused/x", data);
        h.save_tensor("runtime/x", data);
        h.close();
    }
    const auto run = dir.path() / "run";
    const auto index = read_indexes(run).at({0, "worker_0"});
    const std::vector<std::string> names = tdbg::test::names_of(index);
    CHECK(names == std::vector<std::string>{"smdebug/reductions/max/fused/x", "smdebug/reductions/mean/fused/x",
                                            "smdebug/reductions/abs_variance/fused/x", "smdebug/reductions/abs_l2/fused/x",
                                            "fused/x", "smdebug/reductions/max/runtime/x",
                                            "smdebug/reductions/mean/runtime/x",
                                            "smdebug/reductions/abs_variance/runtime/x",
                                            "smdebug/reductions/abs_l2/runtime/x", "runtime/x"});
    double sum_sq = 0;
    for (double x : data) {
        sum_sq += x * x;
    }
    for (const char* r : {"max", "mean", "abs_variance", "abs_l2"}) {
        const double a = stored<double>(run, index, std::string("smdebug/reductions/") + r + "/fused/x", dtype::float64);
        const double b = stored<double>(run, index, std::string("smdebug/reductions/") + r + "/runtime/x", dtype::float64);
        CHECK(a == b);
    }
    CHECK(stored<double>(run, index, "smdebug/reductions/max/fused/x", dtype::float64) == 3.0);
    CHECK(stored<double>(run, index, "smdebug/reductions/mean/fused/x", dtype::float64) == Approx(0.5));
    CHECK(stored<double>(run, index, "smdebug/reductions/abs_l2/fused/x", dtype::float64) == Approx(std::sqrt(sum_sq)));
}

TEST_CASE("save_tensor with PyTorch's convention stores 0-d reductions, int64 for an unsigned sum, unbiased std") {
    temp_dir dir("hook_reductions_torch");
    auto o = every_step(dir);
    collection stats("stats");
    stats.include("^stats/");
    stats.set_reduction_config(reduction_config::parse("sum,max,std,mean", false, true));
    o.collections.push_back(stats);
    {
        hook h(o);
        h.begin_step();
        h.save_tensor("stats/u", tensor_value(std::vector<std::uint8_t>{200, 100, 7}), {},
                      reduction_convention::pytorch);
        h.save_tensor("stats/f", tensor_value(std::vector<float>{1.0F, 3.0F}), {}, reduction_convention::pytorch);
        h.close();
    }
    const auto run = dir.path() / "run";
    const auto index = read_indexes(run).at({0, "worker_0"});
    const auto zero_d = [&](const std::string& name, dtype want) {
        INFO(name);
        const auto ev = read_tensor(run, index, name);
        CHECK(ev.value.type() == want);
        CHECK(ev.value.shape().empty()); // torch's reductions are 0-d
        return ev.value;
    };
    CHECK(zero_d("smdebug/reductions/sum/stats/u", dtype::int64).data_as<std::int64_t>()[0] == 307);
    CHECK(zero_d("smdebug/reductions/max/stats/u", dtype::uint8).data_as<std::uint8_t>()[0] == 200);
    CHECK(zero_d("smdebug/reductions/std/stats/f", dtype::float32).data_as<float>()[0] == Approx(std::sqrt(2.0)));
    CHECK(zero_d("smdebug/reductions/mean/stats/f", dtype::float32).data_as<float>()[0] == 2.0F);
    // torch has no std or mean of an integer tensor: nothing is written for them.
    std::size_t of_u = 0;
    for (const auto& t : index.tensor_payload) {
        of_u += t.tensorname.size() > 8 && t.tensorname.compare(t.tensorname.size() - 8, 8, "/stats/u") == 0 ? 1 : 0;
    }
    CHECK(of_u == 2);
}
