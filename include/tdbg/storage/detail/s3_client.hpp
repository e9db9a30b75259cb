#pragma once
/// \file
/// The S3 client behind tdbg::s3_storage (storage/s3.hpp): the state every copy of a storage
/// and its writers share (settings, a pool of keep-alive connections, counters), signed
/// requests with retries and backoff, and the S3 operations the storage is made of. Needs
/// libcurl and pugixml (CMake target `tdbg::s3`). One class, over 600 lines: its members share
/// one pool of connections and one set of counters, and each S3 operation is a few of them.

#include <algorithm>
#include <atomic>
#include <charconv>
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
#include <system_error>
#include <thread>
#include <utility>
#include <vector>
#include <fmt/core.h>
#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/detail/s3_http.hpp"
#include "tdbg/storage/detail/s3_retry.hpp"
#include "tdbg/storage/detail/s3_uri.hpp"
#include "tdbg/storage/detail/s3_xml.hpp"
#include "tdbg/storage/open.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/storage/s3_options.hpp"

namespace tdbg::detail {

/// The state every copy of an s3_storage (and its writers) shares: settings,
/// connection pool and counters. Thread-safe.
class s3_client {
public:
    s3_client(s3_location location, s3_options options)
        : location_(std::move(location)), options_(std::move(options)), pool_(options_.max_idle_connections) {
        resolve_from_environment();
        check_options();
        settings_.sigv4_provider = fmt::format("aws:amz:{}:s3", options_.region);
        settings_.access_key_id = options_.access_key_id;
        settings_.secret_access_key = options_.secret_access_key;
        settings_.connect_timeout_ms = static_cast<long>(options_.connect_timeout.count());
        settings_.request_timeout_ms = static_cast<long>(options_.request_timeout.count());
        settings_.stall_timeout_s = static_cast<long>(std::max<std::int64_t>(1, options_.stall_timeout.count()));
        settings_.low_speed_limit = static_cast<long>(
            std::clamp<std::uint64_t>(options_.low_speed_limit, 1, std::numeric_limits<long>::max()));
        settings_.cancelled = options_.cancelled;
        settings_.verify_tls = options_.verify_tls;
        settings_.ca_file = options_.ca_file;
    }

    [[nodiscard]] const s3_location& location() const noexcept { return location_; }
    [[nodiscard]] const s3_options& options() const noexcept { return options_; }
    [[nodiscard]] std::string endpoint() const { return endpoint_.url(); }

    /// The bucket key of a run-relative key.
    [[nodiscard]] std::string full_key(std::string_view key) const {
        return location_.prefix.empty() ? std::string(key) : fmt::format("{}/{}", location_.prefix, key);
    }

    /// "s3://bucket/full-key", for messages.
    [[nodiscard]] std::string describe_key(const std::string& full) const {
        return full.empty() ? fmt::format("s3://{}", location_.bucket)
                            : fmt::format("s3://{}/{}", location_.bucket, full);
    }

    [[nodiscard]] s3_stats stats() const noexcept {
        return {requests_.load(), retries_.load(), bytes_sent_.load(), bytes_received_.load()};
    }

    // ---- operations on bucket keys ----------------------------------------------------------------

    void put_object(const std::string& full, std::string_view bytes) {
        send({"PUT", object_url(full, {}), fmt::format("PUT {}", describe_key(full)), bytes, {}, 1u << 20}, {200});
    }

    [[nodiscard]] std::string get_object(const std::string& full) {
        const call c{"GET",
                     object_url(full, {}),
                     fmt::format("GET {}", describe_key(full)),
                     {},
                     {},
                     static_cast<std::size_t>(std::min<std::uint64_t>(options_.max_read_bytes,
                                                                       std::numeric_limits<std::size_t>::max() / 2))};
        return std::move(send(c, {200}).reply.body);
    }

