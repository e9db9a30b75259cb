#pragma once
/// \file
/// The diff document, "tdbg-diff/1": what diff_runs found, as JSON for machines (`tdbg diff
/// --json` writes it, `tdbg report --diff FILE` reads it), written from a diff_result and read
/// back into a diff_document.
///
///     const auto result = tdbg::diff_runs(a, b, options);
///     const auto json = tdbg::diff_document_json(result, "runs/python", "runs/cpp", options);
///     const tdbg::diff_document doc = tdbg::read_diff_document(tdbg::format::dump_json(json), "diff.json");
///
/// The document: {format, run_a, run_b, agree, rtol, atol, first_divergence, tensors,
/// only_in_a, only_in_b, compared {tensors, steps, values, reductions, reduction_only_steps},
/// reductions_only} and, where stored reductions were compared, note. first_divergence is
/// null when the runs part only by tensors saved in one of them; a difference that is not a
/// finite number is null (infinite where elements were compared, undefined where none was).
/// The members added to the format after its first documents (first_divergence's
/// flat_index, mismatched and reduction; a tensor's worker, reason, reduction and
/// diverging_steps; compared, reductions_only, note) are read when present.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg {

/// The "format" of a diff document.
inline constexpr std::string_view diff_document_format = "tdbg-diff/1";

/// A diverging tensor as a diff document holds it: the first divergence, or an entry of its
/// "tensors" (a diff_divergence, with each difference as written); its place is the step
/// where the tensor first diverges.
struct diff_document_entry : diff_place {
    /// The largest absolute and relative differences; none where the document holds null, a
    /// difference that is not a finite number.
    std::optional<double> max_abs_diff;
    std::optional<double> max_rel_diff;
    /// Why, in words ("values differ", "only in run A", ...).
    std::string reason;
    /// The stored reduction compared, where raw values were absent.
    std::optional<tdbg::reduction> compared_reduction;
    /// The first divergence only: the element out of tolerance by the most, as an index per
    /// dimension and in C order (none where no element was compared), and how many are.
    std::vector<std::size_t> index;
    std::optional<std::size_t> flat_index;
    std::size_t mismatched = 0;
    /// An entry of "tensors" only: how many steps of the tensor diverge.
    std::size_t diverging_steps = 1;

    /// Whether elements were compared (a flat index, else an element index, is written): a
    /// difference that is null is then an infinite one; else (another dtype or shape, a value
    /// in one run only) it is undefined.
    [[nodiscard]] bool elements_compared() const noexcept { return flat_index.has_value() || !index.empty(); }
};

/// A diff document read back (see the file comment); its counts are the document's "compared"
/// (a count the document lacks is 0).
struct diff_document : diff_counts {
    /// The runs compared: A the reference, B the one compared with it.
    std::string run_a;
    std::string run_b;
    /// Whether they agree within the tolerances (diff_result::agree).
    bool agree = true;
    double rtol = 0;
    double atol = 0;
    /// The earliest step where a tensor parts; none when the runs part only by the tensors they hold.
    std::optional<diff_document_entry> first_divergence;
    /// Each diverging tensor from its first diverging step, ordered by that step.
    std::vector<diff_document_entry> tensors;
    /// Tensors of one run only.
    std::vector<std::string> only_in_a;
    std::vector<std::string> only_in_b;
    /// Every value compared was a stored reduction (diff_result::reductions_only).
    bool reductions_only = false;
    /// What the diff says about the stored reductions compared (empty where none was).
    std::string note;
};

/// What `result` says of the stored reductions it compared, in words, or "" where it compared
/// none: the document's "note", and the note under `tdbg diff`'s text.
[[nodiscard]] TDBG_DECL std::string diff_reductions_note(const diff_result& result);

/// The "tdbg-diff/1" document of `result`: run A named `run_a`, run B `run_b`, compared with
/// `options`' tolerances.
[[nodiscard]] TDBG_DECL format::json_value diff_document_json(const diff_result& result, const std::string& run_a,
                                                              const std::string& run_b, const diff_options& options);

/// The diff document in `text`, read from `origin` (a file name). A tdbg::format_error naming
/// `origin` and where in the document (`tensors[1] has no "step"`, `first_divergence: "mode"
/// is 'TEST', ...`) for text that is not JSON, not a diff document, or holds a member of the
/// wrong kind.
[[nodiscard]] TDBG_DECL diff_document read_diff_document(std::string_view text, const std::string& origin);

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/diff/impl/document.ipp"
#endif
