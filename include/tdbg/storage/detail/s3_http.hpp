#pragma once
/// \file
/// HTTP requests through libcurl, signed with its built-in AWS Signature V4
/// (CURLOPT_AWS_SIGV4), on pooled easy handles: a handle keeps its
/// connections alive, so the many small requests of a trial reuse them
/// instead of opening a TCP (and TLS) connection each.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>
#include <fmt/core.h>

#include "tdbg/core/error.hpp"

#if LIBCURL_VERSION_NUM < 0x074b00
#error "tdbg's S3 backend needs libcurl 7.75 or newer (CURLOPT_AWS_SIGV4)"
#endif

namespace tdbg::detail {

/// Initialises libcurl once per process, before any handle exists (not
/// thread-safe in older libcurl, so done under a function-local static).
inline void curl_global_once() {
    static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        throw storage_error(fmt::format("cannot initialise libcurl: {}", curl_easy_strerror(code)));
    }
}

/// One HTTP request. `url` holds the already-encoded path and canonical query.
struct http_request {
    const char* method = "GET"; ///< GET, HEAD, PUT, POST or DELETE
    std::string url; ///< scheme://host/encoded-path?canonical-query
    std::vector<std::string> headers; ///< "Name: value"
    std::string_view body; ///< sent with PUT and POST
    std::size_t max_reply = 1u << 20; ///< reply body bytes accepted before the transfer is aborted
};

/// An HTTP reply: status, body, headers (names lower-cased).
struct http_reply {
    long status = 0;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;

    /// The value of header `name` (lower case), or "" when absent.
    [[nodiscard]] std::string header(std::string_view name) const {
        for (const auto& [key, value] : headers) {
            if (key == name) {
                return value;
            }
        }
        return {};
    }
};

/// What a transfer produced: a reply, or curl's error.
struct http_outcome {
    CURLcode code = CURLE_OK;
    std::string error; ///< curl's message when code != CURLE_OK
    bool reply_too_large = false;
    bool cancelled = false; ///< http_settings::cancelled stopped the transfer
    http_reply reply;
};

/// Connection, signing and timeout settings shared by every request of a client.
struct http_settings {
    std::string sigv4_provider; ///< "aws:amz:<region>:s3"
    std::string access_key_id;
    std::string secret_access_key;
    long connect_timeout_ms = 10'000;
    long request_timeout_ms = 0; ///< 0: no limit on the whole transfer
    long stall_timeout_s = 30; ///< abort when less than low_speed_limit bytes/s flow for this long
    long low_speed_limit = 1; ///< bytes per second
    std::function<bool()> cancelled; ///< asked about once a second during a transfer; true aborts it
    bool verify_tls = true;
    std::string ca_file;
};

/// True for curl errors that a retry may cure: connection refused or reset,
/// timeouts, a reply cut short, DNS hiccups.
inline bool retryable_curl_code(CURLcode code) {
    switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
    }
}

/// A pool of easy handles; `perform` is thread-safe. Handles beyond
/// `max_idle` are closed when returned, so a burst of threads does not keep
/// its connections forever.
class curl_handle_pool {
public:
    explicit curl_handle_pool(std::size_t max_idle) : max_idle_(max_idle) { curl_global_once(); }
    curl_handle_pool(const curl_handle_pool&) = delete;
    curl_handle_pool& operator=(const curl_handle_pool&) = delete;
    ~curl_handle_pool() {
        for (CURL* handle : idle_) {
            curl_easy_cleanup(handle);
        }
    }

    /// Runs one request on a pooled handle.
    http_outcome perform(const http_request& request, const http_settings& settings) {
        lease handle(*this);
        return run(handle.get(), request, settings);
    }

private:
    class lease {
    public:
        explicit lease(curl_handle_pool& pool) : pool_(pool), handle_(pool.acquire()) {}
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease() { pool_.release(handle_); }
        [[nodiscard]] CURL* get() const noexcept { return handle_; }

    private:
        curl_handle_pool& pool_;
        CURL* handle_;
    };