    [[nodiscard]] std::string get_range(const std::string& full, std::uint64_t offset, std::uint64_t length) {
        const std::string what = fmt::format("GET {} bytes {}..{}", describe_key(full), offset, offset + length);
        if (length == 0) {
            const auto size = head_object(full);
            if (!size) {
                throw object_not_found(fmt::format("no such object: {}", describe_key(full)));
            }
            if (*size < offset) {
                throw storage_error(fmt::format("{}: wanted bytes {}..{} but the object ends at byte {}",
                                                describe_key(full), offset, offset, *size));
            }
            return {};
        }
        if (length > std::numeric_limits<std::size_t>::max() / 4) {
            throw storage_error(fmt::format("{}: range too large", what));
        }
        const std::string range = fmt::format("Range: bytes={}-{}", offset, offset + length - 1);
        // a server that ignores Range answers 200 with the whole object: allow a little of that
        const auto cap = static_cast<std::size_t>(offset + length + (1u << 20));
        result r = send({"GET", object_url(full, {}), what, {}, {range}, cap}, {200, 206, 416});
        http_reply& reply = r.reply;
        auto short_object = [&](const std::string& total) {
            return storage_error(fmt::format("{}: wanted bytes {}..{} but the object ends at byte {}",
                                             describe_key(full), offset, offset + length,
                                             total.empty() ? "(unknown)" : total));
        };
        if (reply.status == 416) {
            std::string total = total_of_content_range(reply.header("content-range"));
            if (total.empty()) {
                const auto size = head_object(full);
                total = size ? std::to_string(*size) : std::string();
            }
            throw short_object(total);
        }
        if (reply.status == 200) {
            if (reply.body.size() < offset + length) {
                throw short_object(std::to_string(reply.body.size()));
            }
            return reply.body.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
        }
        if (reply.body.size() != length) {
            throw short_object(total_of_content_range(reply.header("content-range")));
        }
        return std::move(reply.body);
    }

    /// The object's size, or nullopt when it does not exist.
    [[nodiscard]] std::optional<std::uint64_t> head_object(const std::string& full) {
        const result r = send(
            {"HEAD", object_url(full, {}), fmt::format("HEAD {}", describe_key(full)), {}, {}, 1u << 20}, {200, 404});
        if (r.reply.status == 404) {
            return std::nullopt;
        }
        const std::string length = r.reply.header("content-length");
        return length.empty() ? 0 : std::strtoull(length.c_str(), nullptr, 10);
    }

    void delete_object(const std::string& full) {
        send({"DELETE", object_url(full, {}), fmt::format("DELETE {}", describe_key(full)), {}, {}, 1u << 20},
             {200, 204, 404});
    }

