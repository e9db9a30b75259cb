#pragma once
/// \file
/// The definitions of the vocabulary, the wire format and storage: patterns, the thread pool, JSON, the collections and index files, the fast path of tensor events, the stop marker, local and in-memory storage and opening a location, for a program built with
/// TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as a
/// translation unit of its own (CMake's tdbg::compiled compiles each file of
/// tdbg/src/ apart, so that they build in parallel). Each definition is in
/// exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/core.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#if !defined(TDBG_NO_MODE_GUARD) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
// The mode guard's ordinary definition, and the anchor (for the engine's C++ standard) that links
// it (tdbg/config.hpp).
extern "C" {
extern const char tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine;
const char tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine = 0;
const char tdbg_compiled_engine_anchor = 0;
const char TDBG_DETAIL_ENGINE_ANCHOR = 0; // the engine's anchor for its C++ standard
}
#endif

#include "tdbg/core/impl/array_text.ipp"
#include "tdbg/core/impl/config_file.ipp"
#include "tdbg/core/impl/error.ipp"
#include "tdbg/core/detail/impl/pattern.ipp"
#include "tdbg/core/impl/reduction.ipp"
#include "tdbg/core/impl/tensor_value.ipp"
#include "tdbg/core/impl/text.ipp"
#include "tdbg/core/detail/impl/thread_pool.ipp"
#include "tdbg/format/impl/event.ipp"
#include "tdbg/format/detail/impl/json_reader.ipp"
#include "tdbg/format/impl/json.ipp"
#include "tdbg/format/detail/impl/json_fields.ipp"
#include "tdbg/format/impl/layout.ipp"
#include "tdbg/format/impl/collections_file.ipp"
#include "tdbg/format/detail/impl/index_parser.ipp"
#include "tdbg/format/impl/index_file.ipp"
#include "tdbg/format/detail/impl/fast_event.ipp"
#include "tdbg/format/impl/job_claim.ipp"
#include "tdbg/format/impl/stop_marker.ipp"
#include "tdbg/storage/impl/storage.ipp"
#include "tdbg/storage/impl/local_storage.ipp"
#include "tdbg/storage/impl/memory_storage.ipp"
#include "tdbg/storage/impl/open.ipp"
