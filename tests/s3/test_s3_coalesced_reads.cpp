// Reading a run over S3 in a few requests per step: the trial reads an event
// file in one GET (coalesced reads, s3_options::coalesce_reads), with the same
// values and the same errors as reading record by record; large files are read
// in windows, and the record cache's prefetch reads different files at once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "s3_test_server.hpp"
#include "support.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/s3.hpp"
#include "tdbg/trial/detail/record_cache.hpp"
#include "tdbg/trial/trial.hpp"
#include "trial/run_writer.hpp"

using tdbg::test::s3_test_server;

namespace {

/// Writes `steps` steps of `tensors` float32 tensors of `elements` elements (tensor k at step s:
/// s * 1000 + k, + 1, ...) of worker_0 to `dir`, then copies every object to `s3`.
void write_coalescing_run(const std::filesystem::path& dir, const tdbg::s3_storage& s3, int steps, int tensors,
                          std::size_t elements) {
    tdbg::test::run_writer w(dir);
    w.collections("worker_0", 1);
    for (int s = 0; s < steps; ++s) {
        std::vector<tdbg::test::saved_tensor> saved;
        for (int k = 0; k < tensors; ++k) {
            saved.push_back({"t" + std::to_string(k),
                             tdbg::test::iota_value(static_cast<float>(s * 1000 + k), elements), {}, {}});
        }
        w.step(s, "worker_0", tdbg::mode::train, s, saved);
    }
    w.end();
    const tdbg::local_storage local(dir);
    for (const std::string& key : local.list("", "")) {
        s3.put(key, local.read(key));
    }
}

/// `server`'s options, with coalesced reads on or off.
tdbg::s3_options coalescing(const s3_test_server& server, bool on) {
    tdbg::s3_options o = server.options();
    o.coalesce_reads = on;
    return o;
}

bool same_tensor(const tdbg::tensor_value& a, const tdbg::tensor_value& b) {
    return a.type() == b.type() && a.shape() == b.shape() && a.bytes() == b.bytes();
}

} // namespace

TEST_CASE("s3 trial reads every value of a step in one GET of its event file, at most 3 requests a step, values as on disk",
          "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("coalesced");
    tdbg::test::temp_dir dir("s3_coalesced");
    const int steps = 5;
    const int tensors = 12;
    write_coalescing_run(dir.path(), tdbg::s3_storage(url, server.options()), steps, tensors, 4096); // 16 KB records
    const auto local = tdbg::create_trial(dir.path().string());

    for (const bool on : {true, false}) {
        INFO("coalesce_reads " << on);
        const tdbg::s3_storage s3(url, coalescing(server, on));
        CHECK(tdbg::any_storage(s3).coalesce_reads() == on);
        const auto t = tdbg::open_trial(s3, "coalesced");
        const std::uint64_t at_open = s3.stats().requests;
        for (int step = 0; step < steps; ++step) {
            const std::uint64_t before = s3.stats().requests;
            for (int k = 0; k < tensors; ++k) {
                const std::string name = "t" + std::to_string(k);
                const tdbg::tensor_value v = t.tensor(name).value(step);
                CHECK(v.data_as<float>()[4095] == static_cast<float>(step * 1000 + k + 4095));
                CHECK(same_tensor(v, local.tensor(name).value(step)));
            }
            // Coalesced: one GET of the event file. Record by record: one ranged GET per tensor.
            CHECK(s3.stats().requests - before == (on ? 1U : static_cast<std::uint64_t>(tensors)));
        }
        if (on) {
            // Opening (listings, one GET per index file) and reading, per step.
            CHECK(static_cast<double>(s3.stats().requests) / steps <= 3.0);
            CHECK(at_open >= static_cast<std::uint64_t>(steps)); // the index files were read
        }
    }
}

