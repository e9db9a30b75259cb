// The step bookkeeping under a trial: modes, completeness across workers,
// smdebug's has_passed_step, the wait window and the end of a run.

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "tdbg/trial/detail/step_table.hpp"
#include "tdbg/trial/detail/tensor_table.hpp"
#include "tdbg/trial/step_state.hpp"

using tdbg::mode;
using tdbg::step_state;
using tdbg::detail::record_span;
using tdbg::detail::step_table;
using tdbg::detail::tensor_entry;
using steps_t = std::vector<std::int64_t>;

TEST_CASE("step_table: one worker, steps complete as they arrive, gaps are unavailable") {
    step_table t;
    t.set_num_workers(1);
    t.add(0, mode::train, 0, 0);
    t.add(2, mode::train, 1, 0);
    t.add(5, mode::eval, 0, 0);

    CHECK(t.steps(mode::global, false) == steps_t{0, 2, 5});
    CHECK(t.steps(mode::train, false) == steps_t{0, 1});
    CHECK(t.steps(mode::eval, false) == steps_t{0});
    CHECK(t.steps(mode::predict, true).empty());
    CHECK(t.last_complete_step() == 5);

    CHECK(t.has_passed_step(2, mode::global) == step_state::available);
    // Step 1 was skipped, but only a later listing can tell: one that ran while
    // files were renamed may have missed it (trial_core's refresh confirms).
    CHECK(t.has_passed_step(1, mode::global) == step_state::not_yet_available);
    t.confirm(t.last_complete_step());
    CHECK(t.has_passed_step(1, mode::global) == step_state::unavailable); // step 2 is complete and confirmed
    CHECK(t.has_passed_step(6, mode::global) == step_state::not_yet_available);
    CHECK(t.has_passed_step(1, mode::train) == step_state::available);
    CHECK(t.has_passed_step(2, mode::train) == step_state::not_yet_available);

    CHECK(t.global_step(mode::train, 1) == std::optional<std::int64_t>(2));
    CHECK(t.global_step(mode::eval, 0) == std::optional<std::int64_t>(5));
    CHECK_FALSE(t.global_step(mode::eval, 1).has_value());
    CHECK(t.global_step(mode::global, 7) == std::optional<std::int64_t>(7));
    CHECK(t.modes() == std::vector<mode>{mode::train, mode::eval});
}

TEST_CASE("step_table: with two workers a step waits for both, or for a later complete step") {
    step_table t;
    t.set_num_workers(2);
    t.add(0, mode::train, 0, 0);
    CHECK(t.steps(mode::global, false).empty());
    CHECK(t.steps(mode::global, true) == steps_t{0});
    CHECK(t.has_passed_step(0, mode::global) == step_state::not_yet_available);
    CHECK(t.last_complete_step() == -1);

    t.add(0, mode::train, 0, 1);
    CHECK(t.has_passed_step(0, mode::global) == step_state::available);
    CHECK(t.last_complete_step() == 0);

    // Worker 1 skips step 1 but both write step 2: step 1 can no longer change.
    t.add(1, mode::train, 1, 0);
    CHECK(t.has_passed_step(1, mode::global) == step_state::not_yet_available);
    t.add(2, mode::train, 2, 1);
    CHECK(t.has_passed_step(1, mode::global) == step_state::not_yet_available);
    t.add(2, mode::train, 2, 0);
    CHECK(t.last_complete_step() == 2);
    CHECK(t.has_passed_step(1, mode::global) == step_state::available);
    CHECK(t.steps(mode::global, false) == steps_t{0, 1, 2});

    // A step only one worker wrote, after the last complete one.
    t.add(3, mode::train, 3, 0);
    CHECK(t.steps(mode::global, false) == steps_t{0, 1, 2});
    CHECK(t.steps(mode::train, true) == steps_t{0, 1, 2, 3});
    CHECK(t.has_passed_step(3, mode::train) == step_state::not_yet_available);
    CHECK(t.is_complete(2));
    CHECK_FALSE(t.is_complete(3));
    // The same worker twice does not make a step complete.
    t.add(3, mode::train, 3, 0);
    CHECK_FALSE(t.is_complete(3));
}

