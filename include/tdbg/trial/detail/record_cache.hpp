#pragma once
/// \file
/// Fetches the records the index locates, by byte range, kept in an LRU bounded
/// in bytes. How much is read at once depends on what a request costs, which the
/// storage says (its coalesce_reads capability, see tdbg/storage/storage.hpp):
///
/// - Where a request costs CPU (local files), small records are syscall-bound, so
///   an event file whose records are small is read whole on its second use and
///   kept: a step's tensors read one after the other then cost one read. A file
///   whose bytes are mostly large records (over 16 KiB) is always read by range, so
///   reading the stored reductions saved beside raw values reads their byte ranges,
///   not the values' bytes too. Where the storage can open an object
///   for positional reads (its open_read capability: a local file's descriptor and
///   pread), the reads go through a small cache of opened objects, into buffers
///   not zero-filled first.
/// - Where a request costs a round trip (S3), bytes are cheap next to requests: the
///   first record read from an event file brings the file's whole indexed extent
///   in one read when that is at most `remote_whole_file_limit` and a quarter of
///   `capacity`, otherwise the window of `remote_window` bytes (at most an eighth of
///   `capacity`, so that it is kept; at a multiple of it) that holds the record (a
///   record crossing a window's end is read with the rest of the next window, and
///   one longer than a window alone); what is read is kept. A piece that another thread
///   is reading is waited for, not read again, and `prefetch` reads the pieces a
///   batch of records needs, those of different files at the same time. A step's
///   values then cost one request per event file.
///
/// Either way, when a read of more than one record fails (the file is shorter than
/// its index says: a damaged entry), the file is then read record by record, so each
/// record gets its own bytes, or its own error naming the file and offset.

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
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/thread_pool.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// An event file the index refers to. Created once, never moved (the trial
/// keeps them in a deque); the counters are updated as the index grows and
/// as records are read.
struct event_file {
    /// Records longer than this are large: a file whose large records hold more than half
    /// its bytes is never read whole where requests cost CPU (see record_cache).
    static constexpr std::uint64_t small_record_bytes = std::uint64_t{16} << 10U;

    explicit event_file(std::string k) : key(std::move(k)) {}
    std::string key;
    std::atomic<std::uint64_t> extent{0};        // end of the last indexed record
    std::atomic<std::uint64_t> large_bytes{0};   // bytes of the indexed records longer than small_record_bytes
    std::atomic<std::uint32_t> records{0};       // records the index lists in it
    mutable std::atomic<std::uint32_t> single_reads{0}; // records read one by one
    mutable std::atomic<std::uint32_t> alone_since_whole{0}; // of which since it was last read whole
    mutable std::atomic<std::uint32_t> whole_reads{0};  // times it was read whole
    mutable std::atomic<bool> coalescing_failed{false}; // a read of more than a record failed: records alone
};

/// One record to fetch.
struct record_request {
    const event_file* file = nullptr;
    std::uint32_t file_id = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    /// Where the record's elements are expected to start (from the last read
    /// of the same tensor); a record read alone is placed so that they are
    /// aligned and the value can view them. 0: unknown.
    std::uint32_t content_offset_hint = 0;
};

/// One record's bytes: a view into a buffer that `owner` keeps alive.
struct record_bytes {
    std::shared_ptr<const void> owner;
    std::string_view bytes;
};

/// Bytes read from storage, not zero-filled first, starting `shift` bytes
/// into the allocation (to align what the caller cares about).
struct byte_buffer {
    static constexpr std::size_t max_alignment = 16;
    explicit byte_buffer(std::size_t n) : data(new char[n + max_alignment]), capacity(n), size(n) {}
    /// Holds `n` bytes from now on, their first aligned as `align_at` says.
    void reset(std::size_t n, std::size_t align_at) noexcept {
        size = n;
        shift = 0;
        if (align_at != 0) {
            const auto address = reinterpret_cast<std::uintptr_t>(data.get()) + align_at;
            shift = (max_alignment - address % max_alignment) % max_alignment;
        }
    }
    std::unique_ptr<char[]> data;
    std::size_t capacity; // bytes after any shift
    std::size_t size;
    std::size_t shift = 0;
    [[nodiscard]] char* begin() const noexcept { return data.get() + shift; }
    [[nodiscard]] std::string_view view() const noexcept { return {begin(), size}; }
};

