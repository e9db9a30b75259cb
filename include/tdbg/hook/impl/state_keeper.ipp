#pragma once
/// \file
/// Definitions of tdbg/hook/detail/state_keeper.hpp.

#include <cstdlib>
#include <memory>
#include <string>

#include "tdbg/hook/detail/state_keeper.hpp"

namespace tdbg::detail {

TDBG_DECL bool state_keeper::open(const hook_options& options, step_clock& clock) {
    std::string config;
    if (options.checkpoint_config_file) {
        config = *options.checkpoint_config_file;
    } else if (const char* env = std::getenv(checkpoint_config_env); env != nullptr) {
        config = env;
    } else {
        config = default_checkpoint_config_file;
    }
    store_ = std::make_unique<state_store>(config);
    if (auto last = store_->last_state()) {
        last_saved_step_ = last->last_saved_step;
        training_run_ = last->training_run + 1;
        clock.resume(last->last_seen_step, last->mode_steps);
        return true;
    }
    return false;
}

TDBG_DECL bool state_keeper::due() { return store_ && store_->checkpoint_updated(); }

TDBG_DECL void state_keeper::write(const step_clock& clock) {
    training_state state;
    state.training_run = training_run_;
    state.last_saved_step = last_saved_step_;
    state.last_seen_step = clock.global();
    state.mode_steps = clock.known_mode_steps();
    store_->update(state);
}

} // namespace tdbg::detail
