#pragma once
/// \file
/// The definitions of the hook's writer (hook/detail/writer/: the data threads, the publisher,
/// the step files), for a program built with TDBG_SEPARATE_COMPILATION: included by
/// tdbg/src.hpp, or compiled as a translation unit of its own (CMake's tdbg::compiled compiles
/// each file of tdbg/src/ apart, so that they build in parallel). Each definition is in
/// exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/writer.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/hook/detail/writer/impl/buffer_pool.ipp"
#include "tdbg/hook/detail/writer/impl/write_queue.ipp"
#include "tdbg/hook/detail/writer/impl/step_file.ipp"
#include "tdbg/hook/detail/writer/impl/record_spares.ipp"
#include "tdbg/hook/detail/writer/impl/record_block.ipp"
#include "tdbg/hook/detail/writer/impl/tensorboard_writer.ipp"
#include "tdbg/hook/detail/writer/impl/publisher.ipp"
#include "tdbg/hook/detail/writer/impl/write_lane.ipp"
#include "tdbg/hook/detail/writer/impl/async_writer.ipp"
