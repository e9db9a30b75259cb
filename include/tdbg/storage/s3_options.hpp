#pragma once
/// \file
/// What an S3 storage is configured with and what it reports (storage/s3.hpp): its options,
/// request counters and errors. Needs neither libcurl nor pugixml.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "tdbg/storage/detail/s3_retry.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

/// How to reach S3. Empty strings are taken from the standard AWS variables
/// (unless `use_environment` is false), then from the defaults noted.
struct s3_options {
    /// AWS_ACCESS_KEY_ID.
    std::string access_key_id;
    /// AWS_SECRET_ACCESS_KEY. Never printed, not even in error messages.
    std::string secret_access_key;
    /// AWS_SESSION_TOKEN (temporary credentials); optional, never printed.
    std::string session_token;
    /// AWS_REGION, then AWS_DEFAULT_REGION, then "us-east-1".
    std::string region;
    /// AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL, then AWS's regional endpoint.
    std::string endpoint_url;
    /// Read the variables above for the fields left empty.
    bool use_environment = true;
    /// Path-style URLs (endpoint/bucket/key); default: yes for a custom endpoint,
    /// virtual-hosted (bucket.endpoint/key) on AWS when the bucket name allows it.
    std::optional<bool> path_style;
    /// Send the SHA-256 of each body (the server refuses a body that differs);
    /// false sends "UNSIGNED-PAYLOAD" and saves the hashing.
    bool sign_payload = true;
    /// Objects larger than this go up in parts of this size (multipart upload);
    /// S3 wants 5 MiB to 5 GiB, and at most 10000 parts.
    std::uint64_t part_size = 8ull << 20;
    /// Keys per ListObjectsV2 page (1..1000). A page holding more keys than this is refused.
    int list_page_size = 1000;
    /// The pages one listing may take (10000 by default: 10 million keys with 1000 keys a page):
    /// a listing still truncated after this many is refused with a storage_error naming its
    /// prefix, as is one whose server repeats a continuation token, so a server that never
    /// ends a listing neither hangs the reader nor fills its memory (at most max_list_pages
    /// times list_page_size keys, each at most S3's 1024 bytes, are kept).
    int max_list_pages = 10'000;
    /// Pages in a row that bring no new key (none at all, or only keys not after the last one
    /// seen: S3 lists keys in order) before a listing that is still truncated is refused: a
    /// broken server is found within a few requests, not after max_list_pages.
    int max_stalled_list_pages = 8;
    /// The bytes of keys one listing may hold (1 GiB by default: some 20 million keys of a run):
    /// a listing that brings more is refused, whatever its page count.
    std::uint64_t max_list_bytes = std::uint64_t{1} << 30U;
    /// The largest object read() reads whole (index, collections files; event files are
    /// read by ranges): a larger reply is aborted, a storage_error, so a damaged or
    /// hostile run cannot fill memory (as local_storage::options::max_read_bytes).
    std::uint64_t max_read_bytes = std::uint64_t{256} << 20U;
    /// Time allowed to connect (10 s).
    std::chrono::milliseconds connect_timeout{10'000};
    /// Time allowed for one whole request, connecting and every byte of the reply included
    /// (10 minutes); 0: no limit (the low-speed limit still applies). A request that runs
    /// out of time is retried as a timeout.
    std::chrono::milliseconds request_timeout{600'000};
    /// The low-speed limit, bytes per second: a transfer that moves less than this on
    /// average for stall_timeout is aborted (and retried), so a server that sends a reply
    /// a few bytes at a time cannot keep a reader waiting (1 KiB/s; at least 1 is used).
    std::uint64_t low_speed_limit = 1024;
    /// How long a transfer may stay below low_speed_limit (30 s; at least 1 s is used).
    std::chrono::seconds stall_timeout{30};
    /// Asked before each request and each retry, and about once a second while a transfer
    /// runs (libcurl's progress callback, called even while no byte arrives): once it
    /// returns true, the request is aborted and s3_cancelled is thrown. Empty: never
    /// cancelled. Called from every thread that reads or writes: it must be thread-safe and
    /// quick (one that throws during a transfer cancels it). The `tdbg` program sets it to
    /// "a SIGINT or SIGTERM came".
    std::function<bool()> cancelled;
    /// Check the server's TLS certificate.
    bool verify_tls = true;
    /// A CA bundle for TLS instead of the system's.
    std::string ca_file;
    /// Idle connections kept for reuse.
    std::size_t max_idle_connections = 32;
    /// Retries after 5xx replies, timeouts and connection errors.
    s3_retry_policy retry;
    /// Readers may read more than they need to save requests (the storage concept's
    /// coalesce_reads capability): the trial then reads an event file in one GET (up
    /// to 64 MiB; windows of 8 MiB when larger) where it would send one ranged GET per
    /// record. false: one ranged GET per record read.
    bool coalesce_reads = true;
};

/// Counters of the requests an s3_storage made; copies of a storage share them.
struct s3_stats {
    std::uint64_t requests = 0; ///< HTTP requests sent, retries included
    std::uint64_t retries = 0; ///< requests that repeated a failed one
    std::uint64_t bytes_sent = 0; ///< request body bytes
    std::uint64_t bytes_received = 0; ///< reply body bytes
};

/// An error reply from S3 (other than a missing object): HTTP status and S3's error code.
class s3_error : public storage_error {
public:
    s3_error(const std::string& what, long http_status, std::string code)
        : storage_error(what), http_status_(http_status), code_(std::move(code)) {}
    /// The HTTP status (0 when no reply arrived).
    [[nodiscard]] long http_status() const noexcept { return http_status_; }
    /// S3's error code ("AccessDenied", "SignatureDoesNotMatch", ...), or "".
    [[nodiscard]] const std::string& code() const noexcept { return code_; }

private:
    long http_status_;
    std::string code_;
};

/// A request stopped because s3_options::cancelled said so; nothing was retried after it.
class s3_cancelled : public storage_error {
public:
    using storage_error::storage_error;
};

} // namespace tdbg
