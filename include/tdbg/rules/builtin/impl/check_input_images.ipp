#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/check_input_images.hpp.

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/check_input_images.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL check_input_images::check_input_images(trial base, const rule_params& params)
    : selection_rule(std::move(base), params,
                     detail::tensor_selection({}, {params.get("regex", ".*hybridsequential0_input_0")}, false)),
      threshold_mean_(params.get("threshold_mean", 0.2, non_negative)),
      threshold_samples_(params.get<std::int64_t>("threshold_samples", 500, non_negative)),
      channel_(params.get<std::int64_t>("channel", 1)) {
    if (channel_ < 1) {
        throw config_error("rule CheckInputImages: parameter 'channel' must be at least 1 (dimension 0 is the batch)");
    }
}

TDBG_DECL std::vector<tensor_request> check_input_images::required_tensors(std::int64_t step) const {
    return selection().value_requests(base_trial(), step);
}

TDBG_DECL verdict check_input_images::invoke_at_step(std::int64_t step, const step_inputs& inputs) {
    bool evaluated = false;
    for (const step_inputs::input& in : inputs) {
        const tensor_value* image = detail::value_if_saved(inputs, in);
        if (image == nullptr) {
            continue;
        }
        const tensor_value& v = *image;
        const auto& shape = v.shape();
        const auto c = static_cast<std::size_t>(channel_);
        if (!is_real_valued(v.type()) || shape.size() <= c || v.size() == 0) {
            continue;
        }
        evaluated = true;
        std::size_t inner = 1;
        for (std::size_t d = c + 1; d < shape.size(); ++d) {
            inner *= shape[d];
        }
        const std::size_t channels = shape[c];
        const std::vector<double> x = to_doubles(v);
        for (std::size_t i = 0; i < x.size(); ++i) {
            auto& s = channels_[(i / inner) % channels];
            s.first += x[i];
            s.second += 1;
        }
        samples_ += static_cast<std::int64_t>(shape[0]);
    }
    if (!evaluated) {
        throw tensor_unavailable_for_step(fmt::format("rule CheckInputImages: no input images at step {}", step), {},
                                          step, tdbg::mode::global);
    }
    if (samples_ < threshold_samples_) {
        return false;
    }
    ++judged_;
    for (const auto& [channel, s] : channels_) {
        const double mean = s.first / static_cast<double>(s.second);
        if (std::fabs(mean) > threshold_mean_) {
            return condition_met(fmt::format("channel {} has mean {:.6g} over {} images", channel, mean, samples_));
        }
    }
    return false;
}

TDBG_DECL comparison_coverage check_input_images::comparisons() const {
    return {judged_, fmt::format("{} image{} seen, {} step{} judged (threshold_samples {})", samples_,
                                 samples_ == 1 ? "" : "s", judged_, judged_ == 1 ? "" : "s", threshold_samples_)};
}

TDBG_DECL rule_description check_input_images::describe() {
    return {"The input images are not normalised.",
            "Met when the input images are not normalised: once threshold_samples images were seen, the mean of "
            "some colour channel over all the images so far differs from 0 by more than threshold_mean.\n\nEvery "
            "tensor matching regex is a batch of images: its first dimension is the batch, dimension channel the "
            "colour channel. The means accumulate over the steps. A tensor with too few dimensions is not "
            "evaluated.",
            {{"threshold_mean", "0.2", "the largest distance of a channel's mean from 0"},
             {"threshold_samples", "500", "how many images must be seen before anything is judged"},
             {"regex", ".*hybridsequential0_input_0", "regular expression of the names of the input images"},
             {"channel", "1", "the dimension of the colour channel (at least 1: 0 is the batch)"}},
            step_dependence::carried_state};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_SELECTION_RULE_BASES(template, check_input_images)
#endif
