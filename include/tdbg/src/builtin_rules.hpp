#pragma once
/// \file
/// The definitions of the built-in rules, for a program built with
/// TDBG_SEPARATE_COMPILATION: included by tdbg/src.hpp, or compiled as a
/// translation unit of its own (CMake's tdbg::compiled compiles each file of
/// tdbg/src/ apart, so that they build in parallel). Each definition is in
/// exactly one file of tdbg/src/.

// A file of the engine itself: the C++ standard guard of tdbg/config.hpp refers to the
// program's files from here, rather than being one of them.
#ifndef TDBG_DETAIL_ENGINE_SOURCE
#define TDBG_DETAIL_ENGINE_SOURCE 1
#endif
#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src/builtin_rules.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/rules/builtin/impl/all_zero.ipp"
#include "tdbg/rules/builtin/impl/check_input_images.ipp"
#include "tdbg/rules/builtin/impl/class_imbalance.ipp"
#include "tdbg/rules/builtin/impl/confusion.ipp"
#include "tdbg/rules/builtin/impl/dead_relu.ipp"
#include "tdbg/rules/builtin/impl/exploding_tensor.ipp"
#include "tdbg/rules/builtin/impl/feature_importance_overweight.ipp"
#include "tdbg/rules/builtin/impl/loss_not_decreasing.ipp"
#include "tdbg/rules/builtin/impl/nlp_sequence_ratio.ipp"
#include "tdbg/rules/builtin/impl/overfit.ipp"
#include "tdbg/rules/builtin/impl/overtraining.ipp"
#include "tdbg/rules/builtin/impl/poor_weight_initialization.ipp"
#include "tdbg/rules/builtin/impl/saturated_activation.ipp"
#include "tdbg/rules/builtin/impl/similar_across_runs.ipp"
#include "tdbg/rules/builtin/impl/stalled_training_rule.ipp"
#include "tdbg/rules/builtin/impl/tensor_variance.ipp"
#include "tdbg/rules/builtin/impl/tree_depth.ipp"
#include "tdbg/rules/builtin/impl/unchanged_tensor.ipp"
#include "tdbg/rules/builtin/impl/vanishing_gradient.ipp"
#include "tdbg/rules/builtin/impl/weight_update_ratio.ipp"
