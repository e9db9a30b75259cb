// A file compiled against the engine compiled once (tdbg::compiled), for the mode guard's test
// (tdbg/config.hpp): alone it links and runs; with TDBG_MODE_GUARD_MIXED it calls a file
// compiled header-only, and the program must fail to link.
#include "tdbg/core/error.hpp"

#if defined(TDBG_MODE_GUARD_MIXED)
int header_only_part();
#endif

int main() {
    const int status = tdbg::error("compiled").what()[0] == 'c' ? 0 : 1;
#if defined(TDBG_MODE_GUARD_MIXED)
    return status + header_only_part();
#else
    return status;
#endif
}
