#pragma once
/// \file
/// Definitions of tdbg/rules/detail/tensor_selection.hpp.

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/text.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules::detail {

TDBG_DECL tensor_selection::tensor_selection(const tensor_selection& other)
    : collections_(other.collections_), regexes_(other.regexes_), all_when_empty_(other.all_when_empty_) {}

TDBG_DECL tensor_selection& tensor_selection::operator=(const tensor_selection& other) {
    if (this != &other) {
        collections_ = other.collections_;
        regexes_ = other.regexes_;
        all_when_empty_ = other.all_when_empty_;
        std::lock_guard<std::mutex> lock(mutex_);
        cached_.reset();
    }
    return *this;
}

TDBG_DECL tensor_selection::tensor_selection(tensor_selection&& other) noexcept
    : collections_(std::move(other.collections_)), regexes_(std::move(other.regexes_)),
      all_when_empty_(other.all_when_empty_) {}

TDBG_DECL tensor_selection& tensor_selection::operator=(tensor_selection&& other) noexcept {
    collections_ = std::move(other.collections_);
    regexes_ = std::move(other.regexes_);
    all_when_empty_ = other.all_when_empty_;
    cached_.reset();
    return *this;
}

TDBG_DECL std::shared_ptr<const tensor_selection::selected> tensor_selection::snapshot(const trial& t) const {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (cached_ && t.loaded_all_steps() && cached_ended_) {
            return cached_;
        }
    }
    const bool ended = t.loaded_all_steps(); // read before the names: they are then complete
    std::vector<std::string> all = t.tensor_names();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (cached_ && cached_->known == all.size()) {
            cached_ended_ = ended;
            return cached_;
        }
    }
    auto fresh = std::make_shared<selected>();
    fresh->known = all.size();
    std::set<std::string> picked;
    if (unspecified()) {
        if (all_when_empty_) {
            picked.insert(all.begin(), all.end());
        }
    } else {
        for (const std::string& c : collections_) {
            for (auto& n : t.tensor_names(std::nullopt, mode::global, std::nullopt, c)) {
                picked.insert(std::move(n));
            }
        }
        for (const std::string& r : regexes_) {
            for (auto& n : t.tensor_names(std::nullopt, mode::global, r)) {
                picked.insert(std::move(n));
            }
        }
    }
    fresh->names.assign(picked.begin(), picked.end());
    fresh->handles.reserve(fresh->names.size());
    for (const std::string& n : fresh->names) {
        fresh->handles.push_back(t.tensor(n));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    cached_ = fresh;
    cached_ended_ = ended;
    return fresh;
}

namespace explain {

// Names as a person reads them in a sentence: 'a', 'b', 'c' (at most `limit`, then "...").
inline std::string quoted_list(const std::vector<std::string>& names, std::size_t limit = 3) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i) {
        out += fmt::format("{}'{}'", i == 0 ? "" : ", ", names[i]);
    }
    if (names.size() > limit) {
        out += ", ...";
    }
    return out;
}

// " (did you mean 'x'?)" for the nearest of `candidates`, else " (the run's <what>: 'a', 'b', ...)".
inline std::string suggestion(std::string_view wanted, const std::vector<std::string>& candidates, bool substring,
                              std::string_view what) {
    const std::vector<std::string> near = nearest_names(wanted, candidates, substring);
    if (!near.empty()) {
        return fmt::format(" (did you mean {}?)", near.size() == 1 ? quoted_list(near) : "one of " + quoted_list(near));
    }
    if (candidates.empty()) {
        return fmt::format(" (the run has no {})", what);
    }
    return fmt::format(" (the run's {}: {})", what, quoted_list(candidates));
}

} // namespace explain

TDBG_DECL std::vector<tensor_request> tensor_selection::tensor_requests(
    const trial& t, tdbg::detail::function_ref<std::vector<tensor_request>(const tdbg::tensor&)> make) const {
    const auto s = snapshot(t);
    std::vector<tensor_request> out;
    out.reserve(s->names.size());
    for (std::size_t i = 0; i < s->names.size(); ++i) {
        for (tensor_request& r : make(s->handles[i])) {
            if (r.trial_index == 0) {
                r.handle = std::shared_ptr<const tdbg::tensor>(s, &s->handles[i]);
            }
            out.push_back(std::move(r));
        }
    }
    return out;
}

TDBG_DECL std::vector<tensor_request>
tensor_selection::requests(const trial& t, tdbg::detail::function_ref<tensor_request(const std::string&)> make) const {
    return tensor_requests(
        t, [&](const tdbg::tensor& tensor) { return std::vector<tensor_request>{make(tensor.name())}; });
}

