#pragma once
/// \file
/// TensorVariance: met at a step when the variance of a selected tensor is
/// above `max_threshold` or below `min_threshold`.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `max_threshold` (float, None),
/// `min_threshold` (float, None). One of the two lists is required. The
/// variance is Tensor.reduction_value(step, variance) of the first worker
/// that wrote the step: the stored reduction when saved, else computed from
/// the value (ddof=0, as numpy). A tensor with neither, or not numeric, is
/// not evaluated; a step where none can be is skipped (TensorUnavailableForStep).
/// A NaN variance triggers nothing. Parallel steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// TensorVariance over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_tensor_variance : public rule<basic_tensor_variance<Storage>, Storage> {
    using base = rule<basic_tensor_variance<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "TensorVariance";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_tensor_variance(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), selection_(detail::selection_from<Storage>(params, false)),
          max_threshold_(params.get_optional<double>("max_threshold")),
          min_threshold_(params.get_optional<double>("min_threshold")) {
        if (selection_.unspecified()) {
            throw config_error("rule TensorVariance: give collection_names or tensor_regex (or both)");
        }
    }

    /// The variance of every selected tensor at `step`.
    [[nodiscard]] std::vector<tensor_request> required_tensors(std::int64_t step) const {
        std::vector<tensor_request> out;
        for (const std::string& name : selection_.names(this->base_trial())) {
            out.push_back(request(name, step));
        }
        return out;
    }

    /// True when a selected tensor's variance at `step` is out of bounds.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      std::optional<tensor_value> v;
                                      try {
                                          v = this->fetched(request(name, step));
                                      } catch (const dtype_mismatch&) {
                                          return std::nullopt; // strings have no variance
                                      }
                                      if (!v) {
                                          return std::nullopt;
                                      }
                                      const double var = scalar_of(*v);
                                      if ((max_threshold_ && var > *max_threshold_) ||
                                          (min_threshold_ && var < *min_threshold_)) {
                                          this->set_reason("variance of " + name + " = " + std::to_string(var));
                                          return true;
                                      }
                                      return false;
                                  });
    }

private:
    static tensor_request request(const std::string& name, std::int64_t step) {
        return reduction_request(name, step, reduction{reduction_kind::variance, false}, true);
    }

    detail::tensor_selection<Storage> selection_;
    std::optional<double> max_threshold_;
    std::optional<double> min_threshold_;
};

/// TensorVariance over local runs.
using tensor_variance = basic_tensor_variance<>;

} // namespace tdbg::rules
