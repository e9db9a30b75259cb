// A file compiled header-only (tdbg::tdbg), for the mode guard's test (tdbg/config.hpp):
// linked into a program with the engine compiled once, the link must fail.
#include "tdbg/core/error.hpp"

int header_only_part() {
    return tdbg::error("header-only").what()[0] == 'h' ? 0 : 1;
}
