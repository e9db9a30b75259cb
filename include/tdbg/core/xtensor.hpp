#pragma once
/// \file
/// tensor_value and xtensor both ways: a value viewed as an xtensor adaptor
/// (`value.as<T>()`, no copy) or copied into an `xt::xarray<T>`
/// (`value.to_xarray<T>()`), and any xtensor expression made a tensor_value
/// (`to_tensor_value(expression)`, from tdbg/core/xexpression.hpp, which is
/// all the hook includes). Include it where you want xtensor's views of values.

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/xexpression.hpp"

namespace tdbg::detail {

template <class T>
struct xtensor_bridge<T, std::enable_if_t<has_dtype_v<T>>> {
    static auto adapt(const tensor_value& v) {
        const T* p = v.data_as<T>();
        return xt::adapt(p, v.size(), xt::no_ownership(), v.shape());
    }

    static xt::xarray<T> to_xarray(const tensor_value& v) {
        xt::xarray<T> out;
        if constexpr (std::is_same_v<T, std::string>) {
            out = xt::xarray<T>::from_shape(v.shape());
            auto to = out.begin();
            for (const std::string_view s : v.string_views()) {
                *to++ = std::string(s);
            }
        } else {
            const T* p = v.data_as<T>();
            out = xt::xarray<T>::from_shape(v.shape());
            if (v.nbytes() != 0) {
                std::memcpy(out.data(), p, v.nbytes());
            }
        }
        return out;
    }
};

} // namespace tdbg::detail
