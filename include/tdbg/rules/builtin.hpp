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

/// Calls `f(sagemaker_name, rule_tag<basic_rule<Storage>>{})` for every built-in rule.
template <class Storage, class F>
void for_each_builtin_rule(F&& f) {
    f(basic_vanishing_gradient<Storage>::rule_name, rule_tag<basic_vanishing_gradient<Storage>>{});
    f(basic_exploding_tensor<Storage>::rule_name, rule_tag<basic_exploding_tensor<Storage>>{});
    f(basic_all_zero<Storage>::rule_name, rule_tag<basic_all_zero<Storage>>{});
    f(basic_tensor_variance<Storage>::rule_name, rule_tag<basic_tensor_variance<Storage>>{});
    f(basic_unchanged_tensor<Storage>::rule_name, rule_tag<basic_unchanged_tensor<Storage>>{});
    f(basic_loss_not_decreasing<Storage>::rule_name, rule_tag<basic_loss_not_decreasing<Storage>>{});
    f(basic_weight_update_ratio<Storage>::rule_name, rule_tag<basic_weight_update_ratio<Storage>>{});
    f(basic_dead_relu<Storage>::rule_name, rule_tag<basic_dead_relu<Storage>>{});
    f(basic_saturated_activation<Storage>::rule_name, rule_tag<basic_saturated_activation<Storage>>{});
    f(basic_poor_weight_initialization<Storage>::rule_name, rule_tag<basic_poor_weight_initialization<Storage>>{});
    f(basic_similar_across_runs<Storage>::rule_name, rule_tag<basic_similar_across_runs<Storage>>{});
    f(basic_class_imbalance<Storage>::rule_name, rule_tag<basic_class_imbalance<Storage>>{});
    f(basic_confusion<Storage>::rule_name, rule_tag<basic_confusion<Storage>>{});
    f(basic_check_input_images<Storage>::rule_name, rule_tag<basic_check_input_images<Storage>>{});
    f(basic_nlp_sequence_ratio<Storage>::rule_name, rule_tag<basic_nlp_sequence_ratio<Storage>>{});
    f(basic_stalled_training_rule<Storage>::rule_name, rule_tag<basic_stalled_training_rule<Storage>>{});
    f(basic_tree_depth<Storage>::rule_name, rule_tag<basic_tree_depth<Storage>>{});
    f(basic_feature_importance_overweight<Storage>::rule_name, rule_tag<basic_feature_importance_overweight<Storage>>{});
    f(basic_overfit<Storage>::rule_name, rule_tag<basic_overfit<Storage>>{});
    f(basic_overtraining<Storage>::rule_name, rule_tag<basic_overtraining<Storage>>{});
}

} // namespace tdbg::rules
