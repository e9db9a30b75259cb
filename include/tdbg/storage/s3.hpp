#pragma once
/// \file
/// The S3 backend: a run stored below `s3://bucket/prefix` in Amazon S3 or
/// any S3-compatible server. Opt-in: needs libcurl and pugixml (CMake target
/// `tdbg::s3`). Header-only in both build modes (see tdbg/config.hpp): the
/// storage is erased into any_storage where it is opened, so only that file
/// compiles it. Including this header registers the "s3" URL scheme. Requests are signed with libcurl's Signature V4,
/// run on pooled keep-alive connections, and are retried with backoff on 5xx replies, timeouts and connection errors.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/detail/s3_client.hpp"
#include "tdbg/storage/detail/s3_http.hpp"
#include "tdbg/storage/detail/s3_retry.hpp"
#include "tdbg/storage/detail/s3_uri.hpp"
#include "tdbg/storage/detail/s3_xml.hpp"
#include "tdbg/storage/open.hpp"
#include "tdbg/storage/s3_options.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {


/// A run stored below `s3://bucket/prefix`. Copies share one connection pool
/// and one set of counters; every member is thread-safe.
class s3_storage {
public:
    /// Opens `s3://bucket/prefix` with `options` (empty fields from the AWS variables).
    explicit s3_storage(std::string_view url, s3_options options = {})
        : client_(std::make_shared<detail::s3_client>(detail::parse_s3_url(url), std::move(options))) {}

    /// Writes one object: buffered, then one PutObject, or a multipart upload
    /// (parts of `part_size`, sent as they fill) for a large object. The object
    /// appears only at `commit()`; destroyed uncommitted, the upload is aborted.
    class writer {
    public:
        writer(const writer&) = delete;
        writer& operator=(const writer&) = delete;
        writer(writer&& other) noexcept
            : client_(std::move(other.client_)), key_(std::move(other.key_)), buffer_(std::move(other.buffer_)),
              upload_id_(std::exchange(other.upload_id_, {})), etags_(std::move(other.etags_)), size_(other.size_),
              open_(std::exchange(other.open_, false)) {}
        writer& operator=(writer&&) = delete;
        ~writer() {
            if (open_ && !upload_id_.empty()) {
                client_->abort_multipart(key_, upload_id_);
            }
        }

        /// Appends bytes to the object; full parts are uploaded as they fill.
        void append(std::string_view bytes) {
            if (!open_) {
                throw storage_error(fmt::format("write to {} after commit or failure", client_->describe_key(key_)));
            }
            buffer_.append(bytes.data(), bytes.size());
            size_ += bytes.size();
            const auto part = static_cast<std::size_t>(client_->options().part_size);
            if (buffer_.size() < part) {
                return;
            }
            std::size_t sent = 0;
            guard([&] {
                if (upload_id_.empty()) {
                    upload_id_ = client_->create_multipart(key_);
                }
                while (buffer_.size() - sent >= part) {
                    send_part(std::string_view(buffer_).substr(sent, part));
                    sent += part;
                }
            });
            buffer_.erase(0, sent);
        }

        /// Bytes appended so far.
        [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

        /// Publishes the object.
        void commit() {
            if (!open_) {
                throw storage_error(fmt::format("commit of {} twice or after a failure", client_->describe_key(key_)));
            }
            guard([&] {
                if (upload_id_.empty()) {
                    client_->put_object(key_, buffer_);
                } else {
                    if (!buffer_.empty()) {
                        send_part(buffer_);
                    }
                    client_->complete_multipart(key_, upload_id_, etags_, size_);
                }
            });
            open_ = false;
            upload_id_.clear();
            buffer_ = std::string();
        }

    private:
        friend class s3_storage;
        writer(std::shared_ptr<detail::s3_client> client, std::string key)
            : client_(std::move(client)), key_(std::move(key)) {}

        void send_part(std::string_view bytes) {
            client_->check_part_count(key_, etags_.size() + 1);
            etags_.push_back(client_->upload_part(key_, upload_id_, etags_.size() + 1, bytes));
        }

        /// Runs `f`; on failure aborts the upload and closes the writer.
        template <class F>
        void guard(F&& f) {
            try {
                f();
            } catch (...) {
                open_ = false;
                if (!upload_id_.empty()) {
                    client_->abort_multipart(key_, std::exchange(upload_id_, {}));
                }
                throw;
            }
        }

        std::shared_ptr<detail::s3_client> client_;
        std::string key_;
        std::string buffer_;
        std::string upload_id_;
        std::vector<std::string> etags_;
        std::uint64_t size_ = 0;
        bool open_ = true;
    };

