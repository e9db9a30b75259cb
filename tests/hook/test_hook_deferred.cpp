// Deferred saves (hook/deferred.hpp): plan_save says what a step saves of a tensor, save_deferred
// queues its records at once and a writer thread takes their values from the source when it
// reaches them. A step is published only after its deferred values have arrived; a source that
// throws (a device error) is a write error under the hook's policy; what the source delivers
// must be what was announced.

#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "run_reader.hpp"
#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"

using namespace tdbg;
using tdbg::test::temp_dir;

namespace {

hook_options deferred_every_step(const temp_dir& dir) {
    hook_options o;
    o.out_dir = dir.path().string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"weights"};
    return o;
}

void deferred_collections(hook& h) {
    h.get_collection("weights").set_reduction_config(reduction_config::parse("max,mean,l2_norm", true));
}

// The values a device would deliver for `value`: the plan's reductions (0-d, as torch_hook
// stores them) and the value itself.
deferred_values deliver_now(const tensor_value& value, const save_plan& plan) {
    deferred_values out;
    const std::vector<tensor_value> computed = compute_reductions(value, plan.reductions);
    for (const tensor_value& r : computed) {
        out.reductions.emplace_back(r);
    }
    if (plan.raw) {
        out.raw = value.copy();
    }
    return out;
}

// A gate a source waits at, and a flag that it has reached it.
struct source_gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool reached = false;
    bool open = false;

    void pass() {
        std::unique_lock<std::mutex> lock(mutex);
        reached = true;
        changed.notify_all();
        changed.wait(lock, [&] { return open; });
    }
    void wait_reached() {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return reached; });
    }
    void release() {
        std::lock_guard<std::mutex> lock(mutex);
        open = true;
        changed.notify_all();
    }
};

} // namespace

TEST_CASE("deferred: plan_save says what the step saves, nothing when no collection saves the tensor") {
    temp_dir dir("deferred_plan");
    hook h(deferred_every_step(dir));
    deferred_collections(h);
    h.begin_step();
    const auto plan = h.plan_save("fc.weight", dtype::float32, {2, 3});
    REQUIRE(plan);
    CHECK(plan->raw);
    CHECK_FALSE(plan->histogram); // no TensorBoard export
    REQUIRE(plan->reductions.size() == 3);
    CHECK(reduction_name(plan->reductions[0]) == "max");
    CHECK(reduction_name(plan->reductions[1]) == "mean");
    CHECK(reduction_name(plan->reductions[2]) == "l2");
    CHECK_FALSE(h.plan_save("fc.bias", dtype::float32, {3})); // in no saved collection
    // An empty tensor: its collections save it, but smdebug writes no record for it.
    const auto empty = h.plan_save("empty.weight", dtype::float32, {0, 3});
    REQUIRE(empty);
    CHECK(empty->empty());
    // A plan other than this step's is refused.
    save_plan other = *plan;
    other.raw = false;
    CHECK_THROWS_AS(h.save_deferred("fc.weight", dtype::float32, {2, 3}, other, [] { return deferred_values{}; }),
                    usage_error);
    // A plan of a step that saved the tensor, at a step that saves nothing of it.
    h.begin_step();
    h.get_collection("weights").set_reduction_config(reduction_config::raw_only());
    CHECK_THROWS_AS(h.save_deferred("fc.weight", dtype::float32, {2, 3}, *plan, [] { return deferred_values{}; }),
                    usage_error);
    h.close();
}

