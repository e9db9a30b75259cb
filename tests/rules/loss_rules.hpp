#pragma once
// A small rule over a run's scalar "loss" for the tests of how rules are evaluated
// (test_invoke_rule.cpp, test_schedule.cpp), and the steps first..last as a list.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rule_run.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::test {

using tdbg::rules::rule_params;

// Met when the scalar "loss" at the step is above `threshold`.
class loss_above : public tdbg::rules::rule<loss_above> {
public:
    static constexpr std::string_view rule_name = "LossAbove";
    loss_above(tdbg::trial base, const rule_params& params)
        : rule(std::move(base), params), threshold_(params.get("threshold", 0.5)),
          tensor_(params.get("tensor", "loss")) {}
    bool invoke_at_step(std::int64_t step) {
        visited.push_back(step);
        return tdbg::rules::scalar_of(value(tensor_, step)) > threshold_;
    }
    std::vector<std::int64_t> visited;

private:
    double threshold_;
    std::string tensor_;
};

/// An ended run whose scalar "loss" has `losses` at steps 0, 1, ..., then a loss of two
/// elements, where scalar_of throws dtype_mismatch (a rule's error).
inline void write_run_failing_after(const rule_run& run, const std::vector<float>& losses) {
    run.collections({{"losses", "^loss$"}});
    std::int64_t step = 0;
    for (const float loss : losses) {
        run.step(step++, {{"loss", scalar(loss), {}}});
    }
    run.step(step, {{"loss", f32({1, 2}), {}}});
    run.end();
}

/// The steps first..last, both included.
inline std::vector<std::int64_t> range(std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> out;
    for (std::int64_t s = first; s <= last; ++s) {
        out.push_back(s);
    }
    return out;
}

} // namespace tdbg::test
