#pragma once
/// \file
/// Definitions of tdbg/trial/detail/record_cache.hpp.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/trial/detail/record_cache.hpp"

namespace tdbg::detail {

TDBG_DECL void byte_buffer::reset(std::size_t n, std::size_t align_at) noexcept {
    size = n;
    shift = 0;
    if (align_at != 0) {
        const auto address = reinterpret_cast<std::uintptr_t>(data.get()) + align_at;
        shift = (max_alignment - address % max_alignment) % max_alignment;
    }
}

TDBG_DECL std::shared_ptr<byte_buffer> read_buffer_pool::get(std::size_t n, std::size_t align_at) {
    std::unique_ptr<byte_buffer> buffer;
    if (n >= min_pooled) {
        std::lock_guard<std::mutex> lock(mutex_);
        // The smallest free buffer that holds n, if it is not more than twice the size.
        auto best = free_.end();
        for (auto it = free_.begin(); it != free_.end(); ++it) {
            if ((*it)->capacity >= n && (*it)->capacity <= 2 * n &&
                (best == free_.end() || (*it)->capacity < (*best)->capacity)) {
                best = it;
            }
        }
        if (best != free_.end()) {
            buffer = std::move(*best);
            free_.erase(best);
        }
    }
    if (!buffer) {
        buffer = std::make_unique<byte_buffer>(n);
    }
    buffer->reset(n, align_at);
    if (n < min_pooled) {
        return std::shared_ptr<byte_buffer>(std::move(buffer));
    }
    std::weak_ptr<read_buffer_pool> home = weak_from_this();
    return std::shared_ptr<byte_buffer>(buffer.release(), [home](byte_buffer* b) {
        std::unique_ptr<byte_buffer> owned(b);
        if (const auto pool = home.lock()) {
            pool->put(std::move(owned));
        }
    });
}

TDBG_DECL void read_buffer_pool::put(std::unique_ptr<byte_buffer> b) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < max_free) {
        free_.push_back(std::move(b));
    }
}

TDBG_DECL std::shared_ptr<const object_reader> object_cache::get(const any_storage& storage, const event_file& file,
                                                                 std::uint32_t id) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::size_t i = 0; i < open_.size(); ++i) {
            if (open_[i].first == id) {
                std::rotate(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(i),
                            open_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
                return open_.front().second;
            }
        }
    }
    std::shared_ptr<const object_reader> opened = storage.open_read(file.key);
    if (!opened) {
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    open_.insert(open_.begin(), {id, opened});
    if (open_.size() > capacity) {
        open_.pop_back();
    }
    return opened;
}

TDBG_DECL record_bytes record_cache::fetch(const any_storage& storage, const record_request& request) {
    check_range(request);
    if (storage.coalesce_reads()) {
        return fetch_coalesced(storage, request);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (std::optional<record_bytes> kept = find_kept(request)) {
            return std::move(*kept);
        }
    }
    const event_file& file = *request.file;
    if (!should_read_whole(file, request)) {
        file.single_reads.fetch_add(1, std::memory_order_relaxed);
        file.alone_since_whole.fetch_add(1, std::memory_order_relaxed);
        return read_bytes(storage, file, request.file_id, request.offset, request.length,
                          request.content_offset_hint);
    }
    file.whole_reads.fetch_add(1, std::memory_order_relaxed);
    record_bytes data;
    try {
        data = read_bytes(storage, file, request.file_id, 0, file.extent.load(std::memory_order_relaxed), 0);
    } catch (const object_not_found&) {
        throw;
    } catch (const error&) {
        // The file is shorter than its index says (a damaged entry elsewhere in it): this
        // record alone, for its own bytes or error.
        file.coalescing_failed.store(true, std::memory_order_relaxed);
        return read_alone(storage, request);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // Served already: the record read with it, and those read alone since it was last read whole.
        keep({request.file_id, 0, data, 1 + file.alone_since_whole.exchange(0, std::memory_order_relaxed), true});
    }
    return {std::move(data.owner), data.bytes.substr(request.offset, request.length)};
}

