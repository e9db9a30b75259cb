// Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/) from
// bytes tdbg itself encodes. Run by hand when the formats change:
//   scripts/fuzz.sh --seeds

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"

namespace fs = std::filesystem;
using namespace tdbg;

namespace {

void write(const fs::path& dir, const std::string& name, const std::string& bytes) {
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

format::tensor_event event_of(const std::string& tag, tensor_value value, std::int64_t step) {
    format::tensor_event ev;
    ev.tag = tag;
    ev.step = step;
    ev.wall_time = 1700000000.25;
    ev.value = std::move(value);
    ev.mode = mode::train;
    ev.mode_step = step;
    return ev;
}

} // namespace

int main(int argc, char** argv) {
    const fs::path root = argc > 1 ? fs::path(argv[1]) : fs::path("tests/fuzz/corpus");

    // Event files: one record per dtype, a file of several records, TensorBoard events.
    const std::vector<format::tensor_event> events = {
        event_of("w", tensor_value(std::vector<float>{1.5F, -2.0F, 3.25F, 0.0F}), 3),
        event_of("ints", tensor_value(std::vector<std::int32_t>{1, -2, 300000}), 4),
        event_of("d", tensor_value(std::vector<double>{1e300, -0.5}), 5),
        event_of("b", tensor_value(std::vector<std::uint8_t>{0, 1, 255}), 6),
        event_of("s", tensor_value::scalar(std::int64_t{-7}), 7),
        event_of("h", tensor_value(std::vector<float16>{float16::from_bits(0x3C00), float16::from_bits(0xC000)}), 8),
        event_of("strings", tensor_value(std::vector<std::string>{"a", "bc"}), 9),
        event_of("empty", tensor_value(std::vector<float>{}), 10),
    };
    std::string file;
    for (std::size_t i = 0; i < events.size(); ++i) {
        std::string one;
        format::append_record(one, format::encode_tensor_event(events[i]), format::footer_kind::smdebug_constant);
        write(root / "fuzz_event_record", "record_" + std::to_string(i), one);
        file += one;
    }
    write(root / "fuzz_event_record", "file", file);
    std::string tensorboard;
    format::append_record(tensorboard, format::encode_file_version_event(1700000000.0), format::footer_kind::payload_crc);
    format::append_record(tensorboard, format::encode_scalar_event(1700000000.5, 3, "loss", 0.25F), format::footer_kind::payload_crc);
    format::histogram h;
    h.min = -1;
    h.max = 2;
    h.num = 3;
    h.sum = 1;
    h.sum_squares = 6;
    h.bucket_limit = {0, 1, 2};
    h.bucket = {1, 1, 1};
    format::append_record(tensorboard, format::encode_histogram_event(1700000001.0, 3, "w", h), format::footer_kind::payload_crc);
    write(root / "fuzz_event_record", "tensorboard", tensorboard);

    // Index files: values, shapes, every mode.
    format::index_file index;
    index.mode = mode::train;
    index.mode_step = 3;
    index.event_file_name = format::event_file_key(3, "worker_0");
    std::uint64_t offset = 0;
    for (const auto& ev : events) {
        const std::uint64_t length = format::encode_tensor_event(ev).size() + format::record_overhead;
        index.tensor_payload.push_back({ev.tag, offset, length});
        offset += length;
    }
    index.shape_payload.push_back({"w", "w", {2, 2}});
    write(root / "fuzz_index_file", "index_values", format::to_json(index));
    format::index_file shapes;
    shapes.mode = mode::eval;
    shapes.mode_step = 0;
    shapes.shape_payload.push_back({"conv/weight:0", "conv/weight", {64, 3, 3, 3}});
    shapes.shape_payload.push_back({"scalar", "scalar", {}});
    write(root / "fuzz_index_file", "index_shapes", format::to_json(shapes));
    format::index_file escaped;
    escaped.mode = mode::global;
    escaped.mode_step = 12;
    escaped.event_file_name = format::event_file_key(12, "worker_1");
    escaped.tensor_payload.push_back({"name \"quoted\" \\ \xc3\xa9", 0, 100});
    write(root / "fuzz_index_file", "index_escaped", format::to_json(escaped));

    // Collections files: smdebug's built-in collections and configured ones.
    format::collections_file collections;
    collections.num_workers = 2;
    format::collection_spec weights;
    weights.name = "weights";
    weights.include_regex = {".*weight", "^conv[0-9]+"};
    weights.tensor_names = {"fc1.weight", "fc2.weight"};
    weights.reduction_config.reductions = {reduction{reduction_kind::mean, false}, reduction{reduction_kind::l2, true}};
    weights.reduction_config.save_shape = true;
    weights.save_config.set(mode::train, save_config_mode{10, {}, 0, std::nullopt});
    weights.save_config.set(mode::eval, save_config_mode{1, {0, 5, 7}, 2, 100});
    collections.collections.push_back(weights);
    format::collection_spec losses;
    losses.name = "losses";
    losses.include_regex = {".*loss"};
    losses.exclude_regex = {"aux"};
    losses.save_histogram = false;
    collections.collections.push_back(losses);
    write(root / "fuzz_collections_file", "collections", format::to_json(collections));
    write(root / "fuzz_collections_file", "collections_empty", format::to_json(format::collections_file{}));
    return 0;
}
