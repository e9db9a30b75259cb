// Reading a run from S3 against reading the same run from local disk, and with
// added latency, record by record against coalesced reads.
//
//   bench_s3 [steps] [tensors per step] [floats per tensor] [latency ms]   (default 40 20 4096 20)
//
// Writes one run with the format layer to a local directory and to S3, then
// reads it back both ways and prints S3/local time ratios and the number of
// S3 requests per step read:
//   raw:   list the index, read every index file, and one ranged GET per
//          tensor (the access pattern of a reader that trusts the index);
//   trial: open_trial + every value of every tensor at every step.
// Then the latency table: the trial reading record by record (s3_options::
// coalesce_reads = false: one ranged GET per record), the trial with coalesced
// reads (the default: one GET per event file), and the record cache's prefetch
// (every event file at once, 16 in flight), each at 0 ms and at the given
// latency, added by a delaying proxy in front of the server (delay_proxy.hpp).
// S3 is the loopback server of scripts/s3-server.sh (started and stopped
// here), or a real bucket: TDBG_BENCH_S3_URL=s3://bucket/prefix with the
// usual AWS_* variables (then no latency is added: it is the network's).
#include <cstdio>

#if defined(TDBG_HAS_S3)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "delay_proxy.hpp"
#include "tdbg/core/detail/thread_pool.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/s3.hpp"
#if __has_include("tdbg/trial/trial.hpp")
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/trial.hpp"
#define TDBG_BENCH_TRIAL 1
#endif
#include "tdbg/trial/detail/record_cache.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Writes a run of `steps` steps, each with `tensors` float32 tensors of `floats` elements.
template <class Storage>
void write_run(const Storage& storage, int steps, int tensors, std::size_t floats) {
    const std::string worker = "worker_0";
    for (int step = 0; step < steps; ++step) {
        std::string events;
        tdbg::format::index_file index;
        index.mode = tdbg::mode::train;
        index.mode_step = step;
        index.event_file_name = tdbg::format::event_file_key(step, worker);
        for (int t = 0; t < tensors; ++t) {
            std::vector<float> values(floats);
            for (std::size_t i = 0; i < floats; ++i) {
                values[i] = static_cast<float>(step) + static_cast<float>(t) * 0.001F + static_cast<float>(i) * 1e-6F;
            }
            tdbg::format::tensor_event ev;
            ev.step = step;
            ev.wall_time = 1700000000.0 + step;
            ev.tag = "layer" + std::to_string(t) + "/weight";
            ev.value = tdbg::tensor_value(std::move(values), {floats});
            ev.mode = tdbg::mode::train;
            ev.mode_step = step;
            const std::uint64_t start = events.size();
            tdbg::format::append_record(events, tdbg::format::encode_tensor_event(ev),
                                        tdbg::format::footer_kind::smdebug_constant);
            index.tensor_payload.push_back({ev.tag, start, events.size() - start});
        }
        storage.put(tdbg::format::event_file_key(step, worker), events);
        storage.put(tdbg::format::index_file_key(step, worker), tdbg::format::to_json(index));
    }
    tdbg::format::collections_file collections;
    tdbg::format::collection_spec all;
    all.name = "all";
    all.include_regex = {".*"};
    collections.collections.push_back(all);
    storage.put(tdbg::format::collections_file_key(worker), tdbg::format::to_json(collections));
    storage.put(std::string(tdbg::format::end_marker_key), "");
}

/// Lists the index and reads every tensor with one ranged read each; returns a checksum.
template <class Storage>
double read_raw(const Storage& storage) {
    double sum = 0;
    for (const std::string& key : storage.list("index/")) {
        const auto index = tdbg::format::parse_index_file(storage.read(key), key);
        for (const auto& loc : index.tensor_payload) {
            const std::string record = storage.read_range(index.event_file_name, loc.start_idx, loc.length);
            const auto payload = tdbg::format::record_payload(record, index.event_file_name, loc.start_idx);
            const auto ev = tdbg::format::decode_tensor_event(payload, nullptr, index.event_file_name, loc.start_idx);
            sum += static_cast<double>(ev.value.template data_as<float>()[0]);
        }
    }
    return sum;
}

