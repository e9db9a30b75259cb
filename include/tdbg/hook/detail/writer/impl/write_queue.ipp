#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/write_queue.hpp.

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <utility>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/detail/writer/write_queue.hpp"

namespace tdbg::detail {

TDBG_DECL write_queue::write_queue(std::size_t lanes, const writer_options& options)
    : max_bytes_(options.max_queue_bytes), on_full_(options.on_full_queue), wake_bytes_(options.wake_bytes),
      doze_(options.doze) {
    const std::size_t n = std::max<std::size_t>(1, lanes);
    for (std::size_t i = 0; i < n; ++i) {
        lanes_.push_back(std::make_unique<lane_queue>());
    }
}

TDBG_DECL bool write_queue::push(write_item it) {
    const std::size_t cost = cost_of(it);
    const bool droppable = std::holds_alternative<write_items::tensor>(it) ||
                           std::holds_alternative<write_items::records>(it) ||
                           std::holds_alternative<write_items::tb_histogram>(it);
    std::unique_lock<std::mutex> lock(mutex_);
    if (closing_) {
        throw error("tdbg writer: push after close");
    }
    auto full = [&] { return queued_bytes_ > 0 && queued_bytes_ + cost > max_bytes_; };
    if (full()) {
        if (droppable && on_full_ == full_queue_policy::drop) {
            const auto* r = std::get_if<write_items::records>(&it);
            dropped_ += r != nullptr ? r->entries.size() : 1; // each record a tensor's
            return false;
        }
        ++blocked_;
        wake_all();
        room_.wait(lock, [&] { return !full(); });
    }
    lane_queue& q = route(it);
    // Small items wait for the step's end or for a batch worth writing: waking the
    // thread for each one would cost the training thread a context switch each. So
    // does the end of a step that saved nothing (most steps, with a save interval): it
    // waits for the next wake-up, which wakes every lane holding such items.
    // A deferred raw value holds host memory its producer may be waiting for: it wakes the writer too.
    const bool quiet_end = std::holds_alternative<write_items::step_end>(it) && route_ && !route_->wrote;
    const bool urgent = holds_lent_memory(it) || queued_bytes_ + cost >= wake_bytes_;
    const bool wake = (!is_data(it) && !quiet_end && !q.dozing) || urgent;
    enqueue(q, std::move(it), cost);
    if (!wake) {
        q.unwoken = true;
        return true;
    }
    bool others = false; // another lane's items wait, and with them the publication of later steps
    for (auto& l : lanes_) {
        others = others || (l.get() != &q && l->unwoken);
        l->unwoken = false;
        l->roused = l->roused || urgent || l.get() == &q;
    }
    lock.unlock();
    for (auto& l : lanes_) {
        if (l.get() == &q || others) {
            l->work.notify_one();
        }
    }
    return true;
}

TDBG_DECL bool write_queue::take(std::size_t lane, std::deque<write_entry>& batch) {
    lane_queue& q = *lanes_[lane];
    std::unique_lock<std::mutex> lock(mutex_);
    if (doze_.count() > 0 && q.doze_next && !closing_) {
        q.dozing = true;
        q.roused = false;
        q.work.wait_for(lock, doze_, [&] { return q.roused || closing_; });
        q.dozing = false;
        q.doze_next = !q.items.empty();
    }
    if (q.items.empty() && !closing_) {
        const auto asleep = std::chrono::steady_clock::now();
        q.work.wait(lock, [&] { return !q.items.empty() || closing_; });
        q.doze_next = std::chrono::steady_clock::now() - asleep < doze_;
    }
    if (q.items.empty()) {
        return false;
    }
    batch.swap(q.items);
    q.unwoken = false;
    q.in_hand = batch.front().seq;
    return true;
}

TDBG_DECL void write_queue::done(std::size_t lane, std::size_t bytes, std::uint64_t items, std::uint64_t next) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queued_bytes_ -= bytes;
        processed_ += items;
        lanes_[lane]->in_hand = next;
        update_handled();
    }
    room_.notify_all();
}

