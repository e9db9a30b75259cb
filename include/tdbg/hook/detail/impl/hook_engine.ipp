#pragma once
/// \file
/// Definitions of tdbg/hook/detail/hook_engine.hpp.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/detail/hook_engine.hpp"

namespace tdbg::detail {

TDBG_DECL hook_engine::hook_engine(any_storage storage, hook_options options)
    : storage_(std::move(storage)), options_(std::move(options)), selection_(validated(options_)),
      worker_(worker_of(options_)) {
    const bool resumed = state_.open(options_, clock_);
    scalars_.open_metrics(options_);
    const bool chief = worker_.name == worker_name(0);
    const bool writes = !options_.dry_run && (options_.include_workers == workers_to_save::all || chief);
    writer_options w;
    if (writes) {
        w.worker = worker_.name;
        w.max_queue_bytes = options_.max_queue_bytes;
        w.on_full_queue = options_.on_full_queue;
        w.nice = options_.writer_nice;
        w.data_threads = options_.writer_threads;
        w.doze = options_.writer_doze;
        if (exports_tensorboard(options_)) {
            w.tensorboard_put = tensorboard_target(options_, storage_); // a directory refused before the claim
        }
    }
    // The claim, before any file of the run and before the writer's threads: a hook whose
    // options are refused, or whose run is another job's, has written nothing and started nothing.
    std::exception_ptr start_error = start_run(resumed, writes);
    if (writes) {
        writer_ = std::make_unique<async_writer>(storage_, std::move(w));
        records_.emplace(*writer_, clock_, options_.max_queue_bytes);
    }
    if (start_error) {
        if (writer_) {
            writer_->fail(std::move(start_error));
        } else {
            errors_.start_failed(std::move(start_error));
        }
        if (options_.on_write_error == write_error_policy::disable) {
            report_write_error(); // printed now; with rethrow, thrown by the next call
        }
    }
    if (!writer_ && !options_.dry_run && worker_.size == 1) {
        // The job's only worker, and it saves nothing: said, as a collection that selects nothing is.
        errors_.log(fmt::format("tdbg::hook: worker '{}' ({}) saves nothing: with include_workers \"one\" (the "
                                "default) only {} saves, and this job has one worker. Name it {}, or set "
                                "include_workers to \"all\"",
                                terminal_safe(worker_.name), worker_.source, worker_name(0), worker_name(0)));
    }
}

TDBG_DECL void hook_engine::set_mode(mode m) {
    check_open("set_mode");
    end_step();
    clock_.set_mode(m);
}

TDBG_DECL void hook_engine::begin_step() {
    check_open("begin_step");
    end_step();
    report_write_error(); // also when no step was open: an error of the hook's start
    write_state();
    check_stop_marker();
    clock_.begin();
    if (records_) {
        records_->begin_step();
    }
}

TDBG_DECL void hook_engine::end_step() {
    if (!clock_.end()) {
        return;
    }
    write_scalars();
    if (writer_ && !writer_->stopped()) {
        records_->hand_over_block(); // first: a step whose block the writer took has written
        if (exports_.due_at_step_end(records_->step_wrote())) {
            queue_collections_file();
        }
        writer_->push(write_items::step_end{clock_.global()});
    }
    report_write_error();
    errors_.selection_found(check_.step_ended(selection_)); // last: the step is queued whole first
}

TDBG_DECL void hook_engine::close() {
    if (closed_) {
        return;
    }
    std::exception_ptr first;
    auto keep_first = [&] {
        if (!first) {
            first = std::current_exception();
        }
    };
    try {
        end_step();
    } catch (...) {
        keep_first();
    }
    closed_ = true;
    if (stop_watch_) {
        stop_watch_->stop();
    }
    scalars_.close_metrics();
    try {
        if (writer_ && !writer_->stopped() && exports_.due_at_close(selection_.version())) {
            queue_collections_file();
        }
        if (!options_.dry_run && std::getenv("TRAINING_JOB_NAME") == nullptr) {
            // smdebug leaves the end marker to SageMaker in its jobs; every worker writes it otherwise.
            if (writer_) {
                writer_->push(write_items::object{std::string(format::end_marker_key), std::string()});
            } else if (errors_.clean()) {
                put_end_marker();
            }
        }
    } catch (...) {
        keep_first();
    }
    if (writer_) {
        writer_->close();
    }
    try {
        report_write_error();
    } catch (...) {
        keep_first();
    }
    if (first) {
        std::rethrow_exception(first);
    }
}

TDBG_DECL void hook_engine::flush() {
    if (writer_) {
        records_->hand_over_block();
        writer_->flush();
    }
    report_write_error();
}

TDBG_DECL bool hook_engine::should_save(std::string_view name) {
    if (!clock_.open()) {
        return false;
    }
    const bool saved = !selection_.active(name, clock_.current(), clock_.mode_step()).empty();
    check_.offer(name, false, selection_);
    return saved;
}

TDBG_DECL save_token hook_engine::prepare_save(std::string_view name,
                                               std::initializer_list<std::string_view> collections) {
    check_step_open(name);
    return planner_.prepare(name, collections, clock_, selection_, check_, errors_);
}

TDBG_DECL void hook_engine::save_prepared(std::string_view name, save_token token, const tensor_value& value,
                                          reduction_values_function reduce, reduction_convention convention) {
    const bool writes = writer_ && !writer_->stopped(); // nothing is saved after a write error
    const save_decision* decision = planner_.plan(name, token, value, reduce, convention, selection_,
                                                  exports_tensorboard(options_), writes);
    state_.saved_at(clock_.global());
    scalars_.queue_loss_metrics(name, value, reduce, selection_, token.active);
    if (decision != nullptr) {
        step_records::save_values values;
        values.value = &value;
        values.reductions = &planner_.reduction_results();
        values.reduction_rank = stored_reduction_rank(convention);
        records_->emit(name, *decision, value.type(), value.shape(), values, now_seconds());
    }
    planner_.recycle(std::move(token));
}

TDBG_DECL std::optional<save_plan> hook_engine::plan_save(std::string_view name, dtype type,
                                                          const tensor_value::shape_type& shape,
                                                          std::initializer_list<std::string_view> collections) {
    check_step_open(name);
    save_token token = planner_.prepare(name, collections, clock_, selection_, check_, errors_);
    std::optional<save_plan> plan;
    if (token) {
        plan = decide_save(selection_, token.active, type, shape, exports_tensorboard(options_)).plan;
    }
    planner_.recycle(std::move(token));
    return plan;
}

TDBG_DECL void hook_engine::save_deferred(std::string_view name, dtype type, const tensor_value::shape_type& shape,
                                          const save_plan& plan, deferred_source source) {
    check_saving(name);
    check_tensor_rank(name, shape.size());
    const auto active = selection_.active(name, clock_.current(), clock_.mode_step());
    const save_decision decision = decide_save(selection_, active, type, shape, exports_tensorboard(options_));
    if (active.empty() || decision.plan != plan) {
        throw usage_error(fmt::format("tdbg::hook: save_deferred('{}') with a plan other than plan_save gives now "
                                      "(plan_save at this step, with the tensor's dtype and shape)",
                                      name));
    }
    state_.saved_at(clock_.global());
    auto cell = std::make_shared<deferred_cell>(std::string(name), type, shape, plan, std::move(source));
    scalars_.queue_deferred_metrics(name, selection_, active, plan, cell);
    if (!writer_ || writer_->stopped()) {
        return; // nothing is saved after a write error
    }
    step_records::save_values values;
    values.cell = std::move(cell);
    records_->emit(name, decision, type, shape, values, now_seconds());
}

TDBG_DECL void hook_engine::save_scalar(std::string_view name, double value, bool sm_metric,
                                        std::optional<double> timestamp) {
    check_saving(name);
    const double wall_time = timestamp && *timestamp != 0 ? *timestamp : now_seconds();
    scalars_.add(pending_scalar{"scalar/" + std::string(name), value, wall_time, sm_metric, true});
}

TDBG_DECL const hook_options& hook_engine::validated(const hook_options& options) {
    if (options.reduction_config) {
        options.reduction_config->validate();
    }
    return options;
}

TDBG_DECL worker_info hook_engine::worker_of(const hook_options& options) {
    worker_info worker = detect_worker();
    if (options.worker) {
        worker.name = *options.worker;
        worker.source = "options";
    }
    if (options.num_workers) {
        if (*options.num_workers < 1) {
            throw config_error(
                fmt::format("hook_options.num_workers must be at least 1, found {}", *options.num_workers));
        }
        worker.size = *options.num_workers;
    }
    format::validate_worker_name(worker.name);
    // What the run's readers could not give back as it was written: refused here, where the
    // message can say why, instead of a run that reads under another name or not at all.
    if (const std::size_t at = invalid_utf8_at(worker.name); at != std::string::npos) {
        throw config_error(fmt::format("worker name '{}' ({}): not valid UTF-8 at byte {}; the collections file names "
                                       "its worker in JSON, which holds UTF-8 only",
                                       terminal_safe(worker.name), worker.source, at));
    }
    if (worker.name.find("__") != std::string::npos) {
        throw config_error(fmt::format("worker name '{}' ({}): contains '__', which smdebug's readers take for an "
                                       "escaped '/', so the run would read back under another worker's name; "
                                       "choose a name without '__'",
                                       terminal_safe(worker.name), worker.source));
    }
    return worker;
}

TDBG_DECL void hook_engine::check_open(const char* what) const {
    if (closed_) {
        throw usage_error(fmt::format("tdbg::hook::{} after close()", what));
    }
}

TDBG_DECL void hook_engine::check_step_open(std::string_view name) {
    check_open("save");
    report_write_error();
    if (!clock_.open()) {
        throw usage_error(fmt::format("tdbg::hook: cannot save '{}': no step is open (call begin_step() {})", name,
                                      clock_.global() < 0 ? "before saving)" : "at the start of each step)"));
    }
}

TDBG_DECL void hook_engine::check_saving(std::string_view name) {
    check_step_open(name);
    planner_.check_name(name);
}

TDBG_DECL void hook_engine::put_end_marker() {
    try {
        storage_.put(std::string(format::end_marker_key), std::string_view());
    } catch (const storage_error&) {
        errors_.failed(std::current_exception(), clock_.global());
    }
}

TDBG_DECL void hook_engine::write_scalars() {
    std::vector<pending_scalar> scalars = scalars_.take();
    write_metrics(scalars);
    if (!records_) {
        return;
    }
    const bool tensorboard = exports_tensorboard(options_);
    for (pending_scalar& s : scalars) {
        if (!s.write_event) {
            continue;
        }
        if (tensorboard) {
            records_->push_item(write_items::tb_scalar{clock_.current(), clock_.global(), s.wall_time,
                                                       clean_tensorboard_tag(s.name), static_cast<float>(s.value),
                                                       nullptr});
        }
        records_->queue_record(s.name, tensor_value(std::vector<double>{s.value}), s.wall_time);
    }
}

TDBG_DECL void hook_engine::write_metrics(const std::vector<pending_scalar>& scalars) {
    try {
        scalars_.write_metrics(scalars, clock_.current(), clock_.mode_step());
    } catch (const storage_error& e) {
        errors_.side_write_failed(e, "no more SageMaker metrics: ");
    }
}

TDBG_DECL std::exception_ptr hook_engine::start_run(bool resumed, bool writes) {
    try {
        if (writes) {
            std::optional<std::int64_t> after; // the published step this job goes on after
            if (options_.existing_run == existing_run_policy::resume && !resumed) {
                after = resume_after_published_steps(); // read only: the claim says where this job begins
            }
            claim_run(storage_, worker_.name, options_.existing_run, resumed, clock_.global() + 1);
            if (after) {
                errors_.log(fmt::format("tdbg::hook: resuming {}'s run at {} after its last published step {}: "
                                        "this job's steps start at {}",
                                        terminal_safe(worker_.name), storage_.describe(), *after, *after + 1));
            }
        } else if (storage_.exists(std::string(format::end_marker_key))) {
            throw config_error(fmt::format("the run at {} has ended already (it holds {}); write to a new directory",
                                           storage_.describe(), format::end_marker_key));
        }
    } catch (const storage_error&) {
        return std::current_exception();
    }
    return nullptr;
}

TDBG_DECL std::optional<std::int64_t> hook_engine::resume_after_published_steps() {
    // Without a state store, the job goes on after the worker's last published step: starting
    // from 0 would replace the other job's steps one by one, and the run would read as one job's.
    const auto position = published_position(storage_, worker_.name);
    if (!position) {
        return std::nullopt;
    }
    if (position->last_step >= format::max_step) {
        throw config_error(fmt::format("the run at {} holds {}'s steps up to {}: a job resumed after them could not "
                                       "name its steps (12 digits)",
                                       storage_.describe(), worker_.name, position->last_step));
    }
    clock_.resume(position->last_step, position->mode_steps);
    return position->last_step;
}

TDBG_DECL void hook_engine::write_state() {
    if (!state_.due()) {
        return;
    }
    try {
        state_.write(clock_);
    } catch (const storage_error& e) {
        errors_.side_write_failed(e, "");
    }
}

TDBG_DECL void hook_engine::queue_collections_file() {
    const int workers = options_.include_workers == workers_to_save::all ? worker_.size : 1;
    const std::uint64_t version = selection_.version();
    const std::string text = format::to_json(selection_.to_file(workers));
    writer_->push(write_items::object{format::collections_file_key(worker_.name), text});
    exports_.queued(version);
}

TDBG_DECL void hook_engine::check_stop_marker() {
    if (stop_) {
        return;
    }
    if (!stop_watch_) {
        // Negative counts as 0. The watch's first look is its own, so it is not asked for here.
        stop_watch_ = std::make_unique<stop_watch>(
            storage_, std::max(options_.stop_check_interval, std::chrono::milliseconds(0)));
        return;
    }
    stop_ = stop_watch_->found(); // the latest finished look's, never waited for
    if (!stop_ && options_.stop_check_interval.count() <= 0) {
        stop_watch_->ask(); // read at a later begin_step
    }
}

} // namespace tdbg::detail
