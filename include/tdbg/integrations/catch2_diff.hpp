#pragma once
/// \file
/// A Catch2 matcher that diffs a run against a reference run (tdbg/diff/diff.hpp):
///
///     tdbg::diff_options tolerances;
///     tolerances.rtol = 1e-4;
///     REQUIRE_THAT(tdbg::create_trial(ported_run), tdbg::matches_run(tdbg::create_trial(reference_run), tolerances));
///
/// The reference is run A; the run matched is run B. On failure the description
/// names the first step where the runs part, the tensor, the element and the
/// differences, and how many tensors diverge (or the error that stopped the diff).
///
/// Works with Catch2 v2 (`catch2/catch.hpp`) and v3 (`catch2/matchers/...`), as
/// tdbg/integrations/catch2.hpp does: include your Catch2 first, or let this
/// header include whichever is installed.

#include "tdbg/integrations/detail/catch2_matcher.hpp"

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg {

namespace detail {

/// The part of the run matcher that does not depend on the Catch2 version.
class run_match_check {
public:
    run_match_check(trial reference, diff_options options)
        : state_(std::make_shared<state>(state{std::move(reference), std::move(options), std::nullopt, {}})) {}

    /// Diffs `t` against the reference; true when they agree.
    [[nodiscard]] bool check(const trial& t) const {
        state_->error.clear();
        state_->result.reset();
        try {
            state_->result = diff_runs(state_->reference, t, state_->options);
        } catch (const std::exception& e) {
            state_->error = e.what();
            return false;
        }
        return state_->result->agree();
    }

    /// What is expected and, after check(), what was found.
    [[nodiscard]] std::string describe() const {
        std::string out = fmt::format("matches run {} within rtol {}, atol {}", state_->reference.path(),
                                      state_->options.rtol, state_->options.atol);
        if (!state_->error.empty()) {
            return out + fmt::format(" (error: {})", state_->error);
        }
        if (!state_->result) {
            return out;
        }
        const diff_result& r = *state_->result;
        if (const diff_divergence* d = r.first_divergence()) {
            out += fmt::format(" (parts at step {} ({} step {}, {}): tensor '{}'", d->step, mode_name(d->step_mode),
                               d->mode_step, d->worker, d->tensor);
            if (d->compared_reduction) {
                out += fmt::format(", reduction {}", reduction_name(*d->compared_reduction));
            }
            if (d->flat_index) {
                out += fmt::format(", element [{}], max abs diff {:g}, max rel diff {:g}", join(d->index),
                                   d->max_abs_diff, d->max_rel_diff);
            }
            out += fmt::format(": {}; {} tensors diverge)", d->reason, r.divergences.size());
        } else if (!r.nothing_compared.empty()) {
            out += fmt::format(" (nothing compared: {})", r.nothing_compared);
        } else if (r.agree()) {
            out += fmt::format(" (agrees: {} tensors, {} steps, {} values compared)", r.tensors_compared,
                               r.steps_compared, r.values_compared);
        }
        if (!r.only_in_a.empty()) {
            out += fmt::format(" (only in the reference: {})", join(r.only_in_a));
        }
        if (!r.only_in_b.empty()) {
            out += fmt::format(" (only in the run matched: {})", join(r.only_in_b));
        }
        return out;
    }

    /// The diff after check().
    [[nodiscard]] const std::optional<diff_result>& result() const noexcept { return state_->result; }

private:
    template <class List>
    static std::string join(const List& items) {
        std::string out;
        for (const auto& item : items) {
            out += fmt::format("{}{}", out.empty() ? "" : ", ", item);
        }
        return out;
    }

    struct state {
        trial reference;
        diff_options options;
        std::optional<diff_result> result;
        std::string error;
    };
    // Shared: Catch2 copies matchers, and describes the copy after matching the original.
    std::shared_ptr<state> state_;
};

} // namespace detail

/// A Catch2 matcher over trials that diffs them against a reference run (v3's or v2's,
/// detail/catch2_matcher.hpp); it describes the expectation and, after matching, where the runs part.
class run_matcher : public detail::trial_matcher<detail::run_match_check> {
public:
    using trial_matcher::trial_matcher;
    /// The diff after matching.
    [[nodiscard]] const std::optional<diff_result>& result() const noexcept { return check().result(); }
};

/// Matches a trial that agrees with `reference` (run A of diff_runs) under `options`.
[[nodiscard]] inline run_matcher matches_run(trial reference, diff_options options = {}) {
    return run_matcher(detail::run_match_check(std::move(reference), std::move(options)));
}

/// matches_run for the reference run at `location` (a directory, or a URL such as s3://bucket/prefix).
[[nodiscard]] inline run_matcher matches_run(std::string_view location, diff_options options = {}) {
    trial reference = create_trial(location, std::nullopt, step_range{}, trial_options{});
    return matches_run(std::move(reference), std::move(options));
}

} // namespace tdbg
