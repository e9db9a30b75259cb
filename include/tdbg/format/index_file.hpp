#pragma once
/// \file
/// smdebug's index files: for one step and worker, where each tensor's record
/// lies in the event file, and the shapes saved without values.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"

namespace tdbg::format {

/// One record in the event file: the whole record (header and footer included).
struct tensor_location {
    std::string tensorname;
    std::uint64_t start_idx = 0;
    std::uint64_t length = 0;

    friend bool operator==(const tensor_location& a, const tensor_location& b) {
        return a.tensorname == b.tensorname && a.start_idx == b.start_idx && a.length == b.length;
    }
    friend bool operator!=(const tensor_location& a, const tensor_location& b) { return !(a == b); }
};

/// A tensor's shape, saved when only its reductions are (ReductionConfig save_shape).
struct shape_entry {
    std::string tensorname;
    std::string originalname;
    std::vector<std::int64_t> shape;

    friend bool operator==(const shape_entry& a, const shape_entry& b) {
        return a.tensorname == b.tensorname && a.originalname == b.originalname && a.shape == b.shape;
    }
    friend bool operator!=(const shape_entry& a, const shape_entry& b) { return !(a == b); }
};

/// The contents of one index file. An empty `event_file_name` means the file
/// has none (smdebug omits it when a step saved only shapes).
struct index_file {
    tdbg::mode mode = mode::global;
    std::int64_t mode_step = 0;
    std::string event_file_name;
    std::vector<tensor_location> tensor_payload;
    std::vector<shape_entry> shape_payload;

    friend bool operator==(const index_file& a, const index_file& b) {
        return a.mode == b.mode && a.mode_step == b.mode_step && a.event_file_name == b.event_file_name &&
               a.tensor_payload == b.tensor_payload && a.shape_payload == b.shape_payload;
    }
    friend bool operator!=(const index_file& a, const index_file& b) { return !(a == b); }
};

/// The JSON text, byte for byte as smdebug writes it (Python's json.dumps, keys in smdebug's order).
[[nodiscard]] TDBG_DECL std::string to_json(const index_file& index);

/// An index file's JSON written as its entries arrive, keeping text, not entries: the hook's
/// writer names a step's records this way, without an object per record. The bytes of to_json,
/// which is written with it.
class index_writer {
public:
    /// The step's mode and mode step.
    void set_meta(tdbg::mode mode, std::int64_t mode_step) noexcept {
        mode_ = mode;
        mode_step_ = mode_step;
    }
    /// The event file the records lie in (none: the step saved only shapes).
    void set_event_file_name(std::string name) { event_file_name_ = std::move(name); }
    [[nodiscard]] bool has_event_file_name() const noexcept { return !event_file_name_.empty(); }

    /// Room for `count` more add_tensor calls whose names take `name_bytes` in all (a step's block
    /// of records names them at once).
    void reserve_tensors(std::size_t count, std::size_t name_bytes) {
        constexpr std::size_t per_entry = 96; // the keys, quotes and two 20-digit numbers, at most
        tensor_json_.reserve(tensor_json_.size() + name_bytes + count * per_entry);
    }
    /// Names a record of the event file.
    TDBG_DECL void add_tensor(std::string_view name, std::uint64_t start_idx, std::uint64_t length);
    /// Names a shape saved without values.
    TDBG_DECL void add_shape(const shape_entry& shape);

    /// True when it names nothing.
    [[nodiscard]] bool empty() const noexcept { return tensors_ == 0 && shapes_ == 0; }
    /// Names nothing again, as a new writer; its memory is kept for the next index.
    void clear() noexcept {
        mode_ = mode::global;
        mode_step_ = 0;
        event_file_name_.clear();
        tensor_json_.clear();
        shape_json_.clear();
        tensors_ = 0;
        shapes_ = 0;
    }

    /// The JSON text.
    [[nodiscard]] TDBG_DECL std::string text() const;

private:
    tdbg::mode mode_ = mode::global;
    std::int64_t mode_step_ = 0;
    std::string event_file_name_;
    std::string tensor_json_; // the entries of tensor_payload, comma-separated
    std::string shape_json_;  // the entries of shape_payload, comma-separated
    std::size_t tensors_ = 0;
    std::size_t shapes_ = 0;
};

/// Parses an index file; throws format_error naming `file` and the key (or the
/// byte offset of a JSON syntax error). Unknown keys are ignored.
[[nodiscard]] TDBG_DECL index_file parse_index_file(std::string_view json, std::string_view file);

} // namespace tdbg::format

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/index_file.ipp"
#endif