TEST_CASE("step_table: the end of the run makes every step final") {
    step_table t;
    t.set_num_workers(2);
    t.add(0, mode::train, 0, 0);
    t.add(0, mode::train, 0, 1);
    t.add(1, mode::eval, 0, 0);
    CHECK(t.has_passed_step(1, mode::global) == step_state::not_yet_available);
    CHECK(t.has_passed_step(9, mode::global) == step_state::not_yet_available);
    CHECK_FALSE(t.ended());

    t.mark_ended();
    CHECK(t.ended());
    CHECK(t.last_complete_step() == 1);
    CHECK(t.has_passed_step(1, mode::global) == step_state::available);
    CHECK(t.has_passed_step(0, mode::eval) == step_state::available);
    CHECK(t.has_passed_step(9, mode::global) == step_state::unavailable);
    CHECK(t.steps(mode::global, false) == steps_t{0, 1});
    CHECK(t.last_step(mode::global) == 1);
    CHECK(t.last_step(mode::eval) == 0);
    CHECK(t.last_step(mode::predict) == -1);
}

TEST_CASE("step_table: the first mode recorded for a global step wins") {
    step_table t;
    t.add(4, mode::train, 2, 0);
    t.add(4, mode::eval, 9, 1);
    const auto* info = t.find(4);
    REQUIRE(info != nullptr);
    CHECK(info->step_mode == mode::train);
    CHECK(info->mode_step == 2);
    CHECK(info->workers == std::vector<tdbg::detail::worker_id>{0, 1});
    CHECK(t.find(5) == nullptr);
    // num_workers 0 in a bad collection file counts as 1.
    t.set_num_workers(0);
    CHECK(t.num_workers() == 1);
}

TEST_CASE("step_table: the wait window declares the older half of waiting steps complete") {
    step_table t;
    t.set_num_workers(2);
    for (std::int64_t s = 0; s < 10; ++s) {
        t.add(s, mode::train, s, 0); // worker 1 never shows up
    }
    t.apply_wait_window(20);
    CHECK(t.last_complete_step() == -1);
    t.apply_wait_window(8); // 10 waiting > 8: the oldest 4 become complete
    CHECK(t.last_complete_step() == 3);
    CHECK(t.steps(mode::global, false) == steps_t{0, 1, 2, 3});
    t.apply_wait_window(0); // off
    CHECK(t.last_complete_step() == 3);
}

TEST_CASE("step_range: contains and validate") {
    const tdbg::step_range all{};
    CHECK(all.contains(0));
    CHECK(all.contains(1'000'000));
    const tdbg::step_range some{std::int64_t{3}, std::int64_t{7}};
    CHECK_FALSE(some.contains(2));
    CHECK(some.contains(3));
    CHECK(some.contains(6));
    CHECK_FALSE(some.contains(7));
    CHECK_NOTHROW(some.validate());
    CHECK_THROWS_AS((tdbg::step_range{std::int64_t{7}, std::int64_t{7}}.validate()), tdbg::config_error);
    CHECK_THROWS_AS((tdbg::step_range{std::int64_t{-1}, std::nullopt}.validate()), tdbg::config_error);
    CHECK(tdbg::step_state_name(step_state::not_yet_available) == "NOT_YET_AVAILABLE");
}

TEST_CASE("step_set: progressions in order, steps out of order kept apart, each counted once") {
    tdbg::detail::step_set s;
    for (std::int64_t step = 0; step <= 100; step += 5) {
        CHECK(s.insert(step));
    }
    CHECK(s.pieces() == 1); // one progression: 0, 5, ..., 100
    CHECK_FALSE(s.insert(100));
    CHECK_FALSE(s.insert(35));
    CHECK(s.contains(35));
    CHECK_FALSE(s.contains(36));
    CHECK_FALSE(s.contains(105));
    CHECK(s.insert(36)); // before the last: apart
    CHECK(s.contains(36));
    CHECK_FALSE(s.insert(36));
    CHECK(s.insert(101)); // after the last: a new progression
    CHECK(s.insert(102));
    CHECK(s.insert(103));
    CHECK(s.pieces() == 3);
    CHECK(s.contains(102));
    CHECK_FALSE(s.contains(104));
    CHECK_FALSE(s.contains(-5));
}

