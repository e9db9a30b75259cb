#pragma once
/// \file
/// Definitions of tdbg/hook/detail/tensor_checks.hpp.

#include <cstddef>
#include <string_view>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/detail/tensor_checks.hpp"

namespace tdbg::detail {

TDBG_DECL void check_tensor_name(std::string_view name) {
    if (name.empty()) {
        throw invalid_name("tdbg::hook: an empty tensor name");
    }
    if (const auto at = invalid_utf8_at(name); at != std::string_view::npos) {
        throw invalid_name(fmt::format("tensor name is not valid UTF-8 at byte {}", at));
    }
    if (name.find('\0') != std::string_view::npos) {
        throw invalid_name("tensor name contains a NUL byte");
    }
}

TDBG_DECL void check_tensor_rank(std::string_view name, std::size_t rank) {
    if (rank > max_tensor_rank) {
        throw usage_error(fmt::format("tdbg::hook: cannot save '{}': it has {} dimensions, more than the {} a "
                                      "tensor may have",
                                      name, rank, max_tensor_rank));
    }
}

} // namespace tdbg::detail
