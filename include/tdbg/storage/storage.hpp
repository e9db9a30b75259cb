#pragma once
/// \file
/// Where a run's bytes live: the storage concept a backend satisfies, and
/// `any_storage`, the one handle the library holds any backend by.
///
/// Keys are relative, '/'-separated paths below the run's root
/// ("index/000000000/000000000007_worker_0.json"). A backend `S` provides:
///   - `s.put(key, bytes)`: publish an object atomically (readers see all of it or nothing);
///   - `s.open_write(key)`: a writer with `append(bytes)` and `commit()` (atomic publish;
///     destroying it uncommitted discards it);
///   - `s.read(key) -> std::string`, `s.read_range(key, offset, length) -> std::string`;
///   - `s.list(prefix, start_after) -> std::vector<std::string>`: the published keys that
///     start with `prefix` (a string prefix, as in S3), sorted, greater than `start_after`;
///   - `s.exists(key) -> bool`;
///   - `s.describe() -> std::string`: where it is, for messages ("/runs/a", "s3://b/p").
/// Missing objects make `read`/`read_range` throw `object_not_found` (a `storage_error`).
///
/// Optional capabilities, which the library uses when a backend has them:
///   - `s.open_read(key) -> R`, an object opened for positional reads: `r.size()` (its
///     bytes as opened) and `r.read_at(offset, out, length)` (fills `out`; throws
///     storage_error past the end). The trial then reads records without a request
///     per record setup (local files: one descriptor, pread).
///   - `s.request_concurrency() -> std::size_t`: how many requests are worth having in
///     flight at once (1, the default: requests cost CPU, as local files do; S3: many,
///     as each costs a round trip).
///   - `s.coalesce_reads() -> bool`: true where a request costs far more than the bytes it
///     carries (a round trip), so that reading more than was asked for pays. The trial then
///     reads an event file whole on its first use, or in windows of several MiB when it is
///     large, instead of record by record, and can fetch the records of different files at
///     the same time (tdbg/trial/detail/record_cache.hpp). Default: `request_concurrency() > 1`
///     (S3: yes; local files: no, their small records are read by range first, a file read
///     whole only on its second use). A backend says false to read record by record.
///   - `s.list_range(prefix, start_after, last) -> std::vector<std::string>`: `list`'s keys that
///     are also at most `last` (no bound when `last` is empty), for a listing that stops early
///     (S3: no page after the one that passed `last`). The trial lists a step range's index
///     files with it, a folder of the index at a time. Without it, `any_storage` lists with
///     `list(prefix, start_after)` and drops the keys after `last` (a local listing of a
///     prefix such as "index/000000003/" reads that one directory already).
///   - `s.remove(key)`: withdraws a published object (no error when there is none). The
///     hook's writer uses it to take back an event file whose index could not be
///     published, so that a failed write does not leave data nothing reads.
///   - `s.put_if_absent(key, bytes) -> bool`: publishes `key` as `put` does, but only when no
///     object has that key, in one atomic step: of two callers racing for one key, one gets
///     true and the other false (local files: a hard link that fails when the name exists; S3:
///     a conditional PUT; memory: under its lock). The hook claims its worker in a run with it
///     (hook/detail/run_claim.hpp). Without it, `any_storage` asks `exists` and then puts,
///     which two callers racing can both pass.
///
/// Every call behind `any_storage` is a syscall or a network request, so the one
/// indirect call it adds is noise; in exchange the hook, the trial and the rules
/// are ordinary classes compiled once, whatever the backend.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/interface_base.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg {

/// Throws invalid_name unless `key` is a safe relative key: not empty, not
/// absolute, no "." or ".." component, no empty component, no NUL or backslash,
/// at most 255 bytes per component and 4096 in all.
TDBG_DECL void validate_key(std::string_view key);

