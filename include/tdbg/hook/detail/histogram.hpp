#pragma once
/// \file
/// TensorBoard histograms of a tensor, bucketed as smdebug does (TensorFlow's
/// default buckets: 0 and ±1e-12 * 1.1^k up to 1e20, trimmed to the support).

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/hook/deferred.hpp"

namespace tdbg::detail {

/// TensorFlow's default bucket edges (tdbg::histogram_edges).
inline const std::vector<double>& default_histogram_edges() { return histogram_edges(); }

/// The first element of `value` as a double (a TensorBoard scalar); 0 for strings and complex values.
TDBG_DECL double scalar_as_double(const tensor_value& value);

/// The values of a real tensor as doubles; nullopt for bool, string and complex tensors.
TDBG_DECL std::optional<std::vector<double>> histogram_values(const tensor_value& value);

/// smdebug's _make_histogram from counts over the default edges and the values' moments:
/// the buckets trimmed to the support, one empty bucket kept left of it (TensorBoard shows
/// right edges only). nullopt when smdebug writes nothing: no value in range.
TDBG_DECL std::optional<format::histogram> histogram_from_counts(const histogram_counts& in);

/// The counts and moments of `values` over the default edges (numpy.histogram counts
/// [edge_i, edge_i+1), the last bucket closed; values outside or NaN are not counted;
/// numpy's min and max propagate NaN).
TDBG_DECL histogram_counts count_histogram(const std::vector<double>& values);

/// smdebug's _make_histogram with the default edges. nullopt when smdebug writes nothing: no
/// values, or none in range.
TDBG_DECL std::optional<format::histogram> make_histogram(const std::vector<double>& values);

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/histogram.ipp"
#endif
