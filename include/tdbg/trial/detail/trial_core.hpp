#pragma once
/// \file
/// The state a trial and its tensors share: what the index files said so far,
/// the incremental refresh that reads only new index files, the lookups with
/// smdebug's exceptions, and the fetching of values by byte range.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/format/detail/index_parser.hpp"
#include "tdbg/core/detail/thread_pool.hpp"
#include "tdbg/trial/detail/record_cache.hpp"
#include "tdbg/trial/detail/step_table.hpp"
#include "tdbg/format/detail/fast_event.hpp"
#include "tdbg/trial/detail/tensor_table.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/unreadable_event_file.hpp"

namespace tdbg::detail {

/// "step 3 of mode TRAIN", for messages.
inline std::string describe_step(std::int64_t step, mode m) {
    return fmt::format("step {} of mode {}", step, mode_name(m));
}

/// A tensor entry found for a query, copied out of the shared state with
/// everything needed to read it without the lock (the pointers stay valid:
/// workers and event files are never removed or moved).
struct resolved_entry {
    std::int64_t step = 0;
    mode entry_mode = mode::global;
    std::int64_t mode_step = 0;
    const std::string* worker = nullptr;
    std::optional<record_request> value;
    std::vector<std::pair<reduction, record_request>> reductions;
    std::optional<std::vector<std::int64_t>> shape;
};

/// The prefix under which index files live.
inline constexpr std::string_view index_prefix = "index/";

/// trial_options::collection_wait, counted from construction: whether it is over,
/// and one pause between two looks (with trial_options::pause when given).
class opening_wait {
public:
    explicit opening_wait(const trial_options& options) : options_(options) {}

    [[nodiscard]] bool forever() const noexcept { return options_.collection_wait == trial_options::wait_forever; }
    [[nodiscard]] std::chrono::milliseconds waited() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
    }
    /// The time left to wait (0 when it is over; meaningless when forever()).
    [[nodiscard]] std::chrono::milliseconds left() const {
        return std::max(std::chrono::milliseconds(0), options_.collection_wait - waited());
    }
    [[nodiscard]] bool over() const { return !forever() && left().count() == 0; }
    void pause() const {
        auto t = std::min(options_.poll_interval, std::chrono::milliseconds(500));
        if (!forever()) {
            t = std::max(std::chrono::milliseconds(1), std::min(t, left()));
        }
        if (options_.pause) {
            options_.pause(t);
        } else {
            std::this_thread::sleep_for(t);
        }
    }

private:
    const trial_options& options_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

/// The state shared by a trial and its tensor handles. Lookups take a shared
/// lock; a refresh reads and parses new index files without it and merges
/// them under an exclusive lock, so readers wait only for the merge.
class trial_core {
public:
    trial_core(any_storage storage, std::string name, step_range range, trial_options options)
        : storage_(std::move(storage)), root_(storage_.describe() + '/'), name_(std::move(name)), range_(range),
          options_(std::move(options)), cache_(make_cache_options(options_)) {
        range_.validate();
        load_collections();
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
    [[nodiscard]] const format::collections_file& collections_file() const noexcept { return collections_; }
    [[nodiscard]] const std::map<std::string, format::collection_spec>& collections() const noexcept {
        return collection_map_;
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
    void refresh_now() {
        std::lock_guard<std::mutex> serial(refresh_mutex_);
        if (ended_.load(std::memory_order_acquire)) {
            return;
        }
        // The end marker is published after every other file: seen before
        // listing, it guarantees the listing below is the last one needed.
        const bool ended_before = storage_.exists(std::string(format::end_marker_key));
        if (ended_before && options_.training_end_delay_refresh.count() > 0 && !end_delay_done_) {
            // smdebug's TRAINING_END_DELAY_REFRESH: one more look, after a pause, for listings that lag.
            end_delay_done_ = true;
            std::this_thread::sleep_for(options_.training_end_delay_refresh);
        }
        std::vector<std::string> listed;
        std::vector<pending_index> pending = list_new_index_files(listed);
        std::vector<loaded_index> parsed(pending.size());
        // Everything is parsed before anything is merged: a corrupt file leaves the state as it was.
        // Where a request costs CPU (local files), parsing dominates: a thread per 64 files,
        // as many as the cores. Where it costs a round trip (S3), many are kept in flight: a
        // thread per 2 files, as many as the storage takes.
        const std::size_t requests = storage_.request_concurrency();
        const std::size_t threads = options_.threads != 0 ? options_.threads : requests > 1 ? requests : 0;
        parallel_blocks(pending.size(), threads, requests > 1 ? 2 : 64, [&](std::size_t first, std::size_t last) {
            for (std::size_t i = first; i < last; ++i) {
                read_index_file(pending[i].key, parsed[i]);
            }
        });
        std::unique_lock<std::shared_mutex> lock(state_mutex_);
        std::vector<tensor_record*> hints; // the previous file's records, by position
        for (std::size_t i = 0; i < pending.size(); ++i) {
            merge(pending[i], parsed[i].view, hints);
        }
        read_keys_.insert(std::make_move_iterator(listed.begin()), std::make_move_iterator(listed.end()));
        steps_.apply_wait_window(options_.incomplete_step_wait_window);
        if (ended_before) {
            steps_.mark_ended();
            ended_.store(true, std::memory_order_release);
        }
        // A directory listing that runs while files are renamed into place can
        // return a later index file and miss an earlier one (readdir does not see
        // entries inserted behind its position). Each worker publishes its index
        // files in step order, so a step complete in the previous listing had all
        // its predecessors published before this listing began: only such steps
        // are settled, both for listing past them and for declaring a missing
        // step passed (step_table::confirm).
        steps_.confirm(settled_step_);
        advance_token(settled_step_);
        settled_step_ = steps_.last_complete_step();
    }

    /// True once the end marker has been seen and everything before it read.
    [[nodiscard]] bool ended() const noexcept { return ended_.load(std::memory_order_acquire); }

    // ---- trial-level queries (the caller refreshes first when it should) --

    template <class F>
    decltype(auto) with_steps(F&& f) const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        return f(steps_);
    }

    [[nodiscard]] std::vector<std::string> workers() const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        std::set<std::string> all(collection_workers_.begin(), collection_workers_.end());
        all.insert(worker_names_.begin(), worker_names_.end());
        return {all.begin(), all.end()};
    }

