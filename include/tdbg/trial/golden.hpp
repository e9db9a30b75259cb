#pragma once
/// \file
/// The reading of a whole run in the "smdebug-golden/1" schema (write_golden_document): the
/// layout of the golden files that record what Python smdebug's reader returns, so that
/// tdbg's reading and Python's can be compared key by key; or of part of a run
/// (golden_filter: some tensors, steps, a mode), for a person's look at it. `tdbg dump`
/// writes it.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg {

/// The golden schema's name and version, its document's "format".
inline constexpr const char* golden_format = "smdebug-golden/1";
/// A tensor value of at most this many elements is written out in full ("value"); a larger
/// one by its digest only ("sha256").
inline constexpr std::size_t golden_max_listed_elements = 16;

/// A value whose record is larger than this is read in pieces (tensor::read_value_in_pieces):
/// its digest and reductions, the same bytes, computed as the pieces go past, so that a
/// document of a run of huge tensors holds O(piece) of them in memory.
inline constexpr std::uint64_t golden_max_whole_value_bytes = std::uint64_t{64} << 20U;

/// The part of a run a golden document is restricted to (`tdbg dump --tensors --steps --mode`).
/// A document written with the default filter is the whole run's.
struct golden_filter {
    /// Only the tensors whose names it matches (searched, as smdebug's tensor regexes).
    std::optional<std::string> tensor_regex;
    /// Only the steps of this mode (GLOBAL: every mode).
    mode only_mode = mode::global;
    /// Only the steps from steps.begin up to, not including, steps.end (a bound left out is
    /// open): mode steps of only_mode, or global steps when it is GLOBAL.
    step_range steps;
    /// Not a filter: values whose record is larger are read in pieces (see
    /// golden_max_whole_value_bytes; the document is the same either way).
    std::uint64_t max_whole_value_bytes = golden_max_whole_value_bytes;

    /// True when nothing is left out.
    [[nodiscard]] bool keeps_everything() const noexcept {
        return !tensor_regex && only_mode == mode::global && !steps.begin && !steps.end;
    }
    /// True when the step `global_step`, step `mode_step` of `step_mode`, is kept.
    [[nodiscard]] bool keeps_step(mode step_mode, std::int64_t mode_step, std::int64_t global_step) const noexcept {
        if (only_mode == mode::global) {
            return steps.contains(global_step);
        }
        return step_mode == only_mode && steps.contains(mode_step);
    }
};

/// Writes the run `t` as the golden schema describes it to `out`: JSON laid out as Python's
/// json.dumps(indent=1, sort_keys=True) lays it out, a newline last, byte for byte the text
/// of the golden files. `producer` names the program that wrote it ("producer"). Written a
/// tensor step at a time: memory grows with the run's index, not with what is written.
///
/// The document holds the run's workers, modes, steps (each mode's, and each global step's
/// mode and mode step), tensor names (the run's, by mode, each collection's), collections, and
/// for each tensor each step it was saved at: the worker, dtype, shape (and whether the index
/// or the value gave it), the digest of the value's bytes, the value itself when it has at most
/// golden_max_listed_elements elements, and every reduction (stored, computed from the value,
/// or why it is unavailable). Non-finite numbers are the strings "nan", "inf" and "-inf".
///
/// With `filter`, the document of part of the run: "tensors" holds every tensor its regex
/// matches (each with the entries and steps it keeps, perhaps none), "steps" and
/// "global_step_to_mode" the steps it keeps, and the lists of tensor names (the run's, by
/// mode, each collection's trial_tensor_names) the tensors it matches; the rest is the run's.
///
/// Throws what reading the run throws (tdbg::error), perhaps with part of the document in `out`.
TDBG_DECL void write_golden_document(const trial& t, const std::string& producer, std::ostream& out,
                                     const golden_filter& filter = {});

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/trial/impl/golden.ipp"
#endif
