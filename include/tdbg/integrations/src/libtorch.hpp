#pragma once
/// \file
/// The definitions of the libtorch integration (tdbg/integrations/libtorch.hpp), for a program
/// built with TDBG_SEPARATE_COMPILATION: the integration's part of the engine, compiled once by
/// one translation unit of the program (CMake: tdbg::libtorch_compiled, or the installed
/// tdbg::libtorch_engine). Apart from tdbg/src/, which every program's engine compiles: only
/// programs that use libtorch compile this part, and only they need Torch.

#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/integrations/src/libtorch.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::libtorch_compiled)"
#endif

#define TDBG_DETAIL_LIBTORCH_SOURCE 1
#include "tdbg/integrations/impl/libtorch.ipp"

/// The anchor of the integration's part guard (tdbg/integrations/libtorch.hpp).
extern "C" const char tdbg_libtorch_part_missing_link_tdbg_libtorch_compiled_or_tdbg_libtorch_engine = 0;
