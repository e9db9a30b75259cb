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

#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/detail/selection.hpp"
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
    void offer(std::string_view name, bool saved, const collection_selection& selection) {
        if (!watching()) {
            return;
        }
        step_saved_ = step_saved_ || saved;
        refresh(selection);
        for (watch& w : watches_) {
            if (!w.selected && w.regex.search(name) && w.owner->matches_regex(name)) {
                w.selected = true;
            }
        }
    }

    /// What is found at the end of a step: messages not given before; none when off.
    [[nodiscard]] std::vector<std::string> step_ended(const collection_selection& selection) {
        std::vector<std::string> found;
        if (policy_ == selection_check_policy::off) {
            return found;
        }
        if (!names_done_) {
            names_done_ = true;
            for (const std::string& name : selection.asked()) {
                if (selection.find(name) == nullptr) {
                    found.push_back(unknown_name(name, selection.names()));
                }
            }
        }
        if (!regexes_done_ && std::exchange(step_saved_, false) && ++saving_steps_ >= steps_) {
            regexes_done_ = true;
            refresh(selection);
            for (const watch& w : watches_) {
                // A builtin collection's own regex (smdebug's naming) matters only when
                // nothing is added to it by name.
                if (!w.selected && !(w.builtin && !w.owner->tensor_names().empty())) {
                    found.push_back(fmt::format("tdbg::hook: include regex '{}' of collection '{}' selected no tensor "
                                                "in the first {} steps that saved one: it saves nothing",
                                                w.regex.text(), w.collection_name, steps_));
                }
            }
            for (const std::string& name : selection.asked()) {
                const collection* c = selection.find(name);
                if (c != nullptr && name != collection_names::all && c->include_regex().empty() &&
                    c->tensor_names().empty()) {
                    found.push_back(fmt::format("tdbg::hook: collection '{}' selects no tensor: it has no include "
                                                "regex and no tensor name after {} steps that saved one",
                                                name, steps_));
                }
            }
        }
        return found;
    }

private:
    // One include regex of a collection asked for, and whether it selected a tensor yet.
    struct watch {
        std::string collection_name;
        detail::pattern regex;
        const collection* owner = nullptr;
        bool builtin = false;
        bool selected = false;
    };

    static std::string unknown_name(const std::string& name, const std::vector<std::string>& known) {
        std::string hint;
        if (const auto nearest = nearest_name(name, known)) {
            hint = fmt::format("did you mean '{}'?", *nearest);
        } else {
            hint = "the collections are:";
            for (std::size_t i = 0; i < known.size(); ++i) {
                hint += (i == 0 ? " '" : ", '") + known[i] + "'";
            }
        }
        return fmt::format("tdbg::hook: include_collections names '{}', which no collection has by the end of the "
                           "first step: nothing is saved for it ({})",
                           name, hint);
    }

    static bool is_builtin_regex(std::string_view collection, std::string_view regex) {
        const auto& table = builtin_collections();
        return std::any_of(table.begin(), table.end(),
                           [&](const auto& entry) { return entry.first == collection && entry.second == regex; });
    }

    // The watches of the collections asked for, again when a collection may have changed;
    // a regex watched before keeps its compiled form and what it selected.
    void refresh(const collection_selection& selection) {
        if (generation_ == selection.generation()) {
            return;
        }
        generation_ = selection.generation();
        std::vector<watch> next;
        for (const std::string& name : selection.asked()) {
            const collection* c = selection.find(name);
            if (c == nullptr) {
                continue;
            }
            for (std::string& regex : c->include_regex()) {
                const auto old = std::find_if(watches_.begin(), watches_.end(), [&](const watch& w) {
                    return w.collection_name == name && w.regex.text() == regex;
                });
                if (old != watches_.end()) {
                    next.push_back(*old);
                    next.back().owner = c;
                    continue;
                }
                const bool builtin = is_builtin_regex(name, regex);
                next.push_back(watch{name, detail::pattern(std::move(regex), "collection '" + name + "'"), c, builtin,
                                     false});
            }
        }
        watches_ = std::move(next);
    }

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
