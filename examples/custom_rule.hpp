#pragma once
// A custom rule as a C++ class: the CustomGradientRule of SageMaker's custom
// rule example. Met at a step when the mean absolute value of some gradient
// is above `threshold` (default 20.0). Shared by custom_rule.cpp (through the
// registry, as the command line uses rules) and catch2/custom_rule_test.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"

namespace example {

class custom_gradient_rule : public tdbg::rules::rule<custom_gradient_rule> {
public:
    // The name reports use when the rule is built directly (the registry gives its own).
    static constexpr std::string_view rule_name = "CustomGradientRule";
    // invoke_at_step keeps no state: invoke_rule may evaluate several steps at once.
    static constexpr bool parallel_steps = true;

    // What `tdbg rules --list` and `--describe CustomGradientRule` print (optional: a rule
    // without it is listed as "(no description)").
    static tdbg::rules::rule_description describe() {
        return {"A gradient's mean absolute value is above a threshold.",
                "Met at a step when, for some tensor of the \"gradients\" collection, the mean absolute value is "
                "above threshold: the gradients are large enough to make training unstable.",
                {{"threshold", "20", "the largest mean |gradient| allowed"}}};
    }

    // Every parameter is a string, as SageMaker passes them; the getter parses
    // it and throws tdbg::config_error naming the parameter when it does not parse.
    custom_gradient_rule(tdbg::trial base, const tdbg::rules::rule_params& params)
        : rule(std::move(base), params), threshold_(params.get("threshold", 20.0)) {}

    // What a step reads, declared once: invoke_rule waits for it, fetches it up
    // front (in parallel) and passes it to invoke_at_step in this order. Here:
    // the mean |gradient| of every gradient (a stored abs_mean reduction when the
    // hook saved one, else computed from the value); optional, so that a gradient
    // missing at a step is nullopt rather than a reason to skip the step.
    [[nodiscard]] std::vector<tdbg::rules::tensor_request> required_tensors(std::int64_t step) const {
        std::vector<tdbg::rules::tensor_request> out;
        for (const auto& name : base_trial().tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, "gradients")) {
            out.push_back(tdbg::rules::reduction_request(name, step, abs_mean, true));
        }
        return out;
    }

    // Whether the rule's condition is met at this global step, and why.
    [[nodiscard]] tdbg::rules::verdict invoke_at_step(std::int64_t /*step*/, const tdbg::rules::step_inputs& inputs) const {
        for (const auto& [request, mean] : inputs) {
            if (mean && tdbg::rules::scalar_of(*mean) > threshold_) {
                return tdbg::rules::condition_met(fmt::format("mean |{}| = {:g}", request.name, tdbg::rules::scalar_of(*mean)));
            }
        }
        return false;
    }

private:
    static constexpr tdbg::reduction abs_mean{tdbg::reduction_kind::mean, true};

    double threshold_;
};

} // namespace example
