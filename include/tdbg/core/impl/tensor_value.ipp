#pragma once
/// \file
/// Definitions of tdbg/core/tensor_value.hpp.

#include <cstddef>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/tensor_value.hpp"

namespace tdbg {

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
