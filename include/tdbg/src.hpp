#pragma once
/// \file
/// The engine's definitions, for a program built with TDBG_SEPARATE_COMPILATION
/// (tdbg/config.hpp): exactly one of its translation units includes this file
/// (CMake: link the target tdbg::compiled, which is that translation unit).
/// The optional S3 backend (tdbg/storage/s3.hpp) is header-only in both modes:
/// only the files that construct an s3_storage pay for it.

#include "tdbg/config.hpp"

#if TDBG_HEADER_ONLY
#error "tdbg/src.hpp is for TDBG_SEPARATE_COMPILATION: define it for the whole program (or link tdbg::compiled)"
#endif

#include "tdbg/tdbg.hpp"

#include "tdbg/core/impl/pattern.ipp"
#include "tdbg/core/impl/thread_pool.ipp"
#include "tdbg/format/impl/collections_file.ipp"
#include "tdbg/format/impl/index_file.ipp"
#include "tdbg/format/impl/json.ipp"
#include "tdbg/format/impl/stop_marker.ipp"
#include "tdbg/hook/impl/hook.ipp"
#include "tdbg/hook/impl/json_config.ipp"
#include "tdbg/reduce/impl/compute.ipp"
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
#include "tdbg/rules/impl/actions.ipp"
#include "tdbg/rules/impl/any_rule.ipp"
#include "tdbg/rules/impl/config.ipp"
#include "tdbg/rules/impl/evaluation.ipp"
#include "tdbg/rules/impl/invoke.ipp"
#include "tdbg/rules/impl/junit.ipp"
#include "tdbg/rules/impl/registry.ipp"
#include "tdbg/rules/impl/rule.ipp"
#include "tdbg/storage/impl/local_storage.ipp"
#include "tdbg/storage/impl/open.ipp"
#include "tdbg/storage/impl/storage.ipp"
#include "tdbg/trial/impl/tensor.ipp"
#include "tdbg/trial/impl/trial.ipp"
