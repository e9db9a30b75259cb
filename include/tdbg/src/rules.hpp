#pragma once
/// \file
/// The definitions of the rule engine: rules, invoking them, the registry and rule
/// configurations (what it reports is in tdbg/src/rule_reports.hpp), for a program built with
/// TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as a translation unit of
/// its own (CMake's tdbg::compiled compiles each file of tdbg/src/ apart, so that they build in
/// parallel). Each definition is in exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/rules.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/rules/impl/rule.ipp"
#include "tdbg/rules/impl/rule_params.ipp"
#include "tdbg/rules/detail/impl/tensor_selection.ipp"
#include "tdbg/rules/impl/values.ipp"
#include "tdbg/rules/detail/impl/activity.ipp"
#include "tdbg/rules/impl/any_rule.ipp"
#include "tdbg/rules/impl/invoke.ipp"
#include "tdbg/rules/impl/description.ipp"
#include "tdbg/rules/impl/registry.ipp"
#include "tdbg/rules/impl/rule_configurations.ipp"
