#pragma once
/// \file
/// Where things live inside a run directory: smdebug's key names for event,
/// index and collection files, worker names and reduction tensor names.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"

namespace tdbg::format {

/// The empty file whose presence says the job has ended.
inline constexpr std::string_view end_marker_key = "training_job_end.ts";
/// The marker through which rules ask the hook to stop training early.
inline constexpr std::string_view stop_marker_key = "tdbg_stop_training.json";
/// The prefix of every stored reduction's tensor name.
inline constexpr std::string_view reduction_prefix = "smdebug/reductions/";
/// smdebug groups index files in directories of this many steps.
inline constexpr std::int64_t index_files_per_dir = 1000;

namespace detail {
// "<value>" zero padded to `width` digits; throws for a negative value (naming it a `what`).
TDBG_DECL std::string zero_padded(std::int64_t value, std::size_t width, const char* what);
} // namespace detail

/// The largest global step a run can name: its files name steps with 12 digits.
inline constexpr std::int64_t max_step = 999'999'999'999;

/// The global step as smdebug writes it in file names: 12 digits, zero padded.
[[nodiscard]] inline std::string step_string(std::int64_t step) { return detail::zero_padded(step, 12, "step"); }

/// The directory that holds a step's index file: step / 1000 as 9 digits.
[[nodiscard]] inline std::string index_dir_string(std::int64_t step) {
    return detail::zero_padded(step < 0 ? step : step / index_files_per_dir, 9, "step");
}

/// Throws invalid_name unless `worker` can be part of a file name: not empty,
/// at most 255 bytes, no '/', no backslash, no "..", no NUL.
TDBG_DECL void validate_worker_name(std::string_view worker);

/// The worker name smdebug's reader gives the worker part of a file name. smdebug's
/// TensorFlow hooks name a worker after its device, with '/' written as '_' and ':'
/// as '-' ("_replica-0_task-0_device-GPU-0"), and its reader turns such a part back
/// ("/replica:0/task:0/device:GPU:0") when the file name holds "__" (index and event
/// files; `collections_file` false) or the part begins with '_' (collection files).
/// smdebug looks for "__" in the whole path; tdbg looks in the file name only, so a
/// run reads the same wherever it is stored.
[[nodiscard]] TDBG_DECL std::string worker_from_file_part(std::string_view part, bool collections_file,
                                                          bool name_has_double_underscore);

/// The worker part of a file name for a worker name: a TensorFlow device name read
/// by worker_from_file_part (it holds '/') written back; any other name unchanged.
[[nodiscard]] TDBG_DECL std::string worker_file_part(std::string_view worker);

/// "events/000000000007/000000000007_worker_0.tfevents".
[[nodiscard]] TDBG_DECL std::string event_file_key(std::int64_t step, std::string_view worker);

/// "index/000000000/000000000007_worker_0.json".
[[nodiscard]] TDBG_DECL std::string index_file_key(std::int64_t step, std::string_view worker);

/// "collections/000000000/worker_0_collections.json".
[[nodiscard]] TDBG_DECL std::string collections_file_key(std::string_view worker);

/// What an index or event file's key says: its global step and its worker.
struct index_key_info {
    std::int64_t step = 0;
    std::string worker;

    friend bool operator==(const index_key_info& a, const index_key_info& b) {
        return a.step == b.step && a.worker == b.worker;
    }
    friend bool operator!=(const index_key_info& a, const index_key_info& b) { return !(a == b); }
};

namespace detail {
// "<digits>_<worker><suffix>" in the last component of `key`, whose directory
// must end in "<dir_name>/<subdir>/" (with any prefix before dir_name).
TDBG_DECL std::optional<index_key_info> parse_step_worker_key(std::string_view key, std::string_view dir_name,
                                                              std::string_view suffix);
} // namespace detail

/// The step and worker of an index file key ("[prefix/]index/000000000/000000000007_worker_0.json");
/// nullopt for anything else (temporary "*.tmp" files included).
[[nodiscard]] inline std::optional<index_key_info> parse_index_file_key(std::string_view key) {
    return detail::parse_step_worker_key(key, "index", ".json");
}

/// The folder of an index file key, as a number: 2 for "[prefix/]index/000000002/000000002500_worker_0.json";
/// nullopt when `key` is not an index file key or its folder's number does not fit in int64. smdebug
/// files step S's index file in folder S / index_files_per_dir (index_file_key), and its reader
/// takes the step from the file's name alone; a file in another folder is not where it belongs.
[[nodiscard]] TDBG_DECL std::optional<std::int64_t> index_file_folder(std::string_view key);

/// The step and worker of an event file key ("[prefix/]events/000000000007/000000000007_worker_0.tfevents").
[[nodiscard]] inline std::optional<index_key_info> parse_event_file_key(std::string_view key) {
    return detail::parse_step_worker_key(key, "events", ".tfevents");
}

/// The worker of a collection file key ("[prefix/]collections/000000000/worker_0_collections.json").
[[nodiscard]] TDBG_DECL std::optional<std::string> parse_collections_file_key(std::string_view key);

/// `name` with every ":<digits>" removed, as smdebug does before naming a
/// reduction ("dense/kernel:0" -> "dense/kernel"). smdebug's regex also treats
/// non-ASCII Unicode digits as digits; tdbg only removes ASCII ones.
[[nodiscard]] TDBG_DECL std::string strip_colon_index(std::string_view name);

/// reduction_tensor_name written into `out`, whose memory is reused.
inline void assign_reduction_tensor_name(std::string& out, reduction r, std::string_view tensor) {
    const std::string_view abs = r.abs ? "abs_" : "";
    const std::string_view kind = reduction_kind_name(r.kind);
    const bool indexed = tensor.find(':') != std::string_view::npos;
    const std::string stripped = indexed ? strip_colon_index(tensor) : std::string();
    const std::string_view name = indexed ? std::string_view(stripped) : tensor;
    out.clear();
    out.reserve(reduction_prefix.size() + abs.size() + kind.size() + 1 + name.size());
    out.append(reduction_prefix).append(abs).append(kind).append(1, '/').append(name);
}

/// The name under which a stored reduction is saved: "smdebug/reductions/abs_l2/<tensor without :N>".
/// Built in one allocation: the hook names a tensor's reductions at every step it saves them.
[[nodiscard]] inline std::string reduction_tensor_name(reduction r, std::string_view tensor) {
    std::string out;
    assign_reduction_tensor_name(out, r, tensor);
    return out;
}

/// The reduction and the tensor name of a stored reduction's name; nullopt
/// when `name` is not one ("smdebug/reductions/l2/w" -> {l2, "w"}).
[[nodiscard]] TDBG_DECL std::optional<std::pair<reduction, std::string>>
parse_reduction_tensor_name(std::string_view name);

} // namespace tdbg::format

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/layout.ipp"
#endif
