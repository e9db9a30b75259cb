#pragma once
/// \file
/// Definitions of tdbg/hook/hook.hpp: the public hook forwards to its engine
/// (hook/detail/hook_engine.hpp).

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/detail/hook_engine.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/json_config.hpp"
#include "tdbg/storage/open.hpp"

namespace tdbg {

namespace detail {

// The public calls that act: nothing in a forked child (inert), else through the call gate
// (hook/detail/call_gate.hpp). `call` names the function in the message of a second thread.
template <class Result, class F>
Result gated(hook_engine& engine, const char* call, F&& f) {
    if (engine.gate().in_forked_child()) {
        return Result{}; // inert: false, nothing planned
    }
    const call_gate::pass pass(engine.gate(), call);
    return std::forward<F>(f)();
}

template <class F>
void gated_call(hook_engine& engine, const char* call, F&& f) {
    if (engine.gate().in_forked_child()) {
        return;
    }
    const call_gate::pass pass(engine.gate(), call);
    std::forward<F>(f)();
}

inline any_storage storage_of(const hook_options& options) {
    if (options.out_dir.empty()) {
        throw config_error("hook_options.out_dir is empty: the hook needs a run directory");
    }
    return open_storage(options.out_dir);
}

} // namespace detail

TDBG_DECL hook::hook(const hook_options& options) : hook(detail::storage_of(options), options) {}

TDBG_DECL hook::hook(any_storage storage, hook_options options)
    : engine_(std::make_unique<detail::hook_engine>(std::move(storage), std::move(options))) {}

TDBG_DECL hook::~hook() {
    if (engine_->gate().in_forked_child()) {
        // The parent's hook: its writer threads, files and buffers are the parent's to free.
        detail::abandon(engine_.release());
        return;
    }
    try {
        close();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tdbg::hook: error while closing: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "tdbg::hook: unknown error while closing\n");
    }
}

TDBG_DECL std::unique_ptr<hook> hook::create_from_json_file(const std::string& file) {
    return std::make_unique<hook>(load_hook_config(file));
}

TDBG_DECL optional_hook hook::create_from_environment() {
    auto options = hook_config_from_environment();
    if (!options) {
        return optional_hook(fmt::format("no hook configuration: {} is not set and {} does not exist "
                                         "(test what hook::create_from_environment() returns before using it)",
                                         hook_config_env, default_hook_config_path));
    }
    return optional_hook(std::make_unique<hook>(std::move(*options)));
}

TDBG_DECL hook& optional_hook::value() const {
    if (!hook_) {
        throw config_error(why_none_);
    }
    return *hook_;
}

TDBG_DECL collection& hook::get_collection(std::string_view name) {
    const detail::call_gate::pass pass(engine_->gate(), "get_collection");
    return engine_->selection().get(name);
}
TDBG_DECL const collection* hook::find_collection(std::string_view name) const { return engine_->selection().find(name); }
TDBG_DECL void hook::add_collection(collection c) {
    detail::gated_call(*engine_, "add_collection", [&] { engine_->selection().add(std::move(c)); });
}
TDBG_DECL std::vector<std::string> hook::collection_names() const { return engine_->selection().names(); }
TDBG_DECL bool hook::is_collection_included(std::string_view name) const { return engine_->selection().is_included(name); }

TDBG_DECL void hook::set_mode(tdbg::mode m) {
    detail::gated_call(*engine_, "set_mode", [&] { engine_->set_mode(m); });
}
TDBG_DECL tdbg::mode hook::current_mode() const noexcept { return engine_->clock().current(); }
TDBG_DECL std::int64_t hook::global_step() const noexcept { return engine_->clock().global(); }
TDBG_DECL std::int64_t hook::mode_step() const noexcept { return engine_->clock().mode_step(); }
TDBG_DECL std::int64_t hook::mode_step(tdbg::mode m) const noexcept { return engine_->clock().mode_step(m); }
TDBG_DECL void hook::begin_step() { detail::gated_call(*engine_, "begin_step", [&] { engine_->begin_step(); }); }
TDBG_DECL void hook::end_step() { detail::gated_call(*engine_, "end_step", [&] { engine_->end_step(); }); }

TDBG_DECL bool hook::is_saving_step() {
    return detail::gated<bool>(*engine_, "is_saving_step", [&] { return engine_->is_saving_step(); });
}
TDBG_DECL bool hook::should_save_tensor(std::string_view name) {
    return detail::gated<bool>(*engine_, "should_save_tensor", [&] { return engine_->should_save(name); });
}

