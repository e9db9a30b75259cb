#pragma once
// A synthetic run for the reading benchmarks: `steps` steps of `tensors` float32 tensors of
// `elements` each, one worker, published as a hook does (event file, then index file; the
// end marker last), with one collection "all".

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::bench {

/// The name of the run's tensor `i`.
inline std::string tensor_name(std::size_t i) { return "layer_" + std::to_string(i) + "/weight"; }

/// The collections file of worker_0: one collection, "all".
inline void write_collections(const tdbg::local_storage& storage) {
    tdbg::format::collections_file file;
    tdbg::format::collection_spec all;
    all.name = "all";
    all.include_regex = {".*"};
    file.collections.push_back(all);
    storage.put(tdbg::format::collections_file_key("worker_0"), tdbg::format::to_json(file));
}

/// Writes the run into `dir` (see the file comment).
inline void write_run(const std::filesystem::path& dir, std::int64_t steps, std::size_t tensors,
                      std::size_t elements) {
    const tdbg::local_storage storage(dir);
    write_collections(storage);
    std::vector<float> data(elements);
    std::string events;
    for (std::int64_t step = 0; step < steps; ++step) {
        events.clear();
        tdbg::format::index_file index;
        index.mode = tdbg::mode::train;
        index.mode_step = step;
        index.event_file_name = tdbg::format::event_file_key(step, "worker_0");
        for (std::size_t t = 0; t < tensors; ++t) {
            for (std::size_t i = 0; i < elements; ++i) {
                data[i] = static_cast<float>((step * 31 + static_cast<std::int64_t>(t * 7 + i)) % 1000) * 1e-3F;
            }
            tdbg::format::tensor_event ev;
            ev.step = step;
            ev.wall_time = 1.7e9;
            ev.tag = tensor_name(t);
            ev.value = tdbg::tensor_value::borrow(data.data(), {elements});
            ev.mode = tdbg::mode::train;
            ev.mode_step = step;
            const std::size_t start = events.size();
            tdbg::format::append_record(events, tdbg::format::encode_tensor_event(ev),
                                        tdbg::format::footer_kind::smdebug_constant);
            index.tensor_payload.push_back({ev.tag, start, events.size() - start});
        }
        storage.put(index.event_file_name, events);
        storage.put(tdbg::format::index_file_key(step, "worker_0"), tdbg::format::to_json(index));
    }
    storage.put(std::string(tdbg::format::end_marker_key), "");
}

} // namespace tdbg::bench
