#pragma once
/// \file
/// Index files as the trial merges them: views into the file's text. A fast
/// single pass reads the JSON smdebug writes (its keys in any order, any
/// whitespace, strings without escapes); for anything else the caller parses
/// with format::parse_index_file, which reads every variant and names the
/// problem, and views that instead.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/index_file.hpp"

namespace tdbg::detail {

/// One tensor_payload entry, its name viewing the text it was read from.
struct location_view {
    std::string_view name;
    std::uint64_t start = 0;
    std::uint64_t length = 0;
};

/// One shape_payload entry.
struct shape_view {
    std::string_view name;
    std::vector<std::int64_t> shape;
};

/// An index file's contents, viewing the text (or a format::index_file) it came from.
struct index_view {
    mode index_mode = mode::global;
    std::int64_t mode_step = 0;
    std::string_view event_file_name;
    std::vector<location_view> tensors;
    std::vector<shape_view> shapes;
};

/// Views a fully parsed index file.
inline index_view view_of(const format::index_file& index) {
    index_view v;
    v.index_mode = index.mode;
    v.mode_step = index.mode_step;
    v.event_file_name = index.event_file_name;
    v.tensors.reserve(index.tensor_payload.size());
    for (const auto& t : index.tensor_payload) {
        v.tensors.push_back(location_view{t.tensorname, t.start_idx, t.length});
    }
    v.shapes.reserve(index.shape_payload.size());
    for (const auto& sh : index.shape_payload) {
        v.shapes.push_back(shape_view{sh.tensorname, sh.shape});
    }
    return v;
}

class index_json_reader {
public:
    explicit index_json_reader(std::string_view text) noexcept : p_(text.data()), end_(text.data() + text.size()) {}

    bool parse(index_view& out) {
        bool has_meta = false;
        bool has_mode = false;
        bool has_mode_step = false;
        if (!expect('{')) {
            return false;
        }
        if (peek('}')) {
            return false; // no meta
        }
        do {
            std::string_view key;
            if (!string(key) || !expect(':')) {
                return false;
            }
            if (key == "meta") {
                if (has_meta || !expect('{')) {
                    return false;
                }
                has_meta = true;
                if (!peek('}')) {
                    do {
                        std::string_view name;
                        if (!string(name) || !expect(':')) {
                            return false;
                        }
                        if (name == "mode") {
                            std::string_view text;
                            if (has_mode || !string(text)) {
                                return false;
                            }
                            const auto m = try_parse_mode(text);
                            if (!m || text != mode_name(*m)) {
                                return false;
                            }
                            out.index_mode = *m;
                            has_mode = true;
                        } else if (name == "mode_step") {
                            if (has_mode_step || !integer(out.mode_step)) {
                                return false;
                            }
                            has_mode_step = true;
                        } else if (name == "event_file_name") {
                            if (!out.event_file_name.empty() || !string(out.event_file_name)) {
                                return false;
                            }
                        } else {
                            return false;
                        }
                    } while (expect_optional(','));
                }
                if (!expect('}')) {
                    return false;
                }
            } else if (key == "tensor_payload") {
                if (!out.tensors.empty() || !tensor_payload(out.tensors)) {
                    return false;
                }
            } else if (key == "shape_payload") {
                if (!out.shapes.empty() || !shape_payload(out.shapes)) {
                    return false;
                }
            } else {
                return false;
            }
        } while (expect_optional(','));
        if (!expect('}')) {
            return false;
        }
        skip_space();
        if (p_ != end_ || !has_meta || !has_mode || !has_mode_step) {
            return false;
        }
        return out.tensors.empty() || !out.event_file_name.empty();
    }

private:
    bool tensor_payload(std::vector<location_view>& out) {
        if (!expect('[')) {
            return false;
        }
        if (expect_optional(']')) {
            return true;
        }
        do {
            location_view loc;
            bool name = false;
            bool start = false;
            bool length = false;
            if (!expect('{')) {
                return false;
            }
            do {
                std::string_view key;
                if (!string(key) || !expect(':')) {
                    return false;
                }
                if (key == "tensorname" && !name) {
                    name = string(loc.name);
                    if (!name) {
                        return false;
                    }
                } else if (key == "start_idx" && !start) {
                    start = unsigned_integer(loc.start);
                    if (!start) {
                        return false;
                    }
                } else if (key == "length" && !length) {
                    length = unsigned_integer(loc.length);
                    if (!length) {
                        return false;
                    }
                } else {
                    return false;
                }
            } while (expect_optional(','));
            if (!expect('}') || !name || !start || !length) {
                return false;
            }
            out.push_back(loc);
        } while (expect_optional(','));
        return expect(']');
    }

