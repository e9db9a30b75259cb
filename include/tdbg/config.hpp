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

/// The mode guard: a program mixes the modes when one of its files is compiled header-only
/// and it links the engine compiled once (tdbg::compiled): two definitions of everything the
/// engine holds, which the linker would merge in silence. Such a program fails to link, with
/// an error that names both modes: "multiple definition of
/// `tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine'". Every header-only file
/// holds the guard symbol in a COMDAT group (one copy for all of them); the engine (tdbg/src/core.hpp)
/// holds it as an ordinary definition, which clashes with that copy, and every file compiled
/// against the engine refers to the engine's anchor, so the engine is linked in. ELF targets
/// with GCC or Clang; TDBG_NO_MODE_GUARD leaves it out (for code that uses only inline parts
/// and links with both, as tdbg::cuda does).
#if !defined(TDBG_NO_MODE_GUARD) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#if TDBG_HEADER_ONLY
// Assembly: C++ has no way to spell a non-weak symbol in a COMDAT group.
__asm__(".pushsection .data.tdbg_mode_guard,\"awG\",@progbits,tdbg_mode_guard,comdat\n"
        ".globl tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine\n"
        ".type tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine,@object\n"
        ".size tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine,1\n"
        "tdbg_mode_guard_header_only_file_linked_with_tdbg_compiled_engine:\n"
        ".byte 0\n"
        ".popsection\n");
#else
/// The C++ standard guard: the engine compiled once and the files compiled against it must
/// use one C++ standard (the engine's classes and inline functions are laid out and compiled
/// by it). A program whose files use another standard than the engine it links (an installed
/// tdbg::engine built as C++17 in a C++20 program) fails to link, with two errors that name
/// both: "undefined reference to `tdbg_engine_compiled_as_cxx20'" (a C++20 file wants a C++20
/// engine) and "undefined reference to `tdbg_program_compiled_as_cxx17'" (the C++17 engine
/// wants C++17 files). Every file compiled against the engine refers to the engine's anchor
/// for its standard and to its core part's anchor (which links that part, and with it the mode
/// guard), and holds the program's symbol for its standard in a COMDAT group; every part of the
/// engine refers to the program's symbol for the engine's standard.
#if __cplusplus > 202002L
#define TDBG_DETAIL_CXX_STANDARD cxx23
#elif __cplusplus > 201703L
#define TDBG_DETAIL_CXX_STANDARD cxx20
#else
#define TDBG_DETAIL_CXX_STANDARD cxx17
#endif
#define TDBG_DETAIL_PASTE2(a, b) a##b
#define TDBG_DETAIL_PASTE(a, b) TDBG_DETAIL_PASTE2(a, b)
#define TDBG_DETAIL_TEXT2(a) #a
#define TDBG_DETAIL_TEXT(a) TDBG_DETAIL_TEXT2(a)
#define TDBG_DETAIL_ENGINE_ANCHOR TDBG_DETAIL_PASTE(tdbg_engine_compiled_as_, TDBG_DETAIL_CXX_STANDARD)
#define TDBG_DETAIL_PROGRAM_ANCHOR TDBG_DETAIL_PASTE(tdbg_program_compiled_as_, TDBG_DETAIL_CXX_STANDARD)
extern "C" {
/// Defined by the engine compiled once (tdbg/src/core.hpp), beside the mode guard: one anchor
/// whatever the standard (which links the engine's core part), one for its standard.
extern const char tdbg_compiled_engine_anchor;
extern const char TDBG_DETAIL_ENGINE_ANCHOR;
/// Defined by every file compiled against the engine (below), for the engine's parts.
extern const char TDBG_DETAIL_PROGRAM_ANCHOR;
}
namespace tdbg::detail {
#if defined(TDBG_DETAIL_ENGINE_SOURCE)
/// Every part of the engine refers to the program's symbol of the engine's standard.
[[gnu::used]] static const char* const program_anchor = &TDBG_DETAIL_PROGRAM_ANCHOR;
#else
/// Every file compiled against the engine refers to its anchor, so that the engine's core part
/// (and with it the mode guard, and its reference to the program's standard) is linked whenever
/// such a file is, and to the engine's anchor for the file's standard.
[[gnu::used]] static const char* const compiled_engine_anchors[] = {&tdbg_compiled_engine_anchor,
                                                                   &TDBG_DETAIL_ENGINE_ANCHOR};
#endif
} // namespace tdbg::detail
#if !defined(TDBG_DETAIL_ENGINE_SOURCE)
// Assembly, as for the mode guard: the program's symbol, one copy for all of its files.
__asm__(".pushsection .data.tdbg_program_standard,\"awG\",@progbits," TDBG_DETAIL_TEXT(TDBG_DETAIL_PROGRAM_ANCHOR) ",comdat\n"
        ".globl " TDBG_DETAIL_TEXT(TDBG_DETAIL_PROGRAM_ANCHOR) "\n"
        ".type " TDBG_DETAIL_TEXT(TDBG_DETAIL_PROGRAM_ANCHOR) ",@object\n"
        ".size " TDBG_DETAIL_TEXT(TDBG_DETAIL_PROGRAM_ANCHOR) ",1\n"
        TDBG_DETAIL_TEXT(TDBG_DETAIL_PROGRAM_ANCHOR) ":\n"
        ".byte 0\n"
        ".popsection\n");
#endif
#endif
#endif
