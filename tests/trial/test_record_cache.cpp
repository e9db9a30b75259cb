// Fetching records: small records of one file read one after the other cost
// one read of the whole file; large records are always read by range; and a
// reader going tensor by tensor across many files is not made to read whole
// files over and over. Where a request costs a round trip (a remote storage,
// S3), an event file is read whole on its first use, or in windows when it is
// large, and prefetch() and invoke_rule read different files at the same time.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "counting_storage.hpp"
#include "run_writer.hpp"
#include "support.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/detail/record_cache.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::mode;
using tdbg::test::counters;
using tdbg::test::counting_storage;
using tdbg::test::saved_tensor;

namespace {

void write_run(const std::filesystem::path& dir, int steps, int tensors, std::size_t elements) {
    tdbg::test::run_writer w(dir);
    w.collections("worker_0", 1);
    for (int s = 0; s < steps; ++s) {
        std::vector<saved_tensor> saved;
        for (int k = 0; k < tensors; ++k) {
            saved.push_back(saved_tensor{"t" + std::to_string(k), tdbg::test::iota_value(static_cast<float>(s * 1000 + k), elements), {}, {}});
        }
        w.step(s, "worker_0", mode::train, s, saved);
    }
    w.end();
}

} // namespace

TEST_CASE("record cache: a step's small records cost two reads, read again one, and a file is let go once read") {
    tdbg::test::temp_dir dir("cache_small");
    write_run(dir.path(), 3, 10, 8);
    auto c = std::make_shared<counters>();
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "small");
    for (int k = 0; k < 10; ++k) {
        CHECK(t.tensor("t" + std::to_string(k)).value(1).data_as<float>()[0] == static_cast<float>(1000 + k));
    }
    CHECK(c->range_reads == 2); // the first record alone, then the whole file
    // Every record of the file was read: it was let go. Reading the step again reads it whole
    // once more (in any order), and again every record from that one read.
    for (int k = 9; k >= 0; --k) {
        CHECK(t.tensor("t" + std::to_string(k)).value(1).data_as<float>()[7] == static_cast<float>(1007 + k));
    }
    CHECK(c->range_reads == 3);
    // Tensor by tensor across steps: t0 reads steps 0 and 2 alone and step 1's file whole;
    // t1 reads the files of steps 0 and 2 whole; every other read is a hit.
    for (int k = 0; k < 10; ++k) {
        const auto values = t.tensor("t" + std::to_string(k)).values();
        REQUIRE(values.size() == 3);
        CHECK(values.at(2).data_as<float>()[0] == static_cast<float>(2000 + k));
    }
    CHECK(c->range_reads == 3 + 3 + 2);
}

TEST_CASE("record cache: large records are read by range only") {
    tdbg::test::temp_dir dir("cache_large");
    write_run(dir.path(), 2, 3, 8192); // 32 KB records
    auto c = std::make_shared<counters>();
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "large");
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < 3; ++k) {
            CHECK(t.tensor("t" + std::to_string(k)).value(0).data_as<float>()[8191] == static_cast<float>(k + 8191));
        }
    }
    CHECK(c->range_reads == 6);
}

TEST_CASE("record cache: stored reductions beside a large value are read by their byte ranges, not with the value") {
    const tdbg::reduction abs_mean{tdbg::reduction_kind::mean, true};
    const tdbg::reduction max{tdbg::reduction_kind::max, false};
    // Each step's file: ten tensors' stored reductions (small records) and one large raw
    // value of 64 KB, most of the file's bytes; with `large` false, the value is small too.
    const auto write = [&](const std::filesystem::path& dir, bool large) {
        tdbg::test::run_writer w(dir);
        w.collections("worker_0", 1);
        for (int s = 0; s < 2; ++s) {
            std::vector<saved_tensor> saved;
            for (int k = 0; k < 10; ++k) {
                const auto v = static_cast<float>(s * 100 + k);
                saved.push_back(saved_tensor{"t" + std::to_string(k), std::nullopt,
                                             {{abs_mean, tdbg::test::iota_value(v, 1)},
                                              {max, tdbg::test::iota_value(v + 0.5F, 1)}},
                                             {}});
            }
            saved.push_back(saved_tensor{"big", tdbg::test::iota_value(0, large ? 16384 : 4), {}, {}});
            w.step(s, "worker_0", mode::train, s, saved);
        }
        w.end();
    };
    const auto read_reductions = [&](const tdbg::trial& t) {
        for (int pass = 0; pass < 2; ++pass) {
            for (int k = 0; k < 10; ++k) {
                const auto v = t.tensor("t" + std::to_string(k)).reduction_value(1, abs_mean);
                CHECK(v.data_as<float>()[0] == static_cast<float>(100 + k));
            }
        }
    };
    SECTION("beside a large value: every reduction read alone, its own bytes") {
        tdbg::test::temp_dir dir("cache_reductions_large");
        write(dir.path(), true);
        auto c = std::make_shared<counters>();
        const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "reductions");
        read_reductions(t);
        CHECK(c->range_reads == 20);
        CHECK(c->range_bytes < 20 * 200); // twenty small records, never the 64 KB value
    }
    SECTION("beside a small value: the file is read whole on its second use, as any file of small records") {
        tdbg::test::temp_dir dir("cache_reductions_small");
        write(dir.path(), false);
        auto c = std::make_shared<counters>();
        const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "reductions");
        read_reductions(t);
        CHECK(c->range_reads == 2); // the first alone, then the file whole, which serves the rest
    }
}

