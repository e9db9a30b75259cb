#pragma once
/// \file
/// `tensor`: one tensor of a trial, smdebug's Tensor API — its steps, its
/// value at a step, its reductions (stored, else computed), its shape and the
/// workers that wrote it.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/trial/unreadable_event_file.hpp"

namespace tdbg {

namespace detail {
class trial_core;
class tensor_record;
struct record_request;
} // namespace detail

/// What the index says about one tensor at one step and worker (no I/O).
struct tensor_step_info {
    std::int64_t step = 0; ///< global step
    mode step_mode = mode::global;
    std::int64_t mode_step = 0;
    std::string worker;
    /// True when a value was saved (not only reductions or a shape).
    bool has_value = false;
    /// The size in bytes of the value's record in its event file (0 without a value): what
    /// reading the value reads.
    std::uint64_t value_record_bytes = 0;
    /// The shape recorded in the index (ReductionConfig save_shape), if any.
    std::optional<tensor_value::shape_type> stored_shape;
    /// The reductions saved for this step, sorted.
    std::vector<reduction> stored_reductions;
};

/// What the index says about a tensor as a whole, over every step seen so
/// far, complete or not (no I/O; constant time, however many steps it has).
struct tensor_summary {
    /// The global steps with an entry.
    std::size_t steps = 0;
    /// The modes of its entries, in train, eval, predict, global order.
    std::vector<mode> modes;
    /// True when some entry has a value (not only reductions or a shape).
    bool has_value = false;
    /// True when some entry has a shape recorded in the index.
    bool has_shape = false;
    /// Every reduction stored at some step, sorted.
    std::vector<reduction> stored_reductions;
    /// The last entry (by global step, then worker) with a value or a shape.
    std::optional<tensor_step_info> last;
};

/// Where a reduction of a step came from (tensor::reductions).
enum class reduction_source {
    stored, ///< saved in the run, a record of its own
    computed, ///< computed from the value saved at the step
    unavailable ///< neither: step_reduction::error says why
};

/// One reduction of a tensor at one step, and where it came from.
struct step_reduction {
    reduction which;
    reduction_source source = reduction_source::unavailable;
    /// The reduction (a 0-d tensor of numpy's result dtype); none when unavailable.
    std::optional<tensor_value> value;
    /// Why it is unavailable (null otherwise): a tensor_unavailable_for_step when it was not
    /// stored and no value was saved at the step, else what computing it from the value threw
    /// (dtype_mismatch for a string tensor, tdbg::error for the min of an empty one).
    std::exception_ptr error;
};

/// A value's element type and shape, as the head of its record says them.
struct value_layout {
    dtype type = dtype::float32;
    tensor_value::shape_type shape;
};

/// One tensor of a trial. A cheap handle: it shares the trial's state and
/// stays valid (and sees new steps) as long as any handle to the trial does.
class tensor {
public:
    /// The tensor's name.
    [[nodiscard]] TDBG_DECL const std::string& name() const noexcept;

    /// The steps of `m` at which the tensor was saved (mode steps; global steps
    /// for mode::global). Only complete steps unless `show_incomplete_steps`.
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> steps(mode m = mode::global, bool show_incomplete_steps = false) const;

    /// The value at `step` of mode `m`, written by `worker` (default: the first
    /// worker in sorted order that wrote it). Throws tensor_unavailable_for_step
    /// when only reductions or a shape were saved, step_unavailable,
    /// step_not_yet_available or no_more_data when the step is not there, and
    /// unreadable_event_file when the event file the index lists cannot be read.
    [[nodiscard]] TDBG_DECL tensor_value value(std::int64_t step, mode m = mode::global,
                                               const std::optional<std::string>& worker = std::nullopt) const;

    /// Every complete step's value of mode `m`, by step. With `worker`, the steps
    /// that worker did not write are left out.
    [[nodiscard]] TDBG_DECL std::map<std::int64_t, tensor_value>
    values(mode m = mode::global, const std::optional<std::string>& worker = std::nullopt) const;

    /// The reductions `wanted` at `step` of `m`, written by `worker` (default: as value()), one
    /// per reduction in that order, each with where it came from: the stored one where the run
    /// saved it, else computed from the value saved at the step (element-wise norms, ddof=0; all
    /// of them in one pass over the value, which is read once and only when one is computed),
    /// else unavailable, with the reason. `value`, when given, supplies the step's value instead
    /// of reading it (one the caller holds already); it is called at most once, and only when a
    /// reduction is computed. Throws as value() does when the tensor was not saved at `step`
    /// (tensor_unavailable_for_step, step_unavailable, step_not_yet_available, no_more_data),
    /// unreadable_event_file when a record the index lists cannot be read, and what `value` throws.
    [[nodiscard]] TDBG_DECL std::vector<step_reduction>
    reductions(std::int64_t step, const std::vector<reduction>& wanted, mode m = mode::global,
               const std::optional<std::string>& worker = std::nullopt,
               const std::function<tensor_value()>& value = {}) const;