    bool shape_payload(std::vector<shape_view>& out) {
        if (!expect('[')) {
            return false;
        }
        if (expect_optional(']')) {
            return true;
        }
        do {
            shape_view entry;
            std::string_view original_name;
            bool name = false;
            bool original = false;
            bool shape = false;
            if (!expect('{')) {
                return false;
            }
            do {
                std::string_view key;
                if (!string(key) || !expect(':')) {
                    return false;
                }
                if (key == "tensorname" && !name) {
                    name = string(entry.name);
                    if (!name) {
                        return false;
                    }
                } else if (key == "originalname" && !original) {
                    original = string(original_name);
                    if (!original) {
                        return false;
                    }
                } else if (key == "shape" && !shape) {
                    if (!expect('[')) {
                        return false;
                    }
                    if (!expect_optional(']')) {
                        do {
                            std::int64_t d = 0;
                            if (!integer(d) || d < 0) {
                                return false;
                            }
                            entry.shape.push_back(d);
                        } while (expect_optional(','));
                        if (!expect(']')) {
                            return false;
                        }
                    }
                    shape = true;
                } else {
                    return false;
                }
            } while (expect_optional(','));
            if (!expect('}') || !name || !shape) {
                return false;
            }
            out.push_back(std::move(entry));
        } while (expect_optional(','));
        return expect(']');
    }

    void skip_space() noexcept {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
            ++p_;
        }
    }

    bool expect(char c) noexcept {
        skip_space();
        if (p_ == end_ || *p_ != c) {
            return false;
        }
        ++p_;
        return true;
    }

    bool expect_optional(char c) noexcept { return expect(c); }

    bool peek(char c) noexcept {
        skip_space();
        return p_ != end_ && *p_ == c;
    }

    // A JSON string of printable ASCII without escapes, viewed in place; anything
    // else (escapes, control characters, non-ASCII) is left to the full parser.
    bool string(std::string_view& out) noexcept {
        if (!expect('"')) {
            return false;
        }
        const char* start = p_;
        while (p_ != end_ && *p_ != '"') {
            const auto c = static_cast<unsigned char>(*p_);
            if (c < 0x20 || c >= 0x80 || c == '\\') {
                return false;
            }
            ++p_;
        }
        if (p_ == end_) {
            return false;
        }
        out = std::string_view(start, static_cast<std::size_t>(p_ - start));
        ++p_; // closing quote
        return true;
    }

    bool unsigned_integer(std::uint64_t& out) noexcept {
        skip_space();
        if (p_ == end_ || *p_ < '0' || *p_ > '9') {
            return false;
        }
        if (*p_ == '0' && end_ - p_ > 1 && p_[1] >= '0' && p_[1] <= '9') {
            return false; // leading zeros are not JSON
        }
        out = 0;
        while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
            const auto digit = static_cast<std::uint64_t>(*p_ - '0');
            if (out > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
                return false;
            }
            out = out * 10 + digit;
            ++p_;
        }
        // A fraction or exponent: not an integer as smdebug writes them.
        return p_ == end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E');
    }

    bool integer(std::int64_t& out) noexcept {
        skip_space();
        const bool negative = p_ != end_ && *p_ == '-';
        if (negative) {
            ++p_;
        }
        std::uint64_t magnitude = 0;
        if (!unsigned_integer(magnitude) ||
            magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1U : 0U)) {
            return false;
        }
        out = !negative ? static_cast<std::int64_t>(magnitude)
                        : magnitude == 0 ? 0 : -static_cast<std::int64_t>(magnitude - 1) - 1;
        return true;
    }

    const char* p_;
    const char* end_;
};

/// Reads an index file in one pass into `out` (viewing `text`) when it has
/// smdebug's shape; false otherwise (then `out` is unspecified).
inline bool parse_index_fast(std::string_view text, index_view& out) {
    return index_json_reader(text).parse(out);
}

} // namespace tdbg::detail