TEST_CASE("record cache: files evicted and read whole twice are then read by range") {
    tdbg::test::temp_dir dir("cache_thrash");
    write_run(dir.path(), 6, 4, 16); // small records, 6 files
    const auto file_size = std::filesystem::file_size(dir.path() / "events" / "000000000000" / "000000000000_worker_0.tfevents");
    auto c = std::make_shared<counters>();
    tdbg::trial_options o;
    o.file_cache_bytes = 4 * file_size + 10; // four files fit, six do not
    const auto t = tdbg::open_trial(counting_storage(dir.path(), c), "thrash", {}, o);
    for (int k = 0; k < 4; ++k) {
        const auto values = t.tensor("t" + std::to_string(k)).values(); // tensor by tensor over all files
        CHECK(values.at(5).data_as<float>()[0] == static_cast<float>(5000 + k));
    }
    // Each file was read whole at most twice; the last pass reads records one by one.
    const int before = c->range_reads;
    CHECK(t.tensor("t0").values().size() == 6);
    CHECK(c->range_reads - before <= 6); // by range (a file still kept may serve one)
    CHECK(before <= 6 + 2 * 6 + 6);
}

TEST_CASE("record cache: an index entry past the end of its event file is a format error, not an allocation") {
    tdbg::test::temp_dir dir("cache_corrupt_length");
    write_run(dir.path(), 1, 2, 8);
    // Give the second tensor a length no file could hold (100 TB).
    std::filesystem::path index;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "index")) {
        if (e.path().extension() == ".json") {
            index = e.path();
        }
    }
    REQUIRE(!index.empty());
    auto json = nlohmann::json::parse(tdbg::test::read_file(index));
    auto& entry = json.at("tensor_payload").at(1);
    const std::string victim = entry.at("tensorname").get<std::string>();
    entry["length"] = 100'000'000'000'000ULL;
    tdbg::test::write_file(index, json.dump());

    const auto t = tdbg::create_trial(dir.path().string());
    try {
        (void)t.tensor(victim).value(0);
        FAIL("a 100 TB record was read");
    } catch (const tdbg::format_error& e) {
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains(".tfevents") && Catch::Contains("the event file has"));
    }
    // The other tensor of the same file still reads.
    const std::string other = json.at("tensor_payload").at(0).at("tensorname").get<std::string>();
    CHECK(t.tensor(other).value(0).size() == 8);

    // The storage's own range read refuses too, naming the file.
    const tdbg::local_storage storage(dir.path());
    const std::string event_key = json.at("meta").at("event_file_name").get<std::string>();
    CHECK_THROWS_WITH(storage.read_range(event_key, 0, 100'000'000'000'000ULL),
                      Catch::Contains(event_key) && Catch::Contains("the file ends at byte"));
}

namespace {

/// What a remote_storage was asked: the ranges read, and how many reads were in flight together.
struct remote_log {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges; // offset, length of each range read
    int in_flight = 0;
    int most_in_flight = 0;
    /// While > 0, a range read waits until this many are in flight (then it drops to 0), so that
    /// reads run one after the other cannot pass (they fail after a minute instead of hanging).
    int gather = 0;
};

/// A stand-in for S3 over local files: every read is a request (no positional reads), many
/// are worth having in flight, and reads are coalesced (unless `coalesce` is false).
class remote_storage {
public:
    remote_storage(std::filesystem::path root, std::shared_ptr<remote_log> log, bool coalesce = true)
        : inner_(std::move(root)), log_(std::move(log)), coalesce_(coalesce) {}

