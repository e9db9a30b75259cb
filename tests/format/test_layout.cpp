#include <catch2/catch.hpp>

#include <string>

#include "tdbg/format/layout.hpp"

using namespace tdbg;
using namespace tdbg::format;

TEST_CASE("layout: step strings and the keys of event, index and collection files") {
    CHECK(step_string(0) == "000000000000");
    CHECK(step_string(7) == "000000000007");
    CHECK(step_string(123456789012) == "123456789012");
    CHECK(step_string(1234567890123) == "1234567890123"); // wider steps are not cut
    CHECK_THROWS_AS(step_string(-1), error);
    CHECK(index_dir_string(999) == "000000000");
    CHECK(index_dir_string(1000) == "000000001");
    CHECK(index_dir_string(123456) == "000000123");
    CHECK(event_file_key(7, "worker_0") == "events/000000000007/000000000007_worker_0.tfevents");
    CHECK(index_file_key(7, "worker_0") == "index/000000000/000000000007_worker_0.json");
    CHECK(index_file_key(2500, "worker_1") == "index/000000002/000000002500_worker_1.json");
    CHECK(collections_file_key("worker_0") == "collections/000000000/worker_0_collections.json");
    CHECK(end_marker_key == "training_job_end.ts");
    CHECK(stop_marker_key == "tdbg_stop_training.json");
    CHECK_THROWS_AS(event_file_key(1, "a/b"), invalid_name);
}

TEST_CASE("layout: TensorFlow device workers read as smdebug's reader names them") {
    // MirroredStrategy: the worker is the device, written with '/' as '_' and ':' as '-'.
    const auto index = parse_index_file_key("index/000000000/000000000007__replica-0_task-1_device-GPU-0.json");
    REQUIRE(index);
    CHECK(index->worker == "/replica:0/task:1/device:GPU:0");
    const auto events = parse_event_file_key("events/000000000007/000000000007__replica-0_task-1_device-GPU-0.tfevents");
    REQUIRE(events);
    CHECK(events->worker == "/replica:0/task:1/device:GPU:0");
    CHECK(parse_collections_file_key("collections/000000000/_replica-0_task-1_device-GPU-0_collections.json") ==
          std::string("/replica:0/task:1/device:GPU:0"));
    // Written back to the file names' part.
    CHECK(worker_file_part("/replica:0/task:1/device:GPU:0") == "_replica-0_task-1_device-GPU-0");
    CHECK(event_file_key(7, worker_file_part(index->worker)) ==
          "events/000000000007/000000000007__replica-0_task-1_device-GPU-0.tfevents");
    // Other names keep their underscores and hyphens, wherever the run is stored
    // (smdebug also looks for "__" in the directories above the file).
    CHECK(parse_index_file_key("runs__a/index/000000000/000000000007_worker_0.json")->worker == "worker_0");
    CHECK(parse_index_file_key("index/000000000/000000000007_host-3_gpu_1.json")->worker == "host-3_gpu_1");
    CHECK(parse_collections_file_key("collections/000000000/host-3_gpu__1_collections.json") ==
          std::string("host-3_gpu__1"));
    CHECK(worker_file_part("host-3_gpu_1") == "host-3_gpu_1");
}