    // The keys below the run starting with `prefix`, after `start_after` and up to `last` (empty:
    // no bound), relative to the run: pages are asked for until one passes `last`.
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after,
                                                const std::string& last = {}) {
        const std::string& run = location_.prefix;
        const std::string full_prefix = run.empty() ? prefix : fmt::format("{}/{}", run, prefix);
        const std::size_t strip = run.empty() ? 0 : run.size() + 1;
        const std::string what = fmt::format("list {}*", describe_key(full_prefix));
        std::vector<std::string> keys;
        std::string token;
        // The digest of every token the server gave: one given twice would start the same pages over.
        std::set<std::string> tokens;
        std::string last_key;     // the greatest key listed so far (full)
        int stalled = 0;          // pages in a row that brought no key after it
        std::uint64_t bytes = 0;  // the bytes of the keys held
        bool passed_last = false; // a key after `last` was listed: no further page is needed
        for (int pages = 1;; ++pages) {
            const bool first = pages == 1;
            std::vector<query_param> query{
                {"list-type", "2"}, {"encoding-type", "url"}, {"max-keys", std::to_string(options_.list_page_size)}};
            if (!full_prefix.empty()) {
                query.emplace_back("prefix", full_prefix);
            }
            if (first && !start_after.empty()) {
                query.emplace_back("start-after", full_key(start_after));
            }
            if (!token.empty()) {
                query.emplace_back("continuation-token", token);
            }
            const result r = send({"GET", bucket_url(query), what, {}, {}, 64u << 20}, {200});
            s3_list_page page = parse_list_objects_v2(r.reply.body, what);
            if (page.keys.size() > static_cast<std::size_t>(options_.list_page_size)) {
                throw storage_error(fmt::format("{}: page {} of the listing holds {} keys, more than the {} asked for",
                                                what, pages, page.keys.size(), options_.list_page_size));
            }
            bool new_keys = false;
            for (std::string& key : page.keys) {
                if (key > last_key) {
                    new_keys = true;
                    last_key = key;
                }
                if (key.size() > max_key_bytes) {
                    throw storage_error(fmt::format("{}: page {} of the listing holds a key of {} bytes; S3 keys have "
                                                    "at most {}",
                                                    what, pages, key.size(), max_key_bytes));
                }
                if (key.size() <= strip || key.compare(0, full_prefix.size(), full_prefix) != 0) {
                    continue;
                }
                std::string relative = key.substr(strip);
                const bool temporary = relative.size() >= 4 && relative.compare(relative.size() - 4, 4, ".tmp") == 0;
                // a trailing '/' marks a "folder" object made by consoles, not a file of the run
                if (!last.empty() && relative > last) {
                    passed_last = true;
                    continue;
                }
                if (temporary || relative.back() == '/' || relative <= start_after) {
                    continue;
                }
                bytes += relative.size();
                if (bytes > options_.max_list_bytes) {
                    throw storage_error(fmt::format("{}: the listing holds more than {} bytes of keys after {} pages "
                                                    "(s3_options::max_list_bytes); refused",
                                                    what, options_.max_list_bytes, pages));
                }
                keys.push_back(std::move(relative));
            }
            if (!page.truncated || passed_last) {
                break;
            }
            stalled = new_keys ? 0 : stalled + 1;
            if (stalled >= options_.max_stalled_list_pages) {
                throw storage_error(fmt::format("{}: the listing is truncated, but its last {} pages (to page {}) "
                                                "brought no new key (s3_options::max_stalled_list_pages); the "
                                                "server is not moving on",
                                                what, stalled, pages));
            }
            if (page.next_continuation_token.empty() || !tokens.insert(sha256_hex(page.next_continuation_token)).second) {
                throw storage_error(fmt::format(
                    "{}: the listing is truncated but gives no new continuation token (page {}{}); the server "
                    "would list the same keys again",
                    what, pages, page.next_continuation_token.empty() ? ", no token" : ", a token it gave before"));
            }
            if (pages >= options_.max_list_pages) {
                throw storage_error(fmt::format("{}: the listing is still truncated after {} pages of up to {} keys "
                                                "(s3_options::max_list_pages); refused",
                                                what, pages, options_.list_page_size));
            }
            token = std::move(page.next_continuation_token);
        }
        if (!std::is_sorted(keys.begin(), keys.end())) {
            std::sort(keys.begin(), keys.end());
        }
        return keys;
    }

    [[nodiscard]] std::string create_multipart(const std::string& full) {
        const std::string what = fmt::format("start a multipart upload of {}", describe_key(full));
        const result r = send({"POST", object_url(full, {{"uploads", ""}}), what, {}, {}, 1u << 20}, {200});
        return parse_upload_id(r.reply.body, what);
    }

