#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/thread_control.hpp.

#include <algorithm>
#include <cerrno>
#include <ctime>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "tdbg/hook/detail/writer/thread_control.hpp"

namespace tdbg::detail {

TDBG_DECL void lower_thread_priority([[maybe_unused]] int nice) noexcept {
#if defined(__linux__)
    if (nice > 0) {
        // Linux applies a thread id's nice value to that thread only. Failure changes nothing.
        const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
        errno = 0;
        const int current = ::getpriority(PRIO_PROCESS, tid);
        if (errno == 0) {
            (void)::setpriority(PRIO_PROCESS, tid, std::min(19, current + nice));
        }
    }
#endif
}

TDBG_DECL double thread_cpu_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace tdbg::detail