TEST_CASE("layout: index and event file keys parse back to step and worker") {
    const auto info = parse_index_file_key("index/000000000/000000000007_worker_0.json");
    REQUIRE(info);
    CHECK(info->step == 7);
    CHECK(info->worker == "worker_0");
    const auto prefixed = parse_index_file_key("runs/a/index/000000002/000000002500_host-3_gpu_1.json");
    REQUIRE(prefixed);
    CHECK(*prefixed == index_key_info{2500, "host-3_gpu_1"});
    CHECK_FALSE(parse_index_file_key("index/000000000/000000000007_worker_0.json.tmp"));
    CHECK_FALSE(parse_index_file_key("index/000000000/000000000007.json"));
    CHECK_FALSE(parse_index_file_key("index/000000000/000000000007_.json"));
    CHECK_FALSE(parse_index_file_key("index/000000000/00000000x007_worker_0.json"));
    CHECK_FALSE(parse_index_file_key("index/abc/000000000007_worker_0.json"));
    CHECK_FALSE(parse_index_file_key("notindex/000000000/000000000007_worker_0.json"));
    CHECK_FALSE(parse_index_file_key("events/000000000007/000000000007_worker_0.tfevents"));
    CHECK_FALSE(parse_index_file_key("000000000007_worker_0.json"));
    // The folder an index file is filed in, which a reader compares with its step's.
    CHECK(index_file_folder("runs/a/index/000000002/000000002500_host-3_gpu_1.json") == 2);
    CHECK(index_file_folder("index/000000001/000000000005_worker_0.json") == 1); // misfiled: step 5 belongs in 0
    CHECK_FALSE(index_file_folder("index/0000000000000000000001/000000000005_worker_0.json")); // past int64
    CHECK_FALSE(index_file_folder("index/000000000/000000000007.json"));
    // Every key we build parses back, and is filed in its step's folder.
    for (std::int64_t step : {0, 1, 999, 1000, 123456}) {
        CHECK(*parse_index_file_key(index_file_key(step, "worker_3")) == index_key_info{step, "worker_3"});
        CHECK(index_file_folder(index_file_key(step, "worker_3")) == step / index_files_per_dir);
        CHECK(*parse_event_file_key(event_file_key(step, "worker_3")) == index_key_info{step, "worker_3"});
    }
    CHECK(parse_collections_file_key("collections/000000000/worker_1_collections.json") == std::string("worker_1"));
    CHECK_FALSE(parse_collections_file_key("collections/000000000/worker_1_collections.json.tmp"));
    CHECK_FALSE(parse_collections_file_key("collections/000000001/worker_1_collections.json"));
}

TEST_CASE("layout: worker names that cannot be file names are rejected") {
    CHECK_NOTHROW(validate_worker_name("worker_0"));
    CHECK_NOTHROW(validate_worker_name(std::string(255, 'w')));
    CHECK_THROWS_AS(validate_worker_name(""), invalid_name);
    CHECK_THROWS_AS(validate_worker_name(std::string(256, 'w')), invalid_name);
    CHECK_THROWS_WITH(validate_worker_name("a/b"), Catch::Contains("'a/b'") && Catch::Contains("'/'"));
    CHECK_THROWS_WITH(validate_worker_name(".."), Catch::Contains("'..'"));
    CHECK_THROWS_AS(validate_worker_name("x..y"), invalid_name);
    CHECK_THROWS_WITH(validate_worker_name(std::string("a\0b", 3)), Catch::Contains("NUL"));
    CHECK_THROWS_AS(validate_worker_name("a\\b"), invalid_name);
}

TEST_CASE("layout: reduction tensor names drop ':N' like smdebug and parse back") {
    CHECK(reduction_tensor_name({reduction_kind::l2, true}, "dense/kernel:0") ==
          "smdebug/reductions/abs_l2/dense/kernel");
    CHECK(reduction_tensor_name({reduction_kind::mean, false}, "red/f32_3d") == "smdebug/reductions/mean/red/f32_3d");
    // smdebug removes every ":<digits>", not only a suffix.
    CHECK(strip_colon_index("a:0/b:12/c") == "a/b/c");
    CHECK(strip_colon_index("a:x:") == "a:x:");
    CHECK(strip_colon_index("t:123") == "t");
    const auto parsed = parse_reduction_tensor_name("smdebug/reductions/abs_variance/grad/layer0");
    REQUIRE(parsed);
    CHECK(parsed->first == reduction{reduction_kind::variance, true});
    CHECK(parsed->second == "grad/layer0");
    for (reduction_kind k : all_reduction_kinds) {
        for (bool abs : {false, true}) {
            const auto back = parse_reduction_tensor_name(reduction_tensor_name({k, abs}, "w"));
            REQUIRE(back);
            CHECK(back->first == reduction{k, abs});
            CHECK(back->second == "w");
        }
    }
    CHECK_FALSE(parse_reduction_tensor_name("smdebug/reductions/l2_norm/w")); // not a spelling smdebug writes
    CHECK_FALSE(parse_reduction_tensor_name("smdebug/reductions/median/w"));
    CHECK_FALSE(parse_reduction_tensor_name("smdebug/reductions/l2/"));
    CHECK_FALSE(parse_reduction_tensor_name("smdebug/reductions/l2"));
    CHECK_FALSE(parse_reduction_tensor_name("raw/l2/w"));
}
