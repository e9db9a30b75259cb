# The optional CUDA component: STATIC library tdbg::cuda (headers tdbg/cuda/reduce.hpp and
# tdbg/cuda/save.hpp), the fused multi-tensor reduction kernel, the histogram kernel and the
# device operations of device_saver (runtime_ops), compiled from src/cuda/. Built where a
# working CUDA compiler is found: nvcc on PATH, $CUDACXX, -DCMAKE_CUDA_COMPILER=..., or /usr/local/cuda/bin/nvcc (where the
# NVIDIA installers put it, often not on PATH). No GPU is needed to build it; the tests skip what needs one.
# TDBG_CUDA=OFF skips looking for a compiler. CMAKE_CUDA_ARCHITECTURES (or $CUDAARCHS) picks the
# GPUs; by default sm_80 code and sm_90 code plus its PTX (A100, H100/H200, newer by JIT).
option(TDBG_CUDA "Build tdbg::cuda (the reduction kernel) when a CUDA compiler is found" ON)

set(TDBG_HAS_CUDA OFF)
set(_tdbg_cuda_why "")
if(TDBG_CUDA)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(_tdbg_nvcc_on_path nvcc NO_CACHE)
    if(NOT _tdbg_nvcc_on_path AND EXISTS /usr/local/cuda/bin/nvcc)
      # check_language() and enable_language() both take the compiler from CUDACXX.
      set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
    endif()
    unset(_tdbg_nvcc_on_path)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      # Cached before enable_language(), which would otherwise cache the compiler's default.
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90" CACHE STRING "GPU architectures of CUDA code (tdbg's default: sm_80, and sm_90 with its PTX)")
    endif()
    enable_language(CUDA)
    # GLOBAL: CUDA::cudart_static must be visible wherever tdbg::cuda is linked, also in a
    # project that adds tdbg with add_subdirectory.
    find_package(CUDAToolkit QUIET GLOBAL)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cudart_static)
      set(TDBG_HAS_CUDA ON)
    else()
      set(_tdbg_cuda_why "the CUDA toolkit's runtime library (CUDA::cudart_static) was not found")
    endif()
  else()
    set(_tdbg_cuda_why "no working CUDA compiler (nvcc on PATH, CUDACXX, CMAKE_CUDA_COMPILER or /usr/local/cuda/bin/nvcc)")
  endif()
else()
  set(_tdbg_cuda_why "TDBG_CUDA=OFF")
endif()

if(TDBG_HAS_CUDA)
  add_library(tdbg_cuda STATIC ${PROJECT_SOURCE_DIR}/src/cuda/multi_reducer.cpp
                              ${PROJECT_SOURCE_DIR}/src/cuda/runtime_ops.cpp
                              ${PROJECT_SOURCE_DIR}/src/cuda/histogram_kernel.cu
                              ${PROJECT_SOURCE_DIR}/src/cuda/reduce_kernel.cu)
  add_library(tdbg::cuda ALIAS tdbg_cuda)
  if(NOT PROJECT_IS_TOP_LEVEL)
    # In a project that adds tdbg with add_subdirectory, nvcc runs only if something links it.
    set_target_properties(tdbg_cuda PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
  set_target_properties(tdbg_cuda PROPERTIES EXPORT_NAME cuda POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 17
                                             CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)
  # The library uses only inline parts of tdbg (errors, dtypes), so it links with programs built
  # header-only and with tdbg::compiled alike. cudart_static: nothing to ship next to a program.
  target_link_libraries(tdbg_cuda PUBLIC tdbg::tdbg PRIVATE CUDA::cudart_static)
  # Lets code that is built either way tell whether the component is there.
  target_compile_definitions(tdbg_cuda INTERFACE TDBG_HAS_CUDA=1)
  # tdbg_warnings' flags are the C++ compiler's; nvcc gets its own. --fmad=false: no contraction
  # of a*b+c beyond the fma() the arithmetic asks for, so the host replays the kernel bit for bit
  # (tdbg/cuda/detail/host_pass.hpp).
  target_compile_options(tdbg_cuda PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic $<$<BOOL:${TDBG_WERROR}>:-Werror>>
    $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -Xcompiler=-Wall,-Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${TDBG_WERROR}>>:--Werror=all-warnings -Xcompiler=-Werror>)
  # The installed package's component cuda: its consumers' find_package() finds the toolkit
  # (CUDA::cudart_static), only when they ask for the component.
  tdbg_package_component(cuda TARGETS tdbg_cuda DEPENDENCIES "CUDAToolkit")
  message(STATUS "tdbg: CUDA component enabled (tdbg::cuda: nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "tdbg: CUDA component disabled (tdbg::cuda not defined): ${_tdbg_cuda_why}")
endif()
unset(_tdbg_cuda_why)

# libtorch built with CUDA, and tdbg::cuda: torch_hook reduces floating CUDA tensors with the
# fused kernel (tdbg/integrations/libtorch.hpp), on torch's current stream (c10_cuda).
# Otherwise it reduces them with torch operations on their device.
if(TDBG_HAS_CUDA AND TARGET tdbg_libtorch AND TARGET c10_cuda)
  target_link_libraries(tdbg_libtorch INTERFACE tdbg::cuda c10_cuda)
  target_compile_definitions(tdbg_libtorch INTERFACE TDBG_TORCH_HAS_CUDA=1)
  # The installed component libtorch then needs the component cuda (and Torch brings c10_cuda).
  set_property(GLOBAL APPEND PROPERTY TDBG_PACKAGE_COMPONENT_libtorch_COMPONENTS cuda)
  message(STATUS "tdbg: torch_hook reduces CUDA tensors with tdbg::cuda's fused kernel")
endif()
