#pragma once
/// \file
/// Fetches the records the index locates, by byte range. Small records are
/// syscall-bound, so an event file whose records are small is read whole on
/// its second use and kept (LRU, bounded in bytes): a step's tensors read one
/// after the other then cost one read. Files of large records are always read
/// by range. Where the storage can open an object for positional reads (its
/// open_read capability: a local file's descriptor and pread), the reads go
/// through a small cache of opened objects, into buffers not zero-filled first.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// An event file the index refers to. Created once, never moved (the trial
/// keeps them in a deque); the counters are updated as the index grows and
/// as records are read.
struct event_file {
    explicit event_file(std::string k) : key(std::move(k)) {}
    std::string key;
    std::atomic<std::uint64_t> extent{0};        // end of the last indexed record
    std::atomic<std::uint32_t> records{0};       // records the index lists in it
    mutable std::atomic<std::uint32_t> single_reads{0}; // records read one by one
    mutable std::atomic<std::uint32_t> whole_reads{0};  // times it was read whole
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
    byte_buffer(std::size_t n, std::size_t align_at) : data(new char[n + max_alignment]), size(n) {
        if (align_at != 0) {
            const auto address = reinterpret_cast<std::uintptr_t>(data.get()) + align_at;
            shift = (max_alignment - address % max_alignment) % max_alignment;
        }
    }
    std::unique_ptr<char[]> data;
    std::size_t size;
    std::size_t shift = 0;
    [[nodiscard]] char* begin() const noexcept { return data.get() + shift; }
    [[nodiscard]] std::string_view view() const noexcept { return {begin(), size}; }
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
        /// Files larger than this are never read whole.
        std::uint64_t whole_file_limit = std::uint64_t{16} << 20U;
        /// Only files whose records average at most this many bytes are read whole.
        std::uint64_t small_record_limit = std::uint64_t{16} << 10U;
        /// The bytes of whole files kept.
        std::uint64_t capacity = std::uint64_t{256} << 20U;
    };

    record_cache() : record_cache(options{}) {}
    explicit record_cache(options opts) : options_(opts) {}

    record_bytes fetch(const any_storage& storage, const record_request& request) {
        const event_file& file = *request.file;
        if (request.length == 0 || request.offset + request.length < request.offset) {
            throw format_error(
                fmt::format("index entry with an empty or overflowing byte range (length {})", request.length), file.key,
                request.offset);
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (auto it = kept_.find(request.file_id); it != kept_.end()) {
                lru_.splice(lru_.begin(), lru_, it->second);
                const record_bytes& data = it->second->data;
                if (request.offset + request.length <= data.bytes.size()) {
                    return {data.owner, data.bytes.substr(request.offset, request.length)};
                }
            }
        }
        if (!should_read_whole(file, request)) {
            file.single_reads.fetch_add(1, std::memory_order_relaxed);
            return read_bytes(storage, request, request.offset, request.length, request.content_offset_hint);
        }
        file.whole_reads.fetch_add(1, std::memory_order_relaxed);
        record_bytes data = read_bytes(storage, request, 0, file.extent.load(std::memory_order_relaxed), 0);
        keep(request.file_id, data);
        return {std::move(data.owner), data.bytes.substr(request.offset, request.length)};
    }

private:
    struct kept_file {
        std::uint32_t id = 0;
        record_bytes data;
    };

    [[nodiscard]] bool should_read_whole(const event_file& file, const record_request& request) const noexcept {
        const std::uint64_t extent = file.extent.load(std::memory_order_relaxed);
        const std::uint32_t records = file.records.load(std::memory_order_relaxed);
        return records >= 2 && extent >= request.offset + request.length && extent <= options_.whole_file_limit &&
               extent <= options_.capacity / 4 && extent / records <= options_.small_record_limit &&
               file.single_reads.load(std::memory_order_relaxed) >= 1 && // second use
               file.whole_reads.load(std::memory_order_relaxed) < 2;     // evicted and read again: stop
    }

    record_bytes read_bytes(const any_storage& storage, const record_request& request, std::uint64_t offset,
                            std::uint64_t length, std::uint32_t align_at) {
        const event_file& file = *request.file;
        if (const auto object = objects_.get(storage, file, request.file_id)) {
            // Checked before allocating: a corrupt index entry must not ask for more than the file holds.
            if (offset > object->size() || length > object->size() - offset) {
                throw format_error(fmt::format("the index locates bytes {}..{} but the event file has {} bytes", offset,
                                               offset + length, object->size()),
                                   file.key, offset);
            }
            auto buffer = std::make_shared<byte_buffer>(static_cast<std::size_t>(length), align_at);
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

    void keep(std::uint32_t id, const record_bytes& data) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (kept_.count(id) != 0) {
            return;
        }
        bytes_ += data.bytes.size();
        lru_.push_front(kept_file{id, data});
        kept_.emplace(id, lru_.begin());
        while (bytes_ > options_.capacity && !lru_.empty()) {
            bytes_ -= lru_.back().data.bytes.size();
            kept_.erase(lru_.back().id);
            lru_.pop_back();
        }
    }

    options options_;
    object_cache objects_;
    std::mutex mutex_;
    std::list<kept_file> lru_;
    std::unordered_map<std::uint32_t, std::list<kept_file>::iterator> kept_;
    std::uint64_t bytes_ = 0;
};

} // namespace tdbg::detail