    [[nodiscard]] std::string upload_part(const std::string& full, const std::string& upload_id, std::size_t number,
                                          std::string_view bytes) {
        const std::string what = fmt::format("upload part {} of {}", number, describe_key(full));
        const result r = send({"PUT",
                               object_url(full, {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}}),
                               what,
                               bytes,
                               {},
                               1u << 20},
                              {200});
        std::string etag = r.reply.header("etag");
        if (etag.empty()) {
            throw storage_error(fmt::format("{}: the reply has no ETag", what));
        }
        return etag;
    }

    void complete_multipart(const std::string& full, const std::string& upload_id,
                            const std::vector<std::string>& etags, std::uint64_t total_size) {
        const std::string what = fmt::format("complete the multipart upload of {}", describe_key(full));
        const std::string body = complete_multipart_body(etags);
        call c{"POST", object_url(full, {{"uploadId", upload_id}}), what,
               body,   {"Content-Type: application/xml"},           1u << 20};
        c.error_in_ok_reply = true;
        const result r = send(c, {200, 404});
        if (r.reply.status == 404) {
            // A retry after a lost reply finds the upload already completed: accept
            // it when the object is there with the size we sent.
            const auto size = r.attempts > 1 ? head_object(full) : std::nullopt;
            if (!size || *size != total_size) {
                fail(c, r.reply, r.attempts);
            }
        }
    }

    void abort_multipart(const std::string& full, const std::string& upload_id) noexcept {
        try {
            call c{"DELETE",
                   object_url(full, {{"uploadId", upload_id}}),
                   fmt::format("abort the multipart upload of {}", describe_key(full)),
                   {},
                   {},
                   1u << 20};
            send(c, {200, 204, 404});
        } catch (...) {
            // best effort: an upload left behind costs storage, not correctness
        }
    }

    /// Writes `bytes` to `full`: one PUT, or a multipart upload above part_size.
    void put(const std::string& full, std::string_view bytes) {
        const std::uint64_t part = options_.part_size;
        if (bytes.size() <= part) {
            put_object(full, bytes);
            return;
        }
        const std::string upload_id = create_multipart(full);
        try {
            std::vector<std::string> etags;
            for (std::uint64_t offset = 0; offset < bytes.size(); offset += part) {
                check_part_count(full, etags.size() + 1);
                etags.push_back(upload_part(full, upload_id, etags.size() + 1, bytes.substr(offset, part)));
            }
            complete_multipart(full, upload_id, etags, bytes.size());
        } catch (...) {
            abort_multipart(full, upload_id);
            throw;
        }
    }

    void check_part_count(const std::string& full, std::size_t number) const {
        if (number > 10000) {
            throw storage_error(fmt::format("{}: more than 10000 parts of {} bytes; raise s3_options::part_size",
                                            describe_key(full), options_.part_size));
        }
    }

    void create_bucket() {
        std::string body;
        if (options_.region != "us-east-1") {
            body = fmt::format("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                               "<LocationConstraint>{}</LocationConstraint></CreateBucketConfiguration>",
                               markup_escape(options_.region));
        }
        const call c{"PUT", bucket_url({}), fmt::format("create bucket s3://{}", location_.bucket), body, {}, 1u << 20};
        const result r = send(c, {200, 409});
        if (r.reply.status == 409) {
            const auto reply = parse_error_reply(r.reply.body);
            if (!reply || reply->code != "BucketAlreadyOwnedByYou") {
                fail(c, r.reply, r.attempts);
            }
        }
    }

    /// Writes `key` (run-relative) only when no object has it; false when one has. A PUT with
    /// `If-None-Match: *`: 412 means the key is taken, 409 that another conditional write of it
    /// is under way (it wins or fails; this one loses). A retry after a lost reply that finds the
    /// key taken reads it: the bytes sent are this caller's when it holds them. A server without
    /// conditional PUTs (501) is asked by listing instead from then on (put_if_absent_by_listing).
    /// A 200 is read back: a server whose condition is not atomic (OpenStack Swift's s3api checks
    /// it before it writes) may have let a concurrent conditional PUT through, the newer of which
    /// is the object. The read comes after a pause of twice the PUT's own time (20 ms to 1 s), by
    /// which a PUT that passed the check with this one has landed too, so that of two callers
    /// exactly one reads its own bytes: best effort where the server is not atomic, exact where
    /// it is (AWS S3, MinIO, Ceph), at the cost of one GET. `bytes` must be unique to the caller
    /// (a claim holds a random id).
    [[nodiscard]] bool put_if_absent(const std::string& key, std::string_view bytes) {
        const std::string full = full_key(key);
        if (!no_conditional_put_.load(std::memory_order_relaxed)) {
            const call c{"PUT", object_url(full, {}), fmt::format("PUT {} if absent", describe_key(full)),
                         bytes, {"If-None-Match: *"}, 1u << 20};
            const auto sent = std::chrono::steady_clock::now();
            const result r = send(c, {200, 409, 412, 501});
            switch (r.reply.status) {
            case 200: {
                const auto took = std::chrono::steady_clock::now() - sent;
                std::this_thread::sleep_for(std::clamp<std::chrono::steady_clock::duration>(
                    2 * took, std::chrono::milliseconds(20), std::chrono::seconds(1)));
                try {
                    return get_object(full) == bytes;
                } catch (const object_not_found&) {
                    return false; // removed since: not this caller's
                }
            }
            case 412:
                return r.attempts > 1 && get_object(full) == bytes;
            case 409:
                return false;
            default:
                no_conditional_put_.store(true, std::memory_order_relaxed);
            }
        }
        return put_if_absent_by_listing(key, bytes);
    }

    /// put_if_absent where conditional PUTs are missing (OpenStack Swift's s3api answers 501): the
    /// caller announces itself with a candidate `<key>~<nanoseconds since the epoch, 20
    /// digits>-<random>`, lists `<key>`, and wins when the key is not there and its candidate is
    /// the only one; the winner puts the key, and every caller removes its candidate. Of two
    /// callers, the one that lists second sees the other's candidate (S3 lists what was written
    /// before the listing began), so both never win, whatever their clocks or how long a request
    /// took; when both see each other, both withdraw and try again after a random pause. A
    /// candidate older than ten minutes is a caller that died before removing it: ignored.
    [[nodiscard]] bool put_if_absent_by_listing(const std::string& key, std::string_view bytes) {
        constexpr int attempts = 64;
        constexpr std::int64_t stale_ns = std::int64_t{600} * 1000 * 1000 * 1000;
        const std::string full = full_key(key);
        for (int attempt = 1;; ++attempt) {
            const auto started = std::chrono::steady_clock::now();
            if (head_object(full)) {
                return false;
            }
            const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
            const auto token = static_cast<std::uint64_t>(unit_random() * 18446744073709551616.0);
            const std::string candidate = fmt::format("{}~{:020}-{:016x}", key, now, token);
            put_object(full_key(candidate), {});
            bool won = false;
            bool taken = false;
            try {
                const std::vector<std::string> keys = list(key, {});
                taken = std::find(keys.begin(), keys.end(), key) != keys.end();
                std::size_t live = 0;
                for (const std::string& k : keys) {
                    if (k.size() < key.size() + 21 || k.compare(0, key.size(), key) != 0 || k[key.size()] != '~') {
                        continue;
                    }
                    // Its time; a name whose time does not read is taken as a live caller's.
                    const char* digits = k.data() + key.size() + 1;
                    std::uint64_t at = 0;
                    const auto read = std::from_chars(digits, digits + 20, at);
                    const bool stale = read.ec == std::errc() && read.ptr == digits + 20 &&
                                       at < static_cast<std::uint64_t>(now) &&
                                       static_cast<std::uint64_t>(now) - at >= static_cast<std::uint64_t>(stale_ns);
                    live += k == candidate || !stale ? 1 : 0;
                }
                won = !taken && live == 1 && std::find(keys.begin(), keys.end(), candidate) != keys.end();
                if (won) {
                    put_object(full, bytes);
                }
            } catch (...) {
                delete_object(full_key(candidate));
                throw;
            }
            delete_object(full_key(candidate));
            if (won || taken || attempt == attempts) {
                return won;
            }
            // Another caller announced itself at the same time: both withdrew. A random pause of
            // up to a few rounds' time, so that one goes first next time.
            const auto round = std::chrono::steady_clock::now() - started;
            std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::microseconds>(
                (std::chrono::milliseconds(1) + round * std::min(attempt, 4)) * (2 * unit_random())));
        }
    }

