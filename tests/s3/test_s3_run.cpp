// A whole run through S3: written by hook, read back by
// trial<s3_storage>, both after the fact and while it is being written.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <xtensor/xarray.hpp>

#include "s3_test_server.hpp"
#include "support.hpp"
#include "tdbg/core/xtensor.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/s3.hpp"
#include "tdbg/trial/trial.hpp"

using namespace tdbg;
using tdbg::test::s3_test_server;

namespace {

hook_options every_step(const std::string& out_dir) {
    hook_options o;
    o.out_dir = out_dir;
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.save_all = true;
    o.worker = "worker_0";
    o.num_workers = 1;
    return o;
}

/// The weights saved at `step`: different at every step and element.
xt::xarray<float> weights(std::int64_t step) {
    xt::xarray<float> w = xt::zeros<float>({3, 4});
    for (std::size_t i = 0; i < w.size(); ++i) {
        w.flat(i) = static_cast<float>(step) * 100.0F + static_cast<float>(i) * 0.25F;
    }
    return w;
}

// Writes `steps` steps; with a pause, each is flushed and followed by it. `before_close` runs
// between the last step and close(), which ends the run.
void write_run(const any_storage& storage, const std::string& out_dir, int steps, std::chrono::milliseconds pause = {},
               const std::function<void()>& before_close = {}) {
    hook h(storage, every_step(out_dir));
    for (int step = 0; step < steps; ++step) {
        h.begin_step();
        h.save_tensor("layer1/weight", weights(step));
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(1.0F / static_cast<float>(step + 1)));
        h.end_step();
        if (pause.count() > 0) {
            h.flush();
            std::this_thread::sleep_for(pause);
        }
    }
    if (before_close) {
        before_close();
    }
    h.close();
}

} // namespace

TEST_CASE("s3 run written by the hook reads back with the trial, with the same files as on disk", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("jobs/hooked");
    const s3_storage s3(url, server.options());
    write_run(s3, url, 5);

    const auto t = open_trial(s3, "hooked");
    CHECK(t.path() == url);
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4});
    CHECK(t.loaded_all_steps());
    for (std::int64_t step = 0; step < 5; ++step) {
        const tensor_value w = t.tensor("layer1/weight").value(step);
        const bool same = (w.as<float>() == weights(step));
        CHECK(same);
        CHECK(t.tensor("CrossEntropyLoss_output_0").value(step).data_as<float>()[0] ==
              1.0F / static_cast<float>(step + 1));
    }

    // A step range: its folder of the index listed from step 2's name to step 4's, and only
    // steps 2 and 3 read (three index files fewer than the whole run's; every other request alike).
    const auto before_part = s3.stats().requests;
    const auto part = open_trial(s3, "part", step_range{2, 4});
    const auto part_requests = s3.stats().requests - before_part;
    CHECK(part.steps() == std::vector<std::int64_t>{2, 3});
    const bool same_value = (part.tensor("layer1/weight").value(3).as<float>() == weights(3));
    CHECK(same_value);
    const auto before_all = s3.stats().requests;
    CHECK(open_trial(s3, "all").steps().size() == 5);
    CHECK(s3.stats().requests - before_all == part_requests + 3);

    // the same run on local disk has the same objects
    tdbg::test::temp_dir dir("s3_run");
    const local_storage local(dir.path() / "hooked");
    write_run(local, (dir.path() / "hooked").string(), 5);
    CHECK(s3.list("") == local.list(""));
    CHECK(s3.read("collections/000000000/worker_0_collections.json") ==
          local.read("collections/000000000/worker_0_collections.json"));
}