    void put(const std::string& key, std::string_view bytes) const { inner_.put(key, bytes); }
    [[nodiscard]] tdbg::local_storage::writer open_write(const std::string& key) const { return inner_.open_write(key); }
    [[nodiscard]] std::string read(const std::string& key) const { return inner_.read(key); }
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        {
            std::unique_lock<std::mutex> lock(log_->mutex);
            log_->ranges.emplace_back(offset, length);
            log_->most_in_flight = std::max(log_->most_in_flight, ++log_->in_flight);
            if (log_->gather > 0) {
                if (log_->in_flight >= log_->gather) {
                    log_->gather = 0;
                    log_->changed.notify_all();
                } else {
                    log_->changed.wait_for(lock, std::chrono::minutes(1), [&] { return log_->gather == 0; });
                }
            }
        }
        struct leave {
            remote_log& log;
            ~leave() {
                const std::lock_guard<std::mutex> lock(log.mutex);
                --log.in_flight;
            }
        } const left{*log_};
        return inner_.read_range(key, offset, length);
    }
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const {
        return inner_.list(prefix, start_after);
    }
    [[nodiscard]] bool exists(const std::string& key) const { return inner_.exists(key); }
    [[nodiscard]] std::string describe() const { return "remote:" + inner_.describe(); }
    [[nodiscard]] std::size_t request_concurrency() const noexcept { return 16; }
    [[nodiscard]] bool coalesce_reads() const noexcept { return coalesce_; }

private:
    tdbg::local_storage inner_;
    std::shared_ptr<remote_log> log_;
    bool coalesce_;
};
static_assert(tdbg::is_storage_v<remote_storage>, "the test storage must be a storage");

/// The ranges read so far.
std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_read(remote_log& log) {
    const std::lock_guard<std::mutex> lock(log.mutex);
    return log.ranges;
}

/// The records the index of `step` lists, as requests to a record cache (file id = step).
std::vector<tdbg::detail::record_request> records_of(const tdbg::local_storage& storage, std::int64_t step,
                                                     std::vector<std::unique_ptr<tdbg::detail::event_file>>& files) {
    const std::string key = tdbg::format::index_file_key(step, "worker_0");
    const auto index = tdbg::format::parse_index_file(storage.read(key), key);
    auto file = std::make_unique<tdbg::detail::event_file>(index.event_file_name);
    std::vector<tdbg::detail::record_request> requests;
    for (const auto& loc : index.tensor_payload) {
        requests.push_back({file.get(), static_cast<std::uint32_t>(step), loc.start_idx, loc.length, 0});
        file->extent = std::max<std::uint64_t>(file->extent, loc.start_idx + loc.length);
        ++file->records;
    }
    files.push_back(std::move(file));
    return requests;
}

bool same_value(const tdbg::tensor_value& a, const tdbg::tensor_value& b) {
    return a.type() == b.type() && a.shape() == b.shape() && a.bytes() == b.bytes();
}

} // namespace

TEST_CASE("record cache, remote storage: a step's records cost one read of the whole file, values as on disk") {
    tdbg::test::temp_dir dir("cache_remote_step");
    write_run(dir.path(), 3, 10, 4096); // 16 KB records: local reading reads each by range
    auto log = std::make_shared<remote_log>();
    const auto remote = tdbg::open_trial(remote_storage(dir.path(), log), "remote");
    const auto local = tdbg::create_trial(dir.path().string());
    const auto file_size = std::filesystem::file_size(dir.path() / "events" / "000000000001" / "000000000001_worker_0.tfevents");
    for (int k = 0; k < 10; ++k) {
        const std::string name = "t" + std::to_string(k);
        const tdbg::tensor_value v = remote.tensor(name).value(1);
        CHECK(v.data_as<float>()[4095] == static_cast<float>(1000 + k + 4095));
        CHECK(same_value(v, local.tensor(name).value(1)));
    }
    CHECK(ranges_read(*log) == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, file_size}});
    // Tensor by tensor over all steps: one read per file, the values as on disk.
    for (int k = 9; k >= 0; --k) {
        const std::string name = "t" + std::to_string(k);
        const auto values = remote.tensor(name).values();
        const auto expected = local.tensor(name).values();
        REQUIRE(values.size() == 3);
        for (const auto& [step, value] : values) {
            CHECK(value.data_as<float>()[0] == static_cast<float>(step * 1000 + k));
            CHECK(same_value(value, expected.at(step)));
        }
    }
    CHECK(ranges_read(*log).size() == 3);
}

