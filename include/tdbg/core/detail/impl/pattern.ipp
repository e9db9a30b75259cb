#pragma once
/// \file
/// Definitions of tdbg/core/detail/pattern.hpp, on PCRE2 (its 8-bit library).
///
/// PCRE2 reads Python's `re` syntax (lookahead and lookbehind, `(?P<name>...)`,
/// `\d`, `\w`), matches on the heap rather than by recursion, and stops a
/// runaway match at a limit; its JIT makes matching fast. UTF and UCP make
/// `\w`, `\d`, `\s` and case-insensitive matching Unicode-aware, as Python's
/// `re` is on str patterns.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg::detail {

/// PCRE2's message for an error code.
inline std::string pcre2_message(int code) {
    PCRE2_UCHAR8 buffer[256] = {};
    if (pcre2_get_error_message_8(code, buffer, sizeof buffer) < 0) {
        return fmt::format("PCRE2 error {}", code);
    }
    return reinterpret_cast<const char*>(buffer);
}

/// `text` for a message: whole when short, else its first 200 bytes (whole UTF-8
/// sequences) and how long it is.
inline std::string shown_in_message(std::string_view text) {
    constexpr std::size_t limit = 200;
    if (text.size() <= limit) {
        return std::string(text);
    }
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
        --cut;
    }
    return fmt::format("{}... ({} bytes)", text.substr(0, cut), text.size());
}

class compiled_pattern {
public:
    compiled_pattern(const std::string& text, std::string_view origin) : origin_(origin) {
        int code = 0;
        PCRE2_SIZE offset = 0;
        code_ = pcre2_compile_8(reinterpret_cast<PCRE2_SPTR8>(text.data()), text.size(), PCRE2_UTF | PCRE2_UCP,
                                &code, &offset, nullptr);
        if (code_ == nullptr) {
            throw config_error(fmt::format("{}: bad regex '{}': {} at offset {} (tdbg reads Python re syntax)", origin,
                                           shown_in_message(text), pcre2_message(code), offset));
        }
        // Without a JIT (some platforms) matching falls back to the interpreter: same results.
        (void)pcre2_jit_compile_8(code_, PCRE2_JIT_COMPLETE);
        context_ = pcre2_match_context_create_8(nullptr);
        if (context_ == nullptr) {
            pcre2_code_free_8(code_);
            throw std::bad_alloc();
        }
        pcre2_set_match_limit_8(context_, match_limit);
        pcre2_set_depth_limit_8(context_, depth_limit);
    }
    compiled_pattern(const compiled_pattern&) = delete;
    compiled_pattern& operator=(const compiled_pattern&) = delete;
    ~compiled_pattern() {
        pcre2_match_context_free_8(context_);
        pcre2_code_free_8(code_);
    }

    [[nodiscard]] bool search(std::string_view subject, const std::string& text) const {
        // One pair of offsets is all a yes/no search needs; the data is the calling thread's, so
        // threads share the compiled pattern and a search allocates nothing after a thread's first.
        thread_local const std::unique_ptr<pcre2_match_data_8, void (*)(pcre2_match_data_8*)> data(
            pcre2_match_data_create_8(1, nullptr), &pcre2_match_data_free_8);
        if (!data) {
            throw std::bad_alloc();
        }
        const int rc = pcre2_match_8(code_, reinterpret_cast<PCRE2_SPTR8>(subject.data()), subject.size(), 0, 0,
                                     data.get(), context_);
        if (rc >= 0) {
            return true;
        }
        if (rc == PCRE2_ERROR_NOMATCH) {
            return false;
        }
        throw config_error(fmt::format("{}: regex '{}' could not be matched against '{}': {}", origin_,
                                       shown_in_message(text), shown_in_message(subject), pcre2_message(rc)));
    }

private:
    // Bounds on one match's backtracking work and depth: a pattern that needs more
    // (catastrophic backtracking, as in `(.+)+X`) is an error, not a hang.
    static constexpr std::uint32_t match_limit = 10'000'000;
    static constexpr std::uint32_t depth_limit = 100'000;

    std::string origin_;
    pcre2_code_8* code_ = nullptr;
    pcre2_match_context_8* context_ = nullptr;
};

TDBG_DECL pattern::pattern(std::string text, std::string_view origin)
    : text_(std::move(text)), compiled_(std::make_shared<const compiled_pattern>(text_, origin)) {}

TDBG_DECL bool pattern::search(std::string_view subject) const { return compiled_->search(subject, text_); }

} // namespace tdbg::detail