private:
    /// The longest key S3 allows: longer listed keys are refused, so a listing's memory is bounded.
    static constexpr std::size_t max_key_bytes = 1024;

    struct call {
        const char* method;
        std::string url;
        std::string what; ///< "GET s3://bucket/key", for messages
        std::string_view body;
        std::vector<std::string> headers;
        std::size_t max_reply;
        bool error_in_ok_reply = false; ///< a 200 may carry an <Error> (CompleteMultipartUpload)
    };

    struct result {
        http_reply reply;
        int attempts = 1;
    };

    void resolve_from_environment() {
        auto take = [&](std::string& field, std::initializer_list<const char*> names) {
            if (!field.empty() || !options_.use_environment) {
                return;
            }
            for (const char* name : names) {
                const char* value = std::getenv(name);
                if (value != nullptr && *value != '\0') {
                    field = value;
                    return;
                }
            }
        };
        take(options_.access_key_id, {"AWS_ACCESS_KEY_ID"});
        take(options_.secret_access_key, {"AWS_SECRET_ACCESS_KEY"});
        take(options_.session_token, {"AWS_SESSION_TOKEN"});
        take(options_.region, {"AWS_REGION", "AWS_DEFAULT_REGION"});
        take(options_.endpoint_url, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"});
        if (options_.region.empty()) {
            options_.region = "us-east-1";
        }
    }

    void check_options() {
        const std::string where = describe_key(location_.prefix);
        if (options_.access_key_id.empty() || options_.secret_access_key.empty()) {
            throw config_error(
                fmt::format("no S3 credentials for {}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                            " (or s3_options::access_key_id and secret_access_key); missing: {}",
                            where, options_.access_key_id.empty() ? "the access key id" : "the secret access key"));
        }
        for (const char c : options_.region) {
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
                throw config_error(
                    fmt::format("invalid AWS region '{}' for {}", options_.region.substr(0, 100), where));
            }
        }
        if (options_.part_size < (5ull << 20) || options_.part_size > (5ull << 30)) {
            throw config_error(
                fmt::format("s3_options::part_size must be between 5 MiB and 5 GiB, not {}", options_.part_size));
        }
        if (options_.list_page_size < 1 || options_.list_page_size > 1000) {
            throw config_error(
                fmt::format("s3_options::list_page_size must be between 1 and 1000, not {}", options_.list_page_size));
        }
        if (options_.max_list_pages < 1) {
            throw config_error(
                fmt::format("s3_options::max_list_pages must be at least 1, not {}", options_.max_list_pages));
        }
        if (options_.retry.max_attempts < 1) {
            throw config_error("s3_options::retry.max_attempts must be at least 1");
        }
        const bool custom = !options_.endpoint_url.empty();
        if (custom) {
            endpoint_ = parse_endpoint(options_.endpoint_url);
        } else {
            const bool china = options_.region.compare(0, 3, "cn-") == 0;
            endpoint_ = s3_endpoint{
                "https", fmt::format("s3.{}{}", options_.region, china ? ".amazonaws.com.cn" : ".amazonaws.com"), ""};
        }
        path_style_ = options_.path_style.value_or(custom || !dns_compatible_bucket(location_.bucket));
    }

    [[nodiscard]] std::string bucket_base() const {
        if (path_style_) {
            return fmt::format("{}/{}", endpoint_.url(), aws_percent_encode(location_.bucket));
        }
        return fmt::format("{}://{}.{}{}", endpoint_.scheme, location_.bucket, endpoint_.authority,
                           endpoint_.base_path);
    }

    [[nodiscard]] std::string with_query(std::string url, const std::vector<query_param>& query) const {
        if (!query.empty()) {
            url += '?';
            url += canonical_query(query);
        }
        return url;
    }

    [[nodiscard]] std::string object_url(const std::string& full, const std::vector<query_param>& query) const {
        return with_query(fmt::format("{}/{}", bucket_base(), aws_percent_encode(full, true)), query);
    }

    [[nodiscard]] std::string bucket_url(const std::vector<query_param>& query) const {
        // virtual-hosted style needs the root path "/"; path style must not end in '/'
        return with_query(bucket_base() + (path_style_ ? "" : "/"), query);
    }

    static std::string total_of_content_range(const std::string& content_range) {
        const std::size_t slash = content_range.rfind('/');
        if (slash == std::string::npos || content_range.compare(slash + 1, std::string::npos, "*") == 0) {
            return {};
        }
        return content_range.substr(slash + 1);
    }

    static double unit_random() {
        thread_local std::mt19937_64 engine{std::random_device{}() ^
                                            std::hash<std::thread::id>{}(std::this_thread::get_id())};
        return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
    }

    /// Sends `c`, retrying what is worth retrying; returns the reply when its
    /// status is in `expected`, throws otherwise.
    result send(const call& c, std::initializer_list<long> expected) {
        http_request request;
        request.method = c.method;
        request.url = c.url;
        request.body = c.body;
        request.max_reply = c.max_reply;
        request.headers = c.headers;
        // curl 7.88 signs this header when present but does not add it; S3 requires it
        request.headers.push_back(fmt::format(
            "x-amz-content-sha256: {}", options_.sign_payload ? sha256_hex(c.body) : std::string("UNSIGNED-PAYLOAD")));
        if (!options_.session_token.empty()) {
            request.headers.push_back(fmt::format("x-amz-security-token: {}", options_.session_token));
        }
        const auto start = std::chrono::steady_clock::now();
        for (int attempt = 1;; ++attempt) {
            if (attempt > 1) {
                retries_.fetch_add(1, std::memory_order_relaxed);
            }
            if (cancelled()) {
                throw s3_cancelled(fmt::format("{}: cancelled", c.what));
            }
            requests_.fetch_add(1, std::memory_order_relaxed);
            http_outcome outcome = pool_.perform(request, settings_);
            bytes_sent_.fetch_add(c.body.size(), std::memory_order_relaxed);
            bytes_received_.fetch_add(outcome.reply.body.size(), std::memory_order_relaxed);

            if (outcome.cancelled) {
                throw s3_cancelled(fmt::format("{}: cancelled while it ran", c.what));
            }
            bool retry = false;
            std::string s3_code;
            if (outcome.code != CURLE_OK) {
                retry = retryable_curl_code(outcome.code);
            } else {
                if (c.error_in_ok_reply && outcome.reply.status == 200) {
                    if (parse_error_reply(outcome.reply.body)) {
                        // AWS reports some failed CompleteMultipartUploads as a 200 with an <Error> body
                        outcome.reply.status = 500;
                    }
                }
                if (outcome.reply.status >= 400) {
                    if (const auto err = parse_error_reply(outcome.reply.body)) {
                        s3_code = err->code;
                    }
                }
                retry = retryable_status(outcome.reply.status, s3_code);
            }
            if (retry) {
                const auto elapsed =
                    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
                const auto delay = backoff_delay(options_.retry, attempt, unit_random());
                if (may_retry(options_.retry, attempt, elapsed, delay)) {
                    pause(delay);
                    continue;
                }
            }
            if (outcome.code != CURLE_OK) {
                const std::string why =
                    outcome.reply_too_large
                        ? fmt::format("the reply is larger than {} bytes", c.max_reply)
                        : fmt::format("{} (curl error {})", outcome.error, static_cast<int>(outcome.code));
                throw s3_error(redact(fmt::format("{} failed: {} [endpoint {}]{}", c.what, why, endpoint_.url(),
                                                  attempts_note(attempt, start))),
                               0, {});
            }
            if (std::find(expected.begin(), expected.end(), outcome.reply.status) == expected.end()) {
                fail(c, outcome.reply, attempt, start);
            }
            return {std::move(outcome.reply), attempt};
        }
    }

    /// True once s3_options::cancelled says to stop.
    [[nodiscard]] bool cancelled() const { return options_.cancelled && options_.cancelled(); }

    /// Waits `delay` before a retry, in slices of at most 100 ms so that a cancellation
    /// is noticed during the wait (the next attempt then throws).
    void pause(std::chrono::milliseconds delay) const {
        const auto until = std::chrono::steady_clock::now() + delay;
        for (auto now = std::chrono::steady_clock::now(); now < until && !cancelled();
             now = std::chrono::steady_clock::now()) {
            std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(100)));
        }
    }

    static std::string attempts_note(int attempts, std::chrono::steady_clock::time_point start) {
        if (attempts <= 1) {
            return {};
        }
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
        return fmt::format(" (gave up after {} attempts over {}.{} s)", attempts, ms / 1000, (ms % 1000) / 100);
    }

    /// Throws the error that `reply` (an unexpected status) stands for.
    [[noreturn]] void fail(const call& c, const http_reply& reply, int attempts,
                           std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now()) const {
        const auto err = parse_error_reply(reply.body);
        const std::string code = err ? redact(err->code) : std::string();
        std::string message = fmt::format("{}: HTTP {}", c.what, reply.status);
        if (!code.empty()) {
            message += fmt::format(" {}", code);
        }
        if (err && !err->message.empty()) {
            message += fmt::format(": {}", quoted(err->message, 1000));
        }
        if (err && !err->request_id.empty()) {
            message += fmt::format(" (request id {})", quoted(err->request_id, 200));
        }
        const bool auth = reply.status == 401 || reply.status == 403 || code == "InvalidAccessKeyId" ||
                          code == "SignatureDoesNotMatch" || code == "ExpiredToken" || code == "InvalidToken" ||
                          code == "AccessDenied" || code == "AuthorizationHeaderMalformed";
        if (auth) {
            message +=
                fmt::format("; access key id '{}', region '{}', endpoint '{}' (check the secret access key{}, the "
                            "region, the bucket's permissions and the clock)",
                            options_.access_key_id, options_.region, endpoint_.url(),
                            options_.session_token.empty() ? "" : " and session token");
        } else if (!reply.body.empty() && !err) {
            message += fmt::format(" [endpoint {}]", endpoint_.url());
        }
        message += attempts_note(attempts, start);
        if (reply.status == 404 && (code.empty() || code == "NoSuchKey")) {
            throw object_not_found(redact(fmt::format("no such object: {}", message)));
        }
        throw s3_error(redact(message), reply.status, code);
    }

    /// Text of the server's (an error's message, its request id) for a message: the secret and the
    /// token redacted first, then cut to `limit` bytes. The other order would let a cut end inside
    /// a secret, and leave its start where redacting the whole message no longer finds it.
    [[nodiscard]] std::string quoted(const std::string& text, std::size_t limit) const {
        std::string shown = redact(text);
        if (shown.size() > limit) {
            shown.resize(limit);
        }
        return shown;
    }

    /// Defence in depth: no message ever carries the secret or the token.
    [[nodiscard]] std::string redact(std::string text) const {
        for (const std::string* secret : {&options_.secret_access_key, &options_.session_token}) {
            if (secret->empty()) {
                continue;
            }
            for (std::size_t at = text.find(*secret); at != std::string::npos; at = text.find(*secret, at)) {
                text.replace(at, secret->size(), "<redacted>");
            }
        }
        return text;
    }

    s3_location location_;
    s3_options options_;
    s3_endpoint endpoint_;
    bool path_style_ = true;
    http_settings settings_;
    curl_handle_pool pool_;
    std::atomic<std::uint64_t> requests_{0};
    std::atomic<std::uint64_t> retries_{0};
    std::atomic<std::uint64_t> bytes_sent_{0};
    std::atomic<std::uint64_t> bytes_received_{0};
    std::atomic<bool> no_conditional_put_{false}; // the server answered a conditional PUT with 501
};

} // namespace tdbg::detail