namespace detail {

template <class S>
using storage_writer_t = std::decay_t<decltype(std::declval<S&>().open_write(std::declval<const std::string&>()))>;

template <class S, class = void>
struct is_storage : std::false_type {};

template <class S>
struct is_storage<
    S, std::void_t<decltype(std::declval<S&>().put(std::declval<const std::string&>(), std::declval<std::string_view>())),
                   storage_writer_t<S>,
                   decltype(std::declval<storage_writer_t<S>&>().append(std::declval<std::string_view>())),
                   decltype(std::declval<storage_writer_t<S>&>().commit()),
                   decltype(std::declval<const S&>().read(std::declval<const std::string&>())),
                   decltype(std::declval<const S&>().read_range(std::declval<const std::string&>(), std::uint64_t{}, std::uint64_t{})),
                   decltype(std::declval<const S&>().list(std::declval<const std::string&>(), std::declval<const std::string&>())),
                   decltype(std::declval<const S&>().exists(std::declval<const std::string&>())),
                   decltype(std::declval<const S&>().describe())>>
    : std::bool_constant<
          std::is_same_v<decltype(std::declval<const S&>().read(std::declval<const std::string&>())), std::string> &&
          std::is_same_v<decltype(std::declval<const S&>().read_range(std::declval<const std::string&>(), std::uint64_t{},
                                                                      std::uint64_t{})),
                         std::string> &&
          std::is_same_v<decltype(std::declval<const S&>().list(std::declval<const std::string&>(), std::declval<const std::string&>())),
                         std::vector<std::string>> &&
          std::is_convertible_v<decltype(std::declval<const S&>().exists(std::declval<const std::string&>())), bool> &&
          std::is_convertible_v<decltype(std::declval<const S&>().describe()), std::string> &&
          std::is_copy_constructible_v<S>> {};

template <class S, class = void>
struct has_open_read : std::false_type {};
template <class S>
struct has_open_read<S, std::void_t<decltype(std::declval<const S&>().open_read(std::declval<const std::string&>()).size()),
                                    decltype(std::declval<const S&>().open_read(std::declval<const std::string&>()).read_at(
                                        std::uint64_t{}, std::declval<char*>(), std::size_t{}))>> : std::true_type {};

template <class S, class = void>
struct has_list_range : std::false_type {};
template <class S>
struct has_list_range<S, std::void_t<decltype(std::vector<std::string>{std::declval<const S&>().list_range(
                             std::declval<const std::string&>(), std::declval<const std::string&>(),
                             std::declval<const std::string&>())})>> : std::true_type {};

template <class S, class = void>
struct has_remove : std::false_type {};
template <class S>
struct has_remove<S, std::void_t<decltype(std::declval<S&>().remove(std::declval<const std::string&>()))>>
    : std::true_type {};

template <class S, class = void>
struct has_put_if_absent : std::false_type {};
template <class S>
struct has_put_if_absent<S, std::void_t<decltype(bool{std::declval<S&>().put_if_absent(
                                std::declval<const std::string&>(), std::declval<std::string_view>())})>>
    : std::true_type {};

template <class S, class = void>
struct has_request_concurrency : std::false_type {};
template <class S>
struct has_request_concurrency<S, std::void_t<decltype(std::size_t{std::declval<const S&>().request_concurrency()})>>
    : std::true_type {};

template <class S, class = void>
struct has_coalesce_reads : std::false_type {};
template <class S>
struct has_coalesce_reads<S, std::void_t<decltype(bool{std::declval<const S&>().coalesce_reads()})>> : std::true_type {};

} // namespace detail

/// True when `S` satisfies the storage concept (C++17 detection): a copyable class with the
/// members above, the writing ones (put, open_write) callable on an `S&`, the others on a `const S&`.
template <class S>
inline constexpr bool is_storage_v = detail::is_storage<S>::value;

#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
/// The storage concept (C++20).
template <class S>
concept storage = is_storage_v<S>;
#endif

/// An object opened for positional reads (the `open_read` capability).
class object_reader : public detail::interface_base {
public:
    /// The object's size in bytes, as opened.
    [[nodiscard]] virtual std::uint64_t size() const = 0;
    /// Fills `out[0, length)` with the bytes at `offset`; throws storage_error past the end.
    virtual void read_at(std::uint64_t offset, char* out, std::size_t length) const = 0;
};

namespace detail {

// The interface every backend is erased to.
class storage_interface : public interface_base {
public:
    // An object being written.
    class writer_interface : public interface_base {
    public:
        virtual void append(std::string_view bytes) = 0;
        virtual void commit() = 0;
    };

