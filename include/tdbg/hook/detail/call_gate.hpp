#pragma once
/// \file
/// How a hook meets threads and fork (docs/reliability.md, "Threads and fork"):
///   - One call at a time. A hook may be called from any thread, one call at a time. A call
///     that starts while another call of the same hook runs on another thread throws
///     usage_error before it touches anything. The flag a call holds also orders each call after
///     the one before, so calls handed from thread to thread need no other synchronization.
///   - After fork, the child's copy of a hook is inert: its calls save and write nothing (the
///     run is the parent's), and closing or destroying it frees nothing (the writer threads it
///     would join exist only in the parent; core/detail/fork_guard.hpp).

#include <atomic>
#include <cstdint>
#include <string>

#include "tdbg/core/detail/fork_guard.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg::detail {

/// The gate each public call of one hook passes (see the file comment).
class call_gate {
public:
    call_gate() : born_(forks_so_far()) {}
    call_gate(const call_gate&) = delete;
    call_gate& operator=(const call_gate&) = delete;
    call_gate(call_gate&&) = delete;
    call_gate& operator=(call_gate&&) = delete;
    ~call_gate() = default;

    /// True in a process forked from the one that made the hook.
    [[nodiscard]] bool in_forked_child() const noexcept {
        return forked_since(born_);
    }

    /// Held for the length of one call; throws usage_error when another call holds it.
    class pass {
    public:
        pass(call_gate& gate, const char* call) : gate_(gate) {
            if (gate_.busy_.exchange(true, std::memory_order_acquire)) {
                throw usage_error(std::string("tdbg::hook::") + call +
                                  ": called while another call of the same hook runs on another thread. A hook takes "
                                  "one call at a time: serialize the calls (a mutex around them), or give each "
                                  "thread a hook of its own with its own worker name");
            }
        }
        pass(const pass&) = delete;
        pass& operator=(const pass&) = delete;
        pass(pass&&) = delete;
        pass& operator=(pass&&) = delete;
        ~pass() { gate_.busy_.store(false, std::memory_order_release); }

    private:
        call_gate& gate_;
    };

private:
    std::uint64_t born_;
    std::atomic<bool> busy_{false};
};

} // namespace tdbg::detail
