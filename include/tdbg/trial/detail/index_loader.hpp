#pragma once
/// \file
/// How a trial learns what a run holds: its collection files, read once when it
/// opens, and its index files, read incrementally by index_loader (only those
/// published since the last refresh, a batch at a time, read in parallel and
/// merged into the run_index under its lock).

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
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

#include "tdbg/config.hpp"
#include "tdbg/core/detail/thread_pool.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/detail/index_parser.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/detail/run_index.hpp"
#include "tdbg/trial/detail/run_jobs.hpp"
#include "tdbg/trial/detail/step_table.hpp"
#include "tdbg/trial/detail/tensor_table.hpp"
#include "tdbg/trial/options.hpp"

namespace tdbg::detail {

/// An index file larger than this is refused before it is read (smdebug's hold a few
/// hundred bytes per tensor of one step).
inline constexpr std::uint64_t max_index_file_bytes = std::uint64_t{1} << 30U;

/// Threads that merge a batch of index files at most (each its share of the tensors).
inline constexpr std::size_t merge_lanes = 2;

/// Index entries a batch needs per merging thread (fewer: one thread merges it).
inline constexpr std::size_t min_entries_per_lane = 2048;

/// The prefix under which index files live.
inline constexpr std::string_view index_prefix = "index/";

/// A bounded step range whose index spans at most this many folders is listed a folder at a
/// time (in parallel where the storage takes concurrent requests); a wider one in one listing.
inline constexpr std::int64_t max_folder_listings = 256;

/// The first key an index file of step `step` or later can have ("index/<9 digits>/<12 digits>",
/// which sorts before every index file of the step and after those of earlier steps).
TDBG_DECL std::string index_key_floor(std::int64_t step);

/// trial_options::collection_wait, counted from construction: whether it is over,
/// and one pause between two looks (with trial_options::pause when given).
class opening_wait {
public:
    explicit opening_wait(const trial_options& options) : options_(options) {}

    [[nodiscard]] bool forever() const noexcept { return options_.collection_wait == trial_options::wait_forever; }
    [[nodiscard]] TDBG_DECL std::chrono::milliseconds waited() const;
    /// The time left to wait (0 when it is over; meaningless when forever()).
    [[nodiscard]] TDBG_DECL std::chrono::milliseconds left() const;
    [[nodiscard]] bool over() const { return !forever() && left().count() == 0; }
    TDBG_DECL void pause() const;

private:
    const trial_options& options_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

/// What a run's collection files say: the first worker's file, its collections
/// by name, the workers that wrote one, and how many workers the run has.
struct run_collections {
    std::string first_key; // the key of the first worker's file (by name)
    format::collections_file file;
    std::map<std::string, format::collection_spec> by_name;
    std::vector<std::string> workers;
    std::size_t num_workers = 1;
};

/// smdebug's _load_collections: waits (up to collection_wait) for the first collection
/// file, reads the first worker's (by name), then waits for those of all num_workers
/// workers, whose names it takes from the files' names. `root` prefixes keys in messages.
TDBG_DECL run_collections read_collections(const any_storage& storage, const std::string& root,
                                           const trial_options& options);

/// Reads a run's index files into a run_index, incrementally: each refresh lists
/// only the keys after those settled by the previous ones. One refresh at a time
/// (refresh() serialises them); lookups go on meanwhile, waiting only for merges.
class index_loader {
public:
    /// Loads into `index` from `storage` (both outlive the loader) the index files
    /// of steps in `range`; `root` prefixes keys in messages.
    index_loader(const any_storage& storage, std::string root, step_range range, const trial_options& options,
                 run_index& index)
        : storage_(storage), root_(std::move(root)), range_(range), options_(options), index_(index),
          workers_(options.workers.begin(), options.workers.end()), jobs_(storage, storage.describe()) {}

    /// Follows who writes the run from now on (run_jobs): `presence_key`, a file whose absence
    /// means the run was removed (its first collection file).
    void watch_jobs(std::string presence_key) { jobs_.set_presence_key(std::move(presence_key)); }