TEST_CASE("s3 trial with coalesced reads gives the errors of reading record by record for a damaged index entry",
          "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::uint64_t damage = GENERATE(100'000'000'000'000ULL, 1000ULL); // far past the file, or just past it
    const std::string url = server.new_run("damaged");
    tdbg::test::temp_dir dir("s3_damaged");
    const tdbg::s3_storage s3(url, server.options());
    write_coalescing_run(dir.path(), s3, 1, 3, 8);

    const std::string index_key = tdbg::format::index_file_key(0, "worker_0");
    auto json = nlohmann::json::parse(s3.read(index_key));
    auto& entry = json.at("tensor_payload").at(1);
    const std::string victim = entry.at("tensorname").get<std::string>();
    const auto offset = entry.at("start_idx").get<std::uint64_t>();
    const std::string event_key = json.at("meta").at("event_file_name").get<std::string>();
    const std::uint64_t file_size = s3.read(event_key).size();
    entry["length"] = damage > file_size ? damage : file_size - offset + damage;
    s3.put(index_key, json.dump());

    std::vector<std::string> messages;
    for (const bool on : {false, true}) {
        const auto t = tdbg::open_trial(tdbg::s3_storage(url, coalescing(server, on)), "damaged");
        try {
            (void)t.tensor(victim).value(0);
            FAIL("a record past the end of its file was read");
        } catch (const tdbg::storage_error& e) {
            messages.emplace_back(e.what());
        }
        // The other records of the file still read.
        CHECK(t.tensor("t0").value(0).data_as<float>()[7] == 7.0F);
        CHECK(t.tensor("t2").value(0).data_as<float>()[3] == 5.0F);
    }
    REQUIRE(messages.size() == 2);
    CHECK(messages[0] == messages[1]);
    CHECK_THAT(messages[1], Catch::Contains(event_key) && Catch::Contains("at byte " + std::to_string(offset)) &&
                                Catch::Contains("the object ends at byte " + std::to_string(file_size)));
}

TEST_CASE("s3 event files larger than the whole-file limit are read in windows, and prefetch reads files together",
          "[server]") {
    auto& server = s3_test_server::instance();
    TDBG_REQUIRE_S3_SERVER(server);
    const std::string url = server.new_run("windows");
    tdbg::test::temp_dir dir("s3_windows");
    write_coalescing_run(dir.path(), tdbg::s3_storage(url, server.options()), 4, 16, 256); // ~1 KB records
    const tdbg::local_storage local(dir.path());

    // The records of each step's event file, as the trial's index lists them (file id = step).
    std::deque<tdbg::detail::event_file> files;
    std::vector<tdbg::detail::record_request> requests;
    for (std::int64_t step = 0; step < 4; ++step) {
        const std::string key = tdbg::format::index_file_key(step, "worker_0");
        const auto index = tdbg::format::parse_index_file(local.read(key), key);
        tdbg::detail::event_file& file = files.emplace_back(index.event_file_name);
        for (const auto& loc : index.tensor_payload) {
            requests.push_back({&file, static_cast<std::uint32_t>(step), loc.start_idx, loc.length, 0});
            file.extent = std::max<std::uint64_t>(file.extent, loc.start_idx + loc.length);
            ++file.records;
        }
    }
    const std::uint64_t extent = files.front().extent;
    REQUIRE(extent > 16 * 1024);

    SECTION("windows of 4 KB: fewer GETs than records, none of the whole file") {
        const tdbg::s3_storage s3(url, server.options());
        tdbg::detail::record_cache::options o;
        o.remote_whole_file_limit = 8 * 1024;
        o.remote_window = 4 * 1024;
        tdbg::detail::record_cache cache(o);
        const std::uint64_t before = s3.stats().requests;
        const std::uint64_t received = s3.stats().bytes_received;
        for (std::size_t i = 0; i < 16; ++i) { // step 0's file
            const auto& r = requests[i];
            CHECK(cache.fetch(s3, r).bytes == local.read_range(r.file->key, r.offset, r.length));
        }
        const std::uint64_t gets = s3.stats().requests - before;
        CHECK(gets <= (extent + o.remote_window - 1) / o.remote_window);
        CHECK(gets >= extent / o.remote_window);
        CHECK(s3.stats().bytes_received - received < extent + 5 * 1200); // a record twice per window at most
    }
    SECTION("prefetch: one GET per file, then every record from the cache") {
        const tdbg::s3_storage s3(url, server.options());
        tdbg::detail::record_cache cache;
        const std::uint64_t before = s3.stats().requests;
        cache.prefetch(s3, requests);
        CHECK(s3.stats().requests - before == 4);
        for (const auto& r : requests) {
            CHECK(cache.fetch(s3, r).bytes == local.read_range(r.file->key, r.offset, r.length));
        }
        CHECK(s3.stats().requests - before == 4);
    }
}
