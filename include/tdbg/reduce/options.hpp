#pragma once
/// \file
/// How the reduction functions run.

namespace tdbg::reduce {

/// Options of the reduction functions.
struct options {
    /// Threads a large tensor may use (0: one per core). Results do not depend on it.
    unsigned max_threads = 0;
    /// Delta degrees of freedom of std and variance: they divide by count - ddof. 0 is numpy's
    /// default (smdebug's core hook); 1 is torch's default, the unbiased estimator (smdebug's
    /// PyTorch hook). With count <= ddof they are NaN.
    unsigned ddof = 0;
};

} // namespace tdbg::reduce
