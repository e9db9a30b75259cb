#pragma once
/// \file
/// How the reduction functions run.

namespace tdbg::reduce {

/// Options of the reduction functions.
struct options {
    /// Threads a large tensor may use (0: one per core). Results do not depend on it.
    unsigned max_threads = 0;
};

} // namespace tdbg::reduce