TDBG_DECL void record_cache::prefetch(const any_storage& storage, const std::vector<record_request>& requests) {
    if (requests.empty() || !storage.coalesce_reads()) {
        return;
    }
    std::vector<const record_request*> sorted;
    for (const record_request& r : requests) {
        if (r.file != nullptr && r.length != 0 && r.offset + r.length >= r.offset) {
            sorted.push_back(&r);
        }
    }
    std::sort(sorted.begin(), sorted.end(), [](const record_request* a, const record_request* b) {
        return a->file_id != b->file_id ? a->file_id < b->file_id : a->offset < b->offset;
    });
    struct planned {
        const event_file* file;
        piece where;
    };
    std::vector<planned> plan;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const record_request* r : sorted) {
            const bool in_last = !plan.empty() && plan.back().where.file_id == r->file_id &&
                                 plan.back().where.holds(r->offset, r->length);
            if (in_last || find_kept(*r) || find_loading(r->file_id, r->offset, r->length) != loading_.end()) {
                continue;
            }
            const piece where = piece_for(*r);
            if (where.end - where.begin <= options_.capacity / 4) { // else not kept: fetch() reads it
                plan.push_back({r->file, where});
            }
        }
    }
    const std::size_t threads = std::min(plan.size(), storage.request_concurrency());
    parallel_for_each_index(plan.size(), threads, [&](std::size_t i) {
        const piece& where = plan[i].where;
        std::list<loading_piece>::iterator mine;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (find_kept_piece(where) || find_loading(where.file_id, where.begin, where.end - where.begin) !=
                                              loading_.end()) {
                return; // read meanwhile, by a fetch
            }
            mine = start_loading(where);
        }
        try {
            (void)load(storage, *plan[i].file, mine);
        } catch (...) { // NOLINT(bugprone-empty-catch): fetch() reads the record again and reports the error
        }
    });
}

TDBG_DECL void record_cache::check_range(const record_request& request) {
    if (request.length == 0 || request.offset + request.length < request.offset) {
        throw format_error(
            fmt::format("index entry with an empty or overflowing byte range (length {})", request.length),
            request.file->key, request.offset);
    }
}

TDBG_DECL bool record_cache::should_read_whole(const event_file& file, const record_request& request) const noexcept {
    const std::uint64_t extent = file.extent.load(std::memory_order_relaxed);
    const std::uint32_t records = file.records.load(std::memory_order_relaxed);
    // A file whose bytes are mostly large records is read by range: reading its small records
    // (stored reductions beside raw values) reads their byte ranges, not the large ones too.
    const std::uint64_t large = file.large_bytes.load(std::memory_order_relaxed);
    return records >= 2 && extent >= request.offset + request.length && extent <= options_.whole_file_limit &&
           extent <= options_.capacity / 4 && large <= extent / 2 &&
           !file.coalescing_failed.load(std::memory_order_relaxed) &&
           file.single_reads.load(std::memory_order_relaxed) >= 1 && // second use
           file.whole_reads.load(std::memory_order_relaxed) < 2;     // evicted and read again: stop
}

TDBG_DECL record_cache::piece record_cache::piece_for(const record_request& request) const noexcept {
    const event_file& file = *request.file;
    const std::uint64_t end = request.offset + request.length;
    const std::uint64_t extent = std::max(file.extent.load(std::memory_order_relaxed), end);
    const piece alone{request.file_id, request.offset, end, piece::kind::alone};
    if (file.coalescing_failed.load(std::memory_order_relaxed)) {
        return alone;
    }
    if (extent <= std::min(options_.remote_whole_file_limit, options_.capacity / 4) &&
        file.whole_reads.load(std::memory_order_relaxed) < 2) { // evicted and read again: windows
        return {request.file_id, 0, extent, piece::kind::whole};
    }
    // Windows small enough to be kept (a piece may span two: see below), so that the
    // records of one are read from it, not each with a window of its own.
    const std::uint64_t window = std::min(options_.remote_window, options_.capacity / 8);
    if (window == 0 || request.length >= window) {
        return alone;
    }
    const std::uint64_t begin = request.offset - request.offset % window;
    if (end <= begin + window) { // the window that holds the record
        return {request.file_id, begin, std::min(extent, begin + window), piece::kind::window};
    }
    // A record crossing a window's end: from the record to the end of the next window,
    // so that reading forward reads that window's records with it.
    return {request.file_id, request.offset, std::min(extent, begin + 2 * window), piece::kind::window};
}