TEST_CASE("deferred: a step is published only once its deferred values have arrived, with those values") {
    temp_dir dir("deferred_order");
    hook h(deferred_every_step(dir));
    deferred_collections(h);
    const tensor_value w(std::vector<float>{1.0F, -4.0F, 2.5F, 0.5F, 3.0F, -1.0F}, {2, 3});
    source_gate g;
    h.begin_step();
    const auto plan = h.plan_save("fc.weight", w.type(), w.shape());
    REQUIRE(plan);
    h.save_deferred("fc.weight", w.type(), w.shape(), *plan, [&, plan = *plan] {
        g.pass(); // the device has not finished yet
        return deliver_now(w, plan);
    });
    h.begin_step(); // ends step 0: the writer reaches its records and waits for them
    g.wait_reached();
    // The writer is inside the source: step 0's records are not written, so its index cannot be.
    CHECK_FALSE(std::filesystem::exists(dir.path() / format::index_file_key(0, "worker_0")));
    g.release();
    h.flush();
    const auto indexes = test::read_indexes(dir.path());
    REQUIRE(indexes.size() == 1);
    const auto& index = indexes.begin()->second;
    const auto raw = test::read_tensor(dir.path(), index, "fc.weight");
    CHECK(raw.value.bytes() == w.bytes());
    CHECK(raw.value.shape() == w.shape());
    const auto max = test::read_tensor(dir.path(), index, "smdebug/reductions/max/fc.weight");
    CHECK(max.value.dimension() == 0); // stored as delivered
    CHECK(max.value.data_as<float>()[0] == 3.0F);
    h.close();
}

TEST_CASE("deferred: a reduction delivered as none and a dropped raw value write no record, the rest is written") {
    temp_dir dir("deferred_none");
    hook h(deferred_every_step(dir));
    deferred_collections(h);
    const tensor_value w(std::vector<float>{1.0F, 2.0F}, {2});
    h.begin_step();
    const auto plan = h.plan_save("fc.weight", w.type(), w.shape());
    REQUIRE(plan);
    h.save_deferred("fc.weight", w.type(), w.shape(), *plan, [&, plan = *plan] {
        deferred_values v = deliver_now(w, plan);
        v.reductions[1].reset(); // no mean
        v.raw.reset();           // dropped
        return v;
    });
    h.close();
    const auto indexes = test::read_indexes(dir.path());
    REQUIRE(indexes.size() == 1);
    const auto names = test::names_of(indexes.begin()->second);
    CHECK(names == std::vector<std::string>{"smdebug/reductions/max/fc.weight", "smdebug/reductions/l2/fc.weight"});
    CHECK_FALSE(h.write_error());
}

TEST_CASE("deferred: a source that throws is a write error: printed by default, training goes on, earlier steps kept") {
    temp_dir dir("deferred_error");
    hook h(deferred_every_step(dir));
    deferred_collections(h);
    const tensor_value w(std::vector<float>{1.0F, 2.0F}, {2});
    h.begin_step();
    h.save_tensor("fc.weight", w);
    h.flush(); // step 0 written
    h.begin_step();
    const auto plan = h.plan_save("fc.weight", w.type(), w.shape());
    REQUIRE(plan);
    h.save_deferred("fc.weight", w.type(), w.shape(), *plan,
                    []() -> deferred_values { throw std::runtime_error("an illegal memory access was encountered"); });
    CHECK_NOTHROW(h.flush());
    REQUIRE(h.write_error());
    CHECK_THAT(*h.write_error(), Catch::Contains("'fc.weight'") && Catch::Contains("illegal memory access"));
    CHECK_NOTHROW(h.begin_step());
    CHECK_NOTHROW(h.close());
    const auto indexes = test::read_indexes(dir.path());
    REQUIRE(indexes.size() == 1);
    CHECK(indexes.begin()->first.first == 0);
}

TEST_CASE("deferred: with the rethrow policy a source's error surfaces on a later call, and so does a mismatch") {
    temp_dir dir("deferred_rethrow");
    auto o = deferred_every_step(dir);
    o.on_write_error = write_error_policy::rethrow;
    hook h(o);
    deferred_collections(h);
    const tensor_value w(std::vector<float>{1.0F, 2.0F}, {2});
    h.begin_step();
    const auto plan = h.plan_save("fc.weight", w.type(), w.shape());
    REQUIRE(plan);
    // Delivered as float64 where float32 was announced.
    h.save_deferred("fc.weight", w.type(), w.shape(), *plan, [plan = *plan] {
        return deliver_now(tensor_value(std::vector<double>{1.0, 2.0}, {2}), plan);
    });
    CHECK_THROWS_WITH(h.flush(), Catch::Contains("'fc.weight'") && Catch::Contains("announced as float32"));
    CHECK_NOTHROW(h.close());
    CHECK(test::read_indexes(dir.path()).empty());
}
