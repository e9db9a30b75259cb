#pragma once
/// \file
/// Reductions chosen at run time (smdebug's configuration strings), computed
/// in one fused pass with the same kernels as reduction_set.
///
/// Results are 0-d tensors of numpy's result dtype:
///
/// | input            | min, max (+abs_) | sum, prod (+abs_) | mean, std, variance (+abs_) | l1, l2 |
/// |------------------|------------------|-------------------|-----------------------------|--------|
/// | float16/32/64, bfloat16 | input dtype | input dtype      | input dtype                 | input dtype |
/// | int8..int64      | input dtype      | int64             | float64                     | float64 |
/// | uint8..uint64    | input dtype      | uint64            | float64                     | float64 |
/// | bool             | bool             | int64             | float64                     | float64 |
/// | complex64/128    | complex (abs_: float32/64) | complex (abs_: real) | mean complex; std, variance, abs_ real |
/// real |
///
/// Accuracy: every value is accumulated in double (float16/bfloat16/float32 too)
/// and rounded once to the result dtype; the mean and variance use shifted
/// block sums merged with Chan's formula, so offset data (1e8 + noise) keeps its
/// variance. numpy accumulates float16/float32 in their own precision, so it
/// can differ in the last digits or overflow where tdbg does not. The product
/// keeps a separate exponent: it is the true product rounded to the dtype
/// (inf or 0 only when that is out of range), where numpy can overflow midway.
/// Integer sums and products wrap around in 64 bits like numpy's.
///
/// NaN and ±inf propagate as in numpy: min/max of data with a NaN are NaN,
/// inf - inf in a sum or variance gives NaN, any inf makes std/variance NaN.
/// An empty tensor gives numpy's values (sum 0, prod 1, l1/l2 0, mean/std/
/// variance NaN) and min/max of it throw tdbg::error (numpy raises). abs_ forms
/// are numpy's: numpy.absolute(int8(-128)) stays -128. l1/l2 are element-wise
/// over all elements, never matrix norms. Strings throw dtype_mismatch.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/options.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg {

/// Every reduction in `which` over `value`, in that order, from one pass over
/// the data: 0-d tensors of numpy's result dtypes (see the table above).
[[nodiscard]] TDBG_DECL std::vector<tensor_value> compute_reductions(const tensor_value& value,
                                                                     const std::vector<reduction>& which,
                                                                     const reduce::options& opts = {});

/// One reduction of `value`: a 0-d tensor of numpy's result dtype.
[[nodiscard]] TDBG_DECL tensor_value compute_reduction(const tensor_value& value, reduction r);

/// compute_reductions of a tensor whose element type is known where it is called
/// (`value.type()` is `dtype_of<T>::value`, else tdbg::error): the same kernels and results, but a file
/// that uses it compiles T's kernels only, not those of all sixteen dtypes. The hook's
/// `save_tensor` of an xtensor expression or a typed pointer reduces through it.
template <class T>
[[nodiscard]] std::vector<tensor_value> compute_reductions_of(const tensor_value& value,
                                                              const std::vector<reduction>& which,
                                                              const reduce::options& opts = {});

/// compute_reductions with each result appended to `out` as a reduction_value (the same
/// elements), in the order of `which`: no allocation once `out` has room. The hook's path, which
/// encodes the records of a tensor's reductions from them.
TDBG_DECL void compute_reduction_values(const tensor_value& value, const std::vector<reduction>& which,
                                        const reduce::options& opts, std::vector<reduction_value>& out);

/// compute_reduction_values of a tensor whose element type is known where it is called, as
/// compute_reductions_of<T> is to compute_reductions.
template <class T>
void compute_reduction_values_of(const tensor_value& value, const std::vector<reduction>& which,
                                 const reduce::options& opts, std::vector<reduction_value>& out);

namespace detail {
class running_reductions_base;
} // namespace detail

/// compute_reductions of a tensor whose elements arrive in pieces (a value too large to hold,
/// read a piece at a time): `add` each piece in order, then `results`. The results are those
/// of compute_reductions over the whole, bit for bit, when every piece but the last holds
/// exactly `piece_elements` elements (the kernels' own chunks; other sizes give results as
/// accurate, perhaps not bit-identical). Not thread-safe.
class running_reductions {
public:
    /// The piece size for bit-identical results.
    static constexpr std::size_t piece_elements = std::size_t{64} * 3072;

    TDBG_DECL explicit running_reductions(std::vector<reduction> which, reduce::options opts = {});
    TDBG_DECL running_reductions(running_reductions&&) noexcept;
    TDBG_DECL running_reductions& operator=(running_reductions&&) noexcept;
    running_reductions(const running_reductions&) = delete;
    running_reductions& operator=(const running_reductions&) = delete;
    TDBG_DECL ~running_reductions();

    /// Adds the next elements: any shape (read in order), the dtype of the pieces before.
    /// Throws dtype_mismatch for strings, tdbg::error for a piece of another dtype.
    TDBG_DECL void add(const tensor_value& piece);
    /// The number of elements added.
    [[nodiscard]] TDBG_DECL std::uint64_t count() const noexcept;
    /// Every reduction asked for, in order (throws as compute_reductions does, e.g. min of
    /// nothing added).
    [[nodiscard]] TDBG_DECL std::vector<tensor_value> results() const;

private:
    std::vector<reduction> which_;
    reduce::options opts_;
    std::unique_ptr<detail::running_reductions_base> state_; // made by the first piece
};

/// compute_reduction_values or one compute_reduction_values_of<T>, as the hook keeps it.
using reduction_values_function = void (*)(const tensor_value& value, const std::vector<reduction>& which,
                                           const reduce::options& opts, std::vector<reduction_value>& out);

/// compute_reductions or one compute_reductions_of<T>.
using reductions_function = std::vector<tensor_value> (*)(const tensor_value& value, const std::vector<reduction>& which,
                                                          const reduce::options& opts);

} // namespace tdbg

// X(T) for every element type a tensor_value holds (visit_dtype's list).
#define TDBG_DETAIL_FOR_EACH_ELEMENT_TYPE(X)                                                                           \
    X(float) X(double) X(std::int8_t) X(std::int16_t) X(std::int32_t) X(std::int64_t) X(std::uint8_t)                  \
    X(std::uint16_t) X(std::uint32_t) X(std::uint64_t) X(bool) X(std::complex<float>) X(std::complex<double>)          \
    X(tdbg::float16) X(tdbg::bfloat16) X(std::string)

#if !TDBG_HEADER_ONLY
// Compiled once, by tdbg/src/reduce.hpp.
#define TDBG_DETAIL_EXTERN_REDUCTIONS_OF(T)                                                                            \
    extern template std::vector<tdbg::tensor_value> tdbg::compute_reductions_of<T>(                                   \
        const tdbg::tensor_value&, const std::vector<tdbg::reduction>&, const tdbg::reduce::options&);              \
    extern template void tdbg::compute_reduction_values_of<T>(const tdbg::tensor_value&,                             \
                                                              const std::vector<tdbg::reduction>&,                   \
                                                              const tdbg::reduce::options&,                          \
                                                              std::vector<tdbg::reduction_value>&);
TDBG_DETAIL_FOR_EACH_ELEMENT_TYPE(TDBG_DETAIL_EXTERN_REDUCTIONS_OF)
#undef TDBG_DETAIL_EXTERN_REDUCTIONS_OF
#endif

#if TDBG_HEADER_ONLY
#include "tdbg/reduce/impl/compute.ipp"
#endif
