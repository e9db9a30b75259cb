#pragma once
/// \file
/// TreeDepth (XGBoost): met at a step when the model's trees are shallower
/// than `depth`: XGBoost rejected splits that did not improve the loss, so
/// the trees did not grow as deep as configured.
///
/// Parameters (AWS's published defaults): `depth` (float, 4).
/// Interpretation: the node ids are the values of the tensors whose name ends
/// in "trees/Node" (smdebug's XGBoost hook saves the model's trees_to_dataframe
/// columns as "trees/<column>"); the depth is floor(log2(largest id + 1)),
/// AWS's "base 2 logarithm of the largest node ID" made exact for complete
/// trees (ids 0..2^(d+1)-2 give depth d). A step without node ids is skipped
/// (TensorUnavailableForStep). Parallel steps.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// TreeDepth over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_tree_depth : public rule<basic_tree_depth<Storage>, Storage> {
    using base = rule<basic_tree_depth<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "TreeDepth";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_tree_depth(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), depth_(params.get("depth", 4.0)) {}

    /// True when the trees' depth at `step` is below `depth`.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(nodes_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      const tensor_value v = this->value(name, step);
                                      if (!is_real_valued(v.type()) || v.size() == 0) {
                                          return std::nullopt;
                                      }
                                      double largest = 0;
                                      for_each_real(v, [&](double x) { largest = std::max(largest, x); });
                                      const double d = std::floor(std::log2(largest + 1.0));
                                      if (d < depth_) {
                                          this->set_reason("the trees of " + name + " are " + std::to_string(d) +
                                                           " deep, less than " + std::to_string(depth_));
                                          return true;
                                      }
                                      return false;
                                  });
    }

private:
    double depth_;
    detail::tensor_selection<Storage> nodes_{{}, {"trees/Node$"}, false};
};

/// TreeDepth over local runs.
using tree_depth = basic_tree_depth<>;

} // namespace tdbg::rules
