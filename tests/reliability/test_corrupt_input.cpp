// Corrupt input, through a trial: every truncation and many bit flips and
// garbage bytes of a run's event, index and collection files; malformed
// protobuf in event records; malformed JSON. Each gives a tdbg error naming
// the file (and the offset or the key), or a value that is exactly right —
// never a crash, a hang, a foreign exception or an unbounded allocation.
// The format layer's own tests (tests/format: test_tfrecord, test_proto,
// test_event, test_index_file, test_collections_file) cover the decoders one by one.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "support.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::temp_dir;
namespace fs = std::filesystem;

namespace {

constexpr int run_steps = 3;

// The values of the small run: "a" float32 (8), "b" int32 (5), "c" float64 (3).
std::vector<float> a_values(std::int64_t step) {
    std::vector<float> v(8);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>(step * 100) + static_cast<float>(i) * 0.25F;
    }
    return v;
}
std::vector<std::int32_t> b_values(std::int64_t step) {
    std::vector<std::int32_t> v(5);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(step * 1000) - static_cast<std::int32_t>(i);
    }
    return v;
}
std::vector<double> c_values(std::int64_t step) { return {static_cast<double>(step) / 3.0, -1.5, 1e300}; }

void write_run(const fs::path& dir) {
    tdbg::hook_options o;
    o.out_dir = dir.string();
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    tdbg::hook h(o);
    for (std::int64_t step = 0; step < run_steps; ++step) {
        h.begin_step();
        h.save_tensor("a", tdbg::tensor_value(a_values(step)));
        h.save_tensor("b", tdbg::tensor_value(b_values(step)));
        h.save_tensor("c", tdbg::tensor_value(c_values(step)));
    }
    h.close();
}

template <class T>
bool equal_values(const tdbg::tensor_value& v, const std::vector<T>& expected) {
    return v.type() == tdbg::dtype_v<T> && v.size() == expected.size() &&
           std::memcmp(v.data_as<T>(), expected.data(), expected.size() * sizeof(T)) == 0;
}

using tdbg::test::read_file;

using tdbg::test::write_file;

// How a damaged run read: the outcomes counted, and every failure checked.
struct outcomes {
    int exact = 0;         // a value read, equal to what was saved
    int changed = 0;       // a value read that differs (only allowed where the format has no check)
    int errors = 0;        // a tdbg error that names the damaged file
    int open_errors = 0;   // the trial refused to open (or to refresh), naming the file
};

// What a value read from a damaged run may be, besides the one saved there.
enum class changed_value {
    refused,     // nothing else: the damage is detected
    saved_value, // another value the run saved (a damaged index points at another record)
    any,         // anything: damage inside element bytes, which smdebug's records carry no check over
};

// Whether `v` is one of the values write_run saved, of any tensor at any step.
bool is_saved_value(const tdbg::tensor_value& v) {
    for (std::int64_t step = 0; step < run_steps; ++step) {
        if (equal_values(v, a_values(step)) || equal_values(v, b_values(step)) || equal_values(v, c_values(step))) {
            return true;
        }
    }
    return false;
}

