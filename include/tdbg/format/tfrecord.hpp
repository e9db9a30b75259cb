#pragma once
/// \file
/// TFRecord framing, the container of event files: per record a uint64 length
/// (little endian), the masked CRC-32C of those 8 bytes, the payload, and a
/// 4-byte footer that is either the payload's masked CRC (TensorBoard) or
/// smdebug's constant (events/).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/crc32c.hpp"

namespace tdbg::format {

/// What a record's footer holds.
enum class footer_kind {
    smdebug_constant, ///< always smdebug_footer_crc, as smdebug writes in events/ (its reader insists on it)
    payload_crc, ///< the payload's masked CRC-32C, as TensorFlow and TensorBoard write
};

/// Bytes before the payload: the length and its CRC.
inline constexpr std::size_t record_header_size = 12;
/// Bytes a record adds to its payload: header and footer.
inline constexpr std::size_t record_overhead = 16;

namespace detail {

/// Stores the `N` low bytes of `v` at `out`, little endian.
template <std::size_t N>
void store_le(char* out, std::uint64_t v) noexcept {
    for (std::size_t i = 0; i < N; ++i) {
        out[i] = static_cast<char>((v >> (8U * i)) & 0xFFU);
    }
}

/// Stores a record's header at `header` (record_header_size bytes): the payload's size and
/// that size's masked CRC-32C.
inline void store_record_header(char* header, std::uint64_t payload_size) noexcept {
    store_le<8>(header, payload_size);
    store_le<4>(header + 8, masked_crc32c(std::string_view(header, 8)));
}

inline std::uint32_t get_le32(const char* p) noexcept {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) {
        v = (v << 8U) | static_cast<unsigned char>(p[i]);
    }
    return v;
}

inline std::uint64_t get_le64(const char* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8U) | static_cast<unsigned char>(p[i]);
    }
    return v;
}


/// Checks the length CRC at `p` (12 bytes available); returns the payload length.
inline std::uint64_t checked_record_length(const char* p, std::string_view file, std::uint64_t offset) {
    const std::uint32_t stored = get_le32(p + 8);
    const std::uint32_t computed = masked_crc32c(std::string_view(p, 8));
    if (stored != computed) {
        throw format_error(fmt::format("corrupt record header: the length's CRC is {:#010x}, expected {:#010x} for length {}",
                                       stored, computed, get_le64(p)),
                           std::string(file), offset);
    }
    return get_le64(p);
}

/// check_footer for a payload whose masked CRC was computed as its bytes went past.
inline void check_footer_crc(std::uint32_t computed, std::uint32_t footer, std::string_view file,
                             std::uint64_t offset) {
    if (footer != smdebug_footer_crc && footer != computed) {
        throw format_error(fmt::format("corrupt record: the footer is {:#010x}, expected smdebug's {:#010x} or the "
                                       "payload's CRC {:#010x}",
                                       footer, smdebug_footer_crc, computed),
                           std::string(file), offset);
    }
}

/// Accepts smdebug's constant footer or the payload's true masked CRC.
inline void check_footer(std::string_view payload, std::uint32_t footer, std::string_view file, std::uint64_t offset) {
    if (footer != smdebug_footer_crc) {
        check_footer_crc(masked_crc32c(payload), footer, file, offset);
    }
}

} // namespace detail

/// Writes one record to `sink` (anything with `append(const char*, std::size_t)`):
/// the header for a payload of `payload_size` bytes, then whatever
/// `write_payload(sink)` appends (exactly that many bytes), then the footer
/// `footer_crc` (smdebug_footer_crc, or the payload's masked CRC-32C). The one
/// framer of the project: the hook's writer, append_record and the tests use it.
template <class Sink, class WritePayload>
void frame_record(Sink& sink, std::uint64_t payload_size, WritePayload&& write_payload, std::uint32_t footer_crc) {
    char header[record_header_size];
    detail::store_record_header(header, payload_size);
    sink.append(header, sizeof header);
    std::forward<WritePayload>(write_payload)(sink);
    char footer[4];
    detail::store_le<4>(footer, footer_crc);
    sink.append(footer, sizeof footer);
}

