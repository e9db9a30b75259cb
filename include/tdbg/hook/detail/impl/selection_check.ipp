#pragma once
/// \file
/// Definitions of tdbg/hook/detail/selection_check.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/hook/detail/selection_check.hpp"

namespace tdbg::detail {

TDBG_DECL void selection_check::offer(std::string_view name, bool saved, const collection_selection& selection) {
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

TDBG_DECL std::string selection_check::likely_cause(std::string_view collection) {
    // The parameters and gradients of a torch model are offered by tdbg::torch_hook's own calls:
    // a trainer that starts its steps with hook.begin_step() never offers them.
    if (collection == collection_names::weights || collection == collection_names::biases) {
        return " (with tdbg::torch_hook, start each step with torch_hook.begin_step(), which saves the registered "
               "parameters, or call torch_hook.save_parameters() after hook.begin_step())";
    }
    if (collection == collection_names::gradients) {
        return " (with tdbg::torch_hook, call torch_hook.after_backward() after each backward pass)";
    }
    return {};
}

TDBG_DECL std::vector<std::string> selection_check::step_ended(const collection_selection& selection) {
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
                                            "in the first {} steps that saved one: it saves nothing{}",
                                            w.regex.text(), w.collection_name, steps_, likely_cause(w.collection_name)));
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

TDBG_DECL std::string selection_check::unknown_name(const std::string& name, const std::vector<std::string>& known) {
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

TDBG_DECL void selection_check::refresh(const collection_selection& selection) {
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
                watch kept = *old;
                kept.owner = c;
                next.push_back(std::move(kept)); // one push_back (by move) compiled, not two
                continue;
            }
            const bool builtin = is_builtin_regex(name, regex);
            next.push_back(
                watch{name, detail::pattern(std::move(regex), "collection '" + name + "'"), c, builtin, false});
        }
    }
    watches_ = std::move(next);
}

} // namespace tdbg::detail
