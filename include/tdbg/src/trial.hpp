#pragma once
/// \file
/// The definitions of the trial and its tensors, for a program built with
/// TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as a translation unit of
/// its own (CMake's tdbg::compiled compiles each file of tdbg/src/ apart, so that they build
/// in parallel). Each definition is in exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/trial.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/trial/detail/impl/step_table.ipp"
#include "tdbg/trial/detail/impl/tensor_table.ipp"
#include "tdbg/trial/detail/impl/run_index.ipp"
#include "tdbg/trial/detail/impl/record_cache.ipp"
#include "tdbg/trial/detail/impl/run_jobs.ipp"
#include "tdbg/trial/detail/impl/index_loader.ipp"
#include "tdbg/trial/detail/impl/trial_core.ipp"
#include "tdbg/trial/impl/step_state.ipp"
#include "tdbg/trial/impl/trial.ipp"
#include "tdbg/trial/impl/tensor.ipp"