TDBG_DECL void write_queue::wait_handled() {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_all();
    const std::uint64_t target = pushed_;
    room_.wait(lock, [&] { return processed_ >= target; });
}

TDBG_DECL void write_queue::close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    wake_all();
}

TDBG_DECL std::uint64_t write_queue::dropped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
}

TDBG_DECL std::uint64_t write_queue::blocked() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return blocked_;
}

TDBG_DECL std::size_t write_queue::queued_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_bytes_;
}

TDBG_DECL std::size_t write_queue::cost_of(const write_item& it) {
    constexpr std::size_t overhead = 256;
    if (const auto* t = std::get_if<write_items::tensor>(&it)) {
        return overhead + (t->deferred ? t->deferred->bytes : t->event.value.nbytes()) + t->event.tag.size();
    }
    if (const auto* r = std::get_if<write_items::records>(&it)) {
        return overhead + r->bytes.size();
    }
    if (const auto* h = std::get_if<write_items::tb_histogram>(&it)) {
        return overhead + h->values.nbytes();
    }
    if (const auto* o = std::get_if<write_items::object>(&it)) {
        return overhead + o->bytes.size();
    }
    return overhead;
}

TDBG_DECL bool write_queue::is_data(const write_item& it) {
    return std::holds_alternative<write_items::tensor>(it) || std::holds_alternative<write_items::records>(it) ||
           std::holds_alternative<write_items::shape>(it) ||
           std::holds_alternative<write_items::tb_scalar>(it) || std::holds_alternative<write_items::tb_histogram>(it);
}

TDBG_DECL bool write_queue::holds_lent_memory(const write_item& it) {
    const auto* t = std::get_if<write_items::tensor>(&it);
    return t != nullptr && t->deferred && t->deferred->slot == write_items::deferred_ref::raw;
}

TDBG_DECL std::optional<std::int64_t> write_queue::step_of(const write_item& it) {
    return std::visit(
        [](const auto& x) -> std::optional<std::int64_t> {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, write_items::tensor>) {
                return x.event.step;
            } else if constexpr (std::is_same_v<T, write_items::object>) {
                return std::nullopt;
            } else {
                return x.step;
            }
        },
        it);
}

// The lane for `it`: a step stays with one lane; the next step goes to the next lane.
// A step the hook left without an end is ended here, in its lane, before the next
// one starts, so that its index keeps its place in the order.
TDBG_DECL write_queue::lane_queue& write_queue::route(const write_item& it) {
    const std::optional<std::int64_t> step = step_of(it);
    if (step && (!route_ || route_->step != *step)) {
        std::size_t next = 0;
        if (route_) {
            if (!route_->ended) {
                enqueue(*lanes_[route_->lane], write_items::step_end{route_->step}, 0);
                lanes_[route_->lane]->work.notify_one();
            }
            next = (route_->lane + 1) % lanes_.size();
        }
        route_ = route_state{*step, next, false};
    }
    if (route_ && step && std::holds_alternative<write_items::step_end>(it)) {
        route_->ended = true;
    }
    if (route_ && step && is_data(it)) {
        route_->wrote = true;
    }
    return *lanes_[route_ ? route_->lane : 0];
}

TDBG_DECL void write_queue::enqueue(lane_queue& q, write_item it, std::size_t cost) {
    queued_bytes_ += cost;
    q.items.push_back(write_entry{std::move(it), cost, next_seq_++});
    ++pushed_;
}

TDBG_DECL void write_queue::wake_all() {
    for (auto& q : lanes_) {
        q->unwoken = false;
        q->roused = true;
        q->work.notify_one();
    }
}

// Every item queued before `handled_` has been handled; publisher jobs wait for it.
TDBG_DECL void write_queue::update_handled() {
    std::uint64_t h = next_seq_;
    for (const auto& q : lanes_) {
        if (q->in_hand != no_item_seq) {
            h = std::min(h, q->in_hand);
        } else if (!q->items.empty()) {
            h = std::min(h, q->items.front().seq);
        }
    }
    handled_.store(h, std::memory_order_release);
}

} // namespace tdbg::detail
