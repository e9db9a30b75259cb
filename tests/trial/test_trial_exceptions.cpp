// The exceptions a trial throws carry smdebug's names and meanings, and
// messages that say what and where; bad runs fail cleanly.

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "golden.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::mode;
using tdbg::test::saved_tensor;

namespace {

void copy_run(const std::filesystem::path& from, const std::filesystem::path& to) {
    std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
    for (const auto& entry : std::filesystem::recursive_directory_iterator(to)) {
        std::filesystem::permissions(entry.path(), std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    }
}

} // namespace

TEST_CASE("exceptions: tensor_unavailable for a tensor that was never saved") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("pytorch_mlp").string());
    CHECK_FALSE(t.has_tensor("no/such/tensor"));
    CHECK(t.has_tensor("MLP_fc1.weight"));
    CHECK_THROWS_AS(t.tensor("no/such/tensor"), tdbg::tensor_unavailable);
    const std::string what = tdbg::test::error_of([&] { (void)t.tensor("no/such/tensor"); });
    CHECK(what.find("no/such/tensor") != std::string::npos);
    CHECK(what.find("pytorch_mlp") != std::string::npos);
}

TEST_CASE("exceptions: tensor_unavailable_for_step when the step exists but the value does not") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    // Only reductions were saved.
    CHECK_THROWS_AS(t.tensor("red/f32_3d").value(0), tdbg::tensor_unavailable_for_step);
    const std::string what = tdbg::test::error_of([&] { (void)t.tensor("red/f32_3d").value(0); });
    CHECK(what.find("red/f32_3d") != std::string::npos);
    CHECK(what.find("step 0") != std::string::npos);
    CHECK(what.find("reductions were saved") != std::string::npos);
    // A reduction neither stored nor computable.
    CHECK_THROWS_AS(t.tensor("red/f32_3d").reduction_value(0, "l1"), tdbg::tensor_unavailable_for_step);
    // Gradients are not saved in EVAL: global step 6 exists (EVAL 0), the tensor has nothing there.
    CHECK_THROWS_AS(t.tensor("grad/layer0").value(6), tdbg::tensor_unavailable_for_step);
    CHECK_THROWS_AS(t.tensor("grad/layer0").value(0, mode::eval), tdbg::tensor_unavailable_for_step);
    CHECK_THROWS_AS(t.tensor("grad/layer0").workers(6), tdbg::tensor_unavailable_for_step);
    // Step 5 holds only scalar/lr.
    CHECK_THROWS_AS(t.tensor("loss").value(5), tdbg::tensor_unavailable_for_step);
    // No shape without a shape entry or a value.
    CHECK_THROWS_AS(t.tensor("redns/f32_1d").shape(0), tdbg::shape_unavailable_for_step);
}

TEST_CASE("exceptions: step_unavailable for skipped steps, no_more_data past the end") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("pytorch_mlp").string());
    // TRAIN saves every 5th step: global step 3 was skipped.
    CHECK(t.has_passed_step(3) == tdbg::step_state::unavailable);
    CHECK_THROWS_AS(t.tensor("MLP_fc1.weight").value(3), tdbg::step_unavailable);
    CHECK_THROWS_AS(t.wait_for_steps({0, 3}), tdbg::step_unavailable);
    CHECK_THROWS_AS(t.tensor("MLP_fc1.weight").value(1, mode::eval), tdbg::step_unavailable);
    // Past the last step of the finished run.
    CHECK(t.has_passed_step(49) == tdbg::step_state::unavailable);
    CHECK_THROWS_AS(t.tensor("MLP_fc1.weight").value(49), tdbg::no_more_data);
    CHECK_THROWS_AS(t.wait_for_steps({48, 1000}), tdbg::no_more_data);
    CHECK_THROWS_AS(t.tensor("MLP_fc1.weight").value(9, mode::eval), tdbg::no_more_data);
    const std::string what = tdbg::test::error_of([&] { t.wait_for_steps({1000}); });
    CHECK(what.find("1000") != std::string::npos);
    CHECK(what.find("48") != std::string::npos); // the last step there is
    CHECK_NOTHROW(t.wait_for_steps({0, 5, 48}));
    CHECK_NOTHROW(t.wait_for_steps({0, 8}, mode::eval));
}

TEST_CASE("exceptions: invalid_worker names the workers that did write") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    CHECK_THROWS_AS(t.tensor("loss").value(0, mode::global, std::string("worker_7")), tdbg::invalid_worker);
    const std::string what = tdbg::test::error_of([&] { (void)t.tensor("loss").value(0, mode::global, std::string("worker_7")); });
    CHECK(what.find("worker_7") != std::string::npos);
    CHECK(what.find("worker_0, worker_1") != std::string::npos);
    // worker_1 skipped raw/bool_1d at step 2.
    CHECK_THROWS_AS(t.tensor("raw/bool_1d").value(2, mode::global, std::string("worker_1")), tdbg::invalid_worker);
    CHECK_NOTHROW(t.tensor("raw/bool_1d").value(2, mode::global, std::string("worker_0")));
}

