#pragma once
/// \file
/// Definitions of tdbg/rules/detail/selection.hpp.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/rules/detail/selection.hpp"

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

TDBG_DECL tensor_selection selection_from(const rule_params& params, bool all_when_empty,
                                          const std::vector<std::string>& default_regexes) {
    auto collections = params.get_optional<std::vector<std::string>>("collection_names");
    auto regexes = params.get_optional<std::vector<std::string>>("tensor_regex");
    std::vector<std::string> r = regexes ? *regexes : default_regexes;
    return tensor_selection(collections.value_or(std::vector<std::string>{}), std::move(r), all_when_empty);
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

TDBG_DECL void throw_none_evaluated(std::size_t count, std::int64_t step, const std::string& rule_name) {
    throw tensor_unavailable_for_step(
        fmt::format("rule {}: none of its {} tensor(s) can be evaluated at step {}", rule_name, count, step), {}, step,
        tdbg::mode::global);
}

} // namespace tdbg::rules::detail