TEST_CASE("record cache, remote storage: with coalescing off, large records are read one by one") {
    tdbg::test::temp_dir dir("cache_remote_off");
    write_run(dir.path(), 2, 10, 4096);
    auto log = std::make_shared<remote_log>();
    const auto t = tdbg::open_trial(remote_storage(dir.path(), log, false), "remote_off");
    for (int k = 0; k < 10; ++k) {
        CHECK(t.tensor("t" + std::to_string(k)).value(1).data_as<float>()[1] == static_cast<float>(1000 + k + 1));
    }
    const auto ranges = ranges_read(*log);
    CHECK(ranges.size() == 10);
    CHECK(std::all_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.second < 17000; }));
}

TEST_CASE("record cache, remote storage: a file larger than the whole-file limit is read in windows, not whole") {
    tdbg::test::temp_dir dir("cache_remote_windows");
    write_run(dir.path(), 1, 16, 256); // ~1 KB records, ~17 KB file
    const tdbg::local_storage local(dir.path());
    std::vector<std::unique_ptr<tdbg::detail::event_file>> files;
    const auto requests = records_of(local, 0, files);
    const std::uint64_t extent = files.front()->extent;
    REQUIRE(extent > 16 * 1024);

    SECTION("windows of 4 KB, each read once") {
        auto log = std::make_shared<remote_log>();
        const tdbg::any_storage storage = remote_storage(dir.path(), log);
        tdbg::detail::record_cache::options o;
        o.remote_whole_file_limit = 8 * 1024;
        o.remote_window = 4 * 1024;
        tdbg::detail::record_cache cache(o);
        for (int pass = 0; pass < 2; ++pass) {
            for (const auto& r : requests) {
                const auto got = cache.fetch(storage, r);
                CHECK(got.bytes == local.read_range(files.front()->key, r.offset, r.length));
            }
        }
        // Read forward: one read per window, none of them the whole file, each byte read once
        // but for the record that crosses a window's end (read with the next window).
        auto ranges = ranges_read(*log);
        CHECK(ranges.size() <= (extent + o.remote_window - 1) / o.remote_window);
        std::sort(ranges.begin(), ranges.end());
        std::uint64_t next = 0;
        for (const auto& [offset, length] : ranges) {
            CHECK(offset <= next);
            CHECK(next - offset < 1200); // less than a record read twice
            CHECK(length <= 2 * o.remote_window);
            next = offset + length;
        }
        CHECK(next == extent);
    }
    SECTION("records longer than a window are read alone") {
        auto log = std::make_shared<remote_log>();
        const tdbg::any_storage storage = remote_storage(dir.path(), log);
        tdbg::detail::record_cache::options o;
        o.remote_whole_file_limit = 8 * 1024;
        o.remote_window = 512;
        tdbg::detail::record_cache cache(o);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> expected;
        for (const auto& r : requests) {
            CHECK(cache.fetch(storage, r).bytes == local.read_range(files.front()->key, r.offset, r.length));
            expected.emplace_back(r.offset, r.length);
        }
        CHECK(ranges_read(*log) == expected);
    }
    SECTION("a file within the limit is read whole on its first use") {
        auto log = std::make_shared<remote_log>();
        const tdbg::any_storage storage = remote_storage(dir.path(), log);
        tdbg::detail::record_cache cache;
        const auto& last = requests.back();
        CHECK(cache.fetch(storage, last).bytes == local.read_range(files.front()->key, last.offset, last.length));
        CHECK(cache.fetch(storage, requests.front()).bytes ==
              local.read_range(files.front()->key, requests.front().offset, requests.front().length));
        CHECK(ranges_read(*log) == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, extent}});
    }
}