    /// "s3://bucket/prefix", for messages.
    [[nodiscard]] std::string describe() const { return client_->describe_key(client_->location().prefix); }
    /// The bucket.
    [[nodiscard]] const std::string& bucket() const noexcept { return client_->location().bucket; }
    /// The run's key prefix in the bucket ("" for the bucket's root).
    [[nodiscard]] const std::string& prefix() const noexcept { return client_->location().prefix; }
    /// The endpoint requests go to, e.g. "https://s3.us-east-1.amazonaws.com".
    [[nodiscard]] std::string endpoint() const { return client_->endpoint(); }
    /// The settings in use (the secret is in there: do not print them).
    [[nodiscard]] const s3_options& options() const noexcept { return client_->options(); }

    /// Starts writing `key`.
    [[nodiscard]] writer open_write(const std::string& key) const {
        validate_key(key);
        return writer(client_, client_->full_key(key));
    }

    /// Writes and publishes `key` in one call (multipart above part_size).
    void put(const std::string& key, std::string_view bytes) const {
        validate_key(key);
        client_->put(client_->full_key(key), bytes);
    }

    /// The whole object; throws object_not_found when it does not exist.
    [[nodiscard]] std::string read(const std::string& key) const {
        validate_key(key);
        return client_->get_object(client_->full_key(key));
    }

    /// `length` bytes from `offset` (one ranged GET); throws storage_error when
    /// the object is shorter, object_not_found when it does not exist.
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        validate_key(key);
        return client_->get_range(client_->full_key(key), offset, length);
    }

    /// Published keys below the run starting with `prefix`, relative to the
    /// run, sorted, greater than `start_after`; `*.tmp` keys are left out.
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after = {}) const {
        return client_->list(prefix, start_after);
    }

    /// The same, up to `last` (empty: no bound): no page is asked for after one that passed
    /// `last` (the bounded listing capability).
    [[nodiscard]] std::vector<std::string> list_range(const std::string& prefix, const std::string& start_after,
                                                      const std::string& last) const {
        return client_->list(prefix, start_after, last);
    }

    /// True when `key` exists (one HEAD request).
    [[nodiscard]] bool exists(const std::string& key) const {
        validate_key(key);
        return client_->head_object(client_->full_key(key)).has_value();
    }

    /// Writes `key` only when no object has it (the storage concept's put_if_absent capability):
    /// a conditional PUT, or where the server lacks those, candidates and a listing (see
    /// detail::s3_client::put_if_absent_by_listing for what that cannot guarantee).
    [[nodiscard]] bool put_if_absent(const std::string& key, std::string_view bytes) const {
        validate_key(key);
        return client_->put_if_absent(key, bytes);
    }

    /// Deletes `key`; no error when it does not exist.
    void remove(const std::string& key) const {
        validate_key(key);
        client_->delete_object(client_->full_key(key));
    }

    /// Creates the bucket (for tests and tools); no error when it is already ours.
    void create_bucket() const { client_->create_bucket(); }

    /// Request counters, shared by all copies of this storage.
    [[nodiscard]] s3_stats stats() const noexcept { return client_->stats(); }

    /// Requests worth having in flight at once: each costs a round trip, so many
    /// (the storage concept's request_concurrency capability).
    [[nodiscard]] std::size_t request_concurrency() const noexcept { return 16; }

    /// True unless the options say otherwise: a request costs a round trip, so reading more
    /// than asked for pays (the storage concept's coalesce_reads capability).
    [[nodiscard]] bool coalesce_reads() const noexcept { return client_->options().coalesce_reads; }

private:
    std::shared_ptr<detail::s3_client> client_;
};

static_assert(is_storage_v<s3_storage>, "s3_storage must satisfy the storage concept");

namespace detail {
inline any_storage open_s3_url(std::string_view url) { return s3_storage(url); }
} // namespace detail

/// Makes open_storage, create_trial and the command line open "s3://bucket/prefix"
/// in every program that includes this header.
inline const storage_scheme_registrar s3_scheme_registration{"s3", &detail::open_s3_url};

} // namespace tdbg