TDBG_DECL void hook::save_tensor(std::string_view name, const tensor_value& value,
                                 std::initializer_list<std::string_view> collections) {
    detail::gated_call(*engine_, "save_tensor", [&] {
        if (detail::save_token token = engine_->prepare_save(name, collections)) {
            engine_->save_prepared(name, std::move(token), value, &compute_reduction_values); // any dtype
        }
    });
}

TDBG_DECL void hook::save_tensor(std::string_view name, const tensor_value& value,
                                 std::initializer_list<std::string_view> collections,
                                 reduction_convention convention) {
    detail::gated_call(*engine_, "save_tensor", [&] {
        if (detail::save_token token = engine_->prepare_save(name, collections)) {
            engine_->save_prepared(name, std::move(token), value, &compute_reduction_values, convention);
        }
    });
}
TDBG_DECL detail::save_token hook::prepare_save(std::string_view name,
                                                std::initializer_list<std::string_view> collections) {
    return detail::gated<detail::save_token>(*engine_, "save_tensor",
                                             [&] { return engine_->prepare_save(name, collections); });
}
TDBG_DECL void hook::save_prepared(std::string_view name, detail::save_token token, const tensor_value& value,
                                   reduction_values_function reduce) {
    detail::gated_call(*engine_, "save_tensor",
                       [&] { engine_->save_prepared(name, std::move(token), value, reduce); });
}
TDBG_DECL std::optional<save_plan> hook::plan_save(std::string_view name, dtype type,
                                                   const std::vector<std::size_t>& shape,
                                                   std::initializer_list<std::string_view> collections) {
    return detail::gated<std::optional<save_plan>>(*engine_, "plan_save",
                                                  [&] { return engine_->plan_save(name, type, shape, collections); });
}
TDBG_DECL void hook::save_deferred(std::string_view name, dtype type, const std::vector<std::size_t>& shape,
                                   const save_plan& plan, deferred_source source) {
    detail::gated_call(*engine_, "save_deferred",
                       [&] { engine_->save_deferred(name, type, shape, plan, std::move(source)); });
}
TDBG_DECL void hook::save_scalar(std::string_view name, double value, bool sm_metric, std::optional<double> timestamp) {
    detail::gated_call(*engine_, "save_scalar", [&] { engine_->save_scalar(name, value, sm_metric, timestamp); });
}

TDBG_DECL std::size_t hook::next_index_in_step(std::string_view prefix) {
    return detail::gated<std::size_t>(*engine_, "next_index_in_step", [&] {
        if (global_step() != indexed_step_) {
            indexed_step_ = global_step();
            next_indices_.clear();
        }
        return next_indices_[std::string(prefix)]++;
    });
}

TDBG_DECL void hook::flush() { detail::gated_call(*engine_, "flush", [&] { engine_->flush(); }); }
TDBG_DECL void hook::close() { detail::gated_call(*engine_, "close", [&] { engine_->close(); }); }
TDBG_DECL bool hook::should_stop() const noexcept { return engine_->stop().has_value(); }
TDBG_DECL const std::optional<tdbg::stop_request>& hook::stop_request() const noexcept { return engine_->stop(); }

TDBG_DECL const std::string& hook::worker() const noexcept { return engine_->worker().name; }
TDBG_DECL int hook::num_workers() const noexcept { return engine_->worker().size; }
TDBG_DECL bool hook::is_writing() const noexcept { return engine_->writer() != nullptr; }
TDBG_DECL std::uint64_t hook::dropped_tensors() const { return engine_->writer() ? engine_->writer()->dropped() : 0; }
TDBG_DECL std::optional<std::string> hook::write_error() const { return engine_->write_error(); }
TDBG_DECL std::pair<double, double> hook::writer_cpu_seconds() const noexcept {
    return engine_->writer() ? engine_->writer()->thread_cpu_seconds() : std::pair<double, double>{0.0, 0.0};
}
TDBG_DECL std::size_t hook::queued_bytes() const { return engine_->writer() ? engine_->writer()->queued_bytes() : 0; }
TDBG_DECL const any_storage& hook::storage() const noexcept { return engine_->storage(); }
TDBG_DECL const hook_options& hook::options() const noexcept { return engine_->options(); }

} // namespace tdbg
