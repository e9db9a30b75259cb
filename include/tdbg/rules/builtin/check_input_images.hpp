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
/// What a step reads is declared (required_tensors) and fetched up front.
/// What it compared (comparisons()): the images seen and the steps judged once
/// `threshold_samples` were, "40 images seen, 0 steps judged (threshold_samples 500)"; an
/// evaluation that judged no step (a run with fewer images) is NothingEvaluated.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// CheckInputImages (see the file comment).
class check_input_images : public detail::selection_rule<check_input_images> {
public:
    static constexpr std::string_view rule_name = "CheckInputImages";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit check_input_images(trial base, const rule_params& params = rule_params());

    /// The value of every input image tensor at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Adds the step's images; met once enough were seen and a channel's mean is off.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs);

    /// The images it saw and the steps it judged.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

private:
    double threshold_mean_;
    std::int64_t threshold_samples_;
    std::int64_t channel_;
    std::map<std::size_t, std::pair<double, std::uint64_t>> channels_; // channel -> (sum, count)
    std::int64_t samples_ = 0;
    std::uint64_t judged_ = 0; // the steps judged, once threshold_samples_ images were seen
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/check_input_images.ipp"
#else
TDBG_DETAIL_SELECTION_RULE_BASES(extern template, check_input_images)
#endif