    virtual void put(const std::string& key, std::string_view bytes) const = 0;
    [[nodiscard]] virtual std::unique_ptr<writer_interface> open_write(const std::string& key) const = 0;
    [[nodiscard]] virtual std::string read(const std::string& key) const = 0;
    [[nodiscard]] virtual std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const = 0;
    [[nodiscard]] virtual std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const = 0;
    [[nodiscard]] virtual std::vector<std::string> list_range(const std::string& prefix, const std::string& start_after,
                                                              const std::string& last) const = 0;
    [[nodiscard]] virtual bool exists(const std::string& key) const = 0;
    [[nodiscard]] virtual std::string describe() const = 0;
    [[nodiscard]] virtual std::unique_ptr<object_reader> open_read(const std::string& key) const = 0;
    [[nodiscard]] virtual std::size_t request_concurrency() const = 0;
    [[nodiscard]] virtual bool coalesce_reads() const = 0;
    [[nodiscard]] virtual bool remove(const std::string& key) const = 0;
    [[nodiscard]] virtual bool put_if_absent(const std::string& key, std::string_view bytes) const = 0;
    [[nodiscard]] virtual const void* target(const void* type_tag) const noexcept = 0;
};

// The address of a per-type variable: a type tag that needs no RTTI.
template <class S>
[[nodiscard]] const void* type_tag() noexcept {
    static const char tag = 0;
    return &tag;
}

template <class S>
class storage_model final : public storage_interface {
    using writer_type = storage_writer_t<S>;

    class writer_model final : public writer_interface {
    public:
        explicit writer_model(writer_type w) : w_(std::move(w)) {}
        void append(std::string_view bytes) override { w_.append(bytes); }
        void commit() override { w_.commit(); }

    private:
        writer_type w_;
    };

    template <class R>
    class reader_model final : public object_reader {
    public:
        explicit reader_model(R r) : r_(std::move(r)) {}
        [[nodiscard]] std::uint64_t size() const override { return r_.size(); }
        void read_at(std::uint64_t offset, char* out, std::size_t length) const override { r_.read_at(offset, out, length); }

    private:
        R r_;
    };

public:
    explicit storage_model(S s) : s_(std::move(s)) {}

    void put(const std::string& key, std::string_view bytes) const override { s_.put(key, bytes); }
    [[nodiscard]] std::unique_ptr<writer_interface> open_write(const std::string& key) const override {
        return std::make_unique<writer_model>(s_.open_write(key));
    }
    [[nodiscard]] std::string read(const std::string& key) const override { return s_.read(key); }
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const override {
        return s_.read_range(key, offset, length);
    }
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const override {
        return s_.list(prefix, start_after);
    }
    [[nodiscard]] std::vector<std::string> list_range(const std::string& prefix, const std::string& start_after,
                                                      const std::string& last) const override {
        if constexpr (has_list_range<S>::value) {
            return s_.list_range(prefix, start_after, last);
        } else {
            std::vector<std::string> keys = s_.list(prefix, start_after);
            if (!last.empty()) {
                keys.erase(std::upper_bound(keys.begin(), keys.end(), last), keys.end());
            }
            return keys;
        }
    }
    [[nodiscard]] bool exists(const std::string& key) const override { return s_.exists(key); }
    [[nodiscard]] std::string describe() const override { return s_.describe(); }
    [[nodiscard]] std::unique_ptr<object_reader> open_read(const std::string& key) const override {
        if constexpr (has_open_read<S>::value) {
            using reader_type = std::decay_t<decltype(s_.open_read(key))>;
            return std::make_unique<reader_model<reader_type>>(s_.open_read(key));
        } else {
            (void)key;
            return nullptr;
        }
    }
    [[nodiscard]] std::size_t request_concurrency() const override {
        if constexpr (has_request_concurrency<S>::value) {
            const std::size_t n = s_.request_concurrency();
            return n == 0 ? 1 : n;
        } else {
            return 1;
        }
    }
    [[nodiscard]] bool coalesce_reads() const override {
        if constexpr (has_coalesce_reads<S>::value) {
            return s_.coalesce_reads();
        } else {
            return request_concurrency() > 1;
        }
    }
    [[nodiscard]] bool remove(const std::string& key) const override {
        if constexpr (has_remove<S>::value) {
            s_.remove(key);
            return true;
        } else {
            (void)key;
            return false;
        }
    }
    [[nodiscard]] bool put_if_absent(const std::string& key, std::string_view bytes) const override {
        if constexpr (has_put_if_absent<S>::value) {
            return s_.put_if_absent(key, bytes);
        } else {
            // Not atomic: two callers racing may both find the key absent.
            if (s_.exists(key)) {
                return false;
            }
            s_.put(key, bytes);
            return true;
        }
    }
    [[nodiscard]] const void* target(const void* tag) const noexcept override {
        return tag == type_tag<S>() ? &s_ : nullptr;
    }

private:
    // Writing members may be non-const in a backend (the concept asks put and open_write of an S&).
    mutable S s_;
};

} // namespace detail

