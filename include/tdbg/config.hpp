#pragma once
/// \file
/// How the library is compiled: header-only (the default) or separately.
///
/// Header-only, every translation unit that includes a tdbg header also
/// compiles the definitions behind it (`tdbg/<area>/impl/*.ipp`, as inline
/// functions): nothing to build or link but the headers.
///
/// With `TDBG_SEPARATE_COMPILATION` defined for the whole program, the headers
/// only declare the engine, and exactly one translation unit of the program
/// defines it by including `<tdbg/src.hpp>` (CMake: link `tdbg::compiled`,
/// which is that translation unit). A file that includes the hook then costs
/// little more than the xtensor headers it saves from.

#if defined(TDBG_SEPARATE_COMPILATION)
/// 1 when the headers also define the engine (the default), 0 under TDBG_SEPARATE_COMPILATION.
#define TDBG_HEADER_ONLY 0
/// Marks the declarations and definitions of the engine (those defined in impl/*.ipp
/// files): `inline` when header-only, nothing under TDBG_SEPARATE_COMPILATION.
#define TDBG_DECL
#else
#define TDBG_HEADER_ONLY 1
#define TDBG_DECL inline
#endif
