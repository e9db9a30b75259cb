#pragma once
/// \file
/// The definitions of what the rule engine reports and how it follows a run: evaluations,
/// merged parts, JUnit and SARIF reports, actions, the schedule and watching a run, for a
/// program built with TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as a
/// translation unit of its own (CMake's tdbg::compiled compiles each file of tdbg/src/ apart,
/// so that they build in parallel). Each definition is in exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/rule_reports.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/rules/impl/actions.ipp"
#include "tdbg/rules/impl/evaluation.ipp"
#include "tdbg/rules/impl/merge.ipp"
#include "tdbg/rules/impl/junit.ipp"
#include "tdbg/rules/impl/sarif.ipp"
#include "tdbg/rules/impl/schedule.ipp"
#include "tdbg/rules/impl/watch.ipp"
