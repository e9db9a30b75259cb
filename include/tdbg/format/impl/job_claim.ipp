#pragma once
/// \file
/// Definitions of tdbg/format/job_claim.hpp.

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/job_claim.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format {

TDBG_DECL std::string claim_key(std::string_view worker) {
    std::string key(claims_prefix);
    key.append(worker);
    key += ".json";
    return key;
}

TDBG_DECL std::optional<std::string> parse_claim_key(std::string_view key) {
    constexpr std::string_view suffix = ".json";
    if (key.size() <= claims_prefix.size() + suffix.size() || key.substr(0, claims_prefix.size()) != claims_prefix ||
        key.substr(key.size() - suffix.size()) != suffix) {
        return std::nullopt;
    }
    const std::string_view worker = key.substr(claims_prefix.size(), key.size() - claims_prefix.size() - suffix.size());
    if (worker.find('/') != std::string_view::npos) {
        return std::nullopt;
    }
    return std::string(worker);
}

TDBG_DECL job_claim new_job_claim(std::string_view worker, std::int64_t first_step) {
    job_claim claim;
    claim.worker = worker;
    // 128 bits from the system's entropy source (std::random_device reads getrandom or
    // /dev/urandom with libstdc++ and libc++): ids that two jobs never share.
    std::random_device entropy;
    std::array<std::uint32_t, 4> bits{};
    for (auto& word : bits) {
        word = entropy();
    }
    claim.id = fmt::format("{:08x}{:08x}{:08x}{:08x}", bits[0], bits[1], bits[2], bits[3]);
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) {
        claim.host = host;
    }
    claim.pid = ::getpid();
    if (const char* job = std::getenv("TRAINING_JOB_NAME")) {
        claim.job = job;
    }
    claim.time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    claim.first_step = first_step;
    return claim;
}

TDBG_DECL std::string to_json(const job_claim& claim) {
    std::string out = R"({"worker": )";
    append_json_string(out, claim.worker, true);
    out += R"(, "host": )";
    append_json_string(out, claim.host, true);
    out += fmt::format(R"(, "pid": {}, "job": )", claim.pid);
    append_json_string(out, claim.job, true);
    out += fmt::format(R"(, "time": {:.6f}, "id": )", claim.time);
    append_json_string(out, claim.id, true);
    out += R"(, "started": )";
    append_json_string(out, utc_time_text(claim.time), true);
    if (claim.first_step) {
        out += fmt::format(R"(, "first_step": {})", *claim.first_step);
    }
    out += '}';
    return out;
}

TDBG_DECL std::optional<job_claim> parse_job_claim(std::string_view text) {
    json_value doc;
    try {
        doc = parse_json(text, "claim", "claim");
    } catch (const error&) {
        return std::nullopt;
    }
    if (!doc.is_object()) {
        return std::nullopt;
    }
    job_claim claim;
    const auto text_of = [&](std::string_view key, std::string& to) {
        if (const json_value* v = doc.find(key); v != nullptr && v->is_string()) {
            to = v->as_string();
        }
    };
    text_of("worker", claim.worker);
    text_of("id", claim.id);
    text_of("host", claim.host);
    text_of("job", claim.job);
    try {
        if (const json_value* v = doc.find("pid"); v != nullptr && v->is_integer()) {
            claim.pid = v->as_int64();
        }
        if (const json_value* v = doc.find("time"); v != nullptr && v->is_number()) {
            claim.time = v->as_double();
        }
        if (const json_value* v = doc.find("first_step"); v != nullptr && v->is_integer()) {
            claim.first_step = v->as_int64();
        }
    } catch (const error&) { // NOLINT(bugprone-empty-catch): a number out of range stays empty (lenient)
    }
    return claim;
}

TDBG_DECL std::string describe(const job_claim& claim) {
    std::string out = claim.id.empty() ? std::string("a job") : "job " + claim.id;
    if (!claim.job.empty()) {
        out += fmt::format(" '{}'", claim.job);
    }
    out += fmt::format(" (host {}, pid {}, started {})", claim.host.empty() ? "?" : claim.host, claim.pid,
                       claim.time > 0 ? utc_time_text(claim.time) : std::string("at an unknown time"));
    return out;
}

TDBG_DECL std::string utc_time_text(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 253402300799.0) { // 9999-12-31T23:59:59Z
        return "?";
    }
    const auto whole = static_cast<std::time_t>(seconds);
    std::tm utc{};
    if (::gmtime_r(&whole, &utc) == nullptr) {
        return "?";
    }
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                       utc.tm_hour, utc.tm_min, utc.tm_sec);
}

} // namespace tdbg::format