// Opens the run and reads its values (every step's, or only the first step's);
// any exception must be a tdbg::error that says where; counts the outcomes.
void read_damaged_run(const fs::path& run, const std::string& file, outcomes& out, changed_value may_change,
                      bool every_value) {
    std::optional<tdbg::trial> t;
    try {
        tdbg::trial_options options;
        options.threads = 1;
        t.emplace(tdbg::create_trial(run.string(), std::nullopt, {}, options));
        (void)t->steps();
    } catch (const tdbg::error& e) {
        CHECK_THAT(e.what(), Catch::Contains(file));
        ++out.open_errors;
        return;
    }
    for (std::int64_t step = 0; step < (every_value ? run_steps : 1); ++step) {
        const std::vector<std::pair<std::string, std::function<bool(const tdbg::tensor_value&)>>> checks = {
            {"a", [&](const tdbg::tensor_value& v) { return equal_values(v, a_values(step)); }},
            {"b", [&](const tdbg::tensor_value& v) { return equal_values(v, b_values(step)); }},
            {"c", [&](const tdbg::tensor_value& v) { return equal_values(v, c_values(step)); }},
        };
        for (const auto& [name, check] : checks) {
            try {
                const tdbg::tensor_value v = t->tensor(name).value(step);
                if (check(v)) {
                    ++out.exact;
                } else {
                    INFO("tensor " << name << " at step " << step << " read as another value");
                    CHECK(may_change != changed_value::refused);
                    if (may_change == changed_value::saved_value) {
                        CHECK(is_saved_value(v));
                    }
                    ++out.changed;
                }
            } catch (const tdbg::format_error& e) {
                // Damage in an event file is reported at a byte offset of that file.
                CHECK_THAT(e.what(), Catch::Contains(" at byte "));
                ++out.errors;
            } catch (const tdbg::error& e) {
                // A damaged index can name other tensors, steps or files: the error then says which.
                const std::string what = e.what();
                // (or an event file name the storage refuses as a key).
                const bool says_what = what.find(file) != std::string::npos || what.find('\'' + name + '\'') != std::string::npos ||
                                       what.find("step") != std::string::npos ||
                                       what.find("invalid storage key 'events/") != std::string::npos;
                INFO("error: " << what);
                CHECK(says_what);
                ++out.errors;
            }
        }
    }
}

// Applies every damage `mutate` produces to `file` (restoring it after each) and reads the run.
outcomes damage_each(const fs::path& run, const std::string& key, const std::vector<std::string>& versions,
                     changed_value may_change, bool every_value = true) {
    const fs::path path = run / key;
    const std::string original = read_file(path);
    outcomes out;
    for (const std::string& damaged : versions) {
        write_file(path, damaged);
        read_damaged_run(run, key, out, may_change, every_value);
    }
    write_file(path, original);
    return out;
}

// Every `stride`-th truncation of `bytes`.
std::vector<std::string> truncations(const std::string& bytes, std::size_t stride = 1) {
    std::vector<std::string> out;
    for (std::size_t cut = 0; cut < bytes.size(); cut += stride) {
        out.push_back(bytes.substr(0, cut));
    }
    return out;
}

// At every `stride`-th byte: one flipped bit (cycling through the bits) and one garbage byte.
std::vector<std::string> flips(const std::string& bytes, std::size_t stride = 1) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < bytes.size(); i += stride) {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(static_cast<unsigned char>(flipped[i]) ^ (1U << (i % 8)));
        out.push_back(std::move(flipped));
        std::string garbage = bytes;
        garbage[i] = static_cast<char>((i * 37 + 11) & 0xFFU);
        if (garbage != bytes) {
            out.push_back(std::move(garbage));
        }
    }
    return out;
}

// A record whose payload is `payload`, framed as smdebug frames it.
std::string framed(const std::string& payload) {
    std::string out;
    tdbg::format::append_record(out, payload, tdbg::format::footer_kind::smdebug_constant);
    return out;
}

// A run of one step whose only record (tensor "w") is `record`.
void write_one_record_run(const fs::path& run, const std::string& record) {
    tdbg::local_storage s(run);
    s.put(tdbg::format::collections_file_key("worker_0"), tdbg::format::to_json(tdbg::format::collections_file{}));
    s.put(tdbg::format::event_file_key(0, "worker_0"), record);
    tdbg::format::index_file index;
    index.mode = tdbg::mode::train;
    index.event_file_name = tdbg::format::event_file_key(0, "worker_0");
    index.tensor_payload.push_back({"w", 0, record.size()});
    s.put(tdbg::format::index_file_key(0, "worker_0"), tdbg::format::to_json(index));
}

std::string bytes_of(std::initializer_list<int> values) {
    std::string out;
    for (int v : values) {
        out.push_back(static_cast<char>(v));
    }
    return out;
}

} // namespace