    [[nodiscard]] std::size_t num_workers() const noexcept { return num_workers_; }

    [[nodiscard]] bool has_tensor_now(std::string_view name) const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        return tensors_.find(name) != tensors_.end();
    }

    /// The tensor's record; records are never removed, so the pointer lives as long as the core.
    [[nodiscard]] const tensor_record* find_tensor(std::string_view name) const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        auto it = tensors_.find(name);
        return it == tensors_.end() ? nullptr : it->second.get();
    }

    /// Every tensor name, sorted.
    [[nodiscard]] std::vector<std::string> all_tensor_names() const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        std::vector<std::string> out;
        out.reserve(tensors_.size());
        for (const auto& item : tensors_) {
            out.push_back(item.first);
        }
        return out;
    }

    /// The names of tensors with an entry in `m` (any mode for global), or at
    /// `step` of `m` when given; sorted.
    [[nodiscard]] std::vector<std::string> tensor_names_for(std::optional<std::int64_t> step, mode m) const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        std::vector<std::string> out;
        std::optional<std::int64_t> global;
        if (step) {
            global = steps_.global_step(m, *step);
            if (!global) {
                return out;
            }
        }
        for (const auto& [name, record] : tensors_) {
            if (global) {
                auto [first, last] = record->at_step(*global);
                bool match = false;
                for (auto* e = first; e != last && !match; ++e) {
                    match = m == mode::global || e->entry_mode == m;
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
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        return steps_.global_step(m, step);
    }

    /// The steps of `record` in `m` (mode steps; global steps for global).
    [[nodiscard]] std::vector<std::int64_t> tensor_steps(const tensor_record& record, mode m, bool show_incomplete) const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        std::vector<std::int64_t> out;
        std::int64_t last_global = -1;
        for (const tensor_entry& e : record.entries()) {
            if (e.step == last_global) {
                continue; // another worker of the same step
            }
            if (m != mode::global && e.entry_mode != m) {
                continue;
            }
            if (!show_incomplete && !steps_.is_complete(e.step)) {
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
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        std::vector<resolved_entry> out;
        const auto global = steps_.global_step(m, step);
        if (!global) {
            return out;
        }
        auto [first, last] = record.at_step(*global);
        for (auto* e = first; e != last; ++e) {
            if (m == mode::global || e->entry_mode == m) {
                out.push_back(resolve(*e));
            }
        }
        std::sort(out.begin(), out.end(),
                  [](const resolved_entry& a, const resolved_entry& b) { return *a.worker < *b.worker; });
        return out;
    }

    /// smdebug's Tensor._step: the entry of (`step`, `m`, `worker`), refreshing
    /// once when it is not loaded yet, else the exception that says why not.
    [[nodiscard]] resolved_entry locate(const tensor_record& record, std::int64_t step, mode m,
                                        const std::optional<std::string>& worker) {
        if (auto found = find_entry(record, step, m, worker)) {
            return std::move(*found);
        }
        maybe_refresh();
        const step_state state = with_steps([&](const step_table& t) { return t.has_passed_step(step, m); });
        if (state == step_state::available) {
            if (auto found = find_entry(record, step, m, worker)) {
                return std::move(*found);
            }
            throw tensor_unavailable_for_step(fmt::format("tensor '{}' was not saved for {} (trial {})", record.name(),
                                                          describe_step(step, m), name_),
                                              record.name(), step, m);
        }
        throw_missing_step(step, m, state);
    }

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
    struct pending_index {
        std::string key;
        std::int64_t step = 0;
        std::string worker;
    };

    static record_cache::options make_cache_options(const trial_options& o) {
        record_cache::options c;
        c.whole_file_limit = o.whole_file_limit;
        c.capacity = o.file_cache_bytes;
        return c;
    }

    [[nodiscard]] resolved_entry resolve(const tensor_entry& e) const {
        resolved_entry r;
        r.step = e.step;
        r.entry_mode = e.entry_mode;
        r.mode_step = e.mode_step;
        r.worker = &worker_names_[e.worker];
        if (e.has_value()) {
            r.value = request_for(e.value());
        }
        if (e.extra) {
            for (const auto& [which, where] : e.extra->reductions) {
                r.reductions.emplace_back(which, request_for(where));
            }
            r.shape = e.extra->shape;
        }
        return r;
    }

    [[nodiscard]] record_request request_for(const value_location& where) const {
        return record_request{&files_[where.file], where.file, where.offset, where.length};
    }

    // The entry of (`step`, `m`) written by `worker` (default: the first worker
    // in sorted order, as smdebug); nullopt when there is none; invalid_worker
    // when others wrote it but not `worker`.
    [[nodiscard]] std::optional<resolved_entry> find_entry(const tensor_record& record, std::int64_t step, mode m,
                                                           const std::optional<std::string>& worker) const {
        std::shared_lock<std::shared_mutex> lock(state_mutex_);
        const auto global = steps_.global_step(m, step);
        if (!global) {
            return std::nullopt;
        }
        auto [first, last] = record.at_step(*global);
        const tensor_entry* chosen = nullptr;
        for (auto* e = first; e != last; ++e) {
            if (m != mode::global && e->entry_mode != m) {
                continue;
            }
            const std::string& name = worker_names_[e->worker];
            if (worker ? name == *worker : (chosen == nullptr || name < worker_names_[chosen->worker])) {
                chosen = e;
            }
        }
        if (chosen != nullptr) {
            return resolve(*chosen);
        }
        if (worker && first != last) {
            std::vector<std::string> have;
            for (auto* e = first; e != last; ++e) {
                if (m == mode::global || e->entry_mode == m) {
                    have.push_back(worker_names_[e->worker]);
                }
            }
            if (!have.empty()) {
                std::sort(have.begin(), have.end());
                std::string list;
                for (const auto& h : have) {
                    list += fmt::format("{}{}", list.empty() ? "" : ", ", h);
                }
                throw invalid_worker(fmt::format("invalid worker '{}': tensor '{}' at {} was written by {} (trial {})",
                                                 *worker, record.name(), describe_step(step, m), list, name_),
                                     *worker);
            }
        }
        return std::nullopt;
    }

    // smdebug's _load_collections: waits (up to collection_wait) for the first collection
    // file, reads the first worker's (by name), then waits for those of all num_workers
    // workers, whose names it takes from the files' names.
    void load_collections() {
        const std::string prefix = "collections/";
        const opening_wait wait(options_);
        std::vector<std::pair<std::string, std::string>> files; // key, worker
        std::string first;
        for (;;) {
            files.clear();
            for (const std::string& key : storage_.list(prefix, {})) {
                if (auto worker = format::parse_collections_file_key(key)) {
                    files.emplace_back(key, std::move(*worker));
                }
            }
            if (!files.empty() && files.front().first != first) {
                first = files.front().first;
                collections_ = format::parse_collections_file(storage_.read(first), root_ + first);
                num_workers_ = collections_.num_workers <= 0 ? 1 : static_cast<std::size_t>(collections_.num_workers);
            }
            if ((!files.empty() && files.size() >= num_workers_) ||
                storage_.exists(std::string(format::end_marker_key)) || wait.over()) {
                break;
            }
            wait.pause();
        }
        if (files.empty()) {
            throw missing_collection_files(fmt::format(
                "no collection files under {}collections: not a run written by smdebug or tdbg, or not started yet",
                root_));
        }
        steps_.set_num_workers(num_workers_);
        for (const auto& c : collections_.collections) {
            collection_map_[c.name] = c;
        }
        for (auto& item : files) {
            collection_workers_.push_back(std::move(item.second));
        }
    }

    // The index files not read yet (in range), and in `listed` every new key seen.
    [[nodiscard]] std::vector<pending_index> list_new_index_files(std::vector<std::string>& listed) const {
        std::vector<pending_index> out;
        for (std::string& key : storage_.list(std::string(index_prefix), token_)) {
            if (key.size() < 5 || key.compare(key.size() - 5, 5, ".json") != 0) {
                continue; // smdebug also skips what is not an index file (".csv" is a legacy format)
            }
            if (read_keys_.count(key) != 0) {
                continue;
            }
            auto info = format::parse_index_file_key(key);
            if (!info) {
                throw index_reader_error(
                    fmt::format("invalid index file name {}{} (expected index/<9 digits>/<12-digit step>_<worker>.json)",
                                root_, key));
            }
            if (range_.contains(info->step)) {
                out.push_back(pending_index{key, info->step, std::move(info->worker)});
            }
            listed.push_back(std::move(key));
        }
        return out;
    }

    // An index file's text, and the view the merge reads.
    struct loaded_index {
        std::string text;
        format::detail::decoded_strings decoded; // its strings that had escapes
        format::detail::index_view view;
    };

    void read_index_file(const std::string& key, loaded_index& out) const {
        out.text = storage_.read(key);
        try {
            format::detail::parse_index_view(out.text, root_ + key, out.view, out.decoded);
        } catch (const format_error& e) {
            throw index_reader_error(fmt::format("empty or corrupt index file: {}", e.what()));
        }
        for (const format::detail::location_view& loc : out.view.tensors) {
            if (loc.length == 0 || loc.name.empty()) {
                throw index_reader_error(
                    fmt::format("index file {}{}: an entry of tensor '{}' with an empty name or a record of length 0",
                                root_, key, loc.name));
            }
        }
    }

    worker_id intern_worker(const std::string& worker) {
        auto it = worker_ids_.find(worker);
        if (it != worker_ids_.end()) {
            return it->second;
        }
        const auto id = static_cast<worker_id>(worker_names_.size());
        worker_names_.push_back(worker);
        worker_ids_.emplace(worker, id);
        return id;
    }

    std::uint32_t intern_file(std::string_view key) {
        // Keyed by views of the deque's strings, which never move.
        if (auto it = file_ids_.find(key); it != file_ids_.end()) {
            return it->second;
        }
        const auto id = static_cast<std::uint32_t>(files_.size());
        const event_file& f = files_.emplace_back(std::string(key));
        file_ids_.emplace(std::string_view(f.key), id);
        return id;
    }

    tensor_record& record_for(std::string_view name) {
        auto it = tensors_.find(name);
        if (it == tensors_.end()) {
            it = tensors_.emplace(std::string(name), std::make_unique<tensor_record>(std::string(name))).first;
        }
        return *it->second;
    }

    // The record of the `position`-th entry named `name`: index files of one run
    // list their tensors in the same order, so the previous file's record at
    // that position is nearly always the one (one comparison, no lookup).
    tensor_record& record_at(std::string_view name, std::size_t position, std::vector<tensor_record*>& hints) {
        if (position < hints.size() && hints[position]->name() == name) {
            return *hints[position];
        }
        tensor_record& r = record_for(name);
        if (position >= hints.size()) {
            hints.resize(position + 1, &r);
        }
        hints[position] = &r;
        return r;
    }

    // smdebug's _add_tensor, for every entry of one index file.
    void merge(const pending_index& where, const format::detail::index_view& index, std::vector<tensor_record*>& hints) {
        if (index.tensors.empty() && index.shapes.empty()) {
            return; // smdebug records a step only through its tensors
        }
        const worker_id worker = intern_worker(where.worker);
        std::uint32_t file = 0;
        if (!index.tensors.empty()) {
            file = intern_file(index.event_file_name);
            event_file& f = files_[file];
            std::uint64_t extent = f.extent.load(std::memory_order_relaxed);
            for (const format::detail::location_view& loc : index.tensors) {
                extent = std::max(extent, loc.start + loc.length);
            }
            f.extent.store(extent, std::memory_order_relaxed);
            f.records.fetch_add(static_cast<std::uint32_t>(index.tensors.size()), std::memory_order_relaxed);
        }
        std::size_t position = 0;
        for (const format::detail::location_view& loc : index.tensors) {
            const value_location at{file, loc.start, loc.length};
            if (loc.name.substr(0, format::reduction_prefix.size()) == format::reduction_prefix) {
                if (auto reduced = format::parse_reduction_tensor_name(loc.name)) {
                    tensor_entry& e = record_for(reduced->second).at(where.step, worker, index.index_mode, index.mode_step);
                    bool replaced = false;
                    auto& reductions = e.more().reductions;
                    for (auto& item : reductions) {
                        if (item.first == reduced->first) {
                            item.second = at;
                            replaced = true;
                        }
                    }
                    if (!replaced) {
                        reductions.emplace_back(reduced->first, at);
                    }
                    continue;
                }
            }
            record_at(loc.name, position++, hints).at(where.step, worker, index.index_mode, index.mode_step).set_value(at);
        }
        // smdebug's reader lets a shape entry replace the value entry of the same
        // tensor; tdbg keeps both, so a value saved with its shape stays readable.
        for (const format::detail::shape_view& sh : index.shapes) {
            record_for(sh.name).at(where.step, worker, index.index_mode, index.mode_step).more().shape = sh.shape;
        }
        steps_.add(where.step, index.index_mode, index.mode_step, worker);
    }

    // Keys at or before a settled step will not change: list after them next time.
    void advance_token(std::int64_t settled) {
        auto it = read_keys_.begin();
        while (it != read_keys_.end()) {
            auto info = format::parse_index_file_key(*it);
            if (!info || info->step > settled) {
                break;
            }
            token_ = *it;
            it = read_keys_.erase(it);
        }
    }

    any_storage storage_;
    std::string root_; // storage_.describe() and a slash: messages name a key as root_ + key
    std::string name_;
    step_range range_;
    trial_options options_;
    record_cache cache_;
    std::shared_ptr<std::atomic<bool>> refresh_flag_ = std::make_shared<std::atomic<bool>>(true);
    std::shared_ptr<std::atomic<int>> refresh_pauses_ = std::make_shared<std::atomic<int>>(0);

    format::collections_file collections_;
    std::map<std::string, format::collection_spec> collection_map_;
    std::vector<std::string> collection_workers_;
    bool end_delay_done_ = false; // training_end_delay_refresh waited (under refresh_mutex_)
    std::size_t num_workers_ = 1;

    std::mutex refresh_mutex_; // one refresh at a time; guards token_ and read_keys_
    std::string token_;        // list index keys after this one
    std::set<std::string> read_keys_;
    std::int64_t settled_step_ = -1; // the last complete step as of the previous refresh
    std::atomic<bool> ended_{false};

    mutable std::shared_mutex state_mutex_; // guards everything below
    step_table steps_;
    std::map<std::string, std::unique_ptr<tensor_record>, std::less<>> tensors_;
    std::deque<std::string> worker_names_; // a deque: resolved entries point into it
    std::unordered_map<std::string, worker_id> worker_ids_;
    std::deque<event_file> files_;         // likewise
    std::unordered_map<std::string_view, std::uint32_t> file_ids_;
};

} // namespace tdbg::detail
