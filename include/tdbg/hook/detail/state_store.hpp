#pragma once
/// \file
/// smdebug's state store (core/state_store.py), which lets a job resumed from a
/// checkpoint go on with its step numbers. A checkpoint configuration file (JSON,
/// "LocalPath": the checkpoint directory) names where the trainer saves its
/// checkpoints; the store keeps a list of states in metadata.json there, and the
/// hook appends one at the start of a step whenever the checkpoint files changed.
/// state_keeper is the hook's side of it: the store its options (or
/// $CHECKPOINT_CONFIG_FILE_PATH) name, the step clock a resumed job goes on from (smdebug's
/// _initialize_to_last_saved_state), and the state written at the start of a step (_write_state).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/hook/detail/step_clock.hpp"
#include "tdbg/hook/options.hpp"

namespace tdbg::detail {

/// The variable naming the checkpoint configuration file, and smdebug's default for it.
inline constexpr const char* checkpoint_config_env = "CHECKPOINT_CONFIG_FILE_PATH";
inline constexpr const char* default_checkpoint_config_file = "/opt/ml/input/config/checkpointconfig.json";

/// One state of the store: what a resumed job starts from.
struct training_state {
    std::int64_t training_run = 0;
    /// The last global step that saved a tensor (null in the file when none did).
    std::optional<std::int64_t> last_saved_step;
    /// The last global step that ran.
    std::int64_t last_seen_step = -1;
    /// Each mode's step, in the order the hook first met the modes (GLOBAL first).
    std::vector<std::pair<mode, std::int64_t>> mode_steps;
};

/// The store of one hook: reads the states at construction, tells when the
/// checkpoint files changed, and rewrites metadata.json with one more state.
class state_store {
public:
    /// The store the checkpoint configuration `config_file` points to; an empty
    /// store when the file does not exist or has no "LocalPath" (as smdebug's).
    /// Throws config_error for a configuration or metadata.json that cannot be
    /// read or is malformed (smdebug raises then too).
    TDBG_DECL explicit state_store(const std::filesystem::path& config_file);

    /// True when a checkpoint directory is configured.
    [[nodiscard]] bool enabled() const noexcept { return checkpoint_dir_.has_value(); }
    /// metadata.json in the checkpoint directory (empty when none is configured).
    [[nodiscard]] const std::filesystem::path& states_file() const noexcept { return states_file_; }

    /// The state with the highest last seen step, if any was saved.
    [[nodiscard]] TDBG_DECL std::optional<training_state> last_state() const;

    /// smdebug's is_checkpoint_updated: true when the files of the checkpoint
    /// directory (but metadata.json and SageMaker's upload markers) changed in
    /// number, size or name since the last call. The sizes remembered follow
    /// smdebug's bookkeeping, which appends rather than replaces when the files
    /// changed in number or name, so that the same steps write a state as in smdebug.
    TDBG_DECL bool checkpoint_updated();

    /// Appends `state` and rewrites metadata.json with every state, as json.dump
    /// writes the list. Throws storage_error naming the file when it cannot be written.
    TDBG_DECL void update(const training_state& state);

private:
    TDBG_DECL static format::json_value parse_file(const std::filesystem::path& file, std::string_view what);

    // smdebug's _read_states_file: the four keys of each state, sorted (stably) by last seen step.
    TDBG_DECL void read_states();

    // The checkpoint directory's files, recursively, sorted by path (smdebug's _get_checkpoint_files_in_dir).
    [[nodiscard]] TDBG_DECL std::vector<std::string> checkpoint_files() const;

    static std::uintmax_t size_of(const std::string& file) {
        std::error_code ec;
        const std::uintmax_t size = std::filesystem::file_size(file, ec);
        return ec ? 0 : size;
    }

    std::optional<std::filesystem::path> checkpoint_dir_;
    std::filesystem::path states_file_;
    std::vector<format::json_value> states_;
    std::vector<std::string> last_files_;
    std::vector<std::uintmax_t> last_sizes_;
};

/// A hook's training state: its run number and the last step that saved a tensor.
class state_keeper {
public:
    /// Opens the store `options` name; when it holds a state, sets `clock` to go on from it and
    /// returns true (the job is resumed). Throws config_error for a store that cannot be read.
    TDBG_DECL bool open(const hook_options& options, step_clock& clock);

    /// A tensor was saved at global step `step`.
    void saved_at(std::int64_t step) noexcept { last_saved_step_ = step; }

    /// True when the checkpoint files changed since the last call (smdebug's
    /// is_checkpoint_updated): a new state is due.
    [[nodiscard]] TDBG_DECL bool due();

    /// Writes a new state at `clock`; throws storage_error when it cannot.
    TDBG_DECL void write(const step_clock& clock);

private:
    std::unique_ptr<state_store> store_;
    std::optional<std::int64_t> last_saved_step_; // smdebug's last_saved_step
    std::int64_t training_run_ = 0;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/state_store.ipp"
#endif