/// Appends one record to `out` whose payload `write_payload(out)` appends to `out` itself, as
/// frame_record frames it: the header's place is kept and filled in once the payload's size is
/// known, so the payload is neither measured first nor copied.
template <class WritePayload>
void append_record_in_place(std::string& out, WritePayload&& write_payload, std::uint32_t footer_crc) {
    const std::size_t start = out.size();
    out.resize(start + record_header_size);
    std::forward<WritePayload>(write_payload)(out);
    detail::store_record_header(&out[start], out.size() - start - record_header_size);
    char footer[4];
    detail::store_le<4>(footer, footer_crc);
    out.append(footer, sizeof footer);
}

/// Appends one record holding `payload` to `out`.
inline void append_record(std::string& out, std::string_view payload, footer_kind footer) {
    struct string_sink {
        std::string* out;
        void append(const char* p, std::size_t n) const { out->append(p, n); }
    } sink{&out};
    out.reserve(out.size() + payload.size() + record_overhead);
    frame_record(
        sink, payload.size(), [&](const string_sink& to) { to.append(payload.data(), payload.size()); },
        footer == footer_kind::smdebug_constant ? smdebug_footer_crc : masked_crc32c(payload));
}

/// The payload of `record`, one whole record as an index entry locates it
/// (start_idx, length) in `file` at `offset`. Throws format_error naming file
/// and offset when the bytes are not exactly one valid record.
[[nodiscard]] inline std::string_view record_payload(std::string_view record, std::string_view file,
                                                     std::uint64_t offset) {
    if (record.size() < record_overhead) {
        throw format_error(
            fmt::format("truncated record: {} bytes, a record needs at least {}", record.size(), record_overhead),
            std::string(file), offset);
    }
    const std::uint64_t length = detail::checked_record_length(record.data(), file, offset);
    if (length != record.size() - record_overhead) {
        throw format_error(fmt::format("record length {} does not match the indexed size: {} bytes hold a payload of {}",
                                       length, record.size(), record.size() - record_overhead),
                           std::string(file), offset);
    }
    const std::string_view payload = record.substr(record_header_size, static_cast<std::size_t>(length));
    detail::check_footer(payload, detail::get_le32(record.data() + record_header_size + length), file, offset);
    return payload;
}

/// Reads the records of an event file in order, checking every CRC.
class record_reader {
public:
    /// One record: where it starts in the file, and its payload (a view into the data).
    struct record {
        std::uint64_t offset = 0;
        std::string_view payload;

        /// Where the payload starts in the file.
        [[nodiscard]] std::uint64_t payload_offset() const noexcept { return offset + record_header_size; }
        /// The whole record's size in the file.
        [[nodiscard]] std::uint64_t size() const noexcept { return payload.size() + record_overhead; }
    };

    /// Reads `data`, the whole contents of `file` (named in errors); `data` must outlive the reader.
    record_reader(std::string_view data, std::string file) : data_(data), file_(std::move(file)) {}

    /// The next record, or nullopt at the end of the data. Throws format_error
    /// naming the file and the record's offset for truncated or corrupt records.
    std::optional<record> next() {
        if (position_ == data_.size()) {
            return std::nullopt;
        }
        const std::size_t left = data_.size() - position_;
        if (left < record_header_size) {
            throw format_error(
                fmt::format("truncated record header: {} bytes left, {} needed", left, record_header_size), file_,
                position_);
        }
        const std::uint64_t length = detail::checked_record_length(data_.data() + position_, file_, position_);
        if (left < record_overhead || length > left - record_overhead) {
            throw format_error(fmt::format("truncated record: payload length {} needs {} bytes, {} left", length,
                                           length + record_overhead, left),
                               file_, position_);
        }
        const auto size = static_cast<std::size_t>(length);
        const std::string_view payload = data_.substr(position_ + record_header_size, size);
        detail::check_footer(payload, detail::get_le32(data_.data() + position_ + record_header_size + size), file_,
                             position_);
        record out{position_, payload};
        position_ += size + record_overhead;
        return out;
    }

    /// Where the next record starts.
    [[nodiscard]] std::uint64_t position() const noexcept { return position_; }
    /// The file named in errors.
    [[nodiscard]] const std::string& file() const noexcept { return file_; }

private:
    std::string_view data_;
    std::string file_;
    std::size_t position_ = 0;
};

/// The record type record_reader returns.
using record = record_reader::record;

} // namespace tdbg::format
