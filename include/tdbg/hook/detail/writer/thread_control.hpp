#pragma once
/// \file
/// What the hook's writer threads (hook/detail/writer/async_writer.hpp) do about themselves: step back
/// for the training thread, and measure the CPU they used.

#include "tdbg/config.hpp"

namespace tdbg::detail {

/// Adds `nice` to the calling thread's nice value (Linux, where it is per thread; at most 19).
/// Nothing elsewhere, for `nice` <= 0, or when the system refuses.
TDBG_DECL void lower_thread_priority(int nice) noexcept;

/// CPU seconds the calling thread has used.
[[nodiscard]] TDBG_DECL double thread_cpu_now() noexcept;

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/thread_control.ipp"
#endif