TEST_CASE("corrupt input: every truncation of an event file, and a flipped bit and a garbage byte at every offset") {
    temp_dir dir("corrupt_event");
    write_run(dir.path());
    const std::string key = tdbg::format::event_file_key(1, "worker_0");
    const std::string original = read_file(dir.path() / key);
    REQUIRE(original.size() > 100);
    // Where the tensors' element bytes sit: smdebug's records carry no checksum
    // over the payload, so damage there can only change the value.
    const auto a = a_values(1);
    const std::string a_bytes(reinterpret_cast<const char*>(a.data()), a.size() * sizeof(float));
    REQUIRE(original.find(a_bytes) != std::string::npos);

    // A cut file never changes a value: the records before the cut read exactly, the others fail.
    const outcomes cut = damage_each(dir.path(), key, truncations(original), changed_value::refused);
    INFO("truncations: exact " << cut.exact << ", errors " << cut.errors);
    CHECK(cut.open_errors == 0); // event files are read only when a value is asked for
    CHECK(cut.errors > 0);
    CHECK(cut.exact > 0);
    const outcomes out = damage_each(dir.path(), key, flips(original), changed_value::any);
    INFO("flips: exact " << out.exact << ", changed " << out.changed << ", errors " << out.errors);
    CHECK(out.open_errors == 0);
    CHECK(out.errors > 0);
    CHECK(out.exact > 0);
    // Damage inside element bytes (or a dtype of the same size) changes a value silently: smdebug's
    // records carry no checksum over their payload. Elsewhere it is an error or harmless.
    const std::size_t element_bytes = a.size() * 4 + 5 * 4 + 3 * 8;
    CHECK(out.changed > 0);
    CHECK(out.changed <= static_cast<int>(2 * element_bytes + 2 * 3 * 2));
    CHECK(read_file(dir.path() / key) == original);
}

TEST_CASE("corrupt input: every truncation of an index file, and a flipped bit and a garbage byte at every offset") {
    temp_dir dir("corrupt_index");
    write_run(dir.path());
    const std::string key = tdbg::format::index_file_key(1, "worker_0");
    const std::string original = read_file(dir.path() / key);
    // A damaged index can point a tensor at another record: the value is then another saved
    // value, never garbage.
    const outcomes out = damage_each(dir.path(), key, flips(original), changed_value::saved_value);
    INFO("exact " << out.exact << ", changed " << out.changed << ", errors " << out.errors << ", refused "
                  << out.open_errors);
    CHECK(out.open_errors > 0);
    CHECK(out.exact > 0);
    // Every truncation is refused: a cut index file is never half-read.
    const fs::path path = dir.path() / key;
    for (std::size_t cut = 0; cut < original.size(); ++cut) {
        write_file(path, original.substr(0, cut));
        tdbg::trial_options options;
        options.threads = 1;
        CHECK_THROWS_WITH(tdbg::create_trial(dir.path().string(), std::nullopt, {}, options),
                          Catch::Contains(key) && Catch::Contains("corrupt index file"));
    }
    write_file(path, original);
}

TEST_CASE("corrupt input: every 7th truncation of a collections file, and a flipped bit and a garbage byte at every 7th offset") {
    temp_dir dir("corrupt_collections");
    write_run(dir.path());
    const std::string key = tdbg::format::collections_file_key("worker_0");
    const std::string original = read_file(dir.path() / key);
    // The collections file is larger: every seventh truncation and damaged byte, one value read each.
    std::vector<std::string> versions = truncations(original, 7);
    for (std::string& v : flips(original, 7)) {
        versions.push_back(std::move(v));
    }
    const outcomes out = damage_each(dir.path(), key, versions, changed_value::refused, false);
    INFO("exact " << out.exact << ", errors " << out.errors << ", refused " << out.open_errors);
    CHECK(out.open_errors > 0);
    CHECK(out.exact > 0);
    CHECK(out.changed == 0); // the collections file holds no values
}

