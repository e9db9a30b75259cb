#pragma once
/// \file
/// What the save paths of device tensors (tdbg::cuda::device_saver, torch_hook's batches) give
/// the hook's deferred saves alike: a batch's event, waited for once by whichever writer thread
/// asks first, and the source of a tensor whose device work failed at launch.

#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/deferred.hpp"

namespace tdbg::detail {

/// A wait (for a device event) done once, by whichever thread asks first; its error is thrown
/// to every thread that asks.
class once_waiter {
public:
    explicit once_waiter(std::function<void()> wait) : wait_(std::move(wait)) {}

    void wait() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (wait_) {
            try {
                wait_();
            } catch (...) {
                failure_ = std::current_exception();
            }
            wait_ = nullptr;
        }
        if (failure_) {
            std::rethrow_exception(failure_);
        }
    }

private:
    std::mutex mutex_;
    std::function<void()> wait_;
    std::exception_ptr failure_;
};

/// The source of a tensor whose device work failed while it was launched (out of memory, say):
/// a write error when the writer reaches it, so that the hook's policy applies
/// (hook_options::on_write_error) and training is not taken down.
[[nodiscard]] inline deferred_source failed_source(std::string failure) {
    return [failure = std::move(failure)]() -> deferred_values {
        throw error(fmt::format("the device work failed: {}", failure));
    };
}

} // namespace tdbg::detail
