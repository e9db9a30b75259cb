#pragma once
/// \file
/// SageMaker's JSON hook configuration (the file SMDEBUG_CONFIG_FILE_PATH
/// names), read into hook_options with smdebug's meaning of every key.
///
/// ```
/// {"LocalPath": "/opt/ml/output/tensors", "S3OutputPath": "s3://b/p",
///  "HookParameters": {"save_interval": "100", "train.save_interval": "10", "save_steps": "1,2,3",
///                     "start_step": "0", "end_step": "1000", "include_regex": "relu.*,fc1",
///                     "reductions": "mean,abs_l2_norm", "save_raw_tensor": "true", "save_shape": "false",
///                     "save_all": "false", "include_workers": "one",
///                     "export_tensorboard": "true", "tensorboard_dir": "tb"},
///  "CollectionConfigurations": [
///     {"CollectionName": "weights"},
///     {"CollectionName": "relu", "CollectionParameters": {"include_regex": "relu", "exclude_regex": "grad",
///                                                         "reductions": "max", "eval.save_interval": "1",
///                                                         "save_histogram": "false"}}]}
/// ```
/// Values may be JSON numbers/booleans or strings (SageMaker writes strings).
/// Save keys may carry a mode prefix (train., eval., predict., global.); a
/// collection's save keys override the hook's key by key, as in smdebug. Lists
/// (save_steps, include_regex, reductions) are comma-separated strings.
/// tdbg additions: exclude_regex; save_raw_tensor/save_shape are honoured even
/// without reductions (smdebug ignores them then). Unknown keys are errors.

#include <optional>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"
#include "tdbg/hook/options.hpp"

namespace tdbg {

/// The environment variable that names the hook configuration file.
inline constexpr const char* hook_config_env = "SMDEBUG_CONFIG_FILE_PATH";
/// Where SageMaker puts the hook configuration when the variable is unset.
inline constexpr const char* default_hook_config_path = "/opt/ml/input/config/debughookconfig.json";
/// smdebug's out_dir when the configuration has no LocalPath.
inline constexpr const char* default_sagemaker_out_dir = "/opt/ml/output/tensors";

/// Parses SageMaker's hook configuration; `source` names it in errors. Throws
/// config_error naming the key, the expected form and the value found; unknown
/// keys are listed in the error.
[[nodiscard]] TDBG_DECL hook_options parse_hook_config(std::string_view json_text,
                                                       std::string_view source = "hook configuration");

/// Reads and parses a hook configuration file. Under SageMaker (TRAINING_JOB_NAME
/// set), TensorBoard output follows TENSORBOARD_CONFIG_FILE_PATH as in smdebug.
[[nodiscard]] TDBG_DECL hook_options load_hook_config(const std::string& file);

/// The configuration SageMaker provides: the file SMDEBUG_CONFIG_FILE_PATH names
/// (config_error when it is missing), else /opt/ml/input/config/debughookconfig.json
/// when it exists; nullopt when there is none.
[[nodiscard]] TDBG_DECL std::optional<hook_options> hook_config_from_environment();

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/hook/impl/json_config.ipp"
#endif
