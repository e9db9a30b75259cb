#pragma once
/// \file
/// The in-memory backend: a run held by the process, for unit tests and for
/// rules watched from inside the training process (tdbg/rules/watch.hpp).
///
///     tdbg::memory_storage run("mlp");                 // describe(): "memory://mlp"
///     tdbg::hook hook(run, options);                   // writes into it
///     tdbg::trial trial = tdbg::open_trial(run, "mlp"); // reads it, live or finished
///
/// Copies share one run, so a hook and a trial hold the same objects; every
/// operation is thread-safe (a hook's writer threads write while a trial reads).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

namespace detail {
struct memory_objects;
} // namespace detail

/// Holds a run's objects in memory, in a sorted map behind a mutex. Objects are
/// immutable once published: put and commit replace an object whole, so a
/// reader never sees a partial object, and one opened for reads keeps the bytes
/// it was opened with. Has the open_read and remove capabilities.
class memory_storage {
public:
    /// An empty run named `name` (for messages: "memory://<name>").
    TDBG_DECL explicit memory_storage(std::string name = "run");

    /// Writes one object; `commit()` publishes it atomically. Destroyed
    /// uncommitted, it is discarded.
    class writer {
    public:
        writer(const writer&) = delete;
        writer& operator=(const writer&) = delete;
        writer(writer&&) noexcept = default;
        writer& operator=(writer&&) = delete;
        ~writer() = default;

        /// Appends bytes to the object (usage_error after commit).
        TDBG_DECL void append(std::string_view bytes);
        /// Bytes appended so far.
        [[nodiscard]] std::uint64_t size() const noexcept { return bytes_.size(); }
        /// Publishes the object under its key (usage_error the second time).
        TDBG_DECL void commit();

    private:
        friend class memory_storage;
        writer(std::shared_ptr<detail::memory_objects> objects, std::string key)
            : objects_(std::move(objects)), key_(std::move(key)) {}

        std::shared_ptr<detail::memory_objects> objects_;
        std::string key_;
        std::string bytes_;
        bool committed_ = false;
    };

    /// An object opened for positional reads: the bytes it held when opened.
    class reader {
    public:
        /// The object's size when it was opened.
        [[nodiscard]] std::uint64_t size() const noexcept { return bytes_->size(); }
        /// Fills `out[0, length)` from `offset`; throws storage_error past the end.
        TDBG_DECL void read_at(std::uint64_t offset, char* out, std::size_t length) const;

    private:
        friend class memory_storage;
        reader(std::shared_ptr<const std::string> bytes, std::string where)
            : bytes_(std::move(bytes)), where_(std::move(where)) {}

        std::shared_ptr<const std::string> bytes_;
        std::string where_;
    };

    /// The run's name.
    [[nodiscard]] TDBG_DECL const std::string& name() const noexcept;
    /// "memory://<name>", for messages.
    [[nodiscard]] TDBG_DECL std::string describe() const;

    /// Starts writing `key`.
    [[nodiscard]] TDBG_DECL writer open_write(const std::string& key) const;
    /// Publishes `bytes` as `key` in one call.
    TDBG_DECL void put(const std::string& key, std::string_view bytes) const;
    /// The whole object; object_not_found when there is none.
    [[nodiscard]] TDBG_DECL std::string read(const std::string& key) const;
    /// `length` bytes from `offset`; throws storage_error when the object is shorter.
    [[nodiscard]] TDBG_DECL std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const;
    /// `key` opened for positional reads.
    [[nodiscard]] TDBG_DECL reader open_read(const std::string& key) const;
    /// Published keys starting with `prefix` (a string prefix), sorted, greater than `start_after`.
    [[nodiscard]] TDBG_DECL std::vector<std::string> list(const std::string& prefix, const std::string& start_after = {}) const;
    /// The same, up to `last` (empty: no bound): the walk stops at the first key after it.
    [[nodiscard]] TDBG_DECL std::vector<std::string> list_range(const std::string& prefix, const std::string& start_after,
                                                                const std::string& last) const;
    /// True when `key` is published.
    [[nodiscard]] TDBG_DECL bool exists(const std::string& key) const;
    /// Publishes `key` only when no object has it, under the lock (the put_if_absent capability).
    [[nodiscard]] TDBG_DECL bool put_if_absent(const std::string& key, std::string_view bytes) const;
    /// Withdraws `key` (the remove capability); no error when it is absent.
    TDBG_DECL void remove(const std::string& key) const;

    /// The number of objects published.
    [[nodiscard]] TDBG_DECL std::size_t size() const;
    /// Their bytes, all together.
    [[nodiscard]] TDBG_DECL std::uint64_t total_bytes() const;

private:
    [[nodiscard]] std::string where(const std::string& key) const { return describe() + "/" + key; }
    [[nodiscard]] TDBG_DECL std::shared_ptr<const std::string> find(const std::string& key) const;

    std::shared_ptr<detail::memory_objects> objects_;
};

static_assert(is_storage_v<memory_storage>, "memory_storage must satisfy the storage concept");

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/storage/impl/memory_storage.ipp"
#endif
