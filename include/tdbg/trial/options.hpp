#pragma once
/// \file
/// How a trial reads a run (trial_options).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tdbg/core/error.hpp"

namespace tdbg {

namespace detail {

// The whole number in environment variable `name`, or `fallback` when it is not set.
inline std::int64_t environment_count(const char* name, std::int64_t fallback) {
    const char* text = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read, never set, by tdbg
    if (text == nullptr || *text == '\0') {
        return fallback;
    }
    std::size_t used = 0;
    long long value = -1;
    try {
        value = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || text[used] != '\0' || value < 0) {
        throw config_error(std::string("environment variable ") + name + "='" + text +
                           "' is not a whole number of 0 or more");
    }
    return value;
}

} // namespace detail

/// How often tdbg looks at a live run for what it waits for, unless told otherwise:
/// trial_options (wait_for_steps), rules::invoke_options, rules::watch_options and
/// `tdbg rules --follow` all default to it. A look lists the run's new index files:
/// a directory read locally, one request on S3.
inline constexpr std::chrono::milliseconds default_poll_interval{500};

/// How a trial reads a run. The defaults suit both finished and live runs; two of
/// them are smdebug's environment variables when those are set.
struct trial_options {
    /// Waiting without end, for collection_wait.
    static constexpr std::chrono::milliseconds wait_forever = std::chrono::milliseconds::max();

    /// wait_for_steps polls the storage this often while a step is not yet available.
    std::chrono::milliseconds poll_interval{default_poll_interval};
    /// How long opening waits for a run that has not started (no collection file yet)
    /// and then for the collection files of all its workers, as smdebug's create_trial
    /// does (which waits without end: wait_forever). 0, the default: not at all. The
    /// end marker ends the wait; a run whose time is up with some workers' files opens
    /// with those, one with none is missing_collection_files.
    std::chrono::milliseconds collection_wait{0};
    /// Called to pause between two looks while opening waits (default: sleeps). It may
    /// throw to give up waiting: a command line interrupted by a signal, a test.
    std::function<void(std::chrono::milliseconds)> pause;
    /// smdebug's INCOMPLETE_STEP_WAIT_WINDOW (environment variable
    /// SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW, default 1000): after this many steps waiting
    /// for a lagging worker, the older half is declared complete (0: never).
    std::size_t incomplete_step_wait_window =
        static_cast<std::size_t>(detail::environment_count("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", 1000));
    /// smdebug's TRAINING_END_DELAY_REFRESH (environment variable
    /// SMDEBUG_TRAINING_END_DELAY_REFRESH, in seconds): once the end marker is seen, the
    /// last listing waits this long first, for storages whose listings lag behind their
    /// writes. tdbg's default is 0 where smdebug's is 1 s: the end marker is published
    /// after every other file, and local files and S3 list what was written before.
    std::chrono::milliseconds training_end_delay_refresh{
        std::chrono::seconds(detail::environment_count("SMDEBUG_TRAINING_END_DELAY_REFRESH", 0))};
    /// The workers whose index files the trial reads (none: every worker). The others' index
    /// files are passed over when listed: their entries never enter the trial, which then
    /// knows these workers only (workers(), num_workers(), and a step is complete when these
    /// have written it). A command that reads one worker's tensors opens only that worker.
    std::vector<std::string> workers;
    /// Read, of each step, only the index file of its first worker in sorted order (of those
    /// loaded): the worker whose value a lookup without a worker returns, as in smdebug, where
    /// that worker saved the tensor. For a reader of those values only (`tdbg rules` evaluating
    /// rules that read no other worker's): the other workers' index files are counted from the
    /// listing's names, not read, so that a step is complete when it was before. A tensor the
    /// step's first worker did not save, but another did, is then not found at that step.
    bool first_worker_only = false;
    /// Keep, of each tensor, only what tensor::summary() says (its steps counted, modes,
    /// workers' stored reductions, whether a value or a shape was saved) and the entries of
    /// its last step with a value or a shape, not every entry: memory follows the number of
    /// tensors and workers, not of steps (`tdbg ls`). Lookups of other steps' entries (a
    /// tensor's steps, values, reductions) find only what is kept.
    bool summary_only = false;
    /// Threads that read index files (0: as many as the storage's requests and the cores suit).
    std::size_t threads = 0;
    /// Event files of small records up to this size may be read whole and kept
    /// when a second record of theirs is read.
    std::uint64_t whole_file_limit = std::uint64_t{16} << 20U;
    /// The bytes of whole event files kept in memory.
    std::uint64_t file_cache_bytes = std::uint64_t{256} << 20U;
};

} // namespace tdbg
