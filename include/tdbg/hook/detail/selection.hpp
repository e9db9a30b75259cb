#pragma once
/// \file
/// The hook's collections and the answer to "which of them save this tensor
/// now?": smdebug's _prepare_collections (each collection's effective save
/// and reduction configs), _get_collections_with_tensor (membership, cached
/// per name) and _get_collections_to_save_for_step (cached per step).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/save_config.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/reduction_config.hpp"

namespace tdbg::detail {

/// smdebug's merge_default_save_config: a mode without a schedule takes the
/// default's, or smdebug's SaveConfigMode() when the default has none either.
inline save_config merge_save_config(const save_config& own, const save_config& defaults) {
    save_config out = own;
    for (const mode m : all_modes) {
        if (!out.get(m)) {
            out.set(m, defaults.get(m) ? defaults.get(m) : std::optional<save_config_mode>(save_config_mode{}));
        }
    }
    return out;
}

/// See the file comment.
class collection_selection {
public:
    /// A collection and what the hook made of it.
    struct entry {
        explicit entry(collection c) : coll(std::move(c)) {}
        collection coll;
        /// Names the hook matched by regex (exported with the explicit ones).
        std::set<std::string> matched;
        // Effective configuration, set by prepare().
        save_config save;
        reduction_config reductions;
        bool histogram = true;
        bool included = false;
    };

    /// The built-in collections, and those `options` adds and includes.
    explicit collection_selection(const hook_options& options)
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

    /// The collection `name`, created (not included) when missing. A change takes effect at the next save.
    collection& get(std::string_view name) {
        dirty_ = true;
        ++generation_;
        if (entry* e = find_entry(name)) {
            return e->coll;
        }
        entries_.emplace_back(collection(std::string(name)));
        return entries_.back().coll;
    }

    /// The collection `name`, or nullptr.
    [[nodiscard]] const collection* find(std::string_view name) const {
        for (const entry& e : entries_) {
            if (e.coll.name() == name) {
                return &e.coll;
            }
        }
        return nullptr;
    }

    /// Adds `c`, replacing a collection of the same name, and includes it.
    void add(collection c) {
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

    /// Every collection's name, in creation order.
    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const entry& e : entries_) {
            out.push_back(e.coll.name());
        }
        return out;
    }

    /// True when collection `name` is saved (included, or "all" is).
    [[nodiscard]] bool is_included(std::string_view name) const {
        return include_.count(std::string(collection_names::all)) != 0 || include_.count(std::string(name)) != 0;
    }

    /// The collections the hook's options (include_collections, include_regex, save_all,
    /// collections) and add() asked to save, by name; "losses", saved always, only when asked.
    [[nodiscard]] const std::set<std::string>& asked() const noexcept { return asked_; }

    /// Changes whenever a collection may have changed or was created (get, add, add_explicit).
    [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }

    /// Adds `name` to each of `collections`, creating the missing ones, and saves them
    /// (smdebug's save_tensor writes to the collections it is given, saved or not).
    void add_explicit(std::string_view name, std::initializer_list<std::string_view> collections) {
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
                membership_.erase(std::string(name));
                ++version_;
            }
        }
    }

    /// The indices of the saved collections `name` belongs to that save at mode step
    /// `mode_step` of `m` (none before the mode's first step).
    [[nodiscard]] std::vector<std::size_t> active(std::string_view name, mode m, std::int64_t mode_step) {
        const std::vector<std::size_t>& members = membership(name);
        const std::vector<bool>& saving = saving_at(m, mode_step);
        std::vector<std::size_t> out;
        for (const std::size_t i : members) {
            if (saving[i]) {
                out.push_back(i);
            }
        }
        return out;
    }

    /// True when some saved collection saves at mode step `mode_step` of `m`.
    [[nodiscard]] bool any_saves(mode m, std::int64_t mode_step) {
        const std::vector<bool>& saving = saving_at(m, mode_step);
        for (const bool b : saving) {
            if (b) {
                return true;
            }
        }
        return false;
    }

    /// The collection at index `i` of active(), with its effective configuration.
    [[nodiscard]] const entry& at(std::size_t i) const { return entries_[i]; }

    /// Changes whenever the collections file would change (a name matched or added).
    [[nodiscard]] std::uint64_t version() {
        prepare();
        return version_;
    }

    /// The collections file of a run of `num_workers` workers (smdebug's export_collections).
    [[nodiscard]] format::collections_file to_file(int num_workers) {
        prepare();
        format::collections_file file;
        file.num_workers = num_workers;
        for (const entry& e : entries_) {
            format::collection_spec spec;
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
            file.collections.push_back(std::move(spec));
        }
        return file;
    }

private:
    entry* find_entry(std::string_view name) {
        for (entry& e : entries_) {
            if (e.coll.name() == name) {
                return &e;
            }
        }
        return nullptr;
    }

    // smdebug's _prepare_collections: the effective save and reduction configs.
    void prepare() {
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

    // Which collections save at mode step `mode_step` of `m`, by index; computed once per step.
    const std::vector<bool>& saving_at(mode m, std::int64_t mode_step) {
        prepare();
        const std::pair<mode, std::int64_t> key{m, mode_step};
        if (saving_key_ == key && saving_.size() == entries_.size()) {
            return saving_;
        }
        saving_.assign(entries_.size(), false);
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            const entry& e = entries_[i];
            if (!e.included || mode_step < 0) {
                continue;
            }
            if ((m == mode::eval || m == mode::predict) && is_training_only_collection(e.coll.name())) {
                continue;
            }
            saving_[i] = e.save.should_save(m, static_cast<std::uint64_t>(mode_step));
        }
        saving_key_ = key;
        return saving_;
    }

    // The saved collections `name` belongs to (smdebug's _get_collections_with_tensor), cached.
    const std::vector<std::size_t>& membership(std::string_view name) {
        prepare();
        const std::string key(name);
        if (const auto it = membership_.find(key); it != membership_.end()) {
            return it->second;
        }
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

    save_config default_save_;
    reduction_config default_reductions_;
    std::deque<entry> entries_; // a deque: references to collections stay valid as more are added
    std::set<std::string> include_;
    std::set<std::string> asked_;
    bool dirty_ = true;
    std::uint64_t generation_ = 0;
    std::uint64_t version_ = 0;
    std::unordered_map<std::string, std::vector<std::size_t>> membership_;
    std::optional<std::pair<mode, std::int64_t>> saving_key_;
    std::vector<bool> saving_;
};

} // namespace tdbg::detail
