#pragma once
/// \file
/// Definitions of tdbg/storage/memory_storage.hpp.

#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/memory_storage.hpp"

namespace tdbg {

namespace detail {

// The state copies of a memory_storage share. Objects are held by shared
// pointers to immutable strings: a read copies out of its own reference, after
// the lock is released, and a replaced object lives on for readers that opened it.
struct memory_objects {
    explicit memory_objects(std::string run_name) : name(std::move(run_name)) {}

    const std::string name;
    mutable std::mutex mutex;
    std::map<std::string, std::shared_ptr<const std::string>, std::less<>> objects;

    void publish(const std::string& key, std::string bytes) {
        auto object = std::make_shared<const std::string>(std::move(bytes));
        const std::lock_guard<std::mutex> lock(mutex);
        objects.insert_or_assign(key, std::move(object));
    }
};

// "<where>: wanted bytes a..b but the object ends at byte n", as local_storage says it of files.
inline storage_error past_end(const std::string& where, std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
    return storage_error(fmt::format("{}: wanted bytes {}..{} but the object ends at byte {}", where, offset,
                                     offset + length, size));
}

} // namespace detail

TDBG_DECL memory_storage::memory_storage(std::string name)
    : objects_(std::make_shared<detail::memory_objects>(std::move(name))) {}

TDBG_DECL void memory_storage::writer::append(std::string_view bytes) {
    if (committed_) {
        throw usage_error(fmt::format("memory://{}/{}: append after commit", objects_->name, key_));
    }
    bytes_.append(bytes);
}

TDBG_DECL void memory_storage::writer::commit() {
    if (committed_) {
        throw usage_error(fmt::format("memory://{}/{}: committed twice", objects_->name, key_));
    }
    committed_ = true;
    objects_->publish(key_, std::move(bytes_));
    bytes_.clear();
}

TDBG_DECL void memory_storage::reader::read_at(std::uint64_t offset, char* out, std::size_t length) const {
    const std::uint64_t size = bytes_->size();
    if (offset > size || length > size - offset) {
        throw detail::past_end(where_, offset, length, size);
    }
    if (length > 0) {
        std::memcpy(out, bytes_->data() + offset, length);
    }
}

TDBG_DECL const std::string& memory_storage::name() const noexcept { return objects_->name; }

TDBG_DECL std::string memory_storage::describe() const { return "memory://" + objects_->name; }

TDBG_DECL memory_storage::writer memory_storage::open_write(const std::string& key) const {
    validate_key(key);
    return writer(objects_, key);
}

TDBG_DECL void memory_storage::put(const std::string& key, std::string_view bytes) const {
    validate_key(key);
    objects_->publish(key, std::string(bytes));
}

TDBG_DECL std::shared_ptr<const std::string> memory_storage::find(const std::string& key) const {
    validate_key(key);
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    const auto it = objects_->objects.find(key);
    if (it == objects_->objects.end()) {
        throw object_not_found(fmt::format("no such object: {}", where(key)));
    }
    return it->second;
}

TDBG_DECL std::string memory_storage::read(const std::string& key) const { return *find(key); }

TDBG_DECL std::string memory_storage::read_range(const std::string& key, std::uint64_t offset,
                                                 std::uint64_t length) const {
    const auto bytes = find(key);
    if (offset > bytes->size() || length > bytes->size() - offset) {
        throw detail::past_end(where(key), offset, length, bytes->size());
    }
    return bytes->substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

TDBG_DECL memory_storage::reader memory_storage::open_read(const std::string& key) const {
    return reader(find(key), where(key));
}

TDBG_DECL std::vector<std::string> memory_storage::list(const std::string& prefix,
                                                        const std::string& start_after) const {
    return list_range(prefix, start_after, {});
}

TDBG_DECL std::vector<std::string> memory_storage::list_range(const std::string& prefix, const std::string& start_after,
                                                              const std::string& last) const {
    std::vector<std::string> keys;
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    const auto& objects = objects_->objects;
    // The first key at or after the prefix, and after start_after; keys sharing the prefix are contiguous.
    auto it = objects.lower_bound(prefix);
    if (!start_after.empty() && (it == objects.end() || it->first <= start_after)) {
        it = objects.upper_bound(start_after);
    }
    for (; it != objects.end() && it->first.compare(0, prefix.size(), prefix) == 0 && (last.empty() || it->first <= last);
         ++it) {
        keys.push_back(it->first);
    }
    return keys;
}

TDBG_DECL bool memory_storage::exists(const std::string& key) const {
    validate_key(key);
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    return objects_->objects.count(key) != 0;
}

TDBG_DECL bool memory_storage::put_if_absent(const std::string& key, std::string_view bytes) const {
    validate_key(key);
    auto object = std::make_shared<const std::string>(bytes);
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    return objects_->objects.try_emplace(key, std::move(object)).second;
}

TDBG_DECL void memory_storage::remove(const std::string& key) const {
    validate_key(key);
    std::shared_ptr<const std::string> removed; // freed after the lock is released
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    const auto it = objects_->objects.find(key);
    if (it != objects_->objects.end()) {
        removed = std::move(it->second);
        objects_->objects.erase(it);
    }
}

TDBG_DECL std::size_t memory_storage::size() const {
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    return objects_->objects.size();
}

TDBG_DECL std::uint64_t memory_storage::total_bytes() const {
    const std::lock_guard<std::mutex> lock(objects_->mutex);
    std::uint64_t total = 0;
    for (const auto& entry : objects_->objects) {
        total += entry.second->size();
    }
    return total;
}

} // namespace tdbg
