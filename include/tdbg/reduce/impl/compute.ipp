#pragma once
/// \file
/// Definitions of tdbg/reduce/compute.hpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/partial.hpp"

namespace tdbg {

template <class T>
std::vector<tensor_value> compute_reductions_of(const tensor_value& value, const std::vector<reduction>& which,
                                                const reduce::options& opts) {
    if (value.type() != dtype_of<T>::value) {
        throw error(fmt::format("compute_reductions_of<{}> given a {} tensor", dtype_name(dtype_of<T>::value),
                                dtype_name(value.type())));
    }
    std::vector<tensor_value> out;
    if (which.empty()) {
        return out;
    }
    if constexpr (std::is_same_v<T, std::string>) {
        throw dtype_mismatch(
            fmt::format("reduction {} needs a numeric tensor, found a str tensor", reduction_name(which.front())));
    } else {
        const auto partial = reduce::accumulate(value.data_as<T>(), value.size(), which, opts);
        out.reserve(which.size());
        for (const reduction r : which) {
            out.push_back(partial.result(r, opts.ddof));
        }
    }
    return out;
}

TDBG_DECL std::vector<tensor_value> compute_reductions(const tensor_value& value, const std::vector<reduction>& which,
                                                      const reduce::options& opts) {
    return visit_dtype(value.type(), [&](auto tag) {
        return compute_reductions_of<typename decltype(tag)::type>(value, which, opts);
    });
}

TDBG_DECL tensor_value compute_reduction(const tensor_value& value, reduction r) {
    return std::move(compute_reductions(value, std::vector<reduction>{r}).front());
}

} // namespace tdbg