/// Buffers of large reads (whole event files, windows), recycled: a buffer whose last
/// user (the cache, a value viewing it) lets go comes back here, and the next read it
/// can hold reuses it. A trial evaluating step after step then reads into the same few
/// buffers instead of memory that is freshly mapped (a page fault per page) and
/// handed back to the system (a TLB flush) for every file.
class read_buffer_pool : public std::enable_shared_from_this<read_buffer_pool> {
public:
    /// Reads at least this large are pooled; smaller ones are plain allocations.
    static constexpr std::size_t min_pooled = std::size_t{16} << 10U;
    /// Buffers kept for reuse, at most.
    static constexpr std::size_t max_free = 8;

    /// A buffer of `n` bytes, aligned as byte_buffer::reset says.
    std::shared_ptr<byte_buffer> get(std::size_t n, std::size_t align_at) {
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

private:
    void put(std::unique_ptr<byte_buffer> b) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (free_.size() < max_free) {
            free_.push_back(std::move(b));
        }
    }

    std::mutex mutex_;
    std::vector<std::unique_ptr<byte_buffer>> free_;
};

/// Event files opened for positional reads, shared by readers (read_at is
/// thread-safe); an object closes when the last reader and the cache drop it.
class object_cache {
public:
    /// `file` opened through `storage`; nullptr when the storage cannot open objects.
    std::shared_ptr<const object_reader> get(const any_storage& storage, const event_file& file, std::uint32_t id) {
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

    static constexpr std::size_t capacity = 32;

private:
    std::mutex mutex_;
    std::vector<std::pair<std::uint32_t, std::shared_ptr<const object_reader>>> open_; // most recent first
};

/// Reads records (see the file comment). Thread-safe; I/O runs outside its lock.
class record_cache {
public:
    struct options {
        /// Files larger than this are never read whole (where requests cost CPU).
        std::uint64_t whole_file_limit = std::uint64_t{16} << 20U;
        /// The bytes kept (whole files, and pieces of files where requests cost a round trip);
        /// a piece larger than a quarter of this is not kept.
        std::uint64_t capacity = std::uint64_t{256} << 20U;
        /// Where requests cost a round trip: event files whose indexed extent is at most this
        /// (and a quarter of `capacity`) are read whole on their first use.
        std::uint64_t remote_whole_file_limit = std::uint64_t{64} << 20U;
        /// Where requests cost a round trip: larger files are read in windows of this many
        /// bytes (at most an eighth of `capacity`), at multiples of it (a record crossing a
        /// window's end is read from its start to the next window's end; one longer than a
        /// window alone). 0: every record alone.
        std::uint64_t remote_window = std::uint64_t{8} << 20U;
    };

    record_cache() : record_cache(options{}) {}
    explicit record_cache(options opts) : options_(opts) {}

