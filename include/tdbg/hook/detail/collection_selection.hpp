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
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/save_config.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/reduction_config.hpp"

namespace tdbg::detail {

/// smdebug's merge_default_save_config: a mode without a schedule takes the
/// default's, or smdebug's SaveConfigMode() when the default has none either.
TDBG_DECL save_config merge_save_config(const save_config& own, const save_config& defaults);

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
    TDBG_DECL explicit collection_selection(const hook_options& options);

    /// The collection `name`, created (not included) when missing. A change takes effect at the next save.
    TDBG_DECL collection& get(std::string_view name);

    /// The collection `name`, or nullptr.
    [[nodiscard]] TDBG_DECL const collection* find(std::string_view name) const;

    /// Adds `c`, replacing a collection of the same name, and includes it.
    TDBG_DECL void add(collection c);

    /// Every collection's name, in creation order.
    [[nodiscard]] TDBG_DECL std::vector<std::string> names() const;

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
    TDBG_DECL void add_explicit(std::string_view name, std::initializer_list<std::string_view> collections);

    /// The indices of the saved collections `name` belongs to that save at mode step
    /// `mode_step` of `m` (none before the mode's first step).
    [[nodiscard]] TDBG_DECL std::vector<std::size_t> active(std::string_view name, mode m, std::int64_t mode_step);
    /// active() into `out`, whose memory is reused.
    TDBG_DECL void active(std::string_view name, mode m, std::int64_t mode_step, std::vector<std::size_t>& out);

    /// True when some saved collection saves at mode step `mode_step` of `m`.
    [[nodiscard]] TDBG_DECL bool any_saves(mode m, std::int64_t mode_step);

    /// The collection at index `i` of active(), with its effective configuration.
    [[nodiscard]] const entry& at(std::size_t i) const { return entries_[i]; }

    /// Changes whenever the collections file would change (a name matched or added).
    [[nodiscard]] std::uint64_t version() {
        prepare();
        return version_;
    }

    /// The collections file of a run of `num_workers` workers (smdebug's export_collections).
    [[nodiscard]] TDBG_DECL format::collections_file to_file(int num_workers);

private:
    TDBG_DECL entry* find_entry(std::string_view name);

    // smdebug's _prepare_collections: the effective save and reduction configs.
    TDBG_DECL void prepare();

    // Which collections save at mode step `mode_step` of `m` (non-zero), by index; computed once
    // per step. Bytes, not vector<bool>: its insert code is compiled into every hook file.
    TDBG_DECL const std::vector<char>& saving_at(mode m, std::int64_t mode_step);

    // The saved collections `name` belongs to (smdebug's _get_collections_with_tensor), cached.
    TDBG_DECL const std::vector<std::size_t>& membership(std::string_view name);

    save_config default_save_;
    reduction_config default_reductions_;
    std::deque<entry> entries_; // a deque: references to collections stay valid as more are added
    std::set<std::string> include_;
    std::set<std::string> asked_;
    bool dirty_ = true;
    std::uint64_t generation_ = 0;
    std::uint64_t version_ = 0;
    std::map<std::string, std::vector<std::size_t>, std::less<>> membership_; // found without a string made
    std::optional<std::pair<mode, std::int64_t>> saving_key_;
    std::vector<char> saving_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/collection_selection.ipp"
#endif
