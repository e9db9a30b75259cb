#pragma once
/// \file
/// The state a trial and its tensors share, and the queries on it: the run's
/// collections and index (run_index, kept current by index_loader), the lookups
/// with smdebug's exceptions, and the fetching of values by byte range.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/detail/fast_event.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/detail/index_loader.hpp"
#include "tdbg/trial/detail/record_cache.hpp"
#include "tdbg/trial/detail/run_index.hpp"
#include "tdbg/trial/detail/step_table.hpp"
#include "tdbg/trial/detail/tensor_table.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/unreadable_event_file.hpp"

namespace tdbg::detail {

/// The state shared by a trial and its tensor handles. Lookups take the index's
/// lock shared; a refresh (index_loader) reads and parses new index files without
/// it and merges them under it exclusively, so readers wait only for the merge.
class trial_core {
public:
    TDBG_DECL trial_core(any_storage storage, std::string name, step_range range, trial_options options);

    trial_core(const trial_core&) = delete;
    trial_core& operator=(const trial_core&) = delete;
    trial_core(trial_core&&) = delete;
    trial_core& operator=(trial_core&&) = delete;
    ~trial_core() = default;

    [[nodiscard]] const any_storage& storage() const noexcept { return storage_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const step_range& range() const noexcept { return range_; }
    [[nodiscard]] const trial_options& options() const noexcept { return options_; }
    [[nodiscard]] const format::collections_file& collections_file() const noexcept { return collections_.file; }
    [[nodiscard]] const std::map<std::string, format::collection_spec>& collections() const noexcept {
        return collections_.by_name;
    }

    /// The switch smdebug calls dynamic_refresh; shared with refresh guards.
    [[nodiscard]] const std::shared_ptr<std::atomic<bool>>& refresh_flag() const noexcept { return refresh_flag_; }
    /// How many refresh_pause objects hold refreshing off now.
    [[nodiscard]] const std::shared_ptr<std::atomic<int>>& refresh_pauses() const noexcept { return refresh_pauses_; }
    /// True when queries refresh: the flag is on and nothing pauses it.
    [[nodiscard]] bool refreshing() const noexcept {
        return refresh_flag_->load(std::memory_order_relaxed) && refresh_pauses_->load(std::memory_order_relaxed) == 0;
    }

    // ---- refreshing -------------------------------------------------------

    /// Reads new index files unless refresh is off or the run is over.
    TDBG_DECL void maybe_refresh();

    /// Reads every index file published since the last refresh (unless the
    /// run's end has already been seen and read).
    void refresh_now() { loader_.refresh(); }

    /// True once the end marker has been seen and everything before it read.
    [[nodiscard]] bool ended() const noexcept { return loader_.ended(); }

    /// The change of job (or the removal) a refresh found (index_loader::run_change).
    [[nodiscard]] std::optional<run_changed> run_change() const { return loader_.run_change(); }

    // ---- trial-level queries (the caller refreshes first when it should) --

    template <class F>
    decltype(auto) with_steps(F&& f) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        return f(index_.steps);
    }

    [[nodiscard]] TDBG_DECL std::vector<std::string> workers() const;

    /// The run's workers, or the number of those loaded (trial_options::workers).
    [[nodiscard]] std::size_t num_workers() const noexcept { return collections_.num_workers; }

    [[nodiscard]] TDBG_DECL bool has_tensor_now(std::string_view name) const;

    /// The tensor's record; records are never removed, so the pointer lives as long as the core.
    [[nodiscard]] TDBG_DECL const tensor_record* find_tensor(std::string_view name) const;

    /// Every tensor name, sorted.
    [[nodiscard]] TDBG_DECL std::vector<std::string> all_tensor_names() const;

    /// The names of tensors with an entry in `m` (any mode for global), or at
    /// `step` of `m` when given; sorted.
    [[nodiscard]] TDBG_DECL std::vector<std::string> tensor_names_for(std::optional<std::int64_t> step, mode m) const;

    // ---- tensor-level queries --------------------------------------------

    /// The global step a (step, mode) query names, if known.
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> to_global(std::int64_t step, mode m) const;

    /// The steps of `record` in `m` (mode steps; global steps for global), computed once per
    /// change of the index (a rule asks at every step: the answer is kept until a refresh).
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> tensor_steps(const tensor_record& record, mode m,
                                                                   bool show_incomplete) const;

    /// The entries of (`step`, `m`) for `record`, resolved, in worker order; empty when none.
    [[nodiscard]] TDBG_DECL std::vector<resolved_entry> entries_at(const tensor_record& record, std::int64_t step,
                                                                   mode m) const;

    /// The record's totals, its modes, and its last entry with a value or a shape.
    struct record_summary {
        tensor_totals totals;
        std::vector<mode> modes;
        std::optional<resolved_entry> last;
    };

    [[nodiscard]] TDBG_DECL record_summary summarize(const tensor_record& record) const;

    /// smdebug's Tensor._step for one purpose: finds the entry of (`step`, `m`,
    /// `worker`), refreshing once when it is not loaded yet, else throws the exception
    /// that says why not; `f(record, entry)` is called under the shared lock and copies
    /// out what the caller needs (a value's request: nothing else is built).
    template <class F>
    [[nodiscard]] auto locate_with(const tensor_record& record, std::int64_t step, mode m,
                                   const std::optional<std::string>& worker, F&& f) {
        using result = decltype(f(record, std::declval<const tensor_entry&>()));
        const auto found = [&]() -> std::optional<result> {
            std::shared_lock<std::shared_mutex> lock(index_.mutex);
            if (const tensor_entry* e = index_.choose_entry(record, step, m, worker, name_)) {
                return f(record, *e);
            }
            return std::nullopt;
        };
        if (auto first = found()) {
            return std::move(*first);
        }
        maybe_refresh();
        const step_state state = with_steps([&](const step_table& t) { return t.has_passed_step(step, m); });
        if (state == step_state::available) {
            if (auto second = found()) {
                return std::move(*second);
            }
            throw tensor_unavailable_for_step(fmt::format("tensor '{}' was not saved for {} (trial {})", record.name(),
                                                          describe_step(step, m), name_),
                                              record.name(), step, m);
        }
        throw_missing_step(step, m, state);
    }

