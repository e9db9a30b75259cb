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

#include "tdbg/config.hpp"
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
    TDBG_DECL void reset(std::size_t n, std::size_t align_at) noexcept;
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
    TDBG_DECL std::shared_ptr<byte_buffer> get(std::size_t n, std::size_t align_at);

private:
    TDBG_DECL void put(std::unique_ptr<byte_buffer> b);

    std::mutex mutex_;
    std::vector<std::unique_ptr<byte_buffer>> free_;
};

/// Event files opened for positional reads, shared by readers (read_at is
/// thread-safe); an object closes when the last reader and the cache drop it.
class object_cache {
public:
    /// `file` opened through `storage`; nullptr when the storage cannot open objects.
    TDBG_DECL std::shared_ptr<const object_reader> get(const any_storage& storage, const event_file& file,
                                                       std::uint32_t id);

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
    TDBG_DECL record_bytes fetch(const any_storage& storage, const record_request& request);

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
    TDBG_DECL void prefetch(const any_storage& storage, const std::vector<record_request>& requests);

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

    static TDBG_DECL void check_range(const record_request& request);

    [[nodiscard]] TDBG_DECL bool should_read_whole(const event_file& file,
                                                   const record_request& request) const noexcept;

    /// The piece to read for `request` where requests cost a round trip (see the file comment).
    [[nodiscard]] TDBG_DECL piece piece_for(const record_request& request) const noexcept;

    /// fetch() where requests cost a round trip.
    TDBG_DECL record_bytes fetch_coalesced(const any_storage& storage, const record_request& request);

    /// Reads the piece `mine` (registered by start_loading), keeps it, and hands it to those
    /// waiting for it; on failure they get the error, as the caller does.
    TDBG_DECL record_bytes load(const any_storage& storage, const event_file& file,
                                std::list<loading_piece>::iterator mine);

    TDBG_DECL void finish_loading(std::list<loading_piece>::iterator mine, std::exception_ptr failure);

    /// The record of `request` read on its own, placed as its content offset hint says.
    TDBG_DECL record_bytes read_alone(const any_storage& storage, const record_request& request);

    static TDBG_DECL record_bytes slice(const record_bytes& data, std::uint64_t begin, const record_request& request);

    TDBG_DECL record_bytes read_bytes(const any_storage& storage, const event_file& file, std::uint32_t file_id,
                                      std::uint64_t offset, std::uint64_t length, std::uint32_t align_at);

    // ---- under mutex_ ----------------------------------------------------------------------

    /// The record of `request` from a kept piece (made the most recently used), if one holds it.
    /// A local file read whole is let go once as many records were read from it as the index
    /// lists in it: a reader going step by step is done with it (its buffer is then reused for
    /// the next file instead of fresh memory), and it counts as no whole read for
    /// should_read_whole. Reading the step again reads the file whole again (one read).
    TDBG_DECL std::optional<record_bytes> find_kept(const record_request& request);

    [[nodiscard]] TDBG_DECL bool find_kept_piece(const piece& where) const;

    /// The piece being read that holds [offset, offset + length) of file `file_id`, or loading_.end().
    TDBG_DECL std::list<loading_piece>::iterator find_loading(std::uint32_t file_id, std::uint64_t offset,
                                                              std::uint64_t length);

    TDBG_DECL std::list<loading_piece>::iterator start_loading(const piece& where);

    /// Keeps `added` (unless a kept piece holds it; those it holds go), then evicts the least
    /// recently used pieces beyond the capacity.
    TDBG_DECL void keep(kept_piece added);

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

#if TDBG_HEADER_ONLY
#include "tdbg/trial/detail/impl/record_cache.ipp"
#endif
