#pragma once
/// \file
/// The exception hierarchy. One root, `tdbg::error`; the names of the
/// subclasses a caller catches are smdebug's, in snake_case.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "tdbg/config.hpp"

namespace tdbg {

enum class mode : int; // tdbg/core/mode.hpp

/// Root of every error tdbg throws.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Bytes that do not decode: a corrupt or truncated file, a malformed record.
/// `file()` and `offset()` say where.
class format_error : public error {
public:
    TDBG_DECL format_error(const std::string& what, std::string file, std::uint64_t offset);
    [[nodiscard]] const std::string& file() const noexcept { return file_; }
    [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }

private:
    std::string file_;
    std::uint64_t offset_;
};

/// The library was called against its contract (saving while no step is open, a hook
/// used after close()): a mistake in the calling code, not bad data.
class usage_error : public error {
public:
    using error::error;
};

/// A configuration (hook options, JSON config, rule parameters) that is not valid.
class config_error : public error {
public:
    using error::error;
};

/// A name that cannot become part of a path (`..`, absolute, NUL, too long).
class invalid_name : public error {
public:
    using error::error;
};

/// The storage backend failed to read or write.
class storage_error : public error {
public:
    using error::error;
};

/// The object asked for does not exist in the storage.
class object_not_found : public storage_error {
public:
    using storage_error::storage_error;
};

/// A typed access with the wrong element type.
class dtype_mismatch : public error {
public:
    using error::error;
};

/// smdebug's TensorUnavailable: the trial has no tensor of that name.
class tensor_unavailable : public error {
public:
    using error::error;
    tensor_unavailable(const std::string& message, std::string tensor_name)
        : error(message), tensor_name_(std::move(tensor_name)) {}
    /// smdebug's `tname`.
    [[nodiscard]] const std::string& tensor_name() const noexcept { return tensor_name_; }

private:
    std::string tensor_name_;
};

/// What smdebug's exceptions about a step carry: the tensor (smdebug's `tname`;
/// empty where none is concerned), the step and the mode it was asked in (`step`,
/// `mode`; step -1 where the error is not about one step).
class step_error : public error {
public:
    using error::error;
    step_error(const std::string& message, std::string tensor_name, std::int64_t step, tdbg::mode m)
        : error(message), tensor_name_(std::move(tensor_name)), step_(step), mode_(m) {}
    [[nodiscard]] const std::string& tensor_name() const noexcept { return tensor_name_; }
    [[nodiscard]] std::int64_t step() const noexcept { return step_; }
    [[nodiscard]] tdbg::mode mode() const noexcept { return mode_; }

private:
    std::string tensor_name_;
    std::int64_t step_ = -1;
    tdbg::mode mode_ = static_cast<tdbg::mode>(4); // mode::global
};

/// smdebug's TensorUnavailableForStep: the tensor exists, but has no value
/// (or the requested reduction) at that step, mode and worker. `has_reductions()`:
/// reductions of it were saved there (smdebug's `has_reductions`).
class tensor_unavailable_for_step : public step_error {
public:
    using step_error::step_error;
    tensor_unavailable_for_step(const std::string& message, std::string tensor_name, std::int64_t step, tdbg::mode m,
                                bool has_reductions)
        : step_error(message, std::move(tensor_name), step, m), has_reductions_(has_reductions) {}
    [[nodiscard]] bool has_reductions() const noexcept { return has_reductions_; }

private:
    bool has_reductions_ = false;
};

/// smdebug's ShapeUnavailableForStep.
class shape_unavailable_for_step : public step_error {
public:
    using step_error::step_error;
};

/// smdebug's StepUnavailable: the step was not saved and will never be.
class step_unavailable : public step_error {
public:
    using step_error::step_error;
};

/// smdebug's StepNotYetAvailable: the step may still arrive (the run is live).
class step_not_yet_available : public step_error {
public:
    using step_error::step_error;
};

/// smdebug's NoMoreData: the run has ended and the step is past its end;
/// `last_step()` is the last step the run has in that mode (smdebug's `last_step`).
class no_more_data : public step_error {
public:
    using step_error::step_error;
    no_more_data(const std::string& message, std::int64_t step, tdbg::mode m, std::int64_t last_step)
        : step_error(message, {}, step, m), last_step_(last_step) {}
    [[nodiscard]] std::int64_t last_step() const noexcept { return last_step_; }

private:
    std::int64_t last_step_ = -1;
};

/// smdebug's MissingCollectionFiles: no collection file in the run.
class missing_collection_files : public error {
public:
    using error::error;
};

/// smdebug's IndexReaderException: an index file that cannot be used.
class index_reader_error : public error {
public:
    using error::error;
};

/// The run a trial follows is no longer the one it opened (no smdebug counterpart): another job
/// now writes one of its workers (`restarted`: a job started again over it with
/// existing_run_policy::overwrite, or one that resumed it), or the run was removed (`removed`).
/// Thrown by the refresh that finds it, before anything of the new job is read, and by every
/// refresh after it: what the trial read until then is the old job's alone.
class run_changed : public error {
public:
    enum class kind { restarted, removed };
    run_changed(const std::string& message, kind k, std::string worker, std::optional<std::int64_t> first_step)
        : error(message), kind_(k), worker_(std::move(worker)), first_step_(first_step) {}
    [[nodiscard]] kind what_changed() const noexcept { return kind_; }
    /// The worker whose claim changed (restarted), else empty.
    [[nodiscard]] const std::string& worker() const noexcept { return worker_; }
    /// The first global step the new job writes, where its claim says (restarted).
    [[nodiscard]] std::optional<std::int64_t> first_step() const noexcept { return first_step_; }

private:
    kind kind_;
    std::string worker_;
    std::optional<std::int64_t> first_step_;
};

/// smdebug's InvalidWorker: a worker name the run does not have (`worker()`).
class invalid_worker : public error {
public:
    using error::error;
    invalid_worker(const std::string& message, std::string worker) : error(message), worker_(std::move(worker)) {}
    [[nodiscard]] const std::string& worker() const noexcept { return worker_; }

private:
    std::string worker_;
};

/// smdebug's RuleEvaluationConditionMet: raised by invoke_rule when asked to.
/// `end_of_rule()`: the rule asks not to be evaluated again (smdebug's `end_of_rule`).
class rule_evaluation_condition_met : public error {
public:
    TDBG_DECL rule_evaluation_condition_met(const std::string& rule, std::int64_t step, bool end_of_rule = false);
    [[nodiscard]] const std::string& rule() const noexcept { return rule_; }
    /// smdebug's `rule_name`.
    [[nodiscard]] const std::string& rule_name() const noexcept { return rule_; }
    [[nodiscard]] std::int64_t step() const noexcept { return step_; }
    [[nodiscard]] bool end_of_rule() const noexcept { return end_of_rule_; }

private:
    std::string rule_;
    std::int64_t step_;
    bool end_of_rule_;
};

/// smdebug's InsufficientInformationForRuleInvocation: a rule cannot run on this
/// run at all (not a step it cannot evaluate: the tensors or settings it needs are
/// not there). invoke_rule stops and reports it as the rule's error.
class insufficient_information_for_rule_invocation : public error {
public:
    insufficient_information_for_rule_invocation(std::string rule, const std::string& message)
        : error("rule " + rule + ": " + message), rule_(std::move(rule)) {}
    [[nodiscard]] const std::string& rule_name() const noexcept { return rule_; }

private:
    std::string rule_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/error.ipp"
#endif