    /// Reads every index file published since the last refresh (unless the
    /// run's end has already been seen and read).
    TDBG_DECL void refresh();

    /// True once the end marker has been seen and everything before it read.
    [[nodiscard]] bool ended() const noexcept { return ended_.load(std::memory_order_acquire); }

    /// The change of job (or the removal) a refresh found, if one did: refreshes throw it.
    [[nodiscard]] std::optional<run_changed> run_change() const {
        std::lock_guard<std::mutex> serial(mutex_);
        return jobs_.change();
    }

    /// Throws the change a refresh found, if one did: the run's event files may now be another
    /// job's, so no value is read from them any more. One atomic load while nothing changed.
    void check_unchanged() const {
        if (changed_.load(std::memory_order_acquire)) {
            throw run_changed(*run_change());
        }
    }

private:
    // An index file to read (40 bytes and its key: a refresh may hold a million).
    struct pending_index {
        std::string key; // "...index/<folder>/<step>_<worker>.json", a key parse_index_file_key took
        std::int64_t step = 0;
        // The worker its name says (parsed again: it is read once, and a name may be escaped).
        [[nodiscard]] std::string worker() const { return format::parse_index_file_key(key).value().worker; }
    };

    // Index files read a batch at a time, so that the index's text is held a batch at a
    // time, and as a pipeline: while one thread merges a batch under the lock, the others
    // read and parse the next one. Where a request costs CPU (local files), a thread reads
    // 16 files of a batch, more when there are many files (about 256 batches at most: each
    // batch costs a few hand-offs between threads, which small index files would not repay);
    // where it costs a round trip (S3), 2, so that as many requests are in flight as the
    // storage takes. A corrupt file stops the refresh there: the files before it are merged,
    // it and the files after it are read again by the next refresh. One function, longer
    // than most: its steps are lambdas over one batch arithmetic and two slots.
    TDBG_DECL void read_and_merge(const std::vector<pending_index>& pending);

    // The index files not read yet (in range, of the workers loaded; with first_worker_only, of
    // each step's first worker, the others counted in first_workers_), and in `listed` every new
    // key seen, unless `last` (the run has ended: this listing is the last).
    [[nodiscard]] TDBG_DECL std::vector<pending_index> list_new_index_files(std::vector<std::string>& listed,
                                                                          bool last);

    // trial_options::first_worker_only: the worker whose index file is read, by step, and the
    // other files a listing found, counted rather than read (4 bytes each: a step's are listed
    // together).
    struct first_worker_choice {
        std::map<std::int64_t, std::string> chosen;
        std::vector<std::string> names; // the workers counted
        std::unordered_map<std::string, std::uint32_t> ids;
        std::vector<std::pair<std::int64_t, std::uint32_t>> counted_steps; // (step, files counted)
        std::vector<std::uint32_t> counted; // their workers (into names), step after step

        // True when `worker`'s index file of `step` is read (the first in sorted order listed
        // so far: a step's keys list its workers in that order); else counts it, and false.
        TDBG_DECL bool read(std::int64_t step, const std::string& worker);
    };

    // Adds the files first_workers_ counted to the steps' workers (the index locked).
    TDBG_DECL void add_counted_workers();

    // One listing of a refresh: the keys below `prefix` after `start_after`, up to `last` (empty: no bound).
    struct listing {
        std::string prefix;
        std::string start_after;
        std::string last;
    };

    // The listings that find the new index files of the range: after the keys settled (token_)
    // and the range's first step, up to its end; a folder of the index each when the range is
    // bounded and spans at most max_folder_listings folders, else one.
    [[nodiscard]] TDBG_DECL std::vector<listing> plan_listings() const;

    // True when the trial loads `worker`'s index files (options' workers, or all).
    [[nodiscard]] bool loads_worker(const std::string& worker) const {
        return workers_.empty() || workers_.count(worker) != 0;
    }

    // An index entry is believed only where it is filed: an index file in another step's
    // folder (a copy, a file moved by hand) would otherwise replace the index of the step its
    // name says, silently. smdebug's reader takes the step from the name alone.
    TDBG_DECL void check_filed_where_it_belongs(const std::string& key, std::int64_t step) const;

