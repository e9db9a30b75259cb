// Hostile names — "..", "/", absolute paths, NUL bytes, thousands of
// characters — in tensor, collection, scalar and worker names never make a
// file outside the run directory: names go inside files, and the names that
// become part of a file name are checked first, with a clear error.

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/run_claim.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::temp_dir;
namespace fs = std::filesystem;

namespace {

// Every file and directory below `root`, relative to it.
std::set<std::string> tree(const fs::path& root) {
    std::set<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        out.insert(entry.path().lexically_relative(root).generic_string());
    }
    return out;
}

// The names to try, escaping towards `outside` (a directory beside the run).
std::vector<std::string> hostile_names(const fs::path& outside) {
    return {"..",
            "../escaped",
            "../../../escaped",
            "a/../../escaped",
            "/",
            "//double//slash",
            outside.string() + "/absolute",
            "./.",
            "dir/",
            std::string(5000, 'n'),
            std::string(300, '.') + "/" + std::string(300, '/'),
            "..\\escaped",
            "~/escaped"};
}

// True when every path in `files` is one a run's layout holds.
bool only_run_layout(const std::set<std::string>& files) {
    for (const std::string& f : files) {
        const bool ok = f == "events" || f == "index" || f == "collections" || f == "tensorboard" ||
                        f.rfind("events/", 0) == 0 || f.rfind("index/", 0) == 0 || f.rfind("collections/", 0) == 0 ||
                        f.rfind("tensorboard/", 0) == 0 || f == tdbg::format::end_marker_key || f == ".tdbg" ||
                        f == ".tdbg/claims" || f == tdbg::format::claim_key("worker_0");
        if (!ok) {
            return false;
        }
    }
    return true;
}

tdbg::hook_options save_everything(const fs::path& run) {
    tdbg::hook_options o;
    o.out_dir = run.string();
    o.save_all = true;
    o.include_collections = {"all"};
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    o.export_tensorboard = true;
    return o;
}

} // namespace

TEST_CASE("hostile names: tensor, collection and scalar names stay inside the run's files") {
    temp_dir root("hostile");
    const fs::path run = root.path() / "a" / "b" / "run";
    const fs::path outside = root.path() / "outside";
    fs::create_directories(outside);
    const auto names = hostile_names(outside);
    std::vector<std::string> saved;
    {
        tdbg::hook h(save_everything(run));
        for (const std::string& name : names) {
            h.get_collection(name).include("^never$"); // a collection named so, saved with "all"
        }
        h.begin_step();
        for (std::size_t i = 0; i < names.size(); ++i) {
            h.save_tensor(names[i], tdbg::tensor_value(std::vector<float>{static_cast<float>(i), 0.5F}), {names[i]});
            h.save_scalar(names[i], static_cast<double>(i));
            saved.push_back(names[i]);
        }
        // A NUL byte or broken UTF-8 is refused with a message that says why.
        CHECK_THROWS_WITH(h.save_tensor(std::string("nul\0byte", 8), tdbg::tensor_value::scalar(1.0F)),
                          Catch::Contains("NUL byte"));
        CHECK_THROWS_WITH(h.save_tensor("bad\xff", tdbg::tensor_value::scalar(1.0F)), Catch::Contains("not valid UTF-8"));
        CHECK_THROWS_AS(h.save_tensor("", tdbg::tensor_value::scalar(1.0F)), tdbg::invalid_name);
        h.close();
    }
    // Nothing beside the run, nothing in it but the run's layout, nothing at the absolute target.
    for (const std::string& path : tree(root.path())) {
        INFO(path);
        CHECK((path == "a" || path == "a/b" || path == "outside" || path.rfind("a/b/run", 0) == 0));
    }
    const auto inside = tree(run);
    CHECK(only_run_layout(inside));
    CHECK(fs::is_empty(outside));
    CHECK_FALSE(fs::exists(run.parent_path() / "escaped"));

    // Every name reads back as saved, with its value.
    const auto t = tdbg::create_trial(run.string());
    for (std::size_t i = 0; i < saved.size(); ++i) {
        INFO("name of " << saved[i].size() << " bytes: " << saved[i].substr(0, 40));
        const tdbg::tensor_value v = t.tensor(saved[i]).value(0);
        REQUIRE(v.size() == 2);
        CHECK(v.data_as<float>()[0] == static_cast<float>(i));
        CHECK(t.tensor("scalar/" + saved[i]).value(0).data_as<double>()[0] == static_cast<double>(i));
        CHECK(t.collection(saved[i]).include_regex == std::vector<std::string>{"^never$"});
    }
}

