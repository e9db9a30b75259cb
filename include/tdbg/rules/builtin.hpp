#pragma once
/// \file
/// Every built-in rule (one header each under rules/builtin/, named after its
/// class), and `for_each_builtin_rule`, which the registry uses to register
/// them under their SageMaker names.

#include <string_view>

#include "tdbg/rules/builtin/all_zero.hpp"
#include "tdbg/rules/builtin/check_input_images.hpp"
#include "tdbg/rules/builtin/class_imbalance.hpp"
#include "tdbg/rules/builtin/confusion.hpp"
#include "tdbg/rules/builtin/dead_relu.hpp"
#include "tdbg/rules/builtin/exploding_tensor.hpp"
#include "tdbg/rules/builtin/feature_importance_overweight.hpp"
#include "tdbg/rules/builtin/loss_not_decreasing.hpp"
#include "tdbg/rules/builtin/nlp_sequence_ratio.hpp"
#include "tdbg/rules/builtin/overfit.hpp"
#include "tdbg/rules/builtin/overtraining.hpp"
#include "tdbg/rules/builtin/poor_weight_initialization.hpp"
#include "tdbg/rules/builtin/saturated_activation.hpp"
#include "tdbg/rules/builtin/similar_across_runs.hpp"
#include "tdbg/rules/builtin/stalled_training_rule.hpp"
#include "tdbg/rules/builtin/tensor_variance.hpp"
#include "tdbg/rules/builtin/tree_depth.hpp"
#include "tdbg/rules/builtin/unchanged_tensor.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/builtin/weight_update_ratio.hpp"

namespace tdbg::rules {

/// Names a rule class in for_each_builtin_rule.
template <class Rule>
struct rule_tag {
    using type = Rule;
};

/// Calls `f(sagemaker_name, rule_tag<rule_class>{})` for every built-in rule.
template <class F>
void for_each_builtin_rule(F&& f) {
    f(vanishing_gradient::rule_name, rule_tag<vanishing_gradient>{});
    f(exploding_tensor::rule_name, rule_tag<exploding_tensor>{});
    f(all_zero::rule_name, rule_tag<all_zero>{});
    f(tensor_variance::rule_name, rule_tag<tensor_variance>{});
    f(unchanged_tensor::rule_name, rule_tag<unchanged_tensor>{});
    f(loss_not_decreasing::rule_name, rule_tag<loss_not_decreasing>{});
    f(weight_update_ratio::rule_name, rule_tag<weight_update_ratio>{});
    f(dead_relu::rule_name, rule_tag<dead_relu>{});
    f(saturated_activation::rule_name, rule_tag<saturated_activation>{});
    f(poor_weight_initialization::rule_name, rule_tag<poor_weight_initialization>{});
    f(similar_across_runs::rule_name, rule_tag<similar_across_runs>{});
    f(class_imbalance::rule_name, rule_tag<class_imbalance>{});
    f(confusion::rule_name, rule_tag<confusion>{});
    f(check_input_images::rule_name, rule_tag<check_input_images>{});
    f(nlp_sequence_ratio::rule_name, rule_tag<nlp_sequence_ratio>{});
    f(stalled_training_rule::rule_name, rule_tag<stalled_training_rule>{});
    f(tree_depth::rule_name, rule_tag<tree_depth>{});
    f(feature_importance_overweight::rule_name, rule_tag<feature_importance_overweight>{});
    f(overfit::rule_name, rule_tag<overfit>{});
    f(overtraining::rule_name, rule_tag<overtraining>{});
}

} // namespace tdbg::rules
