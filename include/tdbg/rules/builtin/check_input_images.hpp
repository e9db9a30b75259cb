#pragma once
/// \file
/// CheckInputImages: met when the input images are not normalised: once
/// enough images were seen, the mean of some colour channel differs from 0 by
/// more than `threshold_mean`.
///
/// Parameters (AWS's published defaults): `threshold_mean` (float, 0.2),
/// `threshold_samples` (int, 500), `regex` (string,
/// ".*hybridsequential0_input_0"), `channel` (int, 1). Interpretation: every
/// tensor matching regex is a batch of images, its first dimension the batch
/// and dimension `channel` the colour channel. Per channel, the sum and count
/// of all values seen so far accumulate; once `threshold_samples` images were
/// seen, the condition is met at a step when |mean| > threshold_mean for a
/// channel. A tensor with too few dimensions is not evaluated; a step with no
/// evaluable tensor is skipped (TensorUnavailableForStep). Accumulates:
/// evaluated sequentially.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// CheckInputImages over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_check_input_images : public rule<basic_check_input_images<Storage>, Storage> {
    using base = rule<basic_check_input_images<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "CheckInputImages";

    /// The rule over `trial`, configured by `params`.
    explicit basic_check_input_images(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), threshold_mean_(params.get("threshold_mean", 0.2)),
          threshold_samples_(params.get<std::int64_t>("threshold_samples", 500)),
          images_({}, {params.get("regex", ".*hybridsequential0_input_0")}, false),
          channel_(params.get<std::int64_t>("channel", 1)) {
        if (channel_ < 1) {
            throw config_error("rule CheckInputImages: parameter 'channel' must be at least 1 (dimension 0 is the batch)");
        }
    }

    /// Adds the step's images; true once enough were seen and a channel's mean is off.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) {
        bool evaluated = false;
        for (const std::string& name : images_.names(this->base_trial())) {
            tensor_value v;
            try {
                v = this->value(name, step);
            } catch (const tensor_unavailable_for_step&) {
                continue;
            }
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
            throw tensor_unavailable_for_step("rule CheckInputImages: no input images at step " + std::to_string(step));
        }
        if (samples_ < threshold_samples_) {
            return false;
        }
        for (const auto& [channel, s] : channels_) {
            const double mean = s.first / static_cast<double>(s.second);
            if (std::fabs(mean) > threshold_mean_) {
                this->set_reason("channel " + std::to_string(channel) + " has mean " + std::to_string(mean) + " over " +
                                 std::to_string(samples_) + " images");
                return true;
            }
        }
        return false;
    }

private:
    double threshold_mean_;
    std::int64_t threshold_samples_;
    detail::tensor_selection<Storage> images_;
    std::int64_t channel_;
    std::map<std::size_t, std::pair<double, std::uint64_t>> channels_; // channel -> (sum, count)
    std::int64_t samples_ = 0;
};

/// CheckInputImages over local runs.
using check_input_images = basic_check_input_images<>;

} // namespace tdbg::rules
