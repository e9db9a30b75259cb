#pragma once
/// \file
/// Convenience umbrella: the whole of tdbg except the optional integrations
/// (tdbg/storage/s3.hpp, tdbg/integrations/*.hpp), which need their own dependencies.
/// Every header also compiles on its own; include only what you use to keep builds fast.

#include "tdbg/core/array_text.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/save_config.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/xexpression.hpp"
#include "tdbg/core/xtensor.hpp"

#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/crc32c.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/stop_marker.hpp"
#include "tdbg/format/tfrecord.hpp"

#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/memory_storage.hpp"
#include "tdbg/storage/open.hpp"
#include "tdbg/storage/storage.hpp"

#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/partial.hpp"
#include "tdbg/reduce/policies.hpp"
#include "tdbg/reduce/reduction_set.hpp"

#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/json_config.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/hook/reduction_config.hpp"
#include "tdbg/hook/worker.hpp"

#include "tdbg/trial/golden.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

#include "tdbg/diff/diff.hpp"
#include "tdbg/diff/document.hpp"

#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/builtin.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/junit.hpp"
#include "tdbg/rules/logger.hpp"
#include "tdbg/rules/merge.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_configurations.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/rules/sarif.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/rules/watch.hpp"
