#pragma once
/// \file
/// The definitions of the reduction kernels behind run-time reduction sets, for a program built with
/// TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as a
/// translation unit of its own (CMake's tdbg::compiled compiles each file of
/// tdbg/src/ apart, so that they build in parallel). Each definition is in
/// exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/reduce.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/reduce/impl/compute.ipp"

// compute_reductions_of<T> and compute_reduction_values_of<T> for every element type (compute.hpp declares them extern).
#define TDBG_DETAIL_INSTANTIATE_REDUCTIONS_OF(T)                                                                       \
    template std::vector<tdbg::tensor_value> tdbg::compute_reductions_of<T>(                                          \
        const tdbg::tensor_value&, const std::vector<tdbg::reduction>&, const tdbg::reduce::options&);              \
    template void tdbg::compute_reduction_values_of<T>(const tdbg::tensor_value&, const std::vector<tdbg::reduction>&, \
                                                       const tdbg::reduce::options&, std::vector<tdbg::reduction_value>&);
TDBG_DETAIL_FOR_EACH_ELEMENT_TYPE(TDBG_DETAIL_INSTANTIATE_REDUCTIONS_OF)
#undef TDBG_DETAIL_INSTANTIATE_REDUCTIONS_OF