TDBG_DECL std::string tensor_selection::explain_empty(const trial& t) const {
    const auto picked = snapshot(t);
    if (!picked->names.empty() || (unspecified() && !all_when_empty_)) {
        return {};
    }
    const std::vector<std::string> tensors = t.tensor_names();
    if (unspecified()) {
        return fmt::format("it reads every tensor, and the run '{}' has none", t.name());
    }
    std::vector<std::string> known_collections;
    for (const auto& item : t.collections()) {
        known_collections.push_back(item.first);
    }
    std::vector<std::string> parts;
    for (const std::string& c : collections_) {
        if (t.collections().count(c) == 0) {
            parts.push_back(fmt::format("collection '{}' is not in the run{}", c,
                                        explain::suggestion(c, known_collections, false, "collections")));
        } else {
            parts.push_back(fmt::format("collection '{}' has no tensor", c));
        }
    }
    for (const std::string& r : regexes_) {
        parts.push_back(fmt::format("tensor_regex '{}' matches none of the run's {} tensor{}{}", r, tensors.size(),
                                    tensors.size() == 1 ? "" : "s",
                                    explain::suggestion(regex_literal(r), tensors, true, "tensors")));
    }
    std::string out;
    for (const std::string& part : parts) {
        out.append(out.empty() ? "" : "; ").append(part);
    }
    return out;
}

TDBG_DECL std::string explain_selections(const trial& t, const std::vector<const tensor_selection*>& selections) {
    std::string empty;
    std::vector<std::string> selected;
    for (const tensor_selection* s : selections) {
        if (s == nullptr) {
            continue;
        }
        const std::string why = s->explain_empty(t);
        empty.append(empty.empty() || why.empty() ? "" : "; ").append(why);
        for (const std::string& n : s->snapshot(t)->names) {
            if (std::find(selected.begin(), selected.end(), n) == selected.end()) {
                selected.push_back(n);
            }
        }
    }
    if (!empty.empty() || selected.empty()) {
        return empty;
    }
    return fmt::format("it selects {} tensor{}: {}", selected.size(), selected.size() == 1 ? "" : "s",
                       explain::quoted_list(selected));
}

TDBG_DECL std::string explain_reductions_only(const trial& t, const std::vector<const tensor_selection*>& selections,
                                              std::string_view rule_name, bool reads_reductions) {
    std::vector<std::string> selected;
    for (const tensor_selection* s : selections) {
        if (s == nullptr) {
            continue;
        }
        for (const std::string& n : s->snapshot(t)->names) {
            if (std::find(selected.begin(), selected.end(), n) == selected.end()) {
                selected.push_back(n);
            }
        }
    }
    std::size_t reductions_only = 0;
    for (const std::string& n : selected) {
        const tdbg::tensor_summary summary = t.tensor(n).summary();
        reductions_only += !summary.has_value && !summary.stored_reductions.empty() ? 1 : 0;
    }
    if (reductions_only == 0) {
        return {};
    }
    const std::string counted = fmt::format("{} of {} selected tensor{} saved as reductions only", reductions_only,
                                            selected.size(), selected.size() == 1 ? "" : "s");
    return reads_reductions ? fmt::format("{}, decided by their stored reductions where they can be", counted)
                            : fmt::format("{}, which {} reads as values: not evaluated", counted,
                                          tdbg::detail::terminal_safe(rule_name));
}

TDBG_DECL tensor_selection selection_from(const rule_params& params, bool all_when_empty,
                                          const std::vector<std::string>& default_regexes) {
    auto collections = params.get_optional<std::vector<std::string>>("collection_names");
    auto regexes = params.get_optional<std::vector<std::string>>("tensor_regex");
    std::vector<std::string> r = regexes ? *regexes : default_regexes;
    return tensor_selection(collections.value_or(std::vector<std::string>{}), std::move(r), all_when_empty);
}

TDBG_DECL std::vector<parameter_description> selection_parameters(bool required,
                                                                  std::vector<parameter_description> then) {
    std::vector<parameter_description> out;
    if (required) {
        out = {{"collection_names", "None", "collections whose tensors are checked (this or tensor_regex is required)"},
               {"tensor_regex", "None", "regular expressions of tensor names (this or collection_names is required)"}};
    } else {
        out = {{"collection_names", "None", "collections whose tensors are checked (comma-separated)"},
               {"tensor_regex", "None", "regular expressions of the names of tensors to check (comma-separated)"}};
    }
    out.insert(out.end(), std::make_move_iterator(then.begin()), std::make_move_iterator(then.end()));
    return out;
}

TDBG_DECL tensor_selection required_selection_from(const rule_params& params, std::string_view rule_name) {
    tensor_selection out = selection_from(params, false);
    if (out.unspecified()) {
        throw config_error(fmt::format("rule {}: give collection_names or tensor_regex (or both)", rule_name));
    }
    return out;
}

