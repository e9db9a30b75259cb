#pragma once
/// \file
/// Definitions of tdbg/hook/detail/deferred_cell.hpp.

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/text.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"

namespace tdbg::detail {

TDBG_DECL const deferred_values& deferred_cell::get() {
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

TDBG_DECL deferred_values deferred_cell::checked(deferred_values v) const {
    if (v.reductions.size() != plan_.reductions.size()) {
        throw error(
            fmt::format("{} reductions delivered for a plan of {}", v.reductions.size(), plan_.reductions.size()));
    }
    if (v.raw && !plan_.raw) {
        throw error("a value delivered where the plan does not save it");
    }
    if (v.raw) {
        if (v.raw->type() != type_ || v.raw->shape() != shape_) {
            throw error(fmt::format("the value delivered is {} {}, announced as {} {}", dtype_name(v.raw->type()),
                                    tdbg::shape_text(v.raw->shape(), shape_style::tuple), dtype_name(type_),
                                    tdbg::shape_text(shape_, shape_style::tuple)));
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


} // namespace tdbg::detail
