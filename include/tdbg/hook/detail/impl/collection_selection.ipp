#pragma once
/// \file
/// Definitions of tdbg/hook/detail/collection_selection.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/hook/detail/collection_selection.hpp"

namespace tdbg::detail {

TDBG_DECL save_config merge_save_config(const save_config& own, const save_config& defaults) {
    save_config out = own;
    for (const mode m : all_modes) {
        if (!out.get(m)) {
            out.set(m, defaults.get(m) ? defaults.get(m) : std::optional<save_config_mode>(save_config_mode{}));
        }
    }
    return out;
}

TDBG_DECL collection_selection::collection_selection(const hook_options& options)
    : default_save_(options.save_config),
      default_reductions_(options.reduction_config.value_or(reduction_config::raw_only())) {
    for (const auto& [name, regex] : builtin_collections()) {
        collection c{std::string(name)};
        if (!regex.empty()) {
            c.include(std::string(regex));
        }
        entries_.emplace_back(std::move(c));
    }
    include_.insert(std::string(collection_names::losses));
    for (const auto& name : options.include_collections) {
        include_.insert(name);
        asked_.insert(name);
    }
    if (!options.include_regex.empty()) {
        get(collection_names::default_collection).include(options.include_regex);
        include_.insert(std::string(collection_names::default_collection));
        asked_.insert(std::string(collection_names::default_collection));
    }
    if (options.save_all) {
        get(collection_names::all).include(".*");
        include_.insert(std::string(collection_names::all));
        asked_.insert(std::string(collection_names::all));
    }
    for (const collection& c : options.collections) {
        get(c.name()).merge(c);
        include_.insert(c.name());
        asked_.insert(c.name());
    }
}

TDBG_DECL collection& collection_selection::get(std::string_view name) {
    dirty_ = true;
    ++generation_;
    if (entry* e = find_entry(name)) {
        return e->coll;
    }
    entries_.emplace_back(collection(std::string(name)));
    return entries_.back().coll;
}

TDBG_DECL const collection* collection_selection::find(std::string_view name) const {
    for (const entry& e : entries_) {
        if (e.coll.name() == name) {
            return &e.coll;
        }
    }
    return nullptr;
}

TDBG_DECL void collection_selection::add(collection c) {
    include_.insert(c.name());
    asked_.insert(c.name());
    dirty_ = true;
    ++generation_;
    if (entry* e = find_entry(c.name())) {
        e->coll = std::move(c);
        e->matched.clear();
        return;
    }
    entries_.emplace_back(std::move(c));
}

TDBG_DECL std::vector<std::string> collection_selection::names() const {
    std::vector<std::string> out;
    for (const entry& e : entries_) {
        out.push_back(e.coll.name());
    }
    return out;
}

TDBG_DECL void collection_selection::add_explicit(std::string_view name,
                                                  std::initializer_list<std::string_view> collections) {
    for (const std::string_view c : collections) {
        entry* e = find_entry(c);
        if (e == nullptr) {
            entries_.emplace_back(collection(std::string(c)));
            e = &entries_.back();
            dirty_ = true;
            ++generation_;
        }
        if (include_.insert(std::string(c)).second) {
            dirty_ = true;
        }
        if (!e->coll.has_tensor_name(name)) {
            e->coll.add_tensor_name(std::string(name));
            if (const auto it = membership_.find(name); it != membership_.end()) {
                membership_.erase(it);
            }
            ++version_;
        }
    }
}

TDBG_DECL std::vector<std::size_t> collection_selection::active(std::string_view name, mode m, std::int64_t mode_step) {
    std::vector<std::size_t> out;
    active(name, m, mode_step, out);
    return out;
}

TDBG_DECL void collection_selection::active(std::string_view name, mode m, std::int64_t mode_step,
                                            std::vector<std::size_t>& out) {
    const std::vector<std::size_t>& members = membership(name);
    const std::vector<char>& saving = saving_at(m, mode_step);
    out.clear();
    for (const std::size_t i : members) {
        if (saving[i]) {
            out.push_back(i);
        }
    }
}

TDBG_DECL bool collection_selection::any_saves(mode m, std::int64_t mode_step) {
    const std::vector<char>& saving = saving_at(m, mode_step);
    return std::find(saving.begin(), saving.end(), char{1}) != saving.end();
}

TDBG_DECL format::collections_file collection_selection::to_file(int num_workers) {
    prepare();
    format::collections_file file;
    file.num_workers = num_workers;
    file.collections = std::vector<format::collection_spec>(entries_.size()); // no growth code to compile
    auto spec_of = file.collections.begin();
    for (const entry& e : entries_) {
        format::collection_spec& spec = *spec_of++;
        spec.name = e.coll.name();
        spec.include_regex = e.coll.include_regex();
        spec.exclude_regex = e.coll.exclude_regex();
        std::set<std::string> names = e.coll.tensor_names();
        names.insert(e.matched.begin(), e.matched.end());
        spec.tensor_names.assign(names.begin(), names.end());
        spec.reduction_config.save_raw_tensor = e.reductions.save_raw_tensor;
        spec.reduction_config.save_shape = e.reductions.save_shape;
        spec.reduction_config.reductions = e.reductions.all();
        spec.save_config = e.save;
        spec.save_histogram = e.histogram;
    }
    return file;
}

TDBG_DECL collection_selection::entry* collection_selection::find_entry(std::string_view name) {
    for (entry& e : entries_) {
        if (e.coll.name() == name) {
            return &e;
        }
    }
    return nullptr;
}

TDBG_DECL void collection_selection::prepare() {
    if (!dirty_) {
        return;
    }
    dirty_ = false;
    ++version_;
    for (entry& e : entries_) {
        const collection& c = e.coll;
        e.included = is_included(c.name());
        e.save = c.save_config() ? merge_save_config(*c.save_config(), default_save_) : default_save_;
        if (is_raw_only_collection(c.name())) {
            e.reductions = reduction_config::raw_only();
            e.histogram = false;
        } else {
            e.reductions = c.reduction_config() ? *c.reduction_config() : default_reductions_;
            e.histogram = c.save_histogram();
        }
    }
    membership_.clear();
    saving_key_.reset();
}

TDBG_DECL const std::vector<char>& collection_selection::saving_at(mode m, std::int64_t mode_step) {
    prepare();
    const std::pair<mode, std::int64_t> key{m, mode_step};
    if (saving_key_ == key && saving_.size() == entries_.size()) {
        return saving_;
    }
    saving_.assign(entries_.size(), 0);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const entry& e = entries_[i];
        if (!e.included || mode_step < 0) {
            continue;
        }
        if ((m == mode::eval || m == mode::predict) && is_training_only_collection(e.coll.name())) {
            continue;
        }
        saving_[i] = static_cast<char>(e.save.should_save(m, static_cast<std::uint64_t>(mode_step)));
    }
    saving_key_ = key;
    return saving_;
}

TDBG_DECL const std::vector<std::size_t>& collection_selection::membership(std::string_view name) {
    prepare();
    if (const auto it = membership_.find(name); it != membership_.end()) {
        return it->second;
    }
    const std::string key(name);
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        entry& e = entries_[i];
        if (!e.included) {
            continue;
        }
        if (e.coll.has_tensor_name(name)) {
            members.push_back(i);
        } else if (e.coll.matches_regex(name)) {
            members.push_back(i);
            if (e.matched.insert(key).second) {
                ++version_;
            }
        }
    }
    return membership_.emplace(key, std::move(members)).first->second;
}

} // namespace tdbg::detail
