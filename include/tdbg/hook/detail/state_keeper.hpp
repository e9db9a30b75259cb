#pragma once
/// \file
/// The hook's side of smdebug's state store (hook/detail/state_store.hpp): the store a hook's
/// options (or $CHECKPOINT_CONFIG_FILE_PATH) name, the step clock a resumed job goes on from
/// (smdebug's _initialize_to_last_saved_state), and the state written at the start of a step
/// whenever the checkpoint files changed (smdebug's _write_state).

#include <cstdint>
#include <memory>
#include <optional>

#include "tdbg/config.hpp"
#include "tdbg/hook/detail/state_store.hpp"
#include "tdbg/hook/detail/step_clock.hpp"
#include "tdbg/hook/options.hpp"

namespace tdbg::detail {

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
#include "tdbg/hook/impl/state_keeper.ipp"
#endif