    /// smdebug's Tensor._step: everything the index says of the entry of (`step`, `m`,
    /// `worker`), refreshing once when it is not loaded yet, else the exception that says why not.
    [[nodiscard]] TDBG_DECL resolved_entry locate(const tensor_record& record, std::int64_t step, mode m,
                                                  const std::optional<std::string>& worker);

    /// The request for `where` (a location the index gave).
    [[nodiscard]] record_request request_for(const value_location& where) const { return index_.request_for(where); }
    /// The request for the value of `e` (an entry of `record` that has one), the index's lock held.
    [[nodiscard]] record_request value_request(const tensor_record& record, const tensor_entry& e) const {
        return index_.request_for(index_.value_of(record, e));
    }
    /// The request for the stored reduction `loc` of `e`, the index's lock held.
    [[nodiscard]] record_request reduction_request(const tensor_entry& e, const reduction_location& loc) const {
        return index_.request_for(index_.where(e, loc));
    }

    /// Throws the exception smdebug raises for a step in `state` that is not available.
    [[noreturn]] TDBG_DECL void throw_missing_step(std::int64_t step, mode m, step_state state) const;

    /// The wall time of the first record of global step `step`'s event file, of the
    /// first worker (by name) that has one; nullopt when no worker does.
    [[nodiscard]] TDBG_DECL std::optional<double> wall_time(std::int64_t step) const;

    /// Reads and decodes the record `request` locates, checking it holds `tag`.
    /// With `hint`, the read is placed where the tensor's elements were last
    /// found (so that they are aligned and the value views them), and the hint is updated.
    [[nodiscard]] TDBG_DECL tensor_value fetch(record_request request, std::string_view tag,
                                               std::atomic<std::uint32_t>* hint = nullptr);

    /// The head of the record `request` locates (its dtype, shape, and where its elements
    /// lie; the tag checked, then left empty), from its first bytes alone: one read of at most
    /// head_read_bytes, whatever the value's size. nullopt when the record is not of the
    /// common form (decode_tensor_head), or is small enough to be read whole (the caller
    /// reads the value). Throws as fetch() does for a record it cannot read.
    [[nodiscard]] TDBG_DECL std::optional<format::detail::tensor_head> fetch_head(const record_request& request,
                                                                                  std::string_view tag);

    /// Reads the value of the record `request` locates in pieces of at most
    /// `piece_elements` elements (1-d views, in order, each valid during its call of
    /// `each`), reading at most max(piece, piece_read_bytes) bytes at a time, and checks the
    /// record's CRC as the bytes go past (a mismatch throws format_error, after the pieces
    /// were seen). Returns the head; nullopt (nothing read, `each` not called) when the
    /// record is not of the common form: the caller reads the value whole.
    TDBG_DECL std::optional<format::detail::tensor_head> scan(const record_request& request, std::string_view tag,
                                                              std::size_t piece_elements,
                                                              const std::function<void(const tensor_value&)>& each);

    /// Records up to this size are read whole for their head (fetch_head).
    static constexpr std::uint64_t head_read_bytes = std::uint64_t{64} << 10U;
    /// What scan() reads at a time.
    static constexpr std::uint64_t piece_read_bytes = std::uint64_t{8} << 20U;

private:
    static TDBG_DECL record_cache::options make_cache_options(const trial_options& o);

    // tensor_steps computed from the index (the caller holds its lock, shared).
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> compute_tensor_steps(const tensor_record& record, mode m,
                                                                           bool show_incomplete) const;

    // options_.workers: checked against the run's collection files, which then count those only.
    TDBG_DECL void select_workers();

    /// `length` bytes at `offset` of the event file of `request`, read directly (not kept),
    /// with fetch()'s errors for a file that is gone or cannot be read.
    [[nodiscard]] TDBG_DECL std::string read_raw(const record_request& request, std::string_view tag,
                                                 std::uint64_t offset, std::uint64_t length) const;

    any_storage storage_;
    std::string root_; // storage_.describe() and a slash: messages name a key as root_ + key
    std::string name_;
    step_range range_;
    trial_options options_;
    record_cache cache_;
    std::shared_ptr<std::atomic<bool>> refresh_flag_ = std::make_shared<std::atomic<bool>>(true);
    std::shared_ptr<std::atomic<int>> refresh_pauses_ = std::make_shared<std::atomic<int>>(0);

    run_index index_;
    index_loader loader_{storage_, root_, range_, options_, index_};

    // tensor_steps' answers of the index's generation, a few at a time (those a rule asks for
    // again at every step): cleared when full, so that a listing of every tensor keeps none long.
    struct steps_query {
        const tensor_record* record;
        mode m;
        bool show_incomplete;
        bool operator<(const steps_query& o) const noexcept {
            return std::tie(record, m, show_incomplete) < std::tie(o.record, o.m, o.show_incomplete);
        }
    };
    struct kept_steps {
        std::uint64_t generation = 0;
        std::shared_ptr<const std::vector<std::int64_t>> steps;
    };
    static constexpr std::size_t max_kept_steps = 64;
    mutable std::mutex steps_mutex_; // guards kept_steps_
    mutable std::map<steps_query, kept_steps> kept_steps_;
    run_collections collections_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/trial_core.ipp"
#endif