TDBG_DECL const tensor_value& value_of(const step_inputs& inputs, const step_inputs::input& in) {
    if (in.value) {
        return *in.value;
    }
    if (const std::exception_ptr& why = inputs.error(in)) {
        std::rethrow_exception(why);
    }
    throw tensor_unavailable_for_step(
        fmt::format("tensor '{}' was not fetched for step {}", in.request.name, in.request.step), in.request.name,
        in.request.step, in.request.step_mode);
}

TDBG_DECL const tensor_value* real_value_of(const step_inputs& inputs, const step_inputs::input& in) {
    const tensor_value& v = value_of(inputs, in);
    return is_real_valued(v.type()) && v.size() != 0 ? &v : nullptr;
}

TDBG_DECL const tensor_value* value_if_saved(const step_inputs& inputs, const step_inputs::input& in) {
    try {
        return &value_of(inputs, in);
    } catch (const tensor_unavailable_for_step&) {
        return nullptr;
    }
}

TDBG_DECL std::vector<input_range> tensor_groups(const step_inputs& inputs) {
    std::vector<input_range> out;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (out.empty() || inputs[i].request.name != inputs[out.back().first].request.name) {
            out.push_back(input_range{i, i});
        }
        out.back().last = i + 1;
    }
    return out;
}

TDBG_DECL std::vector<std::string> workers_at(const tdbg::tensor& t, std::int64_t step, mode m) {
    try {
        return t.workers(step, m);
    } catch (const tensor_unavailable_for_step&) {
    } catch (const tensor_unavailable&) {
    } catch (const invalid_worker&) {}
    return {};
}

TDBG_DECL std::vector<tensor_request> value_or_reductions(const tdbg::tensor& t, std::int64_t step,
                                                          const std::vector<reduction>& deciding) {
    std::vector<tdbg::tensor_step_info> entries;
    try {
        entries = t.entries_at(step);
    } catch (const tensor_unavailable_for_step&) {
    } catch (const tensor_unavailable&) {
    } catch (const invalid_worker&) {}
    std::vector<tensor_request> out;
    for (tdbg::tensor_step_info& e : entries) {
        if (e.has_value) {
            tensor_request r = value_request(t.name(), step, true);
            r.worker = std::move(e.worker);
            out.push_back(std::move(r));
            continue;
        }
        for (const reduction which : e.stored_reductions) {
            if (std::find(deciding.begin(), deciding.end(), which) != deciding.end()) {
                tensor_request r = reduction_request(t.name(), step, which, true);
                r.worker = e.worker;
                out.push_back(std::move(r));
            }
        }
    }
    return out;
}

TDBG_DECL std::vector<worker_inputs> by_worker(const step_inputs& inputs, input_range range) {
    std::vector<worker_inputs> out;
    for (std::size_t k = range.first; k < range.last; ++k) {
        const step_inputs::input& in = inputs[k];
        const std::string* worker = in.request.worker ? &*in.request.worker : nullptr;
        if (out.empty() || worker == nullptr || out.back().worker == nullptr || *out.back().worker != *worker) {
            out.push_back(worker_inputs{worker, nullptr, {}});
        }
        if (!in.request.which) {
            out.back().value = value_if_saved(inputs, in);
        } else if (in.value && in.value->size() == 1 && is_real_valued(in.value->type())) {
            out.back().reductions.emplace_back(*in.request.which, scalar_of(*in.value));
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const worker_inputs& w) { return w.value == nullptr && w.reductions.empty(); }),
              out.end());
    return out;
}

TDBG_DECL std::optional<verdict>
any_worker(const step_inputs& inputs, input_range range,
           tdbg::detail::function_ref<std::optional<verdict>(const worker_inputs&)> check) {
    bool evaluated = false;
    for (const worker_inputs& w : by_worker(inputs, range)) {
        std::optional<verdict> outcome = check(w);
        if (outcome) {
            evaluated = true;
            if (outcome->met()) {
                return outcome;
            }
        }
    }
    if (!evaluated) {
        return std::nullopt;
    }
    return verdict(false);
}

TDBG_DECL verdict any_tensor_index(std::size_t count, std::int64_t step, const std::string& rule_name,
                                   tdbg::detail::function_ref<std::optional<verdict>(std::size_t)> check) {
    bool evaluated = false;
    for (std::size_t i = 0; i < count; ++i) {
        std::optional<verdict> outcome;
        try {
            outcome = check(i);
        } catch (const tensor_unavailable_for_step&) {
            outcome = std::nullopt;
        } catch (const tensor_unavailable&) {
            outcome = std::nullopt;
        } catch (const invalid_worker&) {
            outcome = std::nullopt;
        }
        if (outcome) {
            evaluated = true;
            if (outcome->met()) {
                return std::move(*outcome);
            }
        }
    }
    if (!evaluated) {
        throw tensor_unavailable_for_step(
            fmt::format("rule {}: none of its {} tensor(s) can be evaluated at step {}", rule_name, count, step), {},
            step, tdbg::mode::global);
    }
    return false;
}

} // namespace tdbg::rules::detail