TEST_CASE("workers: a TensorFlow MirroredStrategy run's device workers read as smdebug names them") {
    // smdebug's TensorFlow hook names each worker after its device, written into
    // file names with '/' as '_' and ':' as '-'.
    tdbg::test::temp_dir dir("tf_device_workers");
    tdbg::test::run_writer w(dir.path());
    const std::string gpu0 = "_replica-0_task-0_device-GPU-0";
    const std::string gpu1 = "_replica-0_task-0_device-GPU-1";
    w.collections(gpu0, 2);
    w.collections(gpu1, 2);
    for (std::int64_t step = 0; step < 2; ++step) {
        w.step(step, gpu0, mode::train, step, {saved_tensor{"w", tdbg::test::iota_value(0, 3), {}, {}}});
        w.step(step, gpu1, mode::train, step, {saved_tensor{"w", tdbg::test::iota_value(10, 3), {}, {}}});
    }
    w.end();
    const auto t = tdbg::create_trial(dir.path().string());
    const std::string dev0 = "/replica:0/task:0/device:GPU:0";
    const std::string dev1 = "/replica:0/task:0/device:GPU:1";
    CHECK(t.workers() == std::vector<std::string>{dev0, dev1});
    CHECK(t.num_workers() == 2);
    CHECK(t.tensor("w").workers(1) == std::vector<std::string>{dev0, dev1});
    CHECK(t.tensor("w").value(1, mode::global, dev1).data_as<float>()[0] == 10.0F);
    CHECK(t.tensor("w").value(0, mode::global, dev0).data_as<float>()[2] == 2.0F);
    CHECK(t.wall_time(1) == 1700000001.0);
    CHECK_THROWS_AS(t.tensor("w").value(0, mode::global, gpu0), tdbg::invalid_worker);
}

TEST_CASE("exceptions: carry smdebug's fields (tensor name, step, mode, has_reductions, last_step, worker)") {
    const auto t = tdbg::create_trial(tdbg::test::fixture_run("core_modes_workers").string());
    try {
        (void)t.tensor("red/f32_3d").value(0);
        FAIL("no exception");
    } catch (const tdbg::tensor_unavailable_for_step& e) {
        CHECK(e.tensor_name() == "red/f32_3d");
        CHECK(e.step() == 0);
        CHECK(e.mode() == mode::global);
        CHECK(e.has_reductions()); // only reductions were saved there
    }
    try {
        (void)t.tensor("grad/layer0").value(0, mode::eval);
        FAIL("no exception");
    } catch (const tdbg::tensor_unavailable_for_step& e) {
        CHECK(e.tensor_name() == "grad/layer0");
        CHECK(e.step() == 0);
        CHECK(e.mode() == mode::eval);
        CHECK_FALSE(e.has_reductions());
    }
    try {
        (void)t.tensor("redns/f32_1d").shape(0);
        FAIL("no exception");
    } catch (const tdbg::shape_unavailable_for_step& e) {
        CHECK(e.tensor_name() == "redns/f32_1d");
        CHECK(e.step() == 0);
    }
    try {
        (void)t.tensor("loss").value(40, mode::train);
        FAIL("no exception");
    } catch (const tdbg::no_more_data& e) {
        CHECK(e.step() == 40);
        CHECK(e.mode() == mode::train);
        CHECK(e.last_step() == 8);
    }
    try {
        (void)t.tensor("no/such");
        FAIL("no exception");
    } catch (const tdbg::tensor_unavailable& e) {
        CHECK(e.tensor_name() == "no/such");
    }
    try {
        (void)t.tensor("loss").value(0, mode::global, std::string("worker_7"));
        FAIL("no exception");
    } catch (const tdbg::invalid_worker& e) {
        CHECK(e.worker() == "worker_7");
    }
    const tdbg::rule_evaluation_condition_met met("VanishingGradient", 12, true);
    CHECK(met.rule_name() == "VanishingGradient");
    CHECK(met.step() == 12);
    CHECK(met.end_of_rule());
    const tdbg::insufficient_information_for_rule_invocation info("SimilarAcrossRuns", "no other run to compare with");
    CHECK(info.rule_name() == "SimilarAcrossRuns");
    CHECK(std::string(info.what()) == "rule SimilarAcrossRuns: no other run to compare with");
}