/// read_raw with the ranged reads spread over `threads` threads (the connection pool at work).
template <class Storage>
double read_raw_parallel(const Storage& storage, int threads) {
    struct item {
        std::string file;
        tdbg::format::tensor_location loc;
    };
    std::vector<item> items;
    for (const std::string& key : storage.list("index/")) {
        auto index = tdbg::format::parse_index_file(storage.read(key), key);
        for (auto& loc : index.tensor_payload) {
            items.push_back({index.event_file_name, std::move(loc)});
        }
    }
    std::vector<double> firsts(items.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (std::size_t i = next++; i < items.size(); i = next++) {
                const item& it = items[i];
                const std::string record = storage.read_range(it.file, it.loc.start_idx, it.loc.length);
                const auto payload = tdbg::format::record_payload(record, it.file, it.loc.start_idx);
                const auto ev = tdbg::format::decode_tensor_event(payload, nullptr, it.file, it.loc.start_idx);
                firsts[i] = static_cast<double>(ev.value.template data_as<float>()[0]);
            }
        });
    }
    for (auto& t : pool) {
        t.join();
    }
    double sum = 0;
    for (const double v : firsts) {
        sum += v;
    }
    return sum;
}

/// The run read through the trial's record cache directly: the index files read 16 at a
/// time, every record of every event file prefetched at once (one GET per file, as many
/// in flight as the storage takes), then each fetched and decoded; returns a checksum.
/// What a reader that asks for many records at once (a rule's step over many workers) pays.
double read_prefetched(const tdbg::any_storage& storage) {
    const std::vector<std::string> keys = storage.list("index/");
    std::vector<tdbg::format::index_file> indexes(keys.size());
    tdbg::detail::parallel_for_each_index(keys.size(), storage.request_concurrency(), [&](std::size_t i) {
        indexes[i] = tdbg::format::parse_index_file(storage.read(keys[i]), keys[i]);
    });
    std::deque<tdbg::detail::event_file> files;
    std::vector<tdbg::detail::record_request> requests;
    for (const auto& index : indexes) {
        tdbg::detail::event_file& file = files.emplace_back(index.event_file_name);
        for (const auto& loc : index.tensor_payload) {
            requests.push_back({&file, static_cast<std::uint32_t>(files.size() - 1), loc.start_idx, loc.length, 0});
            file.extent = std::max<std::uint64_t>(file.extent, loc.start_idx + loc.length);
            ++file.records;
        }
    }
    tdbg::detail::record_cache cache;
    cache.prefetch(storage, requests);
    double sum = 0;
    for (const auto& r : requests) {
        const tdbg::detail::record_bytes record = cache.fetch(storage, r);
        const auto payload = tdbg::format::record_payload(record.bytes, r.file->key, r.offset);
        const auto ev = tdbg::format::decode_tensor_event(payload, record.owner, r.file->key, r.offset);
        sum += static_cast<double>(ev.value.template data_as<float>()[0]);
    }
    return sum;
}

#if defined(TDBG_BENCH_TRIAL)
/// Opens the run as a trial and reads every value of every tensor; returns a checksum.
template <class Storage>
double read_trial(const Storage& storage) {
    const auto t = tdbg::open_trial(storage, "bench");
    double sum = 0;
    for (const std::string& name : t.tensor_names()) {
        for (const auto& [step, value] : t.tensor(name).values()) {
            (void)step;
            sum += static_cast<double>(value.template data_as<float>()[0]);
        }
    }
    return sum;
}

/// A rule that reads every tensor at each step, as a rule over all of a step's tensors does;
/// its steps are independent, so invoke_rule evaluates a batch of them at once.
class reads_every_tensor : public tdbg::rules::rule<reads_every_tensor> {
public:
    static constexpr std::string_view rule_name = "ReadsEveryTensor";
    static constexpr bool parallel_steps = true;
    reads_every_tensor(tdbg::trial base, std::atomic<double>& sum) : rule(std::move(base)), sum_(&sum) {}
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        double step_sum = 0;
        for (const std::string& name : base_trial().tensor_names()) {
            step_sum += static_cast<double>(value(name, step).data_as<float>()[0]);
        }
        for (double old = sum_->load(); !sum_->compare_exchange_weak(old, old + step_sum);) {
        }
        return false;
    }

private:
    std::atomic<double>* sum_;
};

/// The run read by invoke_rule with reads_every_tensor; returns the checksum of read_trial.
double read_by_rule(const tdbg::any_storage& storage) {
    std::atomic<double> sum{0};
    reads_every_tensor r(tdbg::open_trial(storage, "bench"), sum);
    (void)tdbg::rules::invoke_rule(r);
    return sum.load();
}
#endif

/// The best of `repeats` timings of f (first run warms caches and connections).
struct timing {
    double seconds = 0;
    double checksum = 0;
};
template <class F>
timing best_of(int repeats, F f) {
    timing best{1e300, 0};
    for (int i = 0; i < repeats; ++i) {
        const auto start = clock_type::now();
        const double sum = f();
        best.seconds = std::min(best.seconds, seconds_since(start));
        best.checksum = sum;
    }
    return best;
}

std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (const char c : text) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

/// The port of "http://127.0.0.1:PORT".
int port_of(const std::string& endpoint) { return std::atoi(endpoint.substr(endpoint.rfind(':') + 1).c_str()); }

