#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/record_block.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/mode.hpp"
#include "tdbg/format/detail/flat_event.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/detail/tensorboard_export.hpp"
#include "tdbg/hook/detail/writer/record_block.hpp"

namespace tdbg::detail {

template <class WritePayload>
void record_block::append(std::int64_t step, mode m, std::int64_t mode_step, std::string_view tag,
                          WritePayload&& write_payload) {
    if (empty()) {
        block_.step = step;
        block_.mode = m;
        block_.mode_step = mode_step;
        // The last block's sizes and a quarter more: blocks of a step vary a little, and memory
        // that came back from the writer (record_spares) then serves the next ones as it is.
        const auto room = [](std::size_t n) { return n + n / 4; };
        block_.bytes.reserve(room(last_.bytes));
        block_.names.reserve(room(last_.names));
        block_.entries.reserve(room(last_.entries));
    }
    const std::uint64_t start = block_.bytes.size();
    format::append_record_in_place(block_.bytes, std::forward<WritePayload>(write_payload), format::smdebug_footer_crc);
    block_.entries.push_back(
        write_items::records::entry{block_.names.size(), tag.size(), start, block_.bytes.size() - start});
    block_.names += tag;
}

TDBG_DECL bool record_block::other_step(std::int64_t step, mode m, std::int64_t mode_step) const noexcept {
    return !empty() && (block_.step != step || block_.mode != m || block_.mode_step != mode_step);
}

TDBG_DECL bool record_block::other_step(const format::tensor_event& ev) const noexcept {
    return other_step(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step));
}

TDBG_DECL void record_block::add(const format::tensor_event& ev) {
    if (format::detail::flat_encodable(ev)) {
        add(format::detail::flat_view(ev)); // the same bytes, in two flat passes
        return;
    }
    append(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step), ev.tag, [&](std::string& out) {
        format::detail::string_cursor sink(out);
        format::detail::proto_writer<format::detail::string_cursor> w(sink);
        format::detail::write_tensor_event(w, ev);
    });
}

TDBG_DECL void record_block::add(const format::detail::flat_tensor_event& ev) {
    append(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step), ev.tag,
           [&](std::string& out) { format::detail::append_flat_event(out, ev); });
}

TDBG_DECL write_items::records record_block::take() {
    last_ = {block_.bytes.size(), block_.names.size(), block_.entries.size()};
    write_items::records out = std::move(block_);
    out.spares = spares_;
    block_ = spares_->take().value_or(write_items::records{});
    return out;
}

TDBG_DECL step_records::step_records(async_writer& writer, const step_clock& clock, std::size_t max_pooled_bytes)
    : writer_(writer), clock_(clock), pool_(std::make_shared<buffer_pool>(max_pooled_bytes)) {}

TDBG_DECL void step_records::emit(std::string_view name, const save_decision& decision, dtype type,
                                  const tensor_value::shape_type& shape, const save_values& values,
                                  double wall_time) {
    const std::string_view tensor_name = name;
    const save_plan& plan = decision.plan;
    const bool deferred = values.cell != nullptr;
    if (decision.shape) {
        push_shape(tensor_name, shape);
    }
    for (std::size_t k = 0; k < plan.reductions.size(); ++k) {
        format::assign_reduction_tensor_name(reduction_name_, plan.reductions[k], tensor_name);
        if (deferred) {
            push_record(make_event(reduction_name_, tensor_value(), wall_time),
                        write_items::deferred_ref{values.cell, k, 16});
        } else if (const auto& r = (*values.reductions)[k]) {
            queue_reduction(reduction_name_, *r, values.reduction_rank, wall_time);
        }
    }
    // A value at hand that must outlive the call (a raw record too large for the step's block, a
    // histogram bucketed on a data thread): the caller's memory is borrowed, so it is copied once.
    std::optional<tensor_value> owned;
    auto owned_value = [&]() -> const tensor_value& {
        if (!owned) {
            owned = values.value->owns_data() ? *values.value : pool_->copy(*values.value);
        }
        return *owned;
    };
    if (plan.histogram) {
        std::string tag = clean_tensorboard_tag(decision.histogram_collection + "/" + std::string(tensor_name));
        push_item(deferred ? write_items::tb_histogram{clock_.current(), clock_.global(), wall_time, std::move(tag),
                                                      tensor_value(), values.cell}
                           : write_items::tb_histogram{clock_.current(), clock_.global(), wall_time, std::move(tag),
                                                      owned_value(), nullptr});
    }
    if (plan.raw) {
        if (deferred) {
            push_record(make_event(std::string(tensor_name), tensor_value(), wall_time),
                        write_items::deferred_ref{values.cell, write_items::deferred_ref::raw,
                                                  element_count(shape) * dtype_size(type)});
        } else if (values.value->nbytes() == 0) {
            // strings all empty: smdebug writes no record of a tensor without bytes
        } else if (values.value->nbytes() <= record_block::max_value_bytes) {
            queue_record(tensor_name, *values.value, wall_time); // encoded now: the borrowed memory will do
        } else {
            push_record(make_event(std::string(tensor_name), owned_value(), wall_time));
        }
    }
    if (decision.tensorboard_scalar) {
        const float scalar = deferred ? 0.0F : static_cast<float>(scalar_as_double(*values.value));
        push_item(write_items::tb_scalar{clock_.current(), clock_.global(), wall_time,
                                         clean_tensorboard_tag(std::string(tensor_name)), scalar, values.cell});
    }
}