TEST_CASE("exceptions: missing_collection_files for what is not a run") {
    tdbg::test::temp_dir dir("not_a_run");
    CHECK_THROWS_AS(tdbg::create_trial(dir.path().string()), tdbg::missing_collection_files);
    CHECK_THROWS_AS(tdbg::create_trial((dir.path() / "absent").string()), tdbg::missing_collection_files);
    std::filesystem::create_directories(dir.path() / "index" / "000000000");
    const std::string what = tdbg::test::error_of([&] { (void)tdbg::create_trial(dir.path().string()); });
    CHECK(what.find(dir.path().string()) != std::string::npos);
    CHECK_THROWS_AS(tdbg::create_trial("s3://bucket/run"), tdbg::config_error);
    CHECK_THROWS_AS(tdbg::create_trial("  "), tdbg::config_error);
}

TEST_CASE("exceptions: a corrupt index file is an index_reader_error, the files before it are read, it and those "
          "after it are read again by the next refresh") {
    tdbg::test::temp_dir dir("corrupt_index");
    tdbg::test::run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, {saved_tensor{"x", tdbg::test::iota_value(0, 2), {}, {}}});
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.steps() == std::vector<std::int64_t>{0});
    w.step(1, "worker_0", mode::train, 1, {saved_tensor{"x", tdbg::test::iota_value(1, 2), {}, {}}});
    w.storage().put("index/000000000/000000000002_worker_0.json", "{\"meta\": {\"mode\": \"TRAIN\"");
    w.step(3, "worker_0", mode::train, 3, {saved_tensor{"x", tdbg::test::iota_value(3, 2), {}, {}}});
    CHECK_THROWS_AS(t.steps(), tdbg::index_reader_error);
    const std::string what = tdbg::test::error_of([&] { (void)t.steps(); });
    CHECK(what.find("000000000002_worker_0.json") != std::string::npos);
    {
        const auto guard = t.no_refresh();
        CHECK(t.steps() == std::vector<std::int64_t>{0, 1}); // step 1 was merged, step 3 (after the corrupt file) not
        CHECK_THROWS_AS(t.tensor("x").value(3), tdbg::step_not_yet_available);
    }
    // Once the file is fixed, the next refresh reads it and the file after it.
    w.step(2, "worker_0", mode::train, 2, {saved_tensor{"x", tdbg::test::iota_value(2, 2), {}, {}}});
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2, 3});
    CHECK(t.tensor("x").value(3).data_as<float>()[1] == 4.0F); // iota_value(3, 2): 3, 4
    // A file name that is not an index file name.
    w.storage().put("index/000000000/garbage.json", "{}");
    CHECK_THROWS_AS(t.steps(), tdbg::index_reader_error);
}

TEST_CASE("exceptions: a stored reduction beyond 256 TiB into its event file is an index_reader_error naming it, "
          "a value there is indexed") {
    tdbg::test::temp_dir dir("far_index_entry");
    tdbg::test::run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", mode::train, 0, {saved_tensor{"x", tdbg::test::iota_value(0, 2), {}, {}}});
    tdbg::format::index_file far;
    far.mode = mode::train;
    far.mode_step = 1;
    far.event_file_name = tdbg::format::event_file_key(1, "worker_0");
    far.tensor_payload.push_back({"x", std::uint64_t{1} << 40U, 64}); // a value starting at 1 TiB
    far.tensor_payload.push_back({"smdebug/reductions/mean/x", std::uint64_t{1} << 48U, 20});
    w.storage().put(tdbg::format::index_file_key(1, "worker_0"), tdbg::format::to_json(far));
    const std::string what = tdbg::test::error_of([&] { (void)tdbg::create_trial(dir.path().string()); });
    CHECK(what.find("000000000001_worker_0.json") != std::string::npos);
    CHECK(what.find("reduction 'smdebug/reductions/mean/x' starts 281474976710656 bytes") != std::string::npos);
    far.tensor_payload.back().start_idx = (std::uint64_t{1} << 48U) - 1; // the last start a reduction may have
    w.storage().put(tdbg::format::index_file_key(1, "worker_0"), tdbg::format::to_json(far));
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.tensor("x").steps() == std::vector<std::int64_t>{0, 1});
    CHECK(t.tensor("x").entries(mode::global, true).back().value_record_bytes == 64);
    CHECK(t.tensor("x").entries(mode::global, true).back().stored_reductions.size() == 1);
}