/// Reads the run at `url` (on the server of `s3`) record by record, coalesced, and prefetched, at 0 ms and at
/// `latency_ms` more per request (a delay_proxy in front of the loopback server; a real
/// bucket only at its own latency), and prints seconds, requests per step and the
/// speed-up over record by record; returns 1 when a checksum differs from `expected`.
int latency_table(const std::string& url, const tdbg::s3_storage& s3, const tdbg::s3_options& options,
                  bool own_server, int latency_ms, int steps, double expected) {
    std::printf("\nreading the run over S3, record by record against coalesced (one GET per event file):\n");
    std::printf("%-9s %-46s %9s %14s %10s\n", "latency", "reader", "seconds", "requests/step", "speed-up");
    std::vector<int> latencies{0};
    if (own_server && latency_ms > 0) {
        latencies.push_back(latency_ms);
    }
    int rc = 0;
    for (const int latency : latencies) {
        std::unique_ptr<tdbg::bench::delay_proxy> proxy;
        tdbg::s3_options through = options;
        if (latency > 0) {
            proxy = std::make_unique<tdbg::bench::delay_proxy>(port_of(s3.endpoint()),
                                                               std::chrono::milliseconds(latency));
            through.endpoint_url = "http://127.0.0.1:" + std::to_string(proxy->port());
        }
        const std::string where = own_server ? std::to_string(latency) + " ms" : "network";
        double baseline = 0;
        const auto row = [&](const char* reader, bool coalesce, const auto& read) {
            tdbg::s3_options o = through;
            o.coalesce_reads = coalesce;
            const tdbg::s3_storage storage(url, o); // its own counters
            const timing t = best_of(1, [&] { return read(storage); });
            const double requests = static_cast<double>(storage.stats().requests) / steps;
            if (baseline == 0) {
                baseline = t.seconds;
            }
            std::printf("%-9s %-46s %9.3f %14.2f %9.1fx\n", where.c_str(), reader, t.seconds, requests,
                        baseline / t.seconds);
            if (t.checksum != expected) {
                std::fprintf(stderr, "bench_s3: %s at %s read other values\n", reader, where.c_str());
                rc = 1;
            }
        };
#if defined(TDBG_BENCH_TRIAL)
        row("trial, record by record (coalesce_reads off)", false,
            [](const tdbg::s3_storage& st) { return read_trial(st); });
        row("trial, coalesced (the default)", true, [](const tdbg::s3_storage& st) { return read_trial(st); });
        row("invoke_rule, a batch's steps read together", true,
            [](const tdbg::s3_storage& st) { return read_by_rule(st); });
#endif
        row("record cache prefetch, every file at once", true,
            [](const tdbg::s3_storage& st) { return read_prefetched(st); });
        if (proxy) {
            std::printf("%-9s (the proxy delayed %llu requests on %llu connections)\n", "",
                        static_cast<unsigned long long>(proxy->requests()),
                        static_cast<unsigned long long>(proxy->connections()));
        }
    }
    return rc;
}

} // namespace