/// Any storage backend, held by one shared handle: copies share the backend.
/// It satisfies the storage concept itself, with every capability.
class any_storage {
public:
    /// Writes one object; `commit()` publishes it. Destroyed uncommitted, it is discarded.
    class writer {
    public:
        /// Appends bytes to the object.
        void append(std::string_view bytes) { w_->append(bytes); }
        /// Publishes the object under its key.
        void commit() { w_->commit(); }

    private:
        friend class any_storage;
        explicit writer(std::unique_ptr<detail::storage_interface::writer_interface> w) : w_(std::move(w)) {}
        std::unique_ptr<detail::storage_interface::writer_interface> w_;
    };

    /// Holds `storage`, any type that satisfies the storage concept.
    template <class S, class = std::enable_if_t<!std::is_same_v<std::decay_t<S>, any_storage>>>
    any_storage(S storage) // NOLINT(google-explicit-constructor): every storage is an any_storage
        : self_(std::make_shared<const detail::storage_model<S>>(std::move(storage))) {
        static_assert(is_storage_v<S>, "tdbg::any_storage: the type does not satisfy the storage concept (a copyable class "
                                       "with put, open_write (append, commit), read, read_range, list, exists and "
                                       "describe; see tdbg/storage/storage.hpp)");
    }

    /// Publishes `bytes` as `key` atomically.
    void put(const std::string& key, std::string_view bytes) const { self_->put(key, bytes); }
    /// Starts writing `key`.
    [[nodiscard]] writer open_write(const std::string& key) const { return writer(self_->open_write(key)); }
    /// The whole object `key`.
    [[nodiscard]] std::string read(const std::string& key) const { return self_->read(key); }
    /// `length` bytes of `key` from `offset`.
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        return self_->read_range(key, offset, length);
    }
    /// The published keys starting with `prefix`, sorted, greater than `start_after`.
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after = {}) const {
        return self_->list(prefix, start_after);
    }
    /// The published keys starting with `prefix`, sorted, greater than `start_after` and at
    /// most `last` (empty: no bound): the backend's bounded listing where it has one, else
    /// `list` with the keys after `last` dropped.
    [[nodiscard]] std::vector<std::string> list_range(const std::string& prefix, const std::string& start_after,
                                                      const std::string& last) const {
        return self_->list_range(prefix, start_after, last);
    }
    /// True when `key` is published.
    [[nodiscard]] bool exists(const std::string& key) const { return self_->exists(key); }
    /// Where the storage is, for messages.
    [[nodiscard]] std::string describe() const { return self_->describe(); }

    /// `key` opened for positional reads; nullptr when the backend has no such capability.
    [[nodiscard]] std::unique_ptr<object_reader> open_read(const std::string& key) const { return self_->open_read(key); }
    /// How many requests are worth having in flight at once (at least 1).
    [[nodiscard]] std::size_t request_concurrency() const { return self_->request_concurrency(); }
    /// True when reading more than asked for pays (a request costs a round trip).
    [[nodiscard]] bool coalesce_reads() const { return self_->coalesce_reads(); }
    /// Withdraws `key` (no error when it is absent); false when the backend cannot remove objects.
    [[nodiscard]] bool remove(const std::string& key) const { return self_->remove(key); }
    /// Publishes `bytes` as `key` when no object has that key; false (and nothing written) when
    /// one has. Atomic where the backend has the capability, else `exists` then `put`.
    [[nodiscard]] bool put_if_absent(const std::string& key, std::string_view bytes) const {
        return self_->put_if_absent(key, bytes);
    }

    /// The held backend if it is an `S`, else nullptr.
    template <class S>
    [[nodiscard]] const S* target() const noexcept {
        return static_cast<const S*>(self_->target(detail::type_tag<S>()));
    }

private:
    std::shared_ptr<const detail::storage_interface> self_;
};

static_assert(is_storage_v<any_storage>, "any_storage must satisfy the storage concept");

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/storage/impl/storage.ipp"
#endif
