#pragma once
/// \file
/// TDBG_CUDA_HD: marks a function that nvcc compiles for the device and the host alike, and
/// any C++17 compiler as a plain function. No CUDA header is needed.

#if !defined(TDBG_CUDA_HD)
#if defined(__CUDACC__)
/// Marks a function both the device and the host compile.
#define TDBG_CUDA_HD __host__ __device__
#else
#define TDBG_CUDA_HD
#endif
#endif
