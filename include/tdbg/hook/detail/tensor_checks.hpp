#pragma once
/// \file
/// What a tensor the hook saves must be: a name that can name it in the run's files, and no more
/// dimensions than a reader takes.

#include <cstddef>
#include <string_view>

#include "tdbg/config.hpp"

namespace tdbg::detail {

/// Throws invalid_name unless `name` can name a tensor: not empty, UTF-8 (names go into JSON
/// files, which hold UTF-8 only), no NUL byte.
TDBG_DECL void check_tensor_name(std::string_view name);

/// Throws usage_error when a tensor `name` of `rank` dimensions has more than max_tensor_rank:
/// neither smdebug (numpy) nor tdbg could read it back.
TDBG_DECL void check_tensor_rank(std::string_view name, std::size_t rank);

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/impl/tensor_checks.ipp"
#endif