    /// The bytes of the record `request` locates. Throws format_error (naming the file and
    /// offset) for an empty or overflowing range; otherwise what reading the record alone
    /// throws, whatever was read with it: object_not_found, and for a range past the end of
    /// the file format_error (where the storage opens objects) or the storage's storage_error.
    record_bytes fetch(const any_storage& storage, const record_request& request) {
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

    /// Makes the records of `requests` ready for fetch(), reading them together: where the
    /// storage coalesces reads, each record's piece is chosen as fetch() would choose it (its
    /// file whole, or a window), pieces already kept or being read are left out, one piece
    /// serves all the records it holds, and the rest are read at the same time (up to the
    /// storage's request_concurrency(), on the library's thread pool) and kept. So the values
    /// of a step saved by 8 workers cost 8 requests in flight together, then fetch() finds
    /// them. Returns when every piece is read. Where the storage does not coalesce reads
    /// (local files), it does nothing: a read there costs CPU, and fetch() reads what it
    /// needs. Throws nothing for a record it cannot read (nor for an invalid range): its
    /// fetch() reads it again and reports the error, with the file and offset.
    void prefetch(const any_storage& storage, const std::vector<record_request>& requests) {
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

private:
    /// A byte range of an event file to read: [begin, end).
    struct piece {
        enum class kind { alone, window, whole }; // one record, a window, the whole indexed extent
        std::uint32_t file_id = 0;
        std::uint64_t begin = 0;
        std::uint64_t end = 0;
        kind what = kind::alone;
        [[nodiscard]] bool holds(std::uint64_t offset, std::uint64_t length) const noexcept {
            return begin <= offset && offset + length <= end;
        }
    };

    /// Bytes of an event file kept: [begin, begin + data.bytes.size()).
    struct kept_piece {
        std::uint32_t file_id = 0;
        std::uint64_t begin = 0;
        record_bytes data;
        std::uint32_t served = 0; // records read from it (see find_kept)
        bool let_go_when_served = false; // a local whole file: let go once every record was read
        [[nodiscard]] bool holds(std::uint64_t offset, std::uint64_t length) const noexcept {
            return begin <= offset && offset + length <= begin + data.bytes.size();
        }
    };

    /// A piece one thread is reading; others wanting its bytes wait for `done`.
    struct loading_piece {
        piece where;
        std::promise<record_bytes> promise;
        std::shared_future<record_bytes> done;
    };

    static void check_range(const record_request& request) {
        if (request.length == 0 || request.offset + request.length < request.offset) {
            throw format_error(
                fmt::format("index entry with an empty or overflowing byte range (length {})", request.length),
                request.file->key, request.offset);
        }
    }

    [[nodiscard]] bool should_read_whole(const event_file& file, const record_request& request) const noexcept {
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

    /// The piece to read for `request` where requests cost a round trip (see the file comment).
    [[nodiscard]] piece piece_for(const record_request& request) const noexcept {
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

    /// fetch() where requests cost a round trip.
    record_bytes fetch_coalesced(const any_storage& storage, const record_request& request) {
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

    /// Reads the piece `mine` (registered by start_loading), keeps it, and hands it to those
    /// waiting for it; on failure they get the error, as the caller does.
    record_bytes load(const any_storage& storage, const event_file& file, std::list<loading_piece>::iterator mine) {
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

    void finish_loading(std::list<loading_piece>::iterator mine, std::exception_ptr failure) {
        std::lock_guard<std::mutex> lock(mutex_);
        mine->promise.set_exception(std::move(failure));
        loading_.erase(mine);
    }

    /// The record of `request` read on its own, placed as its content offset hint says.
    record_bytes read_alone(const any_storage& storage, const record_request& request) {
        request.file->single_reads.fetch_add(1, std::memory_order_relaxed);
        return read_bytes(storage, *request.file, request.file_id, request.offset, request.length,
                          request.content_offset_hint);
    }

    static record_bytes slice(const record_bytes& data, std::uint64_t begin, const record_request& request) {
        return {data.owner, data.bytes.substr(static_cast<std::size_t>(request.offset - begin),
                                              static_cast<std::size_t>(request.length))};
    }

    record_bytes read_bytes(const any_storage& storage, const event_file& file, std::uint32_t file_id,
                            std::uint64_t offset, std::uint64_t length, std::uint32_t align_at) {
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

    // ---- under mutex_ ----------------------------------------------------------------------

    /// The record of `request` from a kept piece (made the most recently used), if one holds it.
    /// A local file read whole is let go once as many records were read from it as the index
    /// lists in it: a reader going step by step is done with it (its buffer is then reused for
    /// the next file instead of fresh memory), and it counts as no whole read for
    /// should_read_whole. Reading the step again reads the file whole again (one read).
    std::optional<record_bytes> find_kept(const record_request& request) {
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

    [[nodiscard]] bool find_kept_piece(const piece& where) const {
        const auto [first, last] = kept_.equal_range(where.file_id);
        return std::any_of(first, last, [&](const auto& entry) {
            return entry.second->holds(where.begin, where.end - where.begin);
        });
    }

    /// The piece being read that holds [offset, offset + length) of file `file_id`, or loading_.end().
    std::list<loading_piece>::iterator find_loading(std::uint32_t file_id, std::uint64_t offset, std::uint64_t length) {
        return std::find_if(loading_.begin(), loading_.end(), [&](const loading_piece& l) {
            return l.where.file_id == file_id && l.where.holds(offset, length);
        });
    }

    std::list<loading_piece>::iterator start_loading(const piece& where) {
        loading_.emplace_front();
        loading_piece& l = loading_.front();
        l.where = where;
        l.done = l.promise.get_future().share();
        return loading_.begin();
    }

    /// Keeps `added` (unless a kept piece holds it; those it holds go), then evicts the least
    /// recently used pieces beyond the capacity.
    void keep(kept_piece added) {
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

    options options_;
    object_cache objects_;
    std::shared_ptr<read_buffer_pool> buffers_ = std::make_shared<read_buffer_pool>();
    std::mutex mutex_;
    std::list<kept_piece> lru_; // most recently used first
    std::unordered_multimap<std::uint32_t, std::list<kept_piece>::iterator> kept_;
    std::list<loading_piece> loading_;
    std::uint64_t bytes_ = 0;
};

} // namespace tdbg::detail
