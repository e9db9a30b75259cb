#pragma once
/// \file
/// tensor_value and xtensor: a value viewed as an xtensor adaptor
/// (`value.as<T>()`, no copy) or copied into an `xt::xarray<T>`
/// (`value.to_xarray<T>()`), and any xtensor expression made a tensor_value
/// (`to_tensor_value(expression)`). The hook includes it; a program that only
/// reads runs includes it where it wants xtensor's views of the values.

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xcontainer.hpp>
#include <xtensor/xexpression.hpp>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg {

namespace detail {

/// A contiguous row-major xtensor container whose memory can be borrowed.
template <class E, class = void>
struct is_borrowable_container : std::false_type {};
template <class E>
struct is_borrowable_container<E, std::void_t<decltype(std::declval<const E&>().data()), decltype(E::static_layout)>>
    : std::bool_constant<std::is_base_of_v<xt::xcontainer<E>, E> && E::static_layout == xt::layout_type::row_major> {};

template <class T>
struct xtensor_bridge<T, std::enable_if_t<has_dtype_v<T>>> {
    static auto adapt(const tensor_value& v) {
        const T* p = v.data_as<T>();
        return xt::adapt(p, v.size(), xt::no_ownership(), v.shape());
    }

    static xt::xarray<T> to_xarray(const tensor_value& v) {
        xt::xarray<T> out;
        if constexpr (std::is_same_v<T, std::string>) {
            const auto& strings = v.strings();
            out = xt::xarray<T>::from_shape(v.shape());
            std::copy(strings.begin(), strings.end(), out.begin());
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

} // namespace detail

/// Any xtensor expression evaluated into a tensor_value that owns its bytes (C order).
template <class E>
[[nodiscard]] tensor_value to_tensor_value(const xt::xexpression<E>& expression) {
    using value_type = std::decay_t<typename E::value_type>;
    static_assert(has_dtype_v<value_type>, "to_tensor_value: the expression's value_type has no dtype");
    const xt::xarray<value_type> evaluated = expression.derived_cast();
    tensor_value::shape_type shape(evaluated.shape().begin(), evaluated.shape().end());
    if constexpr (std::is_same_v<value_type, bool>) {
        return tensor_value(std::vector<bool>(evaluated.begin(), evaluated.end()), std::move(shape));
    } else {
        return tensor_value(std::vector<value_type>(evaluated.begin(), evaluated.end()), std::move(shape));
    }
}

} // namespace tdbg
