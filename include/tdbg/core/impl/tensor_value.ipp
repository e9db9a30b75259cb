#pragma once
/// \file
/// Definitions of tdbg/core/tensor_value.hpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/tensor_value.hpp"

namespace tdbg {

namespace detail {

TDBG_DECL string_table::string_table(std::string_view encoded, std::size_t count, std::shared_ptr<const void> owner)
    : encoded_(encoded), owner_(std::move(owner)), count_(count) {
    marks_.reserve(count / stride + 1);
    std::size_t pos = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (i % stride == 0) {
            marks_.push_back(pos);
        }
        const std::size_t start = pos;
        const auto fail = [&](const char* why) {
            throw error(fmt::format("string tensor: element {} at byte {} of its fields: {}", i, start, why));
        };
        if (pos == encoded.size()) {
            fail(fmt::format("the fields end after {} of {} elements", i, count).c_str());
        }
        if (encoded[pos++] != field_key) {
            fail("not a string_val field (key 0x42)");
        }
        std::uint64_t length = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (pos == encoded.size() || shift > 63) {
                fail("its length is cut off or longer than 10 bytes");
            }
            const auto byte = static_cast<unsigned char>(encoded[pos++]);
            length |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
            if ((byte & 0x80U) == 0) {
                break;
            }
        }
        if (length > encoded.size() - pos) {
            fail(fmt::format("its length {} runs past the {} bytes that remain", length, encoded.size() - pos).c_str());
        }
        pos += static_cast<std::size_t>(length);
    }
    if (pos != encoded.size()) {
        throw error(fmt::format("string tensor: {} bytes of its fields follow its {} elements", encoded.size() - pos,
                                count));
    }
}

TDBG_DECL std::shared_ptr<const string_table> string_table::encode(const std::vector<std::string>& strings) {
    std::size_t size = 0;
    for (const std::string& s : strings) {
        size += 2 + s.size() + (s.size() >= 0x80 ? 9 : 0); // a length of 2 bytes or more, counted generously
    }
    auto buffer = std::make_shared<std::string>();
    buffer->reserve(size);
    for (const std::string& s : strings) {
        append_field(*buffer, s);
    }
    const std::string_view encoded = *buffer;
    return std::make_shared<const string_table>(encoded, strings.size(), std::move(buffer));
}

TDBG_DECL const std::vector<std::string>& string_table::materialized() const {
    std::call_once(materialize_once_, [this] {
        std::vector<std::string> out;
        out.reserve(count_);
        std::size_t pos = 0;
        for (std::size_t i = 0; i < count_; ++i) {
            out.emplace_back(next(pos));
        }
        materialized_ = std::move(out);
    });
    return materialized_;
}

} // namespace detail

TDBG_DECL tensor_value tensor_value::prepare(dtype type, shape_type shape, std::size_t nbytes) {
    if (type == dtype::string) {
        throw error("tensor_value: string tensors are built from std::vector<std::string>, not bytes");
    }
    tensor_value v(type, std::move(shape));
    const std::size_t want = element_count(v.shape_) * dtype_size(type);
    if (want != nbytes) {
        throw error(fmt::format("tensor_value: {} bytes do not fit a {} tensor of {} elements ({} bytes expected)",
                                nbytes, dtype_name(type), element_count(v.shape_), want));
    }
    return v;
}

TDBG_DECL void tensor_value::check_count(std::size_t count) const {
    if (count != element_count(shape_)) {
        throw error(fmt::format("tensor_value: {} elements do not fit a shape of {} elements", count,
                                element_count(shape_)));
    }
}

TDBG_DECL void tensor_value::type_mismatch(dtype wanted) const {
    throw dtype_mismatch(fmt::format("tensor_value: expected {}, found {}", dtype_name(wanted), dtype_name(type_)));
}

} // namespace tdbg
