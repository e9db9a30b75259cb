#pragma once
/// \file
/// URL pieces for S3: `s3://bucket/prefix` locations, endpoints, and the
/// percent-encoding and query order that Signature V4 requires. libcurl signs
/// the path and query exactly as written, so they must already be canonical.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Percent-encodes the AWS way: only `A-Za-z0-9-_.~` stay, hex digits are
/// upper case; '/' stays only when `keep_slash` (object key paths).
inline std::string aws_percent_encode(std::string_view text, bool keep_slash = false) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size() * 3 / 2);
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                c == '-' || c == '_' || c == '.' || c == '~';
        if (unreserved || (keep_slash && c == '/')) {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xf];
        }
    }
    return out;
}

/// Decodes `%XX` escapes (and '+' as a space when `plus_is_space`, as S3's
/// `encoding-type=url` listings need); nullopt when an escape is malformed.
inline std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    };
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '%') {
            if (i + 2 >= text.size()) {
                return std::nullopt;
            }
            const int hi = nibble(text[i + 1]);
            const int lo = nibble(text[i + 2]);
            if (hi < 0 || lo < 0) {
                return std::nullopt;
            }
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

/// One query parameter; an empty value is written as "name=" (SigV4 wants the '=').
using query_param = std::pair<std::string, std::string>;

/// The canonical query string: names and values AWS-encoded, sorted by name
/// then value, each written "name=value", joined by '&'.
inline std::string canonical_query(const std::vector<query_param>& params) {
    std::vector<query_param> encoded;
    encoded.reserve(params.size());
    for (const auto& [name, value] : params) {
        encoded.emplace_back(aws_percent_encode(name), aws_percent_encode(value));
    }
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (const auto& [name, value] : encoded) {
        if (!out.empty()) {
            out += '&';
        }
        out += name;
        out += '=';
        out += value;
    }
    return out;
}

/// A bucket and the run's key prefix, from `s3://bucket/prefix`.
struct s3_location {
    std::string bucket;
    std::string prefix; ///< no leading or trailing '/'; may be empty
};

/// True for characters S3-compatible servers accept in bucket names; the
/// strict AWS rules (3-63 lower-case characters) are left to the server.
inline bool valid_bucket_name(std::string_view bucket) {
    if (bucket.empty() || bucket.size() > 255) {
        return false;
    }
    return std::all_of(bucket.begin(), bucket.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
               c == '_';
    });
}

/// Parses `s3://bucket[/prefix[/]]`; throws config_error when malformed.
inline s3_location parse_s3_url(std::string_view url) {
    constexpr std::string_view scheme = "s3://";
    const std::string shown(url.substr(0, 300));
    if (url.substr(0, scheme.size()) != scheme) {
        throw config_error(fmt::format("not an S3 URL: '{}' (expected s3://bucket/prefix)", shown));
    }
    const std::string_view rest = url.substr(scheme.size());
    const std::size_t slash = rest.find('/');
    s3_location loc;
    loc.bucket = std::string(rest.substr(0, slash));
    if (!valid_bucket_name(loc.bucket)) {
        throw config_error(
            fmt::format("invalid bucket name '{}' in S3 URL '{}' (letters, digits, '.', '-' and '_' only)",
                        loc.bucket.substr(0, 300), shown));
    }
    if (slash != std::string_view::npos) {
        std::string_view prefix = rest.substr(slash + 1);
        while (!prefix.empty() && prefix.back() == '/') {
            prefix.remove_suffix(1);
        }
        loc.prefix = std::string(prefix);
        if (!loc.prefix.empty()) {
            try {
                validate_key(loc.prefix);
            } catch (const invalid_name& e) {
                throw config_error(fmt::format("invalid prefix in S3 URL '{}': {}", shown, e.what()));
            }
        }
    }
    return loc;
}

/// An HTTP(S) endpoint such as `http://127.0.0.1:9000` or `https://host/base`.
struct s3_endpoint {
    std::string scheme; ///< "http" or "https"
    std::string authority; ///< host[:port]
    std::string base_path; ///< "" or "/base" (no trailing '/')
    /// scheme://authority[base_path]
    [[nodiscard]] std::string url() const { return fmt::format("{}://{}{}", scheme, authority, base_path); }
};

/// Parses an endpoint URL; throws config_error when malformed. User info
/// ("user:pass@host") is refused: it would end up in messages.
inline s3_endpoint parse_endpoint(std::string_view url) {
    const std::size_t sep = url.find("://");
    const std::string shown(url.substr(0, 300));
    if (sep == std::string_view::npos) {
        throw config_error(
            fmt::format("invalid S3 endpoint '{}': expected http://host[:port] or https://host[:port]", shown));
    }
    s3_endpoint ep;
    ep.scheme = std::string(url.substr(0, sep));
    std::transform(ep.scheme.begin(), ep.scheme.end(), ep.scheme.begin(),
                   [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
    if (ep.scheme != "http" && ep.scheme != "https") {
        throw config_error(fmt::format("invalid S3 endpoint '{}': the scheme must be http or https", shown));
    }
    std::string_view rest = url.substr(sep + 3);
    const std::size_t slash = rest.find('/');
    ep.authority = std::string(rest.substr(0, slash));
    if (ep.authority.empty() || ep.authority.find_first_of("@?# ") != std::string::npos) {
        throw config_error(fmt::format(
            "invalid S3 endpoint '{}': expected host[:port] after the scheme, without user info, query or fragment",
            ep.authority.find('@') != std::string::npos ? fmt::format("{}://...", ep.scheme) : shown));
    }
    if (slash != std::string_view::npos) {
        std::string_view path = rest.substr(slash);
        while (!path.empty() && path.back() == '/') {
            path.remove_suffix(1);
        }
        if (path.find_first_of("?# ") != std::string_view::npos) {
            throw config_error(fmt::format("invalid S3 endpoint '{}': no query or fragment allowed", shown));
        }
        ep.base_path = std::string(path);
    }
    return ep;
}

/// True when the bucket can be a DNS label (virtual-hosted-style URL over TLS).
inline bool dns_compatible_bucket(std::string_view bucket) {
    if (bucket.size() < 3 || bucket.size() > 63 || bucket.front() == '-' || bucket.back() == '-') {
        return false;
    }
    return std::all_of(bucket.begin(), bucket.end(),
                       [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

} // namespace tdbg::detail
