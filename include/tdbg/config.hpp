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
extern "C" {
/// Defined by the engine compiled once (tdbg/src/core.hpp), beside the mode guard.
extern const char tdbg_compiled_engine_anchor;
}
namespace tdbg::detail {
/// Every file compiled against the engine refers to its anchor: the engine's core part, and
/// with it the mode guard, is linked whenever such a file is.
[[gnu::used]] static const char* const compiled_engine_anchor = &tdbg_compiled_engine_anchor;
} // namespace tdbg::detail
#endif
#endif
