#pragma once
/// \file
/// The engine's definitions, for a program built with TDBG_SEPARATE_COMPILATION
/// (tdbg/config.hpp): exactly one of its translation units includes this file,
/// or each file of tdbg/src/ is included by one translation unit of its own
/// (CMake: link the target tdbg::compiled, which compiles them that way, in
/// parallel). The optional S3 backend (tdbg/storage/s3.hpp) is header-only in
/// both modes: only the files that construct an s3_storage pay for it.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/src/core.hpp"
#include "tdbg/src/reduce.hpp"
#include "tdbg/src/hook.hpp"
#include "tdbg/src/writer.hpp"
#include "tdbg/src/trial.hpp"
#include "tdbg/src/whole_runs.hpp"
#include "tdbg/src/rules.hpp"
#include "tdbg/src/rule_reports.hpp"
#include "tdbg/src/builtin_rules.hpp"
