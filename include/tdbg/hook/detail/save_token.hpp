#pragma once
/// \file
/// What the first half of a save hands to the second (hook.hpp's save_tensor; the planning
/// behind both halves is in save_planning.hpp, which a trainer's file does not include).

#include <cstddef>
#include <vector>

namespace tdbg::detail {

/// The collections that save a tensor now: indices of collection_selection::active.
using active_collections = std::vector<std::size_t>;

/// What the first half of a save (hook_engine::prepare_save) hands to the second
/// (save_prepared): the collections that save the tensor at this step, none when it is not saved.
/// The engine keeps nothing of a save between the two calls; the token carries it.
struct save_token {
    active_collections active;

    /// True when the tensor is saved at this step.
    explicit operator bool() const noexcept { return !active.empty(); }
};

} // namespace tdbg::detail
