#pragma once
// Writes small runs for the rule tests with the format layer, a step and a
// worker at a time, in the order a hook publishes them (event file, then index
// file; collections first, the end marker last), with chosen wall times.

#include <cstdint>
#include <filesystem>
#include <map>
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

/// One tensor of a step: its value (optional) and stored reductions.
struct step_tensor {
    std::string name;
    std::optional<tensor_value> value;
    std::vector<std::pair<reduction, tensor_value>> reductions;
};

/// A float32 tensor of `values` with `shape` (1-D by default).
inline tensor_value f32(std::vector<float> values, std::vector<std::size_t> shape = {}) {
    if (shape.empty()) {
        shape = {values.size()};
    }
    return tensor_value(std::move(values), std::move(shape));
}

/// A 0-d float32 tensor.
inline tensor_value scalar(float v) { return tensor_value::scalar(v); }

/// `rows` x `cols` float32 values, value(row, col).
template <class F>
tensor_value matrix(std::size_t rows, std::size_t cols, F value) {
    std::vector<float> v;
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            v.push_back(value(r, c));
        }
    }
    return f32(std::move(v), {rows, cols});
}

class rule_run {
public:
    explicit rule_run(std::filesystem::path dir) : storage_(std::move(dir)) {}

    [[nodiscard]] const local_storage& storage() const noexcept { return storage_; }
    [[nodiscard]] std::string path() const { return storage_.describe(); }

    /// Writes `worker`'s collections file: `collections` maps a collection to its include regex.
    void collections(const std::map<std::string, std::string>& collections, const std::string& worker = "worker_0",
                     int num_workers = 1) const {
        format::collections_file file;
        file.num_workers = num_workers;
        for (const auto& [name, regex] : collections) {
            format::collection_spec c;
            c.name = name;
            c.include_regex = {regex};
            file.collections.push_back(c);
        }
        storage_.put(format::collections_file_key(worker), format::to_json(file));
    }

    /// Writes one step of one worker.
    void step(std::int64_t step, const std::vector<step_tensor>& tensors, mode m = mode::train,
              std::optional<std::int64_t> mode_step = std::nullopt, const std::string& worker = "worker_0",
              std::optional<double> wall_time = std::nullopt) const {
        const double time = wall_time.value_or(1700000000.0 + static_cast<double>(step));
        std::string events;
        format::append_record(events, format::encode_file_version_event(time), format::footer_kind::smdebug_constant);
        format::index_file index;
        index.mode = m;
        index.mode_step = mode_step.value_or(step);
        index.event_file_name = format::event_file_key(step, worker);
        auto add = [&](const std::string& tag, const tensor_value& value) {
            format::tensor_event ev;
            ev.step = step;
            ev.wall_time = time;
            ev.tag = tag;
            ev.value = value;
            ev.mode = m;
            ev.mode_step = index.mode_step;
            const std::size_t start = events.size();
            format::append_record(events, format::encode_tensor_event(ev), format::footer_kind::smdebug_constant);
            index.tensor_payload.push_back(format::tensor_location{tag, start, events.size() - start});
        };
        for (const step_tensor& t : tensors) {
            for (const auto& [r, v] : t.reductions) {
                add(format::reduction_tensor_name(r, t.name), v);
            }
            if (t.value) {
                add(t.name, *t.value);
            }
        }
        storage_.put(index.event_file_name, events);
        storage_.put(format::index_file_key(step, worker), format::to_json(index));
    }

    /// Publishes the end marker.
    void end() const { storage_.put(std::string(format::end_marker_key), ""); }

private:
    local_storage storage_;
};

} // namespace tdbg::test
