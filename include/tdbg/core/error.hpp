#pragma once
/// \file
/// The exception hierarchy. One root, `tdbg::error`; the names of the
/// subclasses a caller catches are smdebug's, in snake_case.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "tdbg/config.hpp"

namespace tdbg {

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
};

/// smdebug's TensorUnavailableForStep: the tensor exists, but has no value
/// (or the requested reduction) at that step, mode and worker.
class tensor_unavailable_for_step : public error {
public:
    using error::error;
};

/// smdebug's ShapeUnavailableForStep.
class shape_unavailable_for_step : public error {
public:
    using error::error;
};

/// smdebug's StepUnavailable: the step was not saved and will never be.
class step_unavailable : public error {
public:
    using error::error;
};

/// smdebug's StepNotYetAvailable: the step may still arrive (the run is live).
class step_not_yet_available : public error {
public:
    using error::error;
};

/// smdebug's NoMoreData: the run has ended and the step is past its end.
class no_more_data : public error {
public:
    using error::error;
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

/// smdebug's InvalidWorker: a worker name the run does not have.
class invalid_worker : public error {
public:
    using error::error;
};

/// smdebug's RuleEvaluationConditionMet: raised by invoke_rule when asked to.
class rule_evaluation_condition_met : public error {
public:
    TDBG_DECL rule_evaluation_condition_met(const std::string& rule, std::int64_t step);
    [[nodiscard]] const std::string& rule() const noexcept { return rule_; }
    [[nodiscard]] std::int64_t step() const noexcept { return step_; }

private:
    std::string rule_;
    std::int64_t step_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/error.ipp"
#endif