TEST_CASE("corrupt input: garbage and empty files in place of a run's files") {
    temp_dir dir("garbage_files");
    write_run(dir.path());
    std::uint32_t state = 2024;
    auto garbage = [&](std::size_t n) {
        std::string out(n, '\0');
        for (char& c : out) {
            state = state * 1664525U + 1013904223U;
            c = static_cast<char>(state >> 24U);
        }
        return out;
    };
    std::vector<std::string> versions = {std::string(), std::string(1, '\0'), std::string(4096, '\0'),
                                         std::string(100000, '\xff')};
    for (const std::size_t n : std::initializer_list<std::size_t>{1, 15, 16, 17, 100, 1000, std::size_t{1} << 20U}) {
        versions.push_back(garbage(n));
    }
    for (const std::string& key : {tdbg::format::event_file_key(2, "worker_0"), tdbg::format::index_file_key(2, "worker_0"),
                                   tdbg::format::collections_file_key("worker_0")}) {
        INFO(key);
        const outcomes out = damage_each(dir.path(), key, versions, changed_value::refused);
        CHECK(out.changed == 0);
        CHECK(out.errors + out.open_errors > 0);
    }
}

TEST_CASE("corrupt input: malformed protobuf in an event record is a format_error at the record's offset") {
    temp_dir root("bad_proto");
    tdbg::format::tensor_event ev;
    ev.tag = "w";
    ev.value = tdbg::tensor_value(std::vector<float>{1.0F, 2.0F});
    const std::string good = tdbg::format::encode_tensor_event(ev);
    const std::map<std::string, std::string> payloads = {
        // Event.summary (field 5) claiming 2^40 bytes.
        {"huge length", bytes_of({0x2A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}) + "abc"},
        // A varint that never ends.
        {"endless varint", bytes_of({0x10}) + std::string(20, '\xff')},
        // Event.summary as a varint, then as a fixed64.
        {"wrong wire type", bytes_of({0x28, 0x01})},
        {"wrong wire type 64", bytes_of({0x29, 1, 2, 3, 4, 5, 6, 7, 8})},
        // 100000 nested groups, and 200 nested messages in field 5.
        {"deep groups", std::string(100000, '\x0B') + std::string(100000, '\x0C')},
        {"deep messages", [] {
             std::string inner;
             for (int i = 0; i < 200; ++i) {
                 std::string wrapped = bytes_of({0x2A});
                 std::size_t n = inner.size();
                 do {
                     wrapped.push_back(static_cast<char>((n & 0x7FU) | (n >= 0x80 ? 0x80U : 0U)));
                     n >>= 7U;
                 } while (n != 0);
                 inner = wrapped + inner;
             }
             return inner;
         }()},
        {"invalid wire type", bytes_of({0x0E, 0x00})},
        {"field number 0", bytes_of({0x00, 0x00})},
        {"no tensor", std::string()},
        {"truncated good record", good.substr(0, good.size() / 2)},
    };
    for (const auto& [what, payload] : payloads) {
        INFO(what);
        const fs::path run = root.path() / ("run_" + std::to_string(payload.size()) + "_" + std::to_string(what.size()));
        write_one_record_run(run, framed(payload));
        const auto t = tdbg::create_trial(run.string());
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_AS(t.tensor("w").value(0), tdbg::format_error);
        CHECK_THROWS_WITH(t.tensor("w").value(0),
                          Catch::StartsWith(tdbg::format::event_file_key(0, "worker_0") + " at byte "));
        // A bound on a hang, not a pace: it takes microseconds, and minutes on no machine.
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::minutes(1));
    }
}

