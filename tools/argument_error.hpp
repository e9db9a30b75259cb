#pragma once
// The error of a command line that cannot be taken: `tdbg <command>` prints its message with a
// pointer to --help and exits with status 2 (command_registry.hpp's guarded()).

#include "tdbg/core/error.hpp"

namespace tdbg::cli {

/// An argument error: the message goes to stderr with a pointer to --help, exit status 2.
class argument_error : public tdbg::error {
public:
    using tdbg::error::error;
};

} // namespace tdbg::cli
