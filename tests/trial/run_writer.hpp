#pragma once
// Writes runs in smdebug's layout with the format layer directly, a step and
// a worker at a time, in the order a hook publishes: event file, then index
// file; collections first, the end marker last.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::test {

/// One tensor to save in a step: its value (optional), stored reductions and index shape.
struct saved_tensor {
    std::string name;
    std::optional<tensor_value> value;
    std::vector<std::pair<reduction, tensor_value>> reductions;
    std::optional<std::vector<std::int64_t>> shape;
};

class run_writer {
public:
    explicit run_writer(std::filesystem::path dir) : storage_(std::move(dir)) {}

    /// The records' footers from now on: smdebug's constant (as smdebug and the hook write
    /// them, which readers do not check) or the payload's CRC (checked).
    format::footer_kind footer = format::footer_kind::smdebug_constant;

    [[nodiscard]] const local_storage& storage() const noexcept { return storage_; }

    /// Writes `worker`'s collection file.
    void collections(const std::string& worker, int num_workers,
                     std::vector<format::collection_spec> specs = {}) const {
        format::collections_file file;
        file.num_workers = num_workers;
        if (specs.empty()) {
            format::collection_spec all;
            all.name = "all";
            all.include_regex = {".*"};
            specs.push_back(all);
        }
        file.collections = std::move(specs);
        storage_.put(format::collections_file_key(worker), format::to_json(file));
    }

    /// Writes one step of one worker: the event file, then its index file.
    void step(std::int64_t step, const std::string& worker, mode m, std::int64_t mode_step,
              const std::vector<saved_tensor>& tensors) const {
        std::string events;
        format::index_file index;
        index.mode = m;
        index.mode_step = mode_step;
        index.event_file_name = format::event_file_key(step, worker);
        auto add = [&](const std::string& tag, const tensor_value& value) {
            format::tensor_event ev;
            ev.step = step;
            ev.wall_time = 1700000000.0 + static_cast<double>(step);
            ev.tag = tag;
            ev.value = value;
            ev.mode = m;
            ev.mode_step = mode_step;
            const std::size_t start = events.size();
            format::append_record(events, format::encode_tensor_event(ev), footer);
            index.tensor_payload.push_back(format::tensor_location{tag, start, events.size() - start});
        };
        for (const saved_tensor& t : tensors) {
            for (const auto& [r, v] : t.reductions) {
                add(format::reduction_tensor_name(r, t.name), v);
            }
            if (t.value) {
                add(t.name, *t.value);
            }
            if (t.shape) {
                index.shape_payload.push_back(format::shape_entry{t.name, t.name, *t.shape});
            }
        }
        if (index.tensor_payload.empty()) {
            index.event_file_name.clear();
        } else {
            storage_.put(index.event_file_name, events);
        }
        storage_.put(format::index_file_key(step, worker), format::to_json(index));
    }

    /// Publishes the end marker.
    void end() const { storage_.put(std::string(format::end_marker_key), ""); }

private:
    local_storage storage_;
};

/// A float32 vector whose elements are `base`, `base` + 1, ...
inline tensor_value iota_value(float base, std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = base + static_cast<float>(i);
    }
    return tensor_value(std::move(v));
}

} // namespace tdbg::test
