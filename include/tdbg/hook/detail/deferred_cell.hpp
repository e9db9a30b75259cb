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
    const deferred_values& get() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (state_ == state::idle) {
            state_ = state::running;
            lock.unlock();
            deferred_values values;
            std::exception_ptr failure;
            try {
                values = checked(source_());
            } catch (const std::exception& e) {
                failure = std::make_exception_ptr(
                    error(fmt::format("the deferred values of '{}' never arrived: {}", name_, e.what())));
            } catch (...) {
                failure = std::make_exception_ptr(error(fmt::format("the deferred values of '{}' never arrived", name_)));
            }
            lock.lock();
            values_ = std::move(values);
            failure_ = failure;
            source_ = nullptr; // what it holds (host buffers, device events) goes now
            state_ = state::done;
            done_.notify_all();
        } else {
            done_.wait(lock, [&] { return state_ == state::done; });
        }
        if (failure_) {
            std::rethrow_exception(failure_);
        }
        return values_;
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    enum class state { idle, running, done };

    // The values must be what the plan and the announcement said: a record's dtype and shape
    // are in the index already when the writer meets them.
    [[nodiscard]] deferred_values checked(deferred_values v) const {
        if (v.reductions.size() != plan_.reductions.size()) {
            throw error(fmt::format("{} reductions delivered for a plan of {}", v.reductions.size(),
                                    plan_.reductions.size()));
        }
        if (v.raw && !plan_.raw) {
            throw error("a value delivered where the plan does not save it");
        }
        if (v.raw) {
            if (v.raw->type() != type_ || v.raw->shape() != shape_) {
                throw error(fmt::format("the value delivered is {} {}, announced as {} {}", dtype_name(v.raw->type()),
                                        shape_text(v.raw->shape()), dtype_name(type_), shape_text(shape_)));
            }
        }
        for (std::size_t k = 0; k < v.reductions.size(); ++k) {
            if (v.reductions[k] && v.reductions[k]->size() != 1) {
                throw error(fmt::format("reduction {} delivered with {} elements, not 1",
                                        reduction_name(plan_.reductions[k]), v.reductions[k]->size()));
            }
        }
        return v;
    }

    static std::string shape_text(const tensor_value::shape_type& shape) {
        std::string out = "(";
        for (std::size_t i = 0; i < shape.size(); ++i) {
            out += fmt::format("{}{}", i == 0 ? "" : ", ", shape[i]);
        }
        return out + (shape.size() == 1 ? ",)" : ")");
    }

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
