#pragma once
/// \file
/// xtensor expressions as tensor_values: `to_tensor_value(expression)` copies
/// any expression (C order), and `is_borrowable_container` tells the hook which
/// containers it can borrow without a copy. What the hook needs of xtensor;
/// tdbg/core/xtensor.hpp adds the other way (`value.as<T>()`, `to_xarray<T>()`).

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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
