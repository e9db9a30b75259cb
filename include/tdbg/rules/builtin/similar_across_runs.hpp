#pragma once
/// \file
/// SimilarAcrossRuns: compares a run with another one and is met at a step
/// where a selected tensor differs between the two (numpy.allclose with its
/// default tolerances fails): runs that should be alike have diverged.
///
/// Parameters (AWS's published defaults): `other_trial` (the other run's
/// path; required unless the other trial is passed in, as the registry's
/// `others`), `collection_names` (list, None), `tensor_regex` (list, None;
/// with neither, every tensor). Values of the first worker that wrote the
/// step. The other run's step is waited for; when it has no such step the
/// step is skipped (StepUnavailable). A tensor the other run does not have
/// at that step is not compared; a step where nothing can be compared is
/// skipped (TensorUnavailableForStep). Parallel steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

/// SimilarAcrossRuns over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_similar_across_runs : public rule<basic_similar_across_runs<Storage>, Storage> {
    using base = rule<basic_similar_across_runs<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "SimilarAcrossRuns";
    static constexpr bool parallel_steps = true;

    /// The rule comparing `trial` with `others[0]` (or, when none is given,
    /// with the run at the `other_trial` parameter's path).
    basic_similar_across_runs(trial_type trial, std::vector<trial_type> others, const rule_params& params = rule_params())
        : base(std::move(trial), with_other(std::move(others), params), params),
          selection_(detail::selection_from<Storage>(params, true)) {}

    /// True when a selected tensor differs between the runs at `step`.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        const trial_type& other = this->other_trials().front();
        try {
            other.wait_for_steps({step});
        } catch (const no_more_data&) {
            throw step_unavailable("rule SimilarAcrossRuns: the other run " + other.name() + " ended before step " +
                                   std::to_string(step));
        }
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      const tensor_value mine = this->value(name, step);
                                      if (!other.has_tensor(name)) {
                                          return std::nullopt;
                                      }
                                      const tensor_value theirs = other.tensor(name).value(step);
                                      if (!allclose(mine, theirs)) {
                                          this->set_reason(name + " differs from " + other.name());
                                          return true;
                                      }
                                      return false;
                                  });
    }

private:
    static std::vector<trial_type> with_other(std::vector<trial_type> others, const rule_params& params) {
        const auto path = params.get_optional<std::string>("other_trial");
        if (!others.empty()) {
            return others;
        }
        if (!path) {
            throw config_error("rule SimilarAcrossRuns: parameter 'other_trial' (the run to compare with) is required");
        }
        if constexpr (std::is_same_v<Storage, local_storage>) {
            others.push_back(create_trial(*path));
            return others;
        } else {
            throw config_error("rule SimilarAcrossRuns: pass the other trial in (other_trial paths open local runs only)");
        }
    }

    detail::tensor_selection<Storage> selection_;
};

/// SimilarAcrossRuns over local runs.
using similar_across_runs = basic_similar_across_runs<>;

} // namespace tdbg::rules
