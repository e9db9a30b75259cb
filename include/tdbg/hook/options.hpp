#pragma once
/// \file
/// Everything a hook is configured with. The same options come from code or
/// from SageMaker's JSON hook configuration (hook/json_config.hpp).

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/core/save_config.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/reduction_config.hpp"

namespace tdbg {

/// smdebug's include_workers: save from worker_0 only, or from every worker.
enum class workers_to_save { one, all };

/// What the training thread does when the writer's queue is full.
enum class full_queue_policy {
    /// Wait until the writer thread has made room (nothing is lost).
    block,
    /// Drop the tensor, count it (hook::dropped_tensors()) and go on.
    drop,
};

/// What the hook does when writing fails: a full disk, too many open files, a
/// storage outage. Either way the hook stops saving at the first such error,
/// the run stays readable up to its last published step (no index, collections
/// file or end marker is written after the error), and hook::write_error()
/// says what happened. Mistakes in the calls themselves (usage_error,
/// config_error) are thrown whatever the policy.
enum class write_error_policy {
    /// smdebug's way (its error-handling agent): print the error once to stderr
    /// and let training go on, as if the hook were not there.
    disable,
    /// Throw the error (a storage_error) from the next hook call, once.
    rethrow,
};

/// What a hook does when its run directory already holds a run of its worker: one that
/// has ended (the end marker), one another job claimed (live, or crashed), or one written
/// without a claim (that worker's collections file). Workers of one job write one run
/// side by side under different names, each claiming its own (hook/detail/run_claim.hpp).
enum class existing_run_policy {
    /// Refuse to start: a config_error naming the directory and the other job. A job the
    /// state store resumes (hook_options::checkpoint_config_file) goes on in its directory.
    refuse,
    /// Go on with that run: the worker's claim is taken over and its files kept; steps go on
    /// after the state store's last one or, without a state store, after the worker's last
    /// published step (each mode after its last step), so that the run never holds steps of two
    /// jobs under one number. A run that has ended is still refused.
    resume,
    /// Start that worker's run again: its event, index and collections files, the end marker
    /// and the stop marker are removed first (a storage without remove is a config_error).
    overwrite,
};

/// What the hook does about a selection that can never save (hook_options::selection_check):
///   - a name in include_collections that no collection has by the end of the first step
///     (nor a save_tensor(..., {name}) created), with the nearest collection name ("did you
///     mean 'gradients'?");
///   - an include regex of a collection the options (or add_collection) asked for that selected
///     no tensor offered to the hook (save_tensor, should_save_tensor, plan_save) in its first
///     hook_options::selection_check_steps steps that saved a tensor; and such a collection that
///     selects nothing at all (no regex, no tensor name).
/// Each finding is reported once, at the end of the step where it is found; the step's files
/// are published first.
enum class selection_check_policy {
    /// One line each on the hook's log (hook_options::log); training goes on.
    warn,
    /// A config_error naming the collection (or regex), thrown at that step end by the call that
    /// ends the step (begin_step, end_step, set_mode, close); the run written so far stays readable.
    error,
    /// No check.
    off,
};

/// Where the hook's messages go (a warning, a write error under write_error_policy::disable):
/// one line each, without its newline.
using hook_log = std::function<void(std::string_view)>;

/// The hook's configuration (smdebug's Hook arguments, plus the writer's).
struct hook_options {
    /// Where the run is written: a local directory (`~/` is the home directory) or a URL of a
    /// registered storage scheme (resolve_location); informational for a hook given a storage.
    std::string out_dir;
    /// The default schedule of every collection without its own (smdebug: save_interval 500 in every mode).
    ::tdbg::save_config save_config{save_config_mode{}};
    /// The default reduction config; nullopt saves raw tensors only (smdebug's default).
    std::optional<::tdbg::reduction_config> reduction_config;
    /// Collections to save, besides "losses", which is always saved (as in
    /// smdebug's PyTorch hook); "all" saves every collection.
    std::vector<std::string> include_collections;
    /// Regexes added to the "default" collection (which is then saved).
    std::vector<std::string> include_regex;
    /// Saves every tensor offered, in the "all" collection (include regex ".*").
    bool save_all = false;
    /// Collections to merge into the hook's (same name: regexes appended, configs
    /// replaced); each one is also saved, as if listed in include_collections.
    std::vector<collection> collections;
    /// smdebug's include_workers.
    workers_to_save include_workers = workers_to_save::one;
    /// This worker's name; default: "worker_<rank>" from the environment (hook/worker.hpp).
    std::optional<std::string> worker;
    /// The number of workers; default: from the environment, else 1.
    std::optional<int> num_workers;
    /// Also writes TensorBoard event files.
    bool export_tensorboard = false;
    /// Where TensorBoard files go: relative to the run, or an absolute local path.
    /// Empty with export_tensorboard: "tensorboard" inside the run. Set, it implies export.
    std::string tensorboard_dir;
    /// Selects and computes but writes nothing (smdebug's dry_run).
    bool dry_run = false;
    /// The writer queue's cap in bytes of tensor data waiting to be written. The
    /// copies of raw tensors it holds are recycled, so it is also about the most
    /// memory the hook keeps for them.
    std::size_t max_queue_bytes = std::size_t{64} << 20U;
    /// What to do when the queue is full.
    full_queue_policy on_full_queue = full_queue_policy::block;
    /// Lowers the writer thread's priority by this nice increment (Linux), so that on a
    /// busy machine it takes idle CPU rather than the training thread's; 0: unchanged.
    int writer_nice = 10;
    /// Threads writing event files, taking whole steps in turn (0 counts as 1); a
    /// publisher thread besides them creates files and publishes them in step order.
    std::size_t writer_threads = 2;
    /// How long a writer thread that has just written waits for the steps that end meanwhile
    /// before it takes them: a trainer of short steps then wakes no thread at its step ends (on a
    /// virtual machine, waking an idle core costs the waker tens of microseconds). The longest a
    /// step's files wait to be published, besides writing them; flush() and close() do not wait
    /// for it. 0: every step end wakes a writer thread.
    std::chrono::microseconds writer_doze{2000};
    /// What to do when writing fails (see write_error_policy).
    write_error_policy on_write_error = write_error_policy::disable;
    /// What to do when the run directory already holds a run of this worker (see existing_run_policy).
    existing_run_policy existing_run = existing_run_policy::refuse;
    /// How often the early-stop marker is looked for: by a background thread, so that
    /// begin_step() never waits on storage (an S3 outage makes a look a minute of retries).
    /// 0: at every step: each begin_step() asks the thread for a fresh look and reads the
    /// latest finished one, so a marker is seen a look's time after it was written.
    std::chrono::milliseconds stop_check_interval{1000};
    /// The S3 location from a SageMaker configuration (S3OutputPath), for information.
    std::string s3_output_path;
    /// smdebug's state store, so that a job resumed from a checkpoint goes on with its
    /// step numbers: the checkpoint configuration file (JSON; "LocalPath" names the
    /// checkpoint directory, whose metadata.json keeps the states). nullopt:
    /// $CHECKPOINT_CONFIG_FILE_PATH, else /opt/ml/input/config/checkpointconfig.json;
    /// empty: no state store. A missing file means no store; a malformed one is a config_error.
    std::optional<std::string> checkpoint_config_file;
    /// Where SageMaker metrics go (`<dir>/<pid>.json`): scalars saved with sm_metric and
    /// the values of the "losses", "metrics" and "sm_metrics" collections.
    /// nullopt: $SAGEMAKER_METRICS_DIRECTORY when set; empty: no metrics.
    std::optional<std::string> sagemaker_metrics_dir;
    /// What to do about a selection that can never save (see selection_check_policy).
    selection_check_policy selection_check = selection_check_policy::warn;
    /// How many steps that saved a tensor an include regex has to select one before it is
    /// reported (selection_check_policy); 0 counts as 1.
    std::size_t selection_check_steps = 3;
    /// Where the hook's messages go; empty: standard error.
    hook_log log;
};

} // namespace tdbg
