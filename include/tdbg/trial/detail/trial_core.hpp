#pragma once
/// \file
/// The state a trial and its tensors share, and the queries on it: the run's
/// collections and index (run_index, kept current by index_loader), the lookups
/// with smdebug's exceptions, and the fetching of values by byte range.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

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
    trial_core(any_storage storage, std::string name, step_range range, trial_options options)
        : storage_(std::move(storage)), root_(storage_.describe() + '/'), name_(std::move(name)), range_(range),
          options_(std::move(options)), cache_(make_cache_options(options_)) {
        range_.validate();
        collections_ = read_collections(storage_, root_, options_);
        index_.steps.set_num_workers(collections_.num_workers);
        refresh_now();
    }

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
    void maybe_refresh() {
        if (!refreshing()) {
            return;
        }
        refresh_now();
    }

    /// Reads every index file published since the last refresh (unless the
    /// run's end has already been seen and read).
    void refresh_now() { loader_.refresh(); }

    /// True once the end marker has been seen and everything before it read.
    [[nodiscard]] bool ended() const noexcept { return loader_.ended(); }

    // ---- trial-level queries (the caller refreshes first when it should) --

    template <class F>
    decltype(auto) with_steps(F&& f) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        return f(index_.steps);
    }

    [[nodiscard]] std::vector<std::string> workers() const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        std::set<std::string> all(collections_.workers.begin(), collections_.workers.end());
        all.insert(index_.worker_names.begin(), index_.worker_names.end());
        return {all.begin(), all.end()};
    }

    [[nodiscard]] std::size_t num_workers() const noexcept { return collections_.num_workers; }

    [[nodiscard]] bool has_tensor_now(std::string_view name) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        return index_.tensors.find(name) != index_.tensors.end();
    }

    /// The tensor's record; records are never removed, so the pointer lives as long as the core.
    [[nodiscard]] const tensor_record* find_tensor(std::string_view name) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        auto it = index_.tensors.find(name);
        return it == index_.tensors.end() ? nullptr : it->second.get();
    }

    /// Every tensor name, sorted.
    [[nodiscard]] std::vector<std::string> all_tensor_names() const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        std::vector<std::string> out;
        out.reserve(index_.tensors.size());
        for (const auto& item : index_.tensors) {
            out.push_back(item.first);
        }
        return out;
    }

    /// The names of tensors with an entry in `m` (any mode for global), or at
    /// `step` of `m` when given; sorted.
    [[nodiscard]] std::vector<std::string> tensor_names_for(std::optional<std::int64_t> step, mode m) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        std::vector<std::string> out;
        std::optional<std::int64_t> global;
        if (step) {
            global = index_.steps.global_step(m, *step);
            if (!global) {
                return out;
            }
        }
        for (const auto& [name, record] : index_.tensors) {
            if (global) {
                auto [first, last] = record->at_step(*global);
                bool match = false;
                for (auto* e = first; e != last && !match; ++e) {
                    match = m == mode::global || e->entry_mode() == m;
                }
                if (match) {
                    out.push_back(name);
                }
            } else if (record->has_mode(m)) {
                out.push_back(name);
            }
        }
        return out;
    }

    // ---- tensor-level queries --------------------------------------------

    /// The global step a (step, mode) query names, if known.
    [[nodiscard]] std::optional<std::int64_t> to_global(std::int64_t step, mode m) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        return index_.steps.global_step(m, step);
    }

    /// The steps of `record` in `m` (mode steps; global steps for global).
    [[nodiscard]] std::vector<std::int64_t> tensor_steps(const tensor_record& record, mode m, bool show_incomplete) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        std::vector<std::int64_t> out;
        std::int64_t last_global = -1;
        for (const tensor_entry& e : record.entries()) {
            if (e.step == last_global) {
                continue; // another worker of the same step
            }
            if (m != mode::global && e.entry_mode() != m) {
                continue;
            }
            if (!show_incomplete && !index_.steps.is_complete(e.step)) {
                continue;
            }
            last_global = e.step;
            out.push_back(m == mode::global ? e.step : e.mode_step);
        }
        if (m != mode::global) {
            std::sort(out.begin(), out.end());
            out.erase(std::unique(out.begin(), out.end()), out.end());
        }
        return out;
    }

    /// The entries of (`step`, `m`) for `record`, resolved, in worker order; empty when none.
    [[nodiscard]] std::vector<resolved_entry> entries_at(const tensor_record& record, std::int64_t step, mode m) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        std::vector<resolved_entry> out;
        const auto global = index_.steps.global_step(m, step);
        if (!global) {
            return out;
        }
        auto [first, last] = record.at_step(*global);
        for (auto* e = first; e != last; ++e) {
            if (m == mode::global || e->entry_mode() == m) {
                out.push_back(index_.resolve(record, *e));
            }
        }
        std::sort(out.begin(), out.end(),
                  [](const resolved_entry& a, const resolved_entry& b) { return *a.worker < *b.worker; });
        return out;
    }

    /// The record's totals, its modes, and its last entry with a value or a shape.
    struct record_summary {
        tensor_totals totals;
        std::vector<mode> modes;
        std::optional<resolved_entry> last;
    };

    [[nodiscard]] record_summary summarize(const tensor_record& record) const {
        std::shared_lock<std::shared_mutex> lock(index_.mutex);
        record_summary out;
        out.totals = record.totals();
        for (mode m : {mode::train, mode::eval, mode::predict, mode::global}) {
            if (record.has_mode_exactly(m)) {
                out.modes.push_back(m);
            }
        }
        const auto& entries = record.entries();
        for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
            if (it->has_value() || it->has_shape) {
                out.last = index_.resolve(record, *it);
                break;
            }
        }
        return out;
    }

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
    [[nodiscard]] resolved_entry locate(const tensor_record& record, std::int64_t step, mode m,
                                        const std::optional<std::string>& worker) {
        return locate_with(record, step, m, worker,
                           [this](const tensor_record& r, const tensor_entry& e) { return index_.resolve(r, e); });
    }

    /// The request for `where` (a location the index gave).
    [[nodiscard]] record_request request_for(const value_location& where) const { return index_.request_for(where); }

    /// Throws the exception smdebug raises for a step in `state` that is not available.
    [[noreturn]] void throw_missing_step(std::int64_t step, mode m, step_state state) const {
        const std::int64_t last = with_steps([&](const step_table& t) { return t.last_step(m); });
        if (state == step_state::unavailable && (!ended() || step < last)) {
            throw step_unavailable(
                fmt::format("{} is not available as it was not saved (trial {})", describe_step(step, m), name_), {}, step,
                m);
        }
        if (ended()) {
            throw no_more_data(fmt::format(
                                   "looking for {} and reached the end of training; the last step available is {} (trial {})",
                                   describe_step(step, m), last, name_),
                               step, m, last);
        }
        throw step_not_yet_available(fmt::format("{} is not yet available (trial {})", describe_step(step, m), name_), {},
                                     step, m);
    }

    /// The wall time of the first record of global step `step`'s event file, of the
    /// first worker (by name) that has one; nullopt when no worker does.
    [[nodiscard]] std::optional<double> wall_time(std::int64_t step) const {
        for (const std::string& worker : workers()) {
            const std::string key = format::event_file_key(step, format::worker_file_part(worker));
            std::string header;
            try {
                header = storage_.read_range(key, 0, format::record_header_size);
            } catch (const object_not_found&) {
                continue;
            }
            const std::uint64_t length = format::detail::checked_record_length(header.data(), key, 0);
            if (length > (std::uint64_t{1} << 30U)) {
                throw format_error(fmt::format("record length {} is not plausible", length), key, 0);
            }
            const std::string record = storage_.read_range(key, 0, format::record_overhead + length);
            const std::string_view payload = format::record_payload(record, key, 0);
            return format::decode_event(payload, key, format::record_header_size).wall_time;
        }
        return std::nullopt;
    }

    /// Reads and decodes the record `request` locates, checking it holds `tag`.
    /// With `hint`, the read is placed where the tensor's elements were last
    /// found (so that they are aligned and the value views them), and the hint is updated.
    [[nodiscard]] tensor_value fetch(record_request request, std::string_view tag,
                                     std::atomic<std::uint32_t>* hint = nullptr) {
        const std::string& file = request.file->key;
        if (hint != nullptr) {
            request.content_offset_hint = hint->load(std::memory_order_relaxed);
        }
        record_bytes bytes;
        // An event file the index lists but that cannot be read is a damaged run: an error,
        // never "not saved" (tensor_unavailable_for_step), which a rule would skip.
        try {
            bytes = cache_.fetch(storage_, request);
        } catch (const object_not_found&) {
            throw unreadable_event_file(
                fmt::format("{}{}: the event file that the index lists for tensor '{}' (its record at byte {}) does "
                            "not exist: the run is incomplete or damaged (trial {})",
                            root_, file, tag, request.offset, name_),
                root_ + file);
        } catch (const unreadable_event_file&) {
            throw;
        } catch (const storage_error& e) {
            throw unreadable_event_file(
                fmt::format("cannot read the record of tensor '{}' at byte {} of {}{}, which the index lists: {} "
                            "(trial {})",
                            tag, request.offset, root_, file, e.what(), name_),
                root_ + file);
        }
        const std::string_view payload = format::record_payload(bytes.bytes, file, request.offset);
        if (auto fast = format::detail::decode_tensor_fast(payload, bytes.owner)) {
            if (fast->tag == tag) {
                if (hint != nullptr) {
                    hint->store(static_cast<std::uint32_t>(format::record_header_size + fast->content_offset),
                                std::memory_order_relaxed);
                }
                return std::move(fast->value);
            }
        }
        // Everything else, and every error, through the format layer's full decoder.
        format::tensor_event ev =
            format::decode_tensor_event(payload, bytes.owner, file, request.offset + format::record_header_size);
        if (ev.tag != tag) {
            throw format_error(fmt::format("the index locates tensor '{}' here, but the record holds '{}'", tag, ev.tag),
                               file, request.offset);
        }
        return std::move(ev.value);
    }

private:
    static record_cache::options make_cache_options(const trial_options& o) {
        record_cache::options c;
        c.whole_file_limit = o.whole_file_limit;
        c.capacity = o.file_cache_bytes;
        return c;
    }

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
    run_collections collections_;
};

} // namespace tdbg::detail