TEST_CASE("record cache, remote storage: windows fit a small cache, so a window's records cost one read") {
    tdbg::test::temp_dir dir("cache_remote_small_capacity");
    write_run(dir.path(), 1, 10, 4096); // one 165 KB event file of 16 KB records
    const auto file_size =
        std::filesystem::file_size(dir.path() / "events" / "000000000000" / "000000000000_worker_0.tfevents");
    auto log = std::make_shared<remote_log>();
    tdbg::trial_options o;
    o.file_cache_bytes = 512 * 1024; // pieces of up to 128 KB kept: the file is read in 64 KB windows
    const auto t = tdbg::open_trial(remote_storage(dir.path(), log), "remote", {}, o);
    for (int k = 0; k < 10; ++k) {
        CHECK(t.tensor("t" + std::to_string(k)).value(0).data_as<float>()[4095] == static_cast<float>(k + 4095));
    }
    const auto ranges = ranges_read(*log);
    CHECK(ranges.size() <= 4); // ceil(165 / 64) windows, not a read per record
    std::uint64_t bytes = 0;
    for (const auto& r : ranges) {
        CHECK(r.second <= 128 * 1024);
        bytes += r.second;
    }
    CHECK(bytes < 2 * file_size); // a record crossing a window's end is read with the next window
}

TEST_CASE("record cache: prefetch reads the event files of a batch at the same time, one read each") {
    tdbg::test::temp_dir dir("cache_prefetch");
    write_run(dir.path(), 8, 5, 64); // 8 event files, as a step of 8 workers
    const tdbg::local_storage local(dir.path());
    std::vector<std::unique_ptr<tdbg::detail::event_file>> files;
    std::vector<tdbg::detail::record_request> batch;
    for (std::int64_t step = 0; step < 8; ++step) {
        for (const auto& r : records_of(local, step, files)) {
            batch.push_back(r);
        }
    }
    REQUIRE(batch.size() == 40);

    SECTION("a storage that coalesces reads: 8 reads, at least 4 in flight together, then fetch() finds every record") {
        auto log = std::make_shared<remote_log>();
        log->gather = 4;
        const tdbg::any_storage storage = remote_storage(dir.path(), log);
        tdbg::detail::record_cache cache;
        cache.prefetch(storage, batch);
        auto ranges = ranges_read(*log);
        CHECK(log->most_in_flight >= 4);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> whole_files;
        for (const auto& f : files) {
            whole_files.emplace_back(0, f->extent.load());
        }
        std::sort(ranges.begin(), ranges.end());
        std::sort(whole_files.begin(), whole_files.end());
        CHECK(ranges == whole_files);
        for (const auto& r : batch) {
            CHECK(cache.fetch(storage, r).bytes == local.read_range(r.file->key, r.offset, r.length));
        }
        CHECK(ranges_read(*log).size() == 8);
        cache.prefetch(storage, batch); // all kept: nothing to read
        CHECK(ranges_read(*log).size() == 8);
    }
    SECTION("local files: prefetch reads nothing, fetch() reads as before") {
        auto c = std::make_shared<counters>();
        const tdbg::any_storage storage = counting_storage(dir.path(), c);
        tdbg::detail::record_cache cache;
        cache.prefetch(storage, batch);
        CHECK(c->range_reads == 0);
        CHECK(cache.fetch(storage, batch[1]).bytes == local.read_range(batch[1].file->key, batch[1].offset, batch[1].length));
        CHECK(c->range_reads == 1);
    }
    SECTION("a file that cannot be read is left to fetch(), which reports it") {
        auto log = std::make_shared<remote_log>();
        const tdbg::any_storage storage = remote_storage(dir.path(), log);
        std::filesystem::remove(dir.path() / files[3]->key);
        tdbg::detail::record_cache cache;
        cache.prefetch(storage, batch);
        CHECK(ranges_read(*log).size() == 8);
        CHECK_THROWS_AS(cache.fetch(storage, batch[15]), tdbg::object_not_found); // step 3's first record
        CHECK(cache.fetch(storage, batch[20]).bytes == local.read_range(batch[20].file->key, batch[20].offset, batch[20].length));
        CHECK(ranges_read(*log).size() == 9); // the missing file asked for again, the others kept
    }
}

