#pragma once
/// \file
/// The definitions of the hook and its JSON configuration (its writer's are in
/// tdbg/src/writer.hpp), for a program built with TDBG_SEPARATE_COMPILATION: included by
/// tdbg/src.hpp, or compiled as a translation unit of its own (CMake's tdbg::compiled compiles each file of
/// tdbg/src/ apart, so that they build in parallel). Each definition is in
/// exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/hook.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/hook/impl/collection.ipp"
#include "tdbg/hook/impl/hook.ipp"
#include "tdbg/hook/detail/impl/step_clock.ipp"
#include "tdbg/hook/detail/impl/hook_engine.ipp"
#include "tdbg/hook/detail/impl/error_reporter.ipp"
#include "tdbg/hook/detail/impl/collection_selection.ipp"
#include "tdbg/hook/detail/impl/selection_check.ipp"
#include "tdbg/hook/detail/impl/state_store.ipp"
#include "tdbg/hook/detail/impl/histogram.ipp"
#include "tdbg/hook/detail/impl/run_claim.ipp"
#include "tdbg/hook/detail/impl/deferred_cell.ipp"
#include "tdbg/hook/detail/impl/stop_watch.ipp"
#include "tdbg/hook/detail/impl/metrics_writer.ipp"
#include "tdbg/hook/detail/impl/tensorboard_export.ipp"
#include "tdbg/hook/detail/impl/save_planning.ipp"
#include "tdbg/hook/detail/impl/step_scalars.ipp"
#include "tdbg/hook/impl/reduction_config.ipp"
#include "tdbg/hook/impl/json_config.ipp"
