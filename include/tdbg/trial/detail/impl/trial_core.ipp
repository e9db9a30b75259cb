#pragma once
/// \file
/// Definitions of tdbg/trial/detail/trial_core.hpp.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "tdbg/format/crc32c.hpp"
#include "tdbg/trial/detail/trial_core.hpp"

namespace tdbg::detail {

TDBG_DECL trial_core::trial_core(any_storage storage, std::string name, step_range range, trial_options options)
    : storage_(std::move(storage)), root_(storage_.describe() + '/'), name_(std::move(name)), range_(range),
      options_(std::move(options)), cache_(make_cache_options(options_)) {
    range_.validate();
    collections_ = read_collections(storage_, root_, options_);
    loader_.watch_jobs(collections_.first_key);
    if (!options_.workers.empty()) {
        select_workers();
    }
    index_.steps.set_num_workers(collections_.num_workers);
    index_.summarised = options_.summary_only;
    refresh_now();
}

TDBG_DECL void trial_core::select_workers() {
    std::vector<std::string> chosen = options_.workers;
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    // Every worker's collection file is there (a run that has started): a name none wrote is a mistake.
    if (collections_.workers.size() >= collections_.num_workers) {
        for (const std::string& worker : chosen) {
            if (std::find(collections_.workers.begin(), collections_.workers.end(), worker) ==
                collections_.workers.end()) {
                throw invalid_worker(fmt::format("invalid worker '{}': the run {} has workers {} (trial {})", worker,
                                                 storage_.describe(), fmt::join(collections_.workers, ", "), name_),
                                     worker);
            }
        }
    }
    collections_.workers.erase(std::remove_if(collections_.workers.begin(), collections_.workers.end(),
                                              [&](const std::string& w) {
                                                  return !std::binary_search(chosen.begin(), chosen.end(), w);
                                              }),
                               collections_.workers.end());
    collections_.num_workers = chosen.size(); // a step is complete once the workers loaded wrote it
}

TDBG_DECL void trial_core::maybe_refresh() {
    if (!refreshing()) {
        return;
    }
    refresh_now();
}

TDBG_DECL std::vector<std::string> trial_core::workers() const {
    std::shared_lock<std::shared_mutex> lock(index_.mutex);
    std::set<std::string> all(collections_.workers.begin(), collections_.workers.end());
    all.insert(index_.worker_names.begin(), index_.worker_names.end());
    return {all.begin(), all.end()};
}

TDBG_DECL bool trial_core::has_tensor_now(std::string_view name) const {
    std::shared_lock<std::shared_mutex> lock(index_.mutex);
    return index_.tensors.find(name) != index_.tensors.end();
}

TDBG_DECL const tensor_record* trial_core::find_tensor(std::string_view name) const {
    std::shared_lock<std::shared_mutex> lock(index_.mutex);
    auto it = index_.tensors.find(name);
    return it == index_.tensors.end() ? nullptr : it->second.get();
}

TDBG_DECL std::vector<std::string> trial_core::all_tensor_names() const {
    std::shared_lock<std::shared_mutex> lock(index_.mutex);
    std::vector<std::string> out;
    out.reserve(index_.tensors.size());
    for (const auto& item : index_.tensors) {
        out.push_back(item.first);
    }
    return out;
}

TDBG_DECL std::vector<std::string> trial_core::tensor_names_for(std::optional<std::int64_t> step, mode m) const {
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

TDBG_DECL std::optional<std::int64_t> trial_core::to_global(std::int64_t step, mode m) const {
    std::shared_lock<std::shared_mutex> lock(index_.mutex);
    return index_.steps.global_step(m, step);
}

TDBG_DECL std::vector<std::int64_t> trial_core::tensor_steps(const tensor_record& record, mode m,
                                                             bool show_incomplete) const {
    std::shared_lock<std::shared_mutex> lock(index_.mutex);
    const steps_query query{&record, m, show_incomplete};
    {
        std::lock_guard<std::mutex> kept(steps_mutex_);
        if (auto it = kept_steps_.find(query); it != kept_steps_.end() && it->second.generation == index_.generation) {
            return *it->second.steps;
        }
    }
    auto steps = std::make_shared<const std::vector<std::int64_t>>(compute_tensor_steps(record, m, show_incomplete));
    std::lock_guard<std::mutex> kept(steps_mutex_);
    if (kept_steps_.size() >= max_kept_steps) {
        kept_steps_.clear();
    }
    kept_steps_[query] = kept_steps{index_.generation, steps};
    return *steps;
}

TDBG_DECL std::vector<std::int64_t> trial_core::compute_tensor_steps(const tensor_record& record, mode m,
                                                                     bool show_incomplete) const {
    std::vector<std::int64_t> out;
    std::int64_t last_global = -1;
    for (const tensor_entry& e : record.entries()) {
        if (e.step == last_global) {
            continue; // another worker of the same step
        }
        if (m != mode::global && e.entry_mode() != m) {
            continue;
        }
        if (!show_incomplete && !index_.steps.is_complete_known(e.step)) {
            continue;
        }
        last_global = e.step;
        out.push_back(m == mode::global ? e.step : index_.mode_step_of(e));
    }
    if (m != mode::global) {
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    return out;
}

TDBG_DECL std::vector<resolved_entry> trial_core::entries_at(const tensor_record& record, std::int64_t step,
                                                             mode m) const {
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

TDBG_DECL trial_core::record_summary trial_core::summarize(const tensor_record& record) const {
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

TDBG_DECL resolved_entry trial_core::locate(const tensor_record& record, std::int64_t step, mode m,
                                            const std::optional<std::string>& worker) {
    return locate_with(record, step, m, worker,
                       [this](const tensor_record& r, const tensor_entry& e) { return index_.resolve(r, e); });
}

TDBG_DECL void trial_core::throw_missing_step(std::int64_t step, mode m, step_state state) const {
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

TDBG_DECL std::optional<double> trial_core::wall_time(std::int64_t step) const {
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
        // The Event's own fields only: its summary, of any size, is not decoded for a time.
        return format::decode_event_wall_time(payload, key, format::record_header_size);
    }
    return std::nullopt;
}

TDBG_DECL tensor_value trial_core::fetch(record_request request, std::string_view tag,
                                         std::atomic<std::uint32_t>* hint) {
    loader_.check_unchanged();
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

TDBG_DECL std::string trial_core::read_raw(const record_request& request, std::string_view tag,
                                           std::uint64_t offset, std::uint64_t length) const {
    loader_.check_unchanged();
    const std::string& file = request.file->key;
    try {
        return storage_.read_range(file, offset, length);
    } catch (const object_not_found&) {
        throw unreadable_event_file(
            fmt::format("{}{}: the event file that the index lists for tensor '{}' (its record at byte {}) does "
                        "not exist: the run is incomplete or damaged (trial {})",
                        root_, file, tag, request.offset, name_),
            root_ + file);
    } catch (const storage_error& e) {
        throw unreadable_event_file(fmt::format("cannot read bytes {}-{} of {}{} (the record of tensor '{}' at byte "
                                                "{}, which the index lists): {} (trial {})",
                                                offset, offset + length, root_, file, tag, request.offset, e.what(),
                                                name_),
                                    root_ + file);
    }
}

TDBG_DECL std::optional<format::detail::tensor_head> trial_core::fetch_head(const record_request& request,
                                                                            std::string_view tag) {
    if (request.length <= head_read_bytes) { // also every record too short to hold a head
        return std::nullopt;
    }
    const std::string& file = request.file->key;
    const std::string prefix = read_raw(request, tag, request.offset, format::record_header_size + head_read_bytes);
    if (prefix.size() < format::record_header_size + head_read_bytes) {
        throw format_error(fmt::format("the record of tensor '{}' ends after {} bytes, but the index says {}", tag,
                                       prefix.size(), request.length),
                           file, request.offset);
    }
    const std::uint64_t payload_size = format::detail::checked_record_length(prefix.data(), file, request.offset);
    if (payload_size != request.length - format::record_overhead) {
        throw format_error(fmt::format("record length {} does not match the indexed size: {} bytes hold a payload of {}",
                                       payload_size, request.length, request.length - format::record_overhead),
                           file, request.offset);
    }
    auto head = format::detail::decode_tensor_head(std::string_view(prefix).substr(format::record_header_size),
                                                   payload_size);
    if (!head || head->tag != tag) {
        return std::nullopt; // the full decoder reads it, and names what differs
    }
    head->tag = {};
    return head;
}

TDBG_DECL std::optional<format::detail::tensor_head>
trial_core::scan(const record_request& request, std::string_view tag, std::size_t piece_elements,
                 const std::function<void(const tensor_value&)>& each) {
    const std::string& file = request.file->key;
    auto head = fetch_head(request, tag);
    if (!head) {
        return std::nullopt;
    }
    const std::uint64_t payload_at = request.offset + format::record_header_size;
    const std::uint64_t payload_size = request.length - format::record_overhead;
    // The payload's bytes before the elements, then the elements, then those after them and
    // the footer: each byte read once, its CRC taken as it goes past.
    const std::string before = read_raw(request, tag, payload_at, head->content_offset);
    std::uint32_t crc = format::crc32c(before);
    const std::size_t element = dtype_size(head->type);
    const std::uint64_t piece_bytes = std::max<std::uint64_t>(1, piece_elements) * element;
    const std::uint64_t read_bytes = std::max<std::uint64_t>(piece_bytes, piece_read_bytes / piece_bytes * piece_bytes);
    const std::uint64_t content_end = head->content_offset + head->content_size;
    for (std::uint64_t at = head->content_offset; at < content_end;) {
        const std::uint64_t n = std::min(read_bytes, content_end - at);
        auto bytes = std::make_shared<const std::string>(read_raw(request, tag, payload_at + at, n));
        if (bytes->size() != n) {
            throw format_error(fmt::format("the record of tensor '{}' ends at byte {} of its payload, but the index "
                                           "says it holds {}",
                                           tag, at + bytes->size(), payload_size),
                               file, request.offset);
        }
        crc = format::crc32c(*bytes, crc);
        for (std::uint64_t p = 0; p < n; p += piece_bytes) {
            const std::uint64_t m = std::min(piece_bytes, n - p);
            each(tensor_value::view_bytes(head->type, {static_cast<std::size_t>(m / element)},
                                          std::string_view(*bytes).substr(static_cast<std::size_t>(p),
                                                                          static_cast<std::size_t>(m)),
                                          bytes));
        }
        at += n;
    }
    const std::string after = read_raw(request, tag, payload_at + content_end,
                                       payload_size - content_end + format::record_overhead - format::record_header_size);
    if (after.size() != payload_size - content_end + 4) {
        throw format_error(fmt::format("the record of tensor '{}' ends before its footer", tag), file, request.offset);
    }
    const std::string_view after_view(after);
    crc = format::crc32c(after_view.substr(0, after.size() - 4), crc);
    format::detail::check_footer_crc(format::mask_crc32c(crc), format::detail::get_le32(after.data() + after.size() - 4),
                                     file, request.offset);
    return head;
}

TDBG_DECL record_cache::options trial_core::make_cache_options(const trial_options& o) {
    record_cache::options c;
    c.whole_file_limit = o.whole_file_limit;
    c.capacity = o.file_cache_bytes;
    return c;
}

} // namespace tdbg::detail
