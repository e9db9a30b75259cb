#pragma once
/// \file
/// What tdbg's objects that own threads do in a process forked from the one that made them
/// (docs/reliability.md, "The hook across threads and fork"): their threads exist only in the
/// parent, so a child's copy neither joins them nor frees what the parent owns. A
/// pthread_atfork child handler counts the forks; such an object records the count when it is
/// made, and in a child (another count) it gives itself to `abandon`, which keeps it reachable
/// for good: never destroyed, never reported as a leak.

#include <atomic>
#include <cstdint>
#include <mutex>

#include <pthread.h>

namespace tdbg::detail {

/// How many times this process came into being through fork since forks were first counted.
inline std::atomic<std::uint64_t>& fork_count() noexcept {
    static std::atomic<std::uint64_t> count{0};
    return count;
}

/// The forks counted so far; the first call registers the child handler that counts them.
inline std::uint64_t forks_so_far() {
    static std::once_flag once;
    std::call_once(once, [] {
        ::pthread_atfork(nullptr, nullptr, [] { fork_count().fetch_add(1, std::memory_order_relaxed); });
    });
    return fork_count().load(std::memory_order_relaxed);
}

/// True in a process forked after `forks_so_far()` returned `born`.
[[nodiscard]] inline bool forked_since(std::uint64_t born) noexcept {
    return fork_count().load(std::memory_order_relaxed) != born;
}

/// One object kept for good by `abandon`.
struct abandoned_object {
    const void* object;
    abandoned_object* next;
};

/// The objects kept so far (a list reachable from a static, pushed to without a lock: a mutex
/// could be held by a parent's thread at the fork).
inline std::atomic<abandoned_object*>& abandoned_objects() noexcept {
    static std::atomic<abandoned_object*> head{nullptr};
    return head;
}

/// Keeps `object` reachable for the rest of the process, undestroyed.
inline void abandon(const void* object) {
    auto* node = new abandoned_object{object, abandoned_objects().load(std::memory_order_relaxed)};
    while (!abandoned_objects().compare_exchange_weak(node->next, node, std::memory_order_release,
                                                      std::memory_order_relaxed)) {
    }
}

} // namespace tdbg::detail
