#pragma once
/// \file
/// The hook's check of a selection that can never save (hook_options::selection_check):
/// a collection name nothing has, an include regex that selects no tensor, a collection
/// with neither regex nor tensor name. It watches the names offered to the hook during
/// its first steps and says, at a step's end, what it found then; each finding once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/detail/collection_selection.hpp"
#include "tdbg/hook/options.hpp"

namespace tdbg::detail {

/// See the file comment.
class selection_check {
public:
    explicit selection_check(const hook_options& options)
        : policy_(options.selection_check), steps_(std::max<std::size_t>(1, options.selection_check_steps)) {}

    /// True while the names offered to the hook are looked at: until the end of the
    /// selection_check_steps-th step that saved a tensor.
    [[nodiscard]] bool watching() const noexcept { return policy_ != selection_check_policy::off && !regexes_done_; }

    /// Tensor `name` was offered to the hook; `saved`: it is saved at this step.
    TDBG_DECL void offer(std::string_view name, bool saved, const collection_selection& selection);

    /// What is found at the end of a step: messages not given before; none when off.
    [[nodiscard]] TDBG_DECL std::vector<std::string> step_ended(const collection_selection& selection);

private:
    // Why a built-in collection of a torch model may have selected nothing: its tensors are offered by
    // torch_hook calls the trainer may not make; empty for other collections.
    [[nodiscard]] TDBG_DECL static std::string likely_cause(std::string_view collection);
    // One include regex of a collection asked for, and whether it selected a tensor yet.
    struct watch {
        std::string collection_name;
        detail::pattern regex;
        const collection* owner = nullptr;
        bool builtin = false;
        bool selected = false;
    };

    TDBG_DECL static std::string unknown_name(const std::string& name, const std::vector<std::string>& known);

    static bool is_builtin_regex(std::string_view collection, std::string_view regex) {
        const auto& table = builtin_collections();
        return std::any_of(table.begin(), table.end(),
                           [&](const auto& entry) { return entry.first == collection && entry.second == regex; });
    }

    // The watches of the collections asked for, again when a collection may have changed;
    // a regex watched before keeps its compiled form and what it selected.
    TDBG_DECL void refresh(const collection_selection& selection);

    selection_check_policy policy_;
    std::size_t steps_;
    std::size_t saving_steps_ = 0;
    bool step_saved_ = false;
    bool names_done_ = false;
    bool regexes_done_ = false;
    std::optional<std::uint64_t> generation_; // the selection's when the watches were made
    std::vector<watch> watches_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/selection_check.ipp"
#endif
