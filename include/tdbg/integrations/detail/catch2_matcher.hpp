#pragma once
/// \file
/// `trial_matcher<Check>`: the Catch2 matcher over trials that tdbg's matchers
/// (rule_matcher in tdbg/integrations/catch2.hpp, run_matcher in catch2_diff.hpp) are,
/// on v3's generic matcher base or v2's MatcherBase<trial>, whichever
/// detail/catch2_include.hpp found. `Check` matches (`check(t)`) and describes
/// (`describe()`) the expectation.

#include "tdbg/integrations/detail/catch2_include.hpp"

#include <string>
#include <utility>

#include "tdbg/trial/trial.hpp"

namespace tdbg::detail {

#if defined(CATCH_MATCHERS_TEMPLATED_HPP_INCLUDED)
/// A Catch2 v3 matcher over trials that asks `Check`.
template <class Check>
class trial_matcher : public Catch::Matchers::MatcherGenericBase {
public:
    explicit trial_matcher(Check check) : check_(std::move(check)) {}
    /// Matches `t` (v3 finds it by name).
    bool match(const trial& t) const { return check_.check(t); }
#else
/// A Catch2 v2 matcher over trials that asks `Check`.
template <class Check>
class trial_matcher : public Catch::MatcherBase<trial> {
public:
    explicit trial_matcher(Check check) : check_(std::move(check)) {}
    /// Matches `t`.
    bool match(const trial& t) const override { return check_.check(t); }
#endif
    /// The expectation and, after matching, the outcome.
    [[nodiscard]] std::string describe() const override { return check_.describe(); }

protected:
    /// What it asks.
    [[nodiscard]] const Check& check() const noexcept { return check_; }

private:
    Check check_;
};

} // namespace tdbg::detail
