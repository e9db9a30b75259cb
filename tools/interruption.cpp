// SIGINT and SIGTERM as a request to stop and report (interruption.hpp).

#include "interruption.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"

namespace tdbg::cli {

namespace {

constexpr int caught_signals[] = {SIGINT, SIGTERM};

// The handler may touch only these: a lock-free atomic and a pipe's write end.
std::atomic<int> received_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only use lock-free atomics");
int wake_pipe[2] = {-1, -1};
struct sigaction previous_actions[std::size(caught_signals)];

void on_signal(int sig) {
    const int saved_errno = errno;
    int none = 0;
    if (!received_signal.compare_exchange_strong(none, sig)) {
        // A second signal: the program ends as it would have without the handler
        // (the signal is blocked while the handler runs and delivered as it returns).
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
    const char byte = 1;
    const ssize_t written = ::write(wake_pipe[1], &byte, 1); // non-blocking: one byte wakes every waiter
    (void)written;
    errno = saved_errno;
}

} // namespace

interruption::interruption() {
    received_signal = 0;
    if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        throw tdbg::error(fmt::format("cannot create the pipe that signals wake: {}", std::strerror(errno)));
    }
    for (std::size_t i = 0; i < std::size(caught_signals); ++i) {
        struct sigaction action {};
        action.sa_handler = &on_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART; // reads and writes elsewhere go on as if nothing happened
        ::sigaction(caught_signals[i], nullptr, &previous_actions[i]);
        if (previous_actions[i].sa_handler != SIG_IGN) { // started ignoring it (nohup, a background job): keep ignoring
            ::sigaction(caught_signals[i], &action, nullptr);
        }
    }
}

interruption::~interruption() {
    for (std::size_t i = 0; i < std::size(caught_signals); ++i) {
        ::sigaction(caught_signals[i], &previous_actions[i], nullptr);
    }
    ::close(wake_pipe[0]);
    ::close(wake_pipe[1]);
    wake_pipe[0] = wake_pipe[1] = -1;
}

int interruption::signal() const noexcept { return received_signal.load(); }

bool interrupted() noexcept { return received_signal.load() != 0; }

bool interruption::wait(std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!requested()) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            return false;
        }
        pollfd wake{wake_pipe[0], POLLIN, 0};
        // The byte stays in the pipe: every thread waiting here wakes.
        const auto pause = std::min<long long>(left, 1000 * 3600);
        if (::poll(&wake, 1, static_cast<int>(pause)) < 0 && errno != EINTR) {
            std::this_thread::sleep_for(std::chrono::milliseconds(pause)); // cannot happen; never spin
        }
    }
    return true;
}

std::string_view interruption::signal_name() const noexcept {
    switch (signal()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "";
    }
}

} // namespace tdbg::cli