int main(int argc, char** argv) {
    const int steps = argc > 1 ? std::atoi(argv[1]) : 40;
    const int tensors = argc > 2 ? std::atoi(argv[2]) : 20;
    const auto floats = static_cast<std::size_t>(argc > 3 ? std::atol(argv[3]) : 4096);
    const int latency_ms = argc > 4 ? std::atoi(argv[4]) : 20;
    if (steps <= 0 || tensors <= 0 || floats == 0 || latency_ms < 0) {
        std::fprintf(stderr, "usage: bench_s3 [steps] [tensors] [floats] [latency ms]\n");
        return 2;
    }
    namespace fs = std::filesystem;
    const fs::path scratch = fs::temp_directory_path() / ("tdbg_bench_s3_" + std::to_string(::getpid()));
    fs::create_directories(scratch);

    // The S3 side: a bucket given in the environment, or the loopback server.
    std::string url;
    tdbg::s3_options options;
    bool own_server = false;
    if (const char* given = std::getenv("TDBG_BENCH_S3_URL")) {
        url = std::string(given) + "/bench_" + std::to_string(::getpid());
    } else {
        const std::string command = "S3_PARENT_PID=" + std::to_string(::getpid()) + " " +
                                    shell_quote(TDBG_S3_SERVER_SCRIPT) + " start " +
                                    shell_quote((scratch / "server").string()) + " 2>&1";
        FILE* pipe = ::popen(command.c_str(), "r");
        char line[512] = {};
        const bool got = pipe != nullptr && std::fgets(line, sizeof line, pipe) != nullptr;
        const int status = pipe != nullptr ? ::pclose(pipe) : -1;
        if (!got || status != 0) {
            std::printf("bench_s3: skipped, no S3 server (%s)\n", got ? line : "no output");
            fs::remove_all(scratch);
            return 0;
        }
        std::string endpoint(line);
        endpoint.erase(endpoint.find_last_not_of("\r\n") + 1);
        own_server = true;
        options.use_environment = false;
        options.endpoint_url = endpoint;
        options.access_key_id = "test:tester";
        options.secret_access_key = "testing";
        url = "s3://tdbg-bench/run";
    }
    int rc = 0;
    try {
        const tdbg::s3_storage s3(url, options);
        if (own_server) {
            s3.create_bucket();
        }
        const tdbg::local_storage local(scratch / "run");
        write_run(local, steps, tensors, floats);
        write_run(s3, steps, tensors, floats);
        std::printf("run: %d steps x %d float32 tensors of %zu elements (%.1f MiB of values); S3 at %s\n", steps, tensors,
                    floats, static_cast<double>(steps) * tensors * floats * 4 / (1 << 20), s3.endpoint().c_str());

        const timing raw_local = best_of(3, [&] { return read_raw(local); });
        const auto before_raw = s3.stats().requests;
        const timing raw_s3 = best_of(1, [&] { return read_raw(s3); });
        const auto raw_requests = s3.stats().requests - before_raw;
        if (raw_local.checksum != raw_s3.checksum) {
            std::fprintf(stderr, "bench_s3: raw reads differ between local and S3\n");
            rc = 1;
        }
        std::printf("%-44s local %8.3f s   s3 %8.3f s   s3/local %7.1fx   %6.2f requests/step\n",
                    "raw: list + index + ranged GET per tensor", raw_local.seconds, raw_s3.seconds,
                    raw_s3.seconds / raw_local.seconds, static_cast<double>(raw_requests) / steps);
        const timing par_local = best_of(3, [&] { return read_raw_parallel(local, 8); });
        const auto before_par = s3.stats().requests;
        const timing par_s3 = best_of(1, [&] { return read_raw_parallel(s3, 8); });
        const auto par_requests = s3.stats().requests - before_par;
        if (par_local.checksum != raw_local.checksum || par_s3.checksum != raw_local.checksum) {
            std::fprintf(stderr, "bench_s3: parallel raw reads differ\n");
            rc = 1;
        }
        std::printf("%-44s local %8.3f s   s3 %8.3f s   s3/local %7.1fx   %6.2f requests/step\n",
                    "raw, ranged GETs on 8 threads", par_local.seconds, par_s3.seconds,
                    par_s3.seconds / par_local.seconds, static_cast<double>(par_requests) / steps);
#if defined(TDBG_BENCH_TRIAL)
        const timing trial_local = best_of(3, [&] { return read_trial(local); });
        const auto before_trial = s3.stats().requests;
        const timing trial_s3 = best_of(1, [&] { return read_trial(s3); });
        const auto trial_requests = s3.stats().requests - before_trial;
        if (trial_local.checksum != trial_s3.checksum || trial_local.checksum != raw_local.checksum) {
            std::fprintf(stderr, "bench_s3: trial reads differ between local and S3\n");
            rc = 1;
        }
        std::printf("%-44s local %8.3f s   s3 %8.3f s   s3/local %7.1fx   %6.2f requests/step\n",
                    "trial: open + every value of every tensor", trial_local.seconds, trial_s3.seconds,
                    trial_s3.seconds / trial_local.seconds, static_cast<double>(trial_requests) / steps);
#else
        std::printf("trial: not measured (tdbg/trial/trial.hpp not available)\n");
#endif
        rc = std::max(rc, latency_table(url, s3, options, own_server, latency_ms, steps, raw_local.checksum));
        const auto stats = s3.stats();
        std::printf("s3 totals (writing and the first three rows): %llu requests, %llu retries, %.1f MiB sent, %.1f MiB received\n",
                    static_cast<unsigned long long>(stats.requests), static_cast<unsigned long long>(stats.retries),
                    static_cast<double>(stats.bytes_sent) / (1 << 20),
                    static_cast<double>(stats.bytes_received) / (1 << 20));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_s3: %s\n", e.what());
        rc = 1;
    }
    if (own_server) {
        const std::string stop = shell_quote(TDBG_S3_SERVER_SCRIPT) + " stop " + shell_quote((scratch / "server").string());
        if (std::system(stop.c_str()) != 0) {
            std::fprintf(stderr, "bench_s3: could not stop the S3 server\n");
        }
    }
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
    return rc;
}

#else

int main() {
    std::printf("bench_s3: skipped, tdbg was configured without the S3 backend (libcurl and pugixml)\n");
    return 0;
}

#endif