TDBG_DECL record_bytes record_cache::fetch_coalesced(const any_storage& storage, const record_request& request) {
    std::shared_future<record_bytes> other;
    std::uint64_t other_begin = 0;
    std::list<loading_piece>::iterator mine;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (std::optional<record_bytes> kept = find_kept(request)) {
            return std::move(*kept);
        }
        if (const auto it = find_loading(request.file_id, request.offset, request.length); it != loading_.end()) {
            other = it->done;
            other_begin = it->where.begin;
        } else {
            mine = start_loading(piece_for(request));
        }
    }
    if (other.valid()) {
        try {
            return slice(other.get(), other_begin, request);
        } catch (const error&) {
            return read_alone(storage, request); // that piece failed: this record's own bytes, or error
        }
    }
    const piece where = mine->where;
    try {
        return slice(load(storage, *request.file, mine), where.begin, request);
    } catch (const object_not_found&) {
        throw;
    } catch (const error&) {
        if (where.what == piece::kind::alone) {
            throw; // the record's own error
        }
        // The piece reached past the file (a damaged index entry elsewhere in it): this
        // record alone, for its own bytes or error.
        return read_alone(storage, request);
    }
}

TDBG_DECL record_bytes record_cache::load(const any_storage& storage, const event_file& file,
                                          std::list<loading_piece>::iterator mine) {
    const piece where = mine->where;
    if (where.what == piece::kind::whole) {
        file.whole_reads.fetch_add(1, std::memory_order_relaxed);
    }
    record_bytes data;
    try {
        data = read_bytes(storage, file, where.file_id, where.begin, where.end - where.begin, 0);
    } catch (const object_not_found&) {
        finish_loading(mine, std::current_exception());
        throw;
    } catch (const error&) {
        if (where.what != piece::kind::alone) { // the file is shorter than its index says
            file.coalescing_failed.store(true, std::memory_order_relaxed);
        }
        finish_loading(mine, std::current_exception());
        throw;
    } catch (...) {
        finish_loading(mine, std::current_exception());
        throw;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    keep({where.file_id, where.begin, data});
    mine->promise.set_value(data);
    loading_.erase(mine);
    return data;
}

TDBG_DECL void record_cache::finish_loading(std::list<loading_piece>::iterator mine, std::exception_ptr failure) {
    std::lock_guard<std::mutex> lock(mutex_);
    mine->promise.set_exception(std::move(failure));
    loading_.erase(mine);
}

TDBG_DECL record_bytes record_cache::read_alone(const any_storage& storage, const record_request& request) {
    request.file->single_reads.fetch_add(1, std::memory_order_relaxed);
    return read_bytes(storage, *request.file, request.file_id, request.offset, request.length,
                      request.content_offset_hint);
}

TDBG_DECL record_bytes record_cache::slice(const record_bytes& data, std::uint64_t begin,
                                           const record_request& request) {
    return {data.owner, data.bytes.substr(static_cast<std::size_t>(request.offset - begin),
                                          static_cast<std::size_t>(request.length))};
}

TDBG_DECL record_bytes record_cache::read_bytes(const any_storage& storage, const event_file& file,
                                                std::uint32_t file_id, std::uint64_t offset, std::uint64_t length,
                                                std::uint32_t align_at) {
    if (const auto object = objects_.get(storage, file, file_id)) {
        // Checked before allocating: a corrupt index entry must not ask for more than the file holds.
        if (offset > object->size() || length > object->size() - offset) {
            throw format_error(fmt::format("the index locates bytes {}..{} but the event file has {} bytes", offset,
                                           offset + length, object->size()),
                               file.key, offset);
        }
        auto buffer = buffers_->get(static_cast<std::size_t>(length), align_at);
        object->read_at(offset, buffer->begin(), buffer->size);
        const std::string_view view = buffer->view();
        return {std::move(buffer), view};
    }
    // The storage decides where its bytes go.
    auto bytes = std::make_shared<const std::string>(storage.read_range(file.key, offset, length));
    if (bytes->size() != length) {
        throw storage_error(
            fmt::format("{}: wanted {} bytes at {}, got {}", file.key, length, offset, bytes->size()));
    }
    const std::string_view view(*bytes);
    return {std::move(bytes), view};
}

TDBG_DECL std::optional<record_bytes> record_cache::find_kept(const record_request& request) {
    const auto [first, last] = kept_.equal_range(request.file_id);
    for (auto it = first; it != last; ++it) {
        kept_piece& kept = *it->second;
        if (!kept.holds(request.offset, request.length)) {
            continue;
        }
        record_bytes out = slice(kept.data, kept.begin, request);
        const event_file& file = *request.file;
        const std::uint32_t served = ++kept.served;
        if (kept.let_go_when_served && served >= file.records.load(std::memory_order_relaxed) && kept.begin == 0 &&
            kept.data.bytes.size() >= file.extent.load(std::memory_order_relaxed)) {
            file.whole_reads.fetch_sub(1, std::memory_order_relaxed);
            bytes_ -= kept.data.bytes.size();
            lru_.erase(it->second);
            kept_.erase(it);
        } else {
            lru_.splice(lru_.begin(), lru_, it->second);
        }
        return out;
    }
    return std::nullopt;
}

TDBG_DECL bool record_cache::find_kept_piece(const piece& where) const {
    const auto [first, last] = kept_.equal_range(where.file_id);
    return std::any_of(first, last, [&](const auto& entry) {
        return entry.second->holds(where.begin, where.end - where.begin);
    });
}

TDBG_DECL std::list<record_cache::loading_piece>::iterator
record_cache::find_loading(std::uint32_t file_id, std::uint64_t offset, std::uint64_t length) {
    return std::find_if(loading_.begin(), loading_.end(), [&](const loading_piece& l) {
        return l.where.file_id == file_id && l.where.holds(offset, length);
    });
}

TDBG_DECL std::list<record_cache::loading_piece>::iterator record_cache::start_loading(const piece& where) {
    loading_.emplace_front();
    loading_piece& l = loading_.front();
    l.where = where;
    l.done = l.promise.get_future().share();
    return loading_.begin();
}

TDBG_DECL void record_cache::keep(kept_piece added) {
    const std::uint64_t size = added.data.bytes.size();
    if (size > options_.capacity / 4) {
        return;
    }
    for (auto [it, last] = kept_.equal_range(added.file_id); it != last;) {
        const kept_piece& old = *it->second;
        if (old.holds(added.begin, size)) {
            return;
        }
        if (added.holds(old.begin, old.data.bytes.size())) {
            bytes_ -= old.data.bytes.size();
            lru_.erase(it->second);
            it = kept_.erase(it);
        } else {
            ++it;
        }
    }
    bytes_ += size;
    lru_.push_front(std::move(added));
    kept_.emplace(lru_.front().file_id, lru_.begin());
    while (bytes_ > options_.capacity && !lru_.empty()) {
        const auto oldest = std::prev(lru_.end());
        const auto [first, last] = kept_.equal_range(oldest->file_id);
        kept_.erase(std::find_if(first, last, [&](const auto& entry) { return entry.second == oldest; }));
        bytes_ -= oldest->data.bytes.size();
        lru_.erase(oldest);
    }
}

} // namespace tdbg::detail
