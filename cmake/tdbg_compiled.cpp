// The one translation unit that defines tdbg's engine for a program built with
// TDBG_SEPARATE_COMPILATION (the target tdbg::compiled); see tdbg/config.hpp.
#include <tdbg/src.hpp>