    // An index file's text, and the view the merge reads. A slot is reused from batch
    // to batch: its buffer and vectors keep their capacity.
    struct loaded_index {
        std::unique_ptr<char[]> buffer; // not zero-filled: read_at fills it
        std::size_t capacity = 0;
        std::string fallback; // the text, where the storage cannot open objects
        std::string_view text;
        format::detail::decoded_strings decoded; // its strings that had escapes
        format::detail::index_view view;
    };

    TDBG_DECL void read_index_file(const pending_index& where, loaded_index& out) const;

    // What the `position`-th entry of the previous index file named: index files of one
    // run list their tensors in the same order, so the previous file's record at that
    // position is nearly always the one (one comparison, no lookup, no name parsing).
    struct name_hint {
        std::string name;                  // the index's tensor name
        tensor_record* record = nullptr;   // the tensor it is a value or a reduction of
        std::optional<reduction> reduced;  // which reduction, if one
        bool repeated = false;             // the previous file had the same name here
    };

    TDBG_DECL name_hint& hint_at(std::string_view name, std::size_t position, std::vector<name_hint>& hints);

    // One index file, planned for merging: its entries' records found (under the lock,
    // one thread), then applied by record, several threads each applying the entries of
    // their own records (no two threads touch one record).
    struct merge_plan {
        struct target {
            tensor_record* record = nullptr;
            std::optional<reduction> reduced; // the entry is this stored reduction, else the value
            bool repeated = false;            // the previous file named it at the same position
        };
        const pending_index* where = nullptr;
        const format::detail::index_view* index = nullptr;
        worker_id worker = 0;
        std::uint32_t file = 0;
        std::uint32_t source = 0;            // run_index::sources
        std::size_t files_left = 0;          // this file and those after it in the refresh
        std::vector<target> tensors;         // index->tensors' records, by position
        std::vector<tensor_record*> shapes;  // index->shapes' records, by position
    };

    // smdebug's _add_tensor for one index file, first part: everything but the entries
    // (records, worker, event file, the step), into `plan`.
    TDBG_DECL void plan_merge(const pending_index& where, const format::detail::index_view& index,
                              std::vector<name_hint>& hints, std::size_t files_left, merge_plan& plan);

    // Second part: the entries of the records of `lane` (of `lanes`).
    TDBG_DECL void apply_merge(const merge_plan& plan, std::size_t lane, std::size_t lanes) const;

    // Merges `count` files read for pending[first...] into the index, under its lock: planned
    // in order (names resolved), then applied on up to `threads` lanes.
    TDBG_DECL void merge_files(const std::vector<pending_index>& pending, std::size_t first,
                               const std::vector<loaded_index>& files, std::size_t count, std::size_t threads,
                               std::vector<name_hint>& hints, std::vector<merge_plan>& plans);

    // Keys at or before a settled step will not change: list after them next time.
    TDBG_DECL void advance_token(std::int64_t settled);

    const any_storage& storage_;
    std::string root_; // the storage's description and a slash: messages name a key as root_ + key
    step_range range_;
    const trial_options& options_;
    run_index& index_;
    std::set<std::string> workers_; // the workers loaded (empty: all)

    mutable std::mutex mutex_; // one refresh at a time; guards what follows but ended_ and changed_
    std::string token_;        // list index keys after this one
    std::set<std::string> read_keys_;
    first_worker_choice first_workers_;
    std::int64_t settled_step_ = -1;   // the last complete step as of the previous refresh
    std::uint64_t refresh_serial_ = 0; // counts refreshes (tensor_record::sized_in)
    bool end_delay_done_ = false;      // training_end_delay_refresh waited
    bool followed_ = false;            // a refresh found the run live: its jobs are checked
    std::atomic<bool> ended_{false};
    run_jobs jobs_;                  // guarded by mutex_
    std::atomic<bool> changed_{false}; // jobs_ found a change
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/index_loader.ipp"
#endif
