#pragma once
/// \file
/// The detection idiom (C++17 has no std::is_detected): whether `Op<T>` is a valid type, for
/// the traits that ask what a user's class declares (rules/rule.hpp's, of a rule class).

#include <type_traits>

namespace tdbg::detail {

template <class AlwaysVoid, template <class> class Op, class T>
struct detector : std::false_type {};
template <template <class> class Op, class T>
struct detector<std::void_t<Op<T>>, Op, T> : std::true_type {};

/// std::true_type when `Op<T>` is a valid type, else std::false_type.
template <template <class> class Op, class T>
using is_detected = detector<void, Op, T>;

} // namespace tdbg::detail
