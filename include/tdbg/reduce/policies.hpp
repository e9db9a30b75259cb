#pragma once
/// \file
/// The reductions as types, to compose at compile time:
/// `tdbg::reduce::reduction_set<tdbg::reduce::mean, tdbg::reduce::abs_l2>`.
///
/// Definitions (the ones users expect, numpy's where numpy has one): std and
/// variance with ddof=0; l1 = Σ|x| and l2 = √Σx² over all elements whatever
/// the rank. smdebug's Python reader uses matrix norms for 2-D values
/// (numpy.linalg.norm); tdbg does not. abs_<r> is r of numpy.absolute(x).
///
/// The standard deviation's policy is `stddev` (a type named `std` would shadow
/// the standard namespace inside tdbg::reduce); the reduction it stands for is
/// still named "std" everywhere a name is written or read.

#include <type_traits>

#include "tdbg/core/reduction.hpp"

namespace tdbg::reduce {

/// The base of the policies: `value` is the reduction the policy stands for.
template <reduction_kind Kind, bool Abs>
struct policy {
    static constexpr reduction value{Kind, Abs};
};

/// The smallest element (NaN if there is a NaN; an empty tensor has none).
struct min : policy<reduction_kind::min, false> {};
/// The largest element (NaN if there is a NaN; an empty tensor has none).
struct max : policy<reduction_kind::max, false> {};
/// The arithmetic mean.
struct mean : policy<reduction_kind::mean, false> {};
/// The standard deviation, ddof=0 (the reduction named "std").
struct stddev : policy<reduction_kind::std, false> {};
/// The variance, ddof=0.
struct variance : policy<reduction_kind::variance, false> {};
/// The sum.
struct sum : policy<reduction_kind::sum, false> {};
/// The product.
struct prod : policy<reduction_kind::prod, false> {};
/// Σ|x| over all elements.
struct l1 : policy<reduction_kind::l1, false> {};
/// √Σx² over all elements.
struct l2 : policy<reduction_kind::l2, false> {};
/// The smallest absolute value.
struct abs_min : policy<reduction_kind::min, true> {};
/// The largest absolute value.
struct abs_max : policy<reduction_kind::max, true> {};
/// The mean of the absolute values.
struct abs_mean : policy<reduction_kind::mean, true> {};
/// The standard deviation of the absolute values, ddof=0 (the reduction named "abs_std").
struct abs_stddev : policy<reduction_kind::std, true> {};
/// The variance of the absolute values, ddof=0.
struct abs_variance : policy<reduction_kind::variance, true> {};
/// The sum of the absolute values.
struct abs_sum : policy<reduction_kind::sum, true> {};
/// The product of the absolute values.
struct abs_prod : policy<reduction_kind::prod, true> {};
/// l1 of the absolute values (equal to l1).
struct abs_l1 : policy<reduction_kind::l1, true> {};
/// l2 of the absolute values (equal to l2).
struct abs_l2 : policy<reduction_kind::l2, true> {};

/// True for the reduction policy types above (and any type derived from `policy`).
template <class P>
struct is_policy {
private:
    template <reduction_kind K, bool A>
    static ::std::true_type test(const policy<K, A>*);
    static ::std::false_type test(...);

public:
    static constexpr bool value = decltype(test(static_cast<const P*>(nullptr)))::value;
};
template <class P>
inline constexpr bool is_policy_v = is_policy<P>::value;

} // namespace tdbg::reduce
