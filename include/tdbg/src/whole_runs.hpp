#pragma once
/// \file
/// The definitions of what reads whole runs to compare them (the golden document of
/// tdbg/trial/golden.hpp, written by `tdbg dump`; diff_runs of tdbg/diff/diff.hpp, `tdbg diff`, and
/// its document, tdbg/diff/document.hpp),
/// for a program built with TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as
/// a translation unit of its own (CMake's tdbg::compiled compiles each file of tdbg/src/ apart,
/// so that they build in parallel). Apart from the trial's part, which would otherwise be the
/// engine's longest compile. Each definition is in exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/whole_runs.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/trial/impl/golden.ipp"
#include "tdbg/diff/impl/diff.ipp"
#include "tdbg/diff/impl/document.ipp"