TEST_CASE("record cache, remote storage: a damaged index entry gives the error of reading record by record") {
    const auto length = GENERATE(100'000'000'000'000ULL, 0ULL); // past any file, or just past this one
    tdbg::test::temp_dir dir("cache_remote_corrupt");
    write_run(dir.path(), 1, 3, 8);
    const std::filesystem::path index = dir.path() / tdbg::format::index_file_key(0, "worker_0");
    auto json = nlohmann::json::parse(tdbg::test::read_file(index));
    auto& entry = json.at("tensor_payload").at(1);
    const std::string victim = entry.at("tensorname").get<std::string>();
    const auto offset = entry.at("start_idx").get<std::uint64_t>();
    const std::string event_key = json.at("meta").at("event_file_name").get<std::string>();
    entry["length"] = length != 0 ? length : std::filesystem::file_size(dir.path() / event_key) + 1000 - offset;
    tdbg::test::write_file(index, json.dump());

    std::vector<std::string> messages;
    for (const bool coalesce : {false, true}) {
        auto log = std::make_shared<remote_log>();
        const auto t = tdbg::open_trial(remote_storage(dir.path(), log, coalesce), "corrupt");
        messages.push_back(tdbg::test::error_of([&] { (void)t.tensor(victim).value(0); }));
        // The file's other records still read.
        CHECK(t.tensor("t0").value(0).data_as<float>()[7] == 7.0F);
        CHECK(t.tensor("t2").value(0).data_as<float>()[0] == 2.0F);
    }
    CHECK(messages[0] == messages[1]);
    CHECK_THAT(messages[1], Catch::Contains(event_key) && Catch::Contains("at byte " + std::to_string(offset)));
}

TEST_CASE("record cache: buffers of large reads are reused once let go, small ones are not pooled") {
    const auto pool = std::make_shared<tdbg::detail::read_buffer_pool>();
    const std::size_t n = tdbg::detail::read_buffer_pool::min_pooled * 2;
    const char* first = nullptr;
    {
        const auto a = pool->get(n, 0);
        REQUIRE(a->size == n);
        first = a->data.get();
        a->begin()[n - 1] = 'x'; // the whole size is usable
    }
    const auto b = pool->get(n - 100, 0); // fits the buffer let go, and is not half its size
    CHECK(b->data.get() == first);
    CHECK(b->size == n - 100);
    const auto c = pool->get(n, 0); // the pooled one is in use: a new one
    CHECK(c->data.get() != first);
    // Aligned as asked: byte 5 of the data on a 16-byte boundary.
    const auto d = pool->get(n, 5);
    CHECK(reinterpret_cast<std::uintptr_t>(d->begin() + 5) % tdbg::detail::byte_buffer::max_alignment == 0);
    // A buffer more than twice the size asked is not taken for a small read.
    const char* big = nullptr;
    {
        const auto e = pool->get(8 * n, 0);
        big = e->data.get();
    }
    const auto f = pool->get(n, 0);
    CHECK(f->data.get() != big);
    const auto g = pool->get(8 * n, 0);
    CHECK(g->data.get() == big);
}

namespace {

// Met when tensor t0's first element at the step is negative (never, in write_run's runs);
// steps are independent, so invoke_rule may evaluate a batch of them at once.
class t0_negative : public tdbg::rules::rule<t0_negative> {
public:
    static constexpr std::string_view rule_name = "T0Negative";
    static constexpr bool parallel_steps = true;
    explicit t0_negative(tdbg::trial base, const tdbg::rules::rule_params& params = {}) : rule(std::move(base), params) {}
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return value("t0", step).data_as<float>()[0] < 0;
    }
};

} // namespace

TEST_CASE("invoke_rule reads the event files of a batch's steps together where a read costs a round trip") {
    tdbg::test::temp_dir dir("cache_rule_batch");
    write_run(dir.path(), 8, 5, 64); // an event file per step
    auto log = std::make_shared<remote_log>();
    // A read waits until 8 are in flight: steps evaluated with the hardware's 2 threads
    // would wait out the minute (and fail below).
    log->gather = 8;
    t0_negative rule(tdbg::open_trial(remote_storage(dir.path(), log), "remote"));
    const tdbg::rules::evaluation_result result = tdbg::rules::invoke_rule(rule);
    CHECK(result.not_triggered_steps == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(result.status() == tdbg::rules::evaluation_status::no_issues_found);
    CHECK(log->most_in_flight >= 8);
    CHECK(ranges_read(*log).size() == 8); // one read per event file

    SECTION("told to use one thread, it reads them one after another") {
        auto one_by_one = std::make_shared<remote_log>();
        t0_negative again(tdbg::open_trial(remote_storage(dir.path(), one_by_one), "remote"));
        tdbg::rules::invoke_options options;
        options.threads = 1;
        CHECK(tdbg::rules::invoke_rule(again, options).not_triggered_steps.size() == 8);
        CHECK(one_by_one->most_in_flight == 1);
    }
}