    CURL* acquire() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (!idle_.empty()) {
                CURL* handle = idle_.back();
                idle_.pop_back();
                return handle;
            }
        }
        CURL* handle = curl_easy_init();
        if (handle == nullptr) {
            throw storage_error("cannot create a libcurl handle");
        }
        return handle;
    }

    void release(CURL* handle) noexcept {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (idle_.size() < max_idle_) {
                idle_.push_back(handle);
                return;
            }
        }
        curl_easy_cleanup(handle);
    }

    struct transfer {
        std::string_view upload;
        std::size_t upload_pos = 0;
        http_outcome* outcome = nullptr;
        std::size_t max_reply = 0;
        const std::function<bool()>* cancelled = nullptr;
    };

    // libcurl calls it about once a second even while nothing moves, and more often while
    // bytes flow: a non-zero return aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
    static int on_progress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
                           curl_off_t /*ulnow*/) {
        auto* t = static_cast<transfer*>(user);
        bool stop = true; // a check that throws stops the transfer: nothing may unwind through libcurl
        try {
            stop = (*t->cancelled)();
        } catch (...) { // NOLINT(bugprone-empty-catch): treated as a cancellation, reported by the caller
        }
        t->outcome->cancelled = stop;
        return stop ? 1 : 0;
    }

    static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
        auto* t = static_cast<transfer*>(user);
        const std::size_t n = size * count;
        std::string& body = t->outcome->reply.body;
        if (body.size() + n > t->max_reply) {
            t->outcome->reply_too_large = true;
            return 0; // aborts the transfer with CURLE_WRITE_ERROR
        }
        body.append(data, n);
        return n;
    }

    static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
        auto* t = static_cast<transfer*>(user);
        const std::size_t n = size * count;
        std::string_view line(data, n);
        auto& headers = t->outcome->reply.headers;
        if (line.substr(0, 5) == "HTTP/") {
            headers.clear(); // a new response (after "100 Continue" or a redirect)
            return n;
        }
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || headers.size() >= 256) {
            return n;
        }
        std::string name(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
            value.remove_prefix(1);
        }
        while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
            value.remove_suffix(1);
        }
        headers.emplace_back(std::move(name), std::string(value.substr(0, 8192)));
        return n;
    }

    static std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
        auto* t = static_cast<transfer*>(user);
        const std::size_t n = std::min(size * count, t->upload.size() - t->upload_pos);
        if (n > 0) {
            std::memcpy(buffer, t->upload.data() + t->upload_pos, n);
        }
        t->upload_pos += n;
        return n;
    }

    static int on_seek(void* user, curl_off_t offset, int origin) {
        auto* t = static_cast<transfer*>(user);
        if (origin != SEEK_SET || offset < 0 || static_cast<std::uint64_t>(offset) > t->upload.size()) {
            return CURL_SEEKFUNC_CANTSEEK;
        }
        t->upload_pos = static_cast<std::size_t>(offset);
        return CURL_SEEKFUNC_OK;
    }

    static http_outcome run(CURL* curl, const http_request& request, const http_settings& settings) {
        http_outcome outcome;
        transfer t;
        t.upload = request.body;
        t.outcome = &outcome;
        t.max_reply = request.max_reply;
        char error_buffer[CURL_ERROR_SIZE] = {};

        // reset keeps the handle's live connections and DNS cache: the point of pooling
        curl_easy_reset(curl);
        curl_slist* headers = nullptr;
        for (const std::string& h : request.headers) {
            curl_slist* next = curl_slist_append(headers, h.c_str());
            if (next == nullptr) {
                curl_slist_free_all(headers);
                throw storage_error("out of memory building an HTTP request");
            }
            headers = next;
        }
        const std::string_view method = request.method;
        curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
        // keys such as "a/./b" must reach the server as written, or the signature breaks
        curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
        curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, settings.connect_timeout_ms);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, settings.request_timeout_ms);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, settings.low_speed_limit);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, settings.stall_timeout_s);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, settings.verify_tls ? 1L : 0L);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, settings.verify_tls ? 2L : 0L);
        if (!settings.ca_file.empty()) {
            curl_easy_setopt(curl, CURLOPT_CAINFO, settings.ca_file.c_str());
        }
        // USERNAME/PASSWORD rather than USERPWD: access key ids may contain ':'
        curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, settings.sigv4_provider.c_str());
        curl_easy_setopt(curl, CURLOPT_USERNAME, settings.access_key_id.c_str());
        curl_easy_setopt(curl, CURLOPT_PASSWORD, settings.secret_access_key.c_str());
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &on_body);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &on_header);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
        if (settings.cancelled) {
            t.cancelled = &settings.cancelled;
            curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &on_progress);
            curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
            curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        }
        if (method == "HEAD") {
            curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
        } else if (method == "PUT") {
            curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(curl, CURLOPT_READFUNCTION, &on_read);
            curl_easy_setopt(curl, CURLOPT_READDATA, &t);
            curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, &on_seek);
            curl_easy_setopt(curl, CURLOPT_SEEKDATA, &t);
            // a known size: S3 refuses chunked uploads
            curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
        } else if (method == "POST") {
            curl_easy_setopt(curl, CURLOPT_POST, 1L);
            // never a null pointer: curl would then read the body from stdin
            curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.empty() ? "" : request.body.data());
            curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
        } else if (method != "GET") {
            curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method);
        }

        outcome.code = curl_easy_perform(curl);
        curl_slist_free_all(headers);
        if (outcome.code == CURLE_OK) {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &outcome.reply.status);
        } else {
            outcome.error = error_buffer[0] != '\0' ? std::string(error_buffer) : curl_easy_strerror(outcome.code);
        }
        return outcome;
    }

    std::mutex mutex_;
    std::vector<CURL*> idle_;
    std::size_t max_idle_;
};

} // namespace tdbg::detail