TEST_CASE("corrupt input: malformed JSON and out-of-range numbers in index and collection files") {
    temp_dir root("bad_json");
    const std::string index_key = tdbg::format::index_file_key(0, "worker_0");
    const std::string event_key = tdbg::format::event_file_key(0, "worker_0");
    auto index_with = [&](const std::string& start, const std::string& length) {
        return R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": ")" + event_key +
               R"("}, "tensor_payload": [{"tensorname": "w", "start_idx": )" + start + R"(, "length": )" + length +
               R"(}], "shape_payload": []})";
    };
    tdbg::format::tensor_event ev;
    ev.tag = "w";
    ev.value = tdbg::tensor_value(std::vector<float>{1.0F});
    const std::string record = framed(tdbg::format::encode_tensor_event(ev));

    // Index files the trial refuses at once, naming the file.
    const std::vector<std::string> refused = {
        std::string(200000, '[') + std::string(200000, ']'),
        std::string(200000, '{'),
        R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": )" + std::string(100000, '[') +
            std::string(100000, ']') + "}",
        index_with("-1", "10"),
        index_with("1e300", "10"),
        index_with("18446744073709551616", "10"),
        index_with("0", "\"10\""),
        index_with("0", "0"),
        index_with("0", "null"),
        std::string(R"({"meta": {"mode": "TRAIN", "mode_step": 0}})") + std::string(1, '\0') + "garbage",
        "\xef\xbb\xbf{}",
        "{\"meta\": {\"mode\": \"TR\xff\xfe\", \"mode_step\": 0}}",
        "",
        "null",
    };
    int n = 0;
    for (const std::string& text : refused) {
        INFO("index text of " << text.size() << " bytes: " << text.substr(0, 80));
        const fs::path run = root.path() / ("refused_" + std::to_string(n++));
        write_one_record_run(run, record);
        tdbg::local_storage(run).put(index_key, text);
        CHECK_THROWS_WITH(tdbg::create_trial(run.string()), Catch::Contains(index_key));
        CHECK_THROWS_AS(tdbg::create_trial(run.string()), tdbg::index_reader_error);
    }

    // Index files that parse but locate bytes that are not there: a format_error when the value
    // is asked for, without allocating what the index claims.
    const std::vector<std::pair<std::string, std::string>> out_of_range = {
        {"0", "1099511627776"},              // 1 TiB
        {"0", "9223372036854775807"},        // 2^63 - 1
        {"18446744073709551615", "16"},      // an offset at the end of the range
        {"18446744073709551600", "100"},     // offset + length overflows
        {"1000000", std::to_string(record.size())},
        {"0", std::to_string(record.size() + 1)},
        {"1", std::to_string(record.size() - 1)},
    };
    for (const auto& [start, length] : out_of_range) {
        INFO("start_idx " << start << ", length " << length);
        const fs::path run = root.path() / ("range_" + std::to_string(n++));
        write_one_record_run(run, record);
        tdbg::local_storage(run).put(index_key, index_with(start, length));
        const auto t = tdbg::create_trial(run.string());
        CHECK_THROWS_AS(t.tensor("w").value(0), tdbg::format_error);
        CHECK_THROWS_WITH(t.tensor("w").value(0), Catch::Contains(event_key));
    }

    // Collection files: refused at open, naming the file and the key or offset.
    const std::string collections_key = tdbg::format::collections_file_key("worker_0");
    const std::vector<std::pair<std::string, std::string>> bad_collections = {
        {std::string(200000, '['), "not valid JSON"},
        {R"({"collections": )" + std::string(100000, '[') + std::string(100000, ']') + "}", "nested deeper than 512 levels"},
        {R"({"collections": [[]]})", "'collections'"},
        {R"({"collections": {"w": {"save_config": {"TRAIN": {"save_interval": 1e400}}}}})", " at byte "},
        {R"({"collections": {"w": {"save_config": {"TRAIN": {"save_steps": [1, -5, "x"]}}}}})", "save_steps"},
        {R"({"collections": {}, "_meta": {"num_workers": 99999999999999999999}})", "num_workers"},
        {R"({"collections": {"w": {"include_regex": "x"}}})", "include_regex"},
        {"\xef\xbb\xbf", " at byte "},
    };
    for (const auto& [text, names] : bad_collections) {
        INFO("collections text " << text.substr(0, 80));
        const fs::path run = root.path() / ("collections_" + std::to_string(n++));
        write_one_record_run(run, record);
        tdbg::local_storage(run).put(collections_key, text);
        CHECK_THROWS_AS(tdbg::create_trial(run.string()), tdbg::format_error);
        CHECK_THROWS_WITH(tdbg::create_trial(run.string()), Catch::Contains(collections_key) && Catch::Contains(names));
    }
}