TEST_CASE("s3 trial follows a run while the hook is still writing it", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("jobs/live");
    const s3_storage s3(url, server.options());
    const int steps = 8;
    std::string failure;
    std::atomic<bool> opened{false};
    std::thread training([&] {
        try {
            // The run ends (close() writes the end marker) only once the trial has opened it,
            // however slowly the reader starts.
            write_run(s3, url, steps, std::chrono::milliseconds(150), [&] {
                if (!tdbg::test::wait_until([&] { return opened.load(); })) {
                    throw std::runtime_error("the trial did not open the run");
                }
            });
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    trial_options options;
    options.poll_interval = std::chrono::milliseconds(50);
    options.collection_wait = std::chrono::minutes(5);
    std::optional<trial> opening;
    try {
        opening.emplace(open_trial(s3, "live", {}, options));
    } catch (...) {
        opened = true; // lets the writer finish before the error ends the test
        training.join();
        throw;
    }
    const trial& t = *opening;
    const bool ended_at_open = t.loaded_all_steps();
    opened = true;
    t.wait_for_steps({0, 3}, mode::global, std::chrono::minutes(5));
    const bool same3 = (t.tensor("layer1/weight").value(3).as<float>() == weights(3));
    CHECK(same3);
    t.wait_for_steps({steps - 1}, mode::global, std::chrono::minutes(5));
    training.join();
    INFO(failure);
    REQUIRE(failure.empty());
    CHECK_FALSE(ended_at_open); // the trial really followed a live run
    for (int tries = 0; tries < 200 && !t.loaded_all_steps(); ++tries) {
        t.refresh();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(t.loaded_all_steps());
    CHECK(t.steps().size() == static_cast<std::size_t>(steps));
    for (int step = 0; step < steps; ++step) {
        const bool same = (t.tensor("layer1/weight").value(step).as<float>() == weights(step));
        CHECK(same);
    }
}

TEST_CASE("s3 run: the server killed and restarted while the hook writes, every step reads back", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("jobs/killed");
    const s3_storage s3(url, server.patient_options());
    const int steps = 30;
    std::atomic<int> begun{0};
    std::atomic<bool> killed{false};
    std::string failure;
    std::thread training([&] {
        try {
            hook h(s3, every_step(url));
            for (int step = 0; step < steps; ++step) {
                if (step == 8 && !tdbg::test::wait_until([&] { return killed.load(); })) {
                    throw std::runtime_error("the server was not killed");
                }
                h.begin_step();
                ++begun;
                h.save_tensor("layer1/weight", weights(step));
                h.end_step();
                h.flush(); // each step on the server before the next: the kill lands mid-run
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            h.close();
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    int at_kill = 0;
    server.outage([&] {
        at_kill = begun.load();
        return at_kill >= 8 || !failure.empty();
    }, [&] { killed = true; }); // step 8 on go to a server that is down, however long the kill took

    training.join();
    REQUIRE(server.available());
    INFO(failure);
    REQUIRE(failure.empty());
    CHECK(at_kill < steps); // the kill really happened mid-run
    CHECK(s3.stats().retries > 0); // the hook's copy of the storage shares its client and counters

    const auto t = open_trial(s3_storage(url, server.options()), "killed");
    CHECK(t.loaded_all_steps());
    REQUIRE(t.steps().size() == static_cast<std::size_t>(steps));
    for (int step = 0; step < steps; ++step) {
        const bool same = (t.tensor("layer1/weight").value(step).as<float>() == weights(step));
        CHECK(same);
    }
}

TEST_CASE("s3 run: the server killed for good while the hook writes, training finishes and the run reads up to the failure", "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("jobs/dead");
    s3_options impatient = server.options();
    impatient.retry.max_attempts = 2; // a dead server is given up on at once
    impatient.retry.max_delay = std::chrono::milliseconds(10);
    impatient.connect_timeout = std::chrono::milliseconds(2000);
    const s3_storage s3(url, impatient);
    const int steps = 30;
    std::atomic<int> begun{0};
    std::optional<std::string> write_error;
    std::atomic<bool> killed{false};
    std::string failure;
    int trained = 0;
    std::thread training([&] {
        try {
            hook h(s3, every_step(url));
            for (int step = 0; step < steps; ++step) {
                // Step 8 on go to a server that is dead, however long the kill took to land.
                if (step == 8 && !tdbg::test::wait_until([&] { return killed.load(); })) {
                    throw std::runtime_error("the server was not killed");
                }
                h.begin_step();
                ++begun;
                h.save_tensor("layer1/weight", weights(step));
                h.end_step();
                h.flush(); // each step on the server before the next: the kill lands mid-run
                ++trained;
            }
            h.close();
            write_error = h.write_error();
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    while (begun.load() < 8 && failure.empty()) {
        std::this_thread::yield();
    }
    server.kill();
    killed = true;
    training.join();
    server.restart(); // to read what was written before the kill
    REQUIRE(server.available());
    INFO(failure);
    REQUIRE(failure.empty()); // no hook call threw
    CHECK(trained == steps);
    REQUIRE(write_error);

    const auto t = open_trial(s3_storage(url, server.patient_options()), "dead");
    CHECK_FALSE(t.loaded_all_steps()); // no end marker after the failure
    const auto saved = t.steps();
    REQUIRE(saved.size() >= 7);
    CHECK(saved.size() < static_cast<std::size_t>(steps));
    for (std::size_t i = 0; i < saved.size(); ++i) {
        CHECK(saved[i] == static_cast<std::int64_t>(i)); // a prefix
        const bool same = (t.tensor("layer1/weight").value(saved[i]).as<float>() == weights(saved[i]));
        CHECK(same);
    }
}
