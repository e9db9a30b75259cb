#pragma once
/// \file
/// The values of one deferred save (hook/deferred.hpp), shared by the records that deliver
/// them: the source runs once, on the first thread that needs them; the others wait for it
/// and get the same values, or the same error.

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"

namespace tdbg::detail {

class deferred_cell {
public:
    /// The values of tensor `name`, announced as `type` and `shape`, for `plan`.
    deferred_cell(std::string name, dtype type, tensor_value::shape_type shape, save_plan plan,
                  deferred_source source)
        : name_(std::move(name)), type_(type), shape_(std::move(shape)), plan_(std::move(plan)),
          source_(std::move(source)) {}

    deferred_cell(const deferred_cell&) = delete;
    deferred_cell& operator=(const deferred_cell&) = delete;
    deferred_cell(deferred_cell&&) = delete;
    deferred_cell& operator=(deferred_cell&&) = delete;
    ~deferred_cell() = default;

    /// The values, once they have arrived; the source's error (or a mismatch with what was
    /// announced) as a tdbg::error naming the tensor. Thread-safe; the source runs once.
    TDBG_DECL const deferred_values& get();

    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    enum class state { idle, running, done };

    // The values must be what the plan and the announcement said: a record's dtype and shape
    // are in the index already when the writer meets them.
    [[nodiscard]] TDBG_DECL deferred_values checked(deferred_values v) const;

    std::string name_;
    dtype type_;
    tensor_value::shape_type shape_;
    save_plan plan_;
    deferred_source source_;
    std::mutex mutex_;
    std::condition_variable done_;
    state state_ = state::idle;
    deferred_values values_;
    std::exception_ptr failure_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/deferred_cell.ipp"
#endif