TEST_CASE("exceptions: an index file filed under another step is an index_reader_error naming it and both steps, "
          "never read as that step") {
    namespace fs = std::filesystem;
    tdbg::test::temp_dir dir("misfiled_index");
    const tdbg::test::run_writer w(dir.path());
    w.collections("worker_0", 1);
    for (std::int64_t step = 0; step < 8; ++step) {
        w.step(step, "worker_0", mode::train, step,
               {saved_tensor{"w", tdbg::test::iota_value(static_cast<float>(10 * step), 3), {}, {}}});
    }
    w.end();
    const fs::path index5 = dir.path() / tdbg::format::index_file_key(5, "worker_0");
    const fs::path index6 = dir.path() / tdbg::format::index_file_key(6, "worker_0");
    REQUIRE(tdbg::create_trial(dir.path().string()).tensor("w").value(5).data_as<float>()[0] == 50.0F);

    // A duplicate of step 6's index named for step 5, in the folder of steps 1000-1999: listed
    // after the real one, it would replace it, and step 6's values would read as step 5's.
    const fs::path elsewhere = dir.path() / "index" / "000000001" / index5.filename();
    fs::create_directories(elsewhere.parent_path());
    fs::copy_file(index6, elsewhere);
    CHECK_THROWS_AS(tdbg::create_trial(dir.path().string()), tdbg::index_reader_error);
    std::string what = tdbg::test::error_of([&] { (void)tdbg::create_trial(dir.path().string()); });
    CHECK(what.find(elsewhere.string()) != std::string::npos);
    CHECK(what.find("its name says step 5, whose index belongs in index/000000000/") != std::string::npos);
    CHECK(what.find("filed in 000000001/, the folder of steps 1000 to 1999") != std::string::npos);
    fs::remove(elsewhere);

    // A step's index file in the right folder, for the step of its name, whose entries are in
    // another step's event file (its contents' own step): refused as well.
    fs::copy_file(index6, index5, fs::copy_options::overwrite_existing);
    CHECK_THROWS_AS(tdbg::create_trial(dir.path().string()), tdbg::index_reader_error);
    what = tdbg::test::error_of([&] { (void)tdbg::create_trial(dir.path().string()); });
    CHECK(what.find(index5.string()) != std::string::npos);
    CHECK(what.find("its name says step 5, but its entries are in step 6's event file "
                    "events/000000000006/000000000006_worker_0.tfevents") != std::string::npos);

    // Filed where it belongs again, the run reads whole and exact.
    w.step(5, "worker_0", mode::train, 5, {saved_tensor{"w", tdbg::test::iota_value(50.0F, 3), {}, {}}});
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(t.tensor("w").value(5).data_as<float>()[0] == 50.0F);
    CHECK(t.tensor("w").value(6).data_as<float>()[0] == 60.0F);
}

TEST_CASE("exceptions: corrupt event files are format_errors naming file and offset") {
    tdbg::test::temp_dir dir("corrupt_events");
    const auto run = dir.path() / "run";
    copy_run(tdbg::test::fixture_run("pytorch_mlp"), run);
    const auto event = run / "events" / "000000000005" / "000000000005_worker_0.tfevents";
    {
        std::fstream f(event, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(645 + 3); // inside the length of MLP_fc1.bias's record
        f.put('\x7f');
    }
    const auto t = tdbg::create_trial(run.string());
    CHECK_NOTHROW(t.tensor("MLP_fc1.weight").value(5)); // the record before is intact
    CHECK_THROWS_AS(t.tensor("MLP_fc1.bias").value(5), tdbg::format_error);
    const std::string what = tdbg::test::error_of([&] { (void)t.tensor("MLP_fc1.bias").value(5); });
    CHECK(what.find("000000000005_worker_0.tfevents") != std::string::npos);
    CHECK(what.find("645") != std::string::npos);
    // A truncated event file.
    std::filesystem::resize_file(run / "events" / "000000000010" / "000000000010_worker_0.tfevents", 100);
    CHECK_THROWS_AS(t.tensor("MLP_fc2.bias").value(10), tdbg::format_error);
    // A missing one: the run is damaged, which is an error naming the file, never "not saved"
    // (tensor_unavailable_for_step, which a rule skips).
    const auto missing = run / "events" / "000000000015" / "000000000015_worker_0.tfevents";
    std::filesystem::remove(missing);
    CHECK_THROWS_AS(t.tensor("MLP_fc2.bias").value(15), tdbg::unreadable_event_file);
    CHECK(tdbg::test::error_of([&] { (void)t.tensor("MLP_fc2.bias").value(15); }).find(missing.string()) != std::string::npos);
    // A collections file that is not JSON.
    tdbg::test::temp_dir bad("bad_collections");
    tdbg::local_storage(bad.path()).put("collections/000000000/worker_0_collections.json", "{not json");
    CHECK_THROWS_AS(tdbg::create_trial(bad.path().string()), tdbg::format_error);
}
