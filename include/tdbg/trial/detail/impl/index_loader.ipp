#pragma once
/// \file
/// Definitions of tdbg/trial/detail/index_loader.hpp.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/trial/detail/index_loader.hpp"

namespace tdbg::detail {

TDBG_DECL std::chrono::milliseconds opening_wait::waited() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
}

TDBG_DECL std::chrono::milliseconds opening_wait::left() const {
    return std::max(std::chrono::milliseconds(0), options_.collection_wait - waited());
}

TDBG_DECL void opening_wait::pause() const {
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

TDBG_DECL run_collections read_collections(const any_storage& storage, const std::string& root,
                                           const trial_options& options) {
    const std::string prefix = "collections/";
    const opening_wait wait(options);
    run_collections out;
    std::vector<std::pair<std::string, std::string>> files; // key, worker
    std::string first;
    for (;;) {
        files.clear();
        for (const std::string& key : storage.list(prefix, {})) {
            if (auto worker = format::parse_collections_file_key(key)) {
                files.emplace_back(key, std::move(*worker));
            }
        }
        if (!files.empty() && files.front().first != first) {
            first = files.front().first;
            out.first_key = first;
            out.file = format::parse_collections_file(storage.read(first), root + first);
            out.num_workers = out.file.num_workers <= 0 ? 1 : static_cast<std::size_t>(out.file.num_workers);
        }
        if ((!files.empty() && files.size() >= out.num_workers) ||
            storage.exists(std::string(format::end_marker_key)) || wait.over()) {
            break;
        }
        wait.pause();
    }
    if (files.empty()) {
        std::string run = root; // "dir/" or "s3://bucket/prefix/"
        while (run.size() > 1 && run.back() == '/') {
            run.pop_back();
        }
        throw missing_collection_files(
            fmt::format("{}: not a run directory (no collections/000000000/<worker>_collections.json; expected the "
                        "out_dir of a tdbg or smdebug hook, or a run that has not started yet)",
                        run.empty() ? std::string(".") : run));
    }
    for (const auto& c : out.file.collections) {
        out.by_name[c.name] = c;
    }
    for (auto& item : files) {
        out.workers.push_back(std::move(item.second));
    }
    return out;
}

TDBG_DECL void index_loader::refresh() {
    std::lock_guard<std::mutex> serial(mutex_);
    if (const auto& change = jobs_.change()) {
        throw run_changed(*change); // the run is another job's now, whatever it holds
    }
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
    std::vector<pending_index> pending = list_new_index_files(listed, ended_before);
    followed_ = followed_ || !ended_before;
    if (followed_) {
        // A run seen live (even if it has just ended): the files listed are read only while their
        // workers' jobs are the ones the trial opened (checked after the listing: a new job claims
        // before it writes). A run that had ended when the trial opened has nobody writing it.
        std::vector<std::string> workers;
        workers.reserve(pending.size());
        for (const pending_index& p : pending) {
            workers.push_back(p.worker());
        }
        std::vector<bool> counted(first_workers_.names.size(), false); // their files count toward complete steps
        for (const std::uint32_t worker : first_workers_.counted) {
            counted[worker] = true;
        }
        for (std::size_t i = 0; i < counted.size(); ++i) {
            if (counted[i]) {
                workers.push_back(first_workers_.names[i]);
            }
        }
        std::sort(workers.begin(), workers.end());
        workers.erase(std::unique(workers.begin(), workers.end()), workers.end());
        try {
            jobs_.check(workers);
        } catch (const run_changed&) {
            changed_.store(true, std::memory_order_release);
            throw;
        }
    }
    read_and_merge(pending);
    std::unique_lock<std::shared_mutex> lock(index_.mutex);
    ++index_.generation; // completeness may change below, even where no file was read
    add_counted_workers();
    index_.steps.apply_wait_window(options_.incomplete_step_wait_window);
    if (!ended_before) {
        read_keys_.insert(std::make_move_iterator(listed.begin()), std::make_move_iterator(listed.end()));
    } else {
        // This was the last listing: the keys read are not needed any more.
        std::set<std::string>().swap(read_keys_);
        index_.steps.mark_ended();
        ended_.store(true, std::memory_order_release);
    }
    // A directory listing that runs while files are renamed into place can
    // return a later index file and miss an earlier one (readdir does not see
    // entries inserted behind its position). Each worker publishes its index
    // files in step order, so a step complete in the previous listing had all
    // its predecessors published before this listing began: only such steps
    // are settled, both for listing past them and for declaring a missing
    // step passed (step_table::confirm).
    index_.steps.confirm(settled_step_);
    advance_token(settled_step_);
    settled_step_ = index_.steps.last_complete_step();
}

TDBG_DECL void index_loader::merge_files(const std::vector<pending_index>& pending, std::size_t first,
                                         const std::vector<loaded_index>& files, std::size_t count,
                                         std::size_t threads, std::vector<name_hint>& hints,
                                         std::vector<merge_plan>& plans) {
    plans.resize(std::max(plans.size(), count));
    std::unique_lock<std::shared_mutex> lock(index_.mutex);
    ++index_.generation;
    for (std::size_t i = 0; i < count; ++i) {
        plan_merge(pending[first + i], files[i].view, hints, pending.size() - first - i, plans[i]);
    }
    // Lanes pay only for batches of many entries (each lane walks every file's plan).
    std::size_t entries = 0;
    for (std::size_t i = 0; i < count; ++i) {
        entries += plans[i].tensors.size();
    }
    const std::size_t lanes = entries >= min_entries_per_lane * merge_lanes ? std::min(threads, merge_lanes) : 1;
    if (lanes == 1) {
        for (std::size_t i = 0; i < count; ++i) {
            apply_merge(plans[i], 0, 1);
        }
    } else {
        parallel_for_each_index(lanes, lanes, [&](std::size_t lane) {
            for (std::size_t i = 0; i < count; ++i) {
                apply_merge(plans[i], lane, lanes);
            }
        });
    }
}

TDBG_DECL void index_loader::read_and_merge(const std::vector<pending_index>& pending) {
    if (pending.empty()) {
        return;
    }
    const std::size_t requests = storage_.request_concurrency();
    const std::size_t threads =
        default_thread_count(options_.threads != 0 ? options_.threads : requests > 1 ? requests : 0);
    const std::size_t grain = requests > 1 ? 2 : std::clamp<std::size_t>(pending.size() / 256, 16, 256);
    const std::size_t batch = grain * std::max<std::size_t>(threads, 2);
    const std::size_t batches = (pending.size() + batch - 1) / batch;
    struct slot {
        std::vector<loaded_index> files;
        std::vector<std::exception_ptr> errors; // per file: where its reading failed
    };
    std::array<slot, 2> slots; // batch k in slots[k % 2]
    const auto files_of = [&](std::size_t k) { return std::min(batch, pending.size() - k * batch); };
    const auto pieces_of = [&](std::size_t k) { return std::min(threads, (files_of(k) + grain - 1) / grain); };
    const auto prepare = [&](std::size_t k) {
        slot& to = slots[k % 2];
        to.files.resize(std::max(to.files.size(), files_of(k)));
        to.errors.assign(files_of(k), nullptr);
    };
    // Reads piece `piece` of batch k (its files split evenly); stops at a failing file.
    const auto read_piece = [&](std::size_t k, std::size_t piece) {
        slot& to = slots[k % 2];
        const std::size_t n = files_of(k);
        const std::size_t pieces = pieces_of(k);
        for (std::size_t i = n * piece / pieces; i < n * (piece + 1) / pieces; ++i) {
            try {
                read_index_file(pending[k * batch + i], to.files[i]);
            } catch (...) {
                to.errors[i] = std::current_exception();
                return; // the rest of this piece is after the error: not needed
            }
        }
    };
    std::vector<name_hint> hints; // the previous file's names, by position
    ++refresh_serial_;
    std::vector<merge_plan> plans;
    std::size_t merged = 0; // pending[0, merged) are in the index
    // Merges batch k: the files before the first that failed, then that one's error.
    const auto merge_batch = [&](std::size_t k) {
        const slot& from = slots[k % 2];
        const std::size_t n = files_of(k);
        const std::size_t good = static_cast<std::size_t>(
            std::find_if(from.errors.begin(), from.errors.begin() + static_cast<std::ptrdiff_t>(n),
                         [](const std::exception_ptr& e) { return e != nullptr; }) -
            from.errors.begin());
        merge_files(pending, k * batch, from.files, good, threads, hints, plans);
        merged = k * batch + good;
        if (good < n) {
            std::rethrow_exception(from.errors[good]);
        }
    };
    try {
        prepare(0);
        parallel_for_each_index(pieces_of(0), threads, [&](std::size_t piece) { read_piece(0, piece); });
        for (std::size_t k = 0; k < batches; ++k) {
            const std::size_t next_pieces = k + 1 < batches ? pieces_of(k + 1) : 0;
            if (next_pieces != 0) {
                prepare(k + 1);
            }
            // Item 0 merges batch k; the others read batch k + 1. Every item runs, and the
            // exception of the lowest failing one is rethrown: the merge's, if it failed.
            parallel_for_each_index(1 + next_pieces, threads, [&](std::size_t item) {
                if (item == 0) {
                    merge_batch(k);
                } else {
                    read_piece(k + 1, item - 1);
                }
            });
        }
    } catch (...) {
        // A failed refresh: the files merged before the failure are not read again by the next one.
        for (std::size_t i = 0; i < merged; ++i) {
            read_keys_.insert(pending[i].key);
        }
        throw;
    }
}

TDBG_DECL bool index_loader::first_worker_choice::read(std::int64_t step, const std::string& worker) {
    auto [at, fresh] = chosen.try_emplace(step, worker);
    if (fresh || worker <= at->second) { // a worker sorted first that published late is read too
        at->second = worker;
        return true;
    }
    auto [id, added] = ids.try_emplace(worker, static_cast<std::uint32_t>(names.size()));
    if (added) {
        names.push_back(worker);
    }
    if (counted_steps.empty() || counted_steps.back().first != step) {
        counted_steps.emplace_back(step, 0);
    }
    ++counted_steps.back().second;
    counted.push_back(id->second);
    return false;
}

TDBG_DECL void index_loader::add_counted_workers() {
    std::vector<worker_id> workers;
    workers.reserve(first_workers_.names.size());
    for (const std::string& name : first_workers_.names) {
        workers.push_back(index_.intern_worker(name));
    }
    std::size_t next = 0;
    for (const auto& [step, files] : first_workers_.counted_steps) {
        for (std::uint32_t i = 0; i < files; ++i) {
            index_.steps.add_worker(step, workers[first_workers_.counted[next++]]);
        }
    }
    std::vector<std::pair<std::int64_t, std::uint32_t>>().swap(first_workers_.counted_steps);
    std::vector<std::uint32_t>().swap(first_workers_.counted);
}

TDBG_DECL std::string index_key_floor(std::int64_t step) {
    return fmt::format("{}{:09}/{:012}", index_prefix, step / format::index_files_per_dir, step);
}

TDBG_DECL std::vector<index_loader::listing> index_loader::plan_listings() const {
    std::string after = token_;
    if (range_.begin && index_key_floor(*range_.begin) > after) {
        // Keys sort by folder, then step: those before the first step's floor are of earlier steps.
        after = index_key_floor(*range_.begin);
    }
    if (!range_.end) {
        return {listing{std::string(index_prefix), after, {}}};
    }
    if (*range_.end <= 0) {
        return {};
    }
    // The folders from that of the first key wanted to that of the range's last step.
    std::string last = index_key_floor(*range_.end); // sorts after every index file of the steps before it
    const std::int64_t last_folder = (*range_.end - 1) / format::index_files_per_dir;
    const std::int64_t first_folder =
        std::max(range_.begin.value_or(0) / format::index_files_per_dir, format::index_file_folder(token_).value_or(0));
    if (last_folder - first_folder + 1 > max_folder_listings) {
        return {listing{std::string(index_prefix), after, std::move(last)}};
    }
    std::vector<listing> out;
    for (std::int64_t folder = first_folder; folder <= last_folder; ++folder) {
        out.push_back(listing{fmt::format("{}{:09}/", index_prefix, folder), after, last});
    }
    return out;
}

TDBG_DECL std::vector<index_loader::pending_index>
index_loader::list_new_index_files(std::vector<std::string>& listed, bool last) {
    first_workers_.counted_steps.clear(); // those of a refresh that failed are counted again
    first_workers_.counted.clear();
    // The range's folders listed side by side where the storage takes concurrent requests (S3).
    const std::vector<listing> listings = plan_listings();
    std::vector<std::vector<std::string>> keys(listings.size());
    const std::size_t requests = storage_.request_concurrency();
    parallel_for_each_index(listings.size(), requests, [&](std::size_t i) {
        keys[i] = storage_.list_range(listings[i].prefix, listings[i].start_after, listings[i].last);
    });
    std::vector<pending_index> out;
    if (!options_.first_worker_only) { // most keys listed are read: no reallocation of a million
        std::size_t listed_keys = 0;
        for (const std::vector<std::string>& folder : keys) {
            listed_keys += folder.size();
        }
        out.reserve(listed_keys);
    }
    for (std::vector<std::string>& folder : keys) {
        for (std::string& key : folder) {
            if (key.size() < 5 || key.compare(key.size() - 5, 5, ".json") != 0) {
                continue; // smdebug also skips what is not an index file (".csv" is a legacy format)
            }
            if (read_keys_.count(key) != 0) {
                continue;
            }
            auto info = format::parse_index_file_key(key);
            if (!info) {
                throw index_reader_error(fmt::format(
                    "invalid index file name {}{} (expected index/<9 digits>/<12-digit step>_<worker>.json)", root_,
                    key));
            }
            check_filed_where_it_belongs(key, info->step);
            if (range_.contains(info->step) && loads_worker(info->worker) &&
                (!options_.first_worker_only || first_workers_.read(info->step, info->worker))) {
                pending_index& p = out.emplace_back();
                p.step = info->step;
                if (last) {
                    p.key.swap(key); // not listed again: the listing's string is the pending file's
                } else {
                    p.key = key;
                }
            }
            if (!last) {
                listed.push_back(std::move(key));
            }
        }
        std::vector<std::string>().swap(folder); // its keys are not held while the next are parsed
    }
    return out;
}

TDBG_DECL void index_loader::check_filed_where_it_belongs(const std::string& key, std::int64_t step) const {
    const auto folder = format::index_file_folder(key);
    if (folder && *folder == step / format::index_files_per_dir) {
        return;
    }
    const std::string_view dir = std::string_view(key).substr(0, key.rfind('/'));
    const std::string folder_steps =
        folder && *folder <= std::numeric_limits<std::int64_t>::max() / format::index_files_per_dir
            ? fmt::format("the folder of steps {} to {}", *folder * format::index_files_per_dir,
                          *folder * format::index_files_per_dir + format::index_files_per_dir - 1)
            : std::string("a folder of no step");
    throw index_reader_error(
        fmt::format("misfiled index file {}{}: its name says step {}, whose index belongs in index/{}/, but it "
                    "is filed in {}/, {}: refused (an index file is read only where it is filed)",
                    root_, key, step, format::index_dir_string(step), dir.substr(dir.rfind('/') + 1),
                    folder_steps));
}

TDBG_DECL void index_loader::read_index_file(const pending_index& where, loaded_index& out) const {
    const std::string& key = where.key;
    out.decoded.clear();
    out.view.tensors.clear();
    out.view.shapes.clear();
    out.view.index_mode = mode::global;
    out.view.mode_step = 0;
    out.view.event_file_name = {};
    // Read into the slot's buffer where the storage can (a local file: no copy, no fresh memory).
    if (const auto object = storage_.open_read(key)) {
        const std::uint64_t size = object->size();
        if (size > max_index_file_bytes) {
            throw index_reader_error(fmt::format("index file {}{} has {} bytes: not an index file (refused above {})",
                                                 root_, key, size, max_index_file_bytes));
        }
        if (size > out.capacity) {
            out.capacity = static_cast<std::size_t>(std::max<std::uint64_t>(size, 2 * out.capacity));
            out.buffer.reset(new char[out.capacity]);
        }
        object->read_at(0, out.buffer.get(), static_cast<std::size_t>(size));
        out.text = std::string_view(out.buffer.get(), static_cast<std::size_t>(size));
    } else {
        out.fallback = storage_.read(key);
        out.text = out.fallback;
    }
    try {
        format::detail::parse_index_view(out.text, root_ + key, out.view, out.decoded);
    } catch (const format_error& e) {
        throw index_reader_error(fmt::format("empty or corrupt index file: {}", e.what()));
    }
    // Its contents' own step: smdebug names the event file of step S, which the index of
    // step S locates records in, events/<S>/<S>_<worker>.tfevents.
    if (const auto events = format::parse_event_file_key(out.view.event_file_name);
        events && events->step != where.step) {
        throw index_reader_error(fmt::format(
            "misfiled index file {}{}: its name says step {}, but its entries are in step {}'s event file {}: "
            "refused (an index file is read only where it is filed)",
            root_, key, where.step, events->step, out.view.event_file_name));
    }
    for (const format::detail::location_view& loc : out.view.tensors) {
        if (loc.length == 0 || loc.name.empty()) {
            throw index_reader_error(
                fmt::format("index file {}{}: an entry of tensor '{}' with an empty name or a record of length 0",
                            root_, key, loc.name));
        }
        if (loc.start >= max_reduction_offset && format::parse_reduction_tensor_name(loc.name)) {
            throw index_reader_error(fmt::format(
                "index file {}{}: the record of reduction '{}' starts {} bytes into its event file: not supported "
                "(at most {})",
                root_, key, loc.name, loc.start, max_reduction_offset - 1));
        }
        if (loc.length > max_reduction_record && format::parse_reduction_tensor_name(loc.name)) {
            throw index_reader_error(fmt::format(
                "index file {}{}: the record of reduction '{}' has {} bytes, more than a reduction's one number needs",
                root_, key, loc.name, loc.length));
        }
    }
}

TDBG_DECL index_loader::name_hint& index_loader::hint_at(std::string_view name, std::size_t position,
                                                         std::vector<name_hint>& hints) {
    if (position >= hints.size()) {
        hints.resize(position + 1);
    }
    name_hint& h = hints[position];
    h.repeated = h.record != nullptr && h.name == name;
    if (h.repeated) {
        return h;
    }
    h.name.assign(name);
    h.reduced.reset();
    if (name.substr(0, format::reduction_prefix.size()) == format::reduction_prefix) {
        if (auto reduced = format::parse_reduction_tensor_name(name)) {
            h.reduced = reduced->first;
            h.record = &index_.record_for(reduced->second);
            return h;
        }
    }
    h.record = &index_.record_for(name);
    return h;
}

TDBG_DECL void index_loader::plan_merge(const pending_index& where, const format::detail::index_view& index,
                                        std::vector<name_hint>& hints, std::size_t files_left, merge_plan& plan) {
    plan.where = &where;
    plan.index = &index;
    plan.files_left = files_left;
    plan.tensors.clear();
    plan.shapes.clear();
    if (index.tensors.empty() && index.shapes.empty()) {
        return; // smdebug records a step only through its tensors
    }
    plan.worker = index_.intern_worker(where.worker());
    plan.file = 0;
    if (!index.tensors.empty()) {
        plan.file = index_.intern_file(index.event_file_name);
        event_file& f = index_.files[plan.file];
        std::uint64_t extent = f.extent.load(std::memory_order_relaxed);
        std::uint64_t large = 0;
        for (const format::detail::location_view& loc : index.tensors) {
            extent = std::max(extent, loc.start + loc.length);
            large += loc.length > event_file::small_record_bytes ? loc.length : 0;
        }
        f.extent.store(extent, std::memory_order_relaxed);
        f.large_bytes.fetch_add(large, std::memory_order_relaxed);
        f.records.fetch_add(static_cast<std::uint32_t>(index.tensors.size()), std::memory_order_relaxed);
    }
    plan.source = index_.add_source(plan.file, index.mode_step);
    plan.tensors.reserve(index.tensors.size());
    std::size_t position = 0;
    for (const format::detail::location_view& loc : index.tensors) {
        const name_hint& h = hint_at(loc.name, position++, hints);
        plan.tensors.push_back({h.record, h.reduced, h.repeated});
    }
    for (const format::detail::shape_view& sh : index.shapes) {
        plan.shapes.push_back(&index_.record_for(sh.name));
    }
    index_.steps.add(where.step, index.index_mode, index.mode_step, plan.worker);
}

TDBG_DECL void index_loader::apply_merge(const merge_plan& plan, std::size_t lane, std::size_t lanes) const {
    const pending_index& where = *plan.where;
    const format::detail::index_view& index = *plan.index;
    tensor_record* last_record = nullptr; // a file is one (step, worker): one entry per record
    tensor_entry* last_entry = nullptr;
    for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
        const merge_plan::target& t = plan.tensors[i];
        tensor_record& record = *t.record;
        if (record.serial() % lanes != lane) {
            continue;
        }
        if (&record != last_record) {
            // A name met at the same place in two files in a row: a regular run's tensor,
            // whose arrays are sized once for the files left in this refresh.
            if (t.repeated) {
                record.expect(plan.files_left, refresh_serial_);
            }
            last_record = &record;
            last_entry = &record.at(where.step, plan.worker, index.index_mode, plan.source);
        }
        const format::detail::location_view& loc = index.tensors[i];
        const record_span at{loc.start, loc.length};
        if (t.reduced) {
            record.set_reduction(*last_entry, *t.reduced, at);
        } else {
            record.set_value(*last_entry, at);
        }
    }
    // smdebug's reader lets a shape entry replace the value entry of the same
    // tensor; tdbg keeps both, so a value saved with its shape stays readable.
    for (std::size_t i = 0; i < plan.shapes.size(); ++i) {
        tensor_record& record = *plan.shapes[i];
        if (record.serial() % lanes == lane) {
            record.set_shape(record.at(where.step, plan.worker, index.index_mode, plan.source),
                             index.shapes[i].shape);
        }
    }
}

TDBG_DECL void index_loader::advance_token(std::int64_t settled) {
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

} // namespace tdbg::detail
