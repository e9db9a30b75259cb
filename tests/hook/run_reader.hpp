#pragma once
// Reads back what a hook wrote, through the format layer only (no trial).

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::test {

using step_worker = std::pair<std::int64_t, std::string>;

/// Every index file of the run, by (global step, worker).
inline std::map<step_worker, format::index_file> read_indexes(const std::filesystem::path& run) {
    local_storage storage(run);
    std::map<step_worker, format::index_file> out;
    for (const auto& key : storage.list("index/")) {
        const auto info = format::parse_index_file_key(key);
        if (!info) {
            continue;
        }
        out[{info->step, info->worker}] = format::parse_index_file(storage.read(key), key);
    }
    return out;
}

/// The whole record of `name` as the index locates it.
inline std::string read_record(const std::filesystem::path& run, const format::index_file& index,
                               const std::string& name) {
    for (const auto& loc : index.tensor_payload) {
        if (loc.tensorname == name) {
            return local_storage(run).read_range(index.event_file_name, loc.start_idx, loc.length);
        }
    }
    throw std::runtime_error("no record for " + name + " in " + index.event_file_name);
}

/// The decoded tensor `name` of one step.
inline format::tensor_event read_tensor(const std::filesystem::path& run, const format::index_file& index,
                                        const std::string& name) {
    const std::string record = read_record(run, index, name);
    const auto payload = format::record_payload(record, index.event_file_name, 0);
    return format::decode_tensor_event(payload, nullptr, index.event_file_name, format::record_header_size);
}

/// The tensor names of an index, records first, then shapes marked "shape:".
inline std::vector<std::string> names_of(const format::index_file& index) {
    std::vector<std::string> out;
    for (const auto& t : index.tensor_payload) {
        out.push_back(t.tensorname);
    }
    for (const auto& s : index.shape_payload) {
        out.push_back("shape:" + s.tensorname);
    }
    return out;
}

} // namespace tdbg::test