TDBG_DECL void step_records::push_shape(std::string_view tensor_name, const tensor_value::shape_type& shape) {
    format::shape_entry s;
    s.tensorname = std::string(tensor_name);
    s.originalname = tensor_name;
    s.shape.assign(shape.begin(), shape.end());
    push_item(write_items::shape{clock_.global(), clock_.current(), clock_.mode_step(), std::move(s)});
    step_wrote_ = true;
}

TDBG_DECL format::tensor_event step_records::make_event(std::string tag, tensor_value value, double wall_time) const {
    format::tensor_event ev;
    ev.step = clock_.global();
    ev.wall_time = wall_time;
    ev.tag = std::move(tag);
    ev.value = std::move(value);
    ev.mode = clock_.current();
    ev.mode_step = clock_.mode_step();
    return ev;
}

TDBG_DECL void step_records::open_step_file() {
    if (prepared_step_ != clock_.global()) {
        writer_.prepare_step(clock_.global());
        prepared_step_ = clock_.global();
    }
}

template <class Event>
void step_records::add_to_block(const Event& ev) {
    open_step_file();
    if (block_.other_step(ev.step, ev.mode.value_or(mode::global), ev.mode_step.value_or(ev.step))) {
        hand_over_block();
    }
    block_.add(ev);
    if (block_.bytes() >= record_block::hand_over_bytes) {
        hand_over_block();
    }
}

TDBG_DECL void step_records::queue_record(std::string_view tag, tensor_value value, double wall_time) {
    if (value.nbytes() > record_block::max_value_bytes) {
        push_record(make_event(std::string(tag), std::move(value), wall_time));
        return;
    }
    format::tensor_event& ev = block_event_;
    ev.step = clock_.global();
    ev.wall_time = wall_time;
    ev.tag.assign(tag.data(), tag.size()); // its memory reused
    ev.value = std::move(value);
    ev.mode = clock_.current();
    ev.mode_step = clock_.mode_step();
    add_to_block(ev); // ev.value is not read again before the next record replaces it (it may be borrowed)
}

TDBG_DECL void step_records::queue_reduction(std::string_view tag, const reduction_value& value, std::size_t rank,
                                             double wall_time) {
    static constexpr std::size_t one = 1; // the extent of shape (1,)
    add_to_block(format::detail::flat_tensor_event{tag, wall_time, clock_.global(), clock_.current(),
                                                   clock_.mode_step(), value.type(), &one, rank, value.bytes()});
}

TDBG_DECL void step_records::hand_over_block() {
    if (!block_.empty() && writer_.push(block_.take())) {
        step_wrote_ = true;
    }
}

TDBG_DECL void step_records::push_record(format::tensor_event ev, std::optional<write_items::deferred_ref> deferred) {
    open_step_file();
    hand_over_block(); // the event file keeps the order of the saves
    if (writer_.push(write_items::tensor{std::move(ev), std::move(deferred)})) {
        step_wrote_ = true;
    }
}

TDBG_DECL void step_records::push_item(write_item item) { writer_.push(std::move(item)); }

} // namespace tdbg::detail