namespace {

// Feeds `r` `steps` steps of `workers` workers: a value at even steps, two stored reductions at
// every step and a shape at every tenth, in file order (step, then worker).
void feed(tdbg::detail::tensor_record& r, std::int64_t steps, tdbg::detail::worker_id workers) {
    const tdbg::reduction mean{tdbg::reduction_kind::mean, false};
    const tdbg::reduction abs_max{tdbg::reduction_kind::max, true};
    for (std::int64_t step = 0; step < steps; ++step) {
        for (tdbg::detail::worker_id w = 0; w < workers; ++w) {
            const auto file = static_cast<std::uint32_t>(step * workers + w);
            auto& e = r.at(step, w, step % 3 == 0 ? mode::eval : mode::train, file);
            if (step % 2 == 0) {
                r.set_value(e, record_span{0, 40});
            }
            r.set_reduction(e, mean, record_span{40, 12});
            r.set_reduction(e, abs_max, record_span{52, 12});
            if (step % 10 == 0) {
                r.set_shape(e, {step, 2});
            }
        }
    }
}

} // namespace

TEST_CASE("tensor_record summarised: the totals of every entry, a state that does not grow with the steps") {
    tdbg::detail::tensor_record small("x", 0, true);
    tdbg::detail::tensor_record large("x", 0, true);
    tdbg::detail::tensor_record whole("x", 0, false);
    feed(small, 100, 3);
    feed(large, 1000, 3);
    feed(whole, 1000, 3);
    CHECK(small.held_units() == large.held_units());
    CHECK(large.held_units() == 4 + 2 * 4 + 1); // step 999's 3 entries and 998's last, their reductions, a progression
    // A value beyond what an entry holds in itself is kept apart, and read back the same.
    tdbg::detail::tensor_record wide("w", 1, false);
    wide.set_value(wide.at(0, 0, mode::train, 0), record_span{std::uint64_t{3} << 40U, 8});
    wide.set_value(wide.at(1, 0, mode::train, 1), record_span{16, std::uint64_t{1} << 41U});
    wide.set_value(wide.at(2, 0, mode::train, 2), record_span{(std::uint64_t{1} << 40U) - 1, (std::uint64_t{1} << 40U) - 1});
    const tensor_entry& e = *wide.at_step(0).first;
    const tensor_entry& f = *wide.at_step(1).first;
    const tensor_entry& g = *wide.at_step(2).first;
    CHECK(e.has_value());
    CHECK(wide.value(e, 3).offset == std::uint64_t{3} << 40U);
    CHECK(wide.value(e, 3).length == 8);
    CHECK(wide.value(e, 3).file == 3);
    CHECK(wide.value(f, 3).offset == 16);
    CHECK(wide.value(f, 3).length == std::uint64_t{1} << 41U);
    CHECK(wide.value(g, 3).offset == (std::uint64_t{1} << 40U) - 1);
    CHECK(wide.value(g, 3).length == (std::uint64_t{1} << 40U) - 1);
    CHECK(wide.held_units() == 3 + 2);
    CHECK(whole.held_units() > 3000);
    CHECK(large.totals().steps == whole.totals().steps);
    CHECK(large.totals().steps == 1000);
    CHECK(small.totals().steps == 100);
    CHECK(large.totals().reductions == whole.totals().reductions);
    CHECK(large.totals().any_value == whole.totals().any_value);
    CHECK(large.totals().any_shape == whole.totals().any_shape);
    for (const mode m : {mode::train, mode::eval, mode::predict, mode::global}) {
        CHECK(large.has_mode_exactly(m) == whole.has_mode_exactly(m));
    }
    // The last entry with a value or a shape is kept, with its reductions and shape.
    const auto [first, last] = large.at_step(998);
    REQUIRE(last - first == 1); // of step 998, worker 2's entry only
    CHECK(first->worker == 2);
    CHECK(large.value(*first, 5).offset == 0);
    CHECK(large.value(*first, 5).length == 40);
    CHECK(first->source == 998 * 3 + 2);
    const auto [r_first, r_last] = large.reductions(*first);
    REQUIRE(r_last - r_first == 2);
    CHECK(r_first[0].where(5).offset == 40);
    CHECK(r_first[1].where(5).offset == 52);
    CHECK(r_first[1].where(5).length == 12);
    CHECK(large.shape(*first) == nullptr);
    const auto [at_990, end_990] = large.at_step(990);
    CHECK(at_990 == end_990); // dropped: a later entry has a value
    const auto [latest, latest_end] = large.at_step(999);
    CHECK(latest_end - latest == 3);
}