    /// The reduction `r` at `step`: the stored one if it was saved, else
    /// computed from the value (element-wise norms, ddof=0); reductions() for one. Throws
    /// tensor_unavailable_for_step when neither is there, and what computing it throws.
    [[nodiscard]] TDBG_DECL tensor_value reduction_value(std::int64_t step, reduction r, mode m = mode::global,
                                                         const std::optional<std::string>& worker = std::nullopt) const;

    /// smdebug's spelling: `reduction_value(step, "mean", mode, worker, abs)`;
    /// any spelling parse_reduction knows ("abs_l2_norm" too). Throws config_error for an unknown name.
    [[nodiscard]] TDBG_DECL tensor_value reduction_value(std::int64_t step, std::string_view reduction_name_text,
                                                         mode m = mode::global,
                                                         const std::optional<std::string>& worker = std::nullopt,
                                                         bool abs = false) const;

    /// The reductions saved at `step` (none are computed), keyed by reduction
    /// (smdebug's (name, abs) pairs).
    [[nodiscard]] TDBG_DECL std::map<reduction, tensor_value>
    reduction_values(std::int64_t step, mode m = mode::global, const std::optional<std::string>& worker = std::nullopt) const;

    /// The shape at `step`: the one the index records, else the value's.
    /// Throws shape_unavailable_for_step when neither is there.
    [[nodiscard]] TDBG_DECL tensor_value::shape_type shape(std::int64_t step, mode m = mode::global,
                                                           const std::optional<std::string>& worker = std::nullopt) const;

    /// The dtype and shape of the value at `step`, from the first bytes of its record: a
    /// value of any size costs one read of at most 64 KiB (a record of an uncommon form
    /// is read whole). Throws as value() does.
    [[nodiscard]] TDBG_DECL value_layout layout(std::int64_t step, mode m = mode::global,
                                                const std::optional<std::string>& worker = std::nullopt) const;

    /// Reads the value at `step` piece by piece, for a value too large to hold at once:
    /// `each` gets consecutive 1-d views of at most `piece_elements` elements (a string
    /// tensor: the whole value at once), in order, each valid during its call. Memory stays
    /// O(max(piece, 8 MiB)) for a record of the common form (elements in tensor_content, as
    /// smdebug and tdbg write them); any other is read whole first. The record's CRC is
    /// checked as its bytes go past: a damaged record throws format_error, perhaps after
    /// some pieces were seen. Throws as value() does. Returns the value's layout.
    TDBG_DECL value_layout read_value_in_pieces(std::int64_t step, mode m, const std::optional<std::string>& worker,
                                                std::size_t piece_elements,
                                                const std::function<void(const tensor_value&)>& each) const;

    /// The workers that saved the tensor at `step`, sorted. Throws
    /// tensor_unavailable_for_step when none did (as far as the trial knows now).
    [[nodiscard]] TDBG_DECL std::vector<std::string> workers(std::int64_t step, mode m = mode::global) const;

    /// The last `n` steps of `m` up to and including `step` (all of them without `n`).
    [[nodiscard]] TDBG_DECL std::vector<std::int64_t> prev_steps(std::int64_t step, std::optional<std::size_t> n = std::nullopt,
                                                                 mode m = mode::global) const;

    /// What the index says about the tensor at `step` of `m`: an entry per worker that saved
    /// it, by worker; no I/O. Empty when none did (as far as the trial knows now).
    [[nodiscard]] TDBG_DECL std::vector<tensor_step_info> entries_at(std::int64_t step, mode m = mode::global) const;

    /// What the index says about each (step, worker) of `m` (complete steps
    /// only unless `show_incomplete_steps`), in step then worker order; no I/O.
    [[nodiscard]] TDBG_DECL std::vector<tensor_step_info> entries(mode m = mode::global,
                                                                  bool show_incomplete_steps = false) const;

    /// What the index says about the tensor as a whole (see tensor_summary); no I/O.
    [[nodiscard]] TDBG_DECL tensor_summary summary() const;

private:
    friend class trial;
    TDBG_DECL tensor(std::shared_ptr<detail::trial_core> core, const detail::tensor_record* record);

    /// Where the value at `step` lies; throws as value() does when it is not there.
    [[nodiscard]] TDBG_DECL detail::record_request value_request(std::int64_t step, mode m,
                                                                 const std::optional<std::string>& worker) const;

    std::shared_ptr<detail::trial_core> core_;
    const detail::tensor_record* record_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/trial/impl/tensor.ipp"
#endif