TEST_CASE("hostile names: worker names and TensorBoard directories that would leave the run are refused") {
    temp_dir root("hostile_worker");
    const fs::path run = root.path() / "a" / "run";
    const fs::path outside = root.path() / "outside";
    fs::create_directories(outside);
    std::vector<std::string> workers = hostile_names(outside);
    workers.emplace_back("x..y");
    workers.emplace_back(std::string("worker\0_0", 9));
    workers.emplace_back(std::string(256, 'w'));
    workers.emplace_back("");
    for (const std::string& worker : workers) {
        INFO("worker name of " << worker.size() << " bytes: " << worker.substr(0, 40));
        tdbg::hook_options o = save_everything(run);
        o.worker = worker;
        CHECK_THROWS_WITH(tdbg::hook(o), Catch::StartsWith("invalid worker name '"));
    }
    // A relative TensorBoard directory stays inside the run.
    for (const std::string& dir : {std::string("../outside"), std::string("tb/../../outside"), std::string("a//b")}) {
        tdbg::hook_options o = save_everything(run);
        o.tensorboard_dir = dir;
        CHECK_THROWS_AS(tdbg::hook(o), tdbg::invalid_name);
    }
    CHECK(fs::is_empty(outside));
    for (const auto& entry : fs::recursive_directory_iterator(root.path())) {
        const std::string rel = entry.path().lexically_relative(root.path()).generic_string();
        CHECK((rel == "outside" || rel == "a" || rel.rfind("a/run", 0) == 0));
    }
}

TEST_CASE("hostile names: an index that names a file outside the run is refused, never read") {
    temp_dir root("hostile_index");
    const fs::path run = root.path() / "run";
    // A valid record outside the run, which a reader following the index would accept.
    tdbg::format::tensor_event ev;
    ev.tag = "w";
    ev.value = tdbg::tensor_value(std::vector<float>{42.0F});
    std::string record;
    tdbg::format::append_record(record, tdbg::format::encode_tensor_event(ev), tdbg::format::footer_kind::smdebug_constant);
    tdbg::local_storage(root.path()).put("outside.tfevents", record);

    tdbg::local_storage storage(run);
    tdbg::format::collections_file collections;
    storage.put(tdbg::format::collections_file_key("worker_0"), tdbg::format::to_json(collections));
    const std::vector<std::string> targets = {"../outside.tfevents", (root.path() / "outside.tfevents").string(),
                                              "events/../../outside.tfevents"};
    for (std::size_t step = 0; step < targets.size(); ++step) {
        tdbg::format::index_file index;
        index.mode = tdbg::mode::train;
        index.mode_step = static_cast<std::int64_t>(step);
        index.event_file_name = targets[step];
        index.tensor_payload.push_back({"w", 0, record.size()});
        storage.put(tdbg::format::index_file_key(static_cast<std::int64_t>(step), "worker_0"),
                    tdbg::format::to_json(index));
    }
    const auto t = tdbg::create_trial(run.string());
    REQUIRE(t.steps().size() == targets.size());
    for (std::size_t step = 0; step < targets.size(); ++step) {
        INFO("event_file_name " << targets[step]);
        CHECK_THROWS_WITH(t.tensor("w").value(static_cast<std::int64_t>(step)), Catch::Contains("invalid storage key"));
        CHECK_THROWS_AS(t.tensor("w").value(static_cast<std::int64_t>(step)), tdbg::invalid_name);
    }
}
