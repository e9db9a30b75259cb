#pragma once
/// \file
/// `diff_runs`: where two runs of the same model part, tensor by tensor and
/// step by step: the check of a port (a trainer rewritten in C++, a new
/// framework version) against the run it reproduces.
///
///     auto result = tdbg::diff_runs(tdbg::create_trial("runs/python"), tdbg::create_trial("runs/cpp"));
///     if (!result.agree()) {
///         const tdbg::diff_divergence& d = *result.first_divergence();   // step, tensor, index, differences
///     }
///
/// Run A is the reference. Steps are matched by mode and mode step, workers by
/// name, tensors by name (or through `name_map` / `prefix_map`). Elements are
/// compared as doubles with numpy's `isclose` test against A:
/// `|b - a| <= atol + rtol * |a|`. NaN equals NaN only where both runs hold NaN
/// at the same element; an infinity equals only the same infinity. The relative
/// difference is `|b - a| / |a|` (infinite where `a` is 0 and `b` is not).
/// A different dtype or shape is a divergence with that reason. A tensor, step
/// or worker saved in one run only is a divergence too (reason "only in run A"
/// or "only in run B"; tensors also listed in only_in_a / only_in_b) unless
/// `ignore_missing` is set, when it is only reported.
///
/// Where neither run saved a raw value at a step (a gradient saved as reductions
/// only), the reductions stored in both are compared instead, always; the result
/// says how many (`reductions_compared`, `reduction_only_steps`). A diff that
/// compared nothing (no value, and no difference found) does not agree:
/// `nothing_compared` says why (the tensor regex matched no tensor, no tensor or
/// step is in both runs, none holds a value or the same stored reduction in both).
///
/// The runs are read one value at a time: memory does not grow with their length.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg {

/// What diff_runs compares, and how closely.
struct diff_options {
    /// Relative tolerance, against run A's value (numpy.isclose's default).
    double rtol = 1e-5;
    /// Absolute tolerance (numpy.isclose's default).
    double atol = 1e-8;
    /// Only tensors whose name in run A matches (searched, Python `re` syntax, as smdebug's tensor regexes).
    std::optional<std::string> tensor_regex;
    /// Tensors whose name differs in run B: exact names, A's name first. Take precedence over `prefix_map`.
    std::vector<std::pair<std::string, std::string>> name_map;
    /// Name prefixes that differ (e.g. {"Net_", "MLP_"}): a name of A that starts
    /// with the first has it replaced by the second in B; the longest prefix wins.
    std::vector<std::pair<std::string, std::string>> prefix_map;
    /// Where a raw value is in one run only, compare the reductions stored in the
    /// other with those computed from the value (else that step is a divergence).
    /// Where neither run holds a raw value, the reductions stored in both are
    /// compared whether this is set or not.
    bool compare_reductions = false;
    /// Only this mode's steps (none: every mode).
    std::optional<tdbg::mode> only_mode;
    /// Tensors, steps and workers saved in one run only are reported, not counted as divergences.
    bool ignore_missing = false;
};

/// Where a divergence is: the tensor, the step and the worker (of a diff_divergence, and of
/// a diff document's diff_document_entry).
struct diff_place {
    /// The tensor's name in run A (for a tensor of run B only: its name in B).
    std::string tensor;
    /// Its name in run B.
    std::string tensor_b;
    /// The global step (run A's; run B's for a step only B has), its mode and mode step.
    std::int64_t step = 0;
    tdbg::mode step_mode = tdbg::mode::global;
    std::int64_t mode_step = 0;
    std::string worker;
};

/// One place where the runs part: the first step at which a tensor diverges.
struct diff_divergence : diff_place {
    /// The reduction compared, where raw values were absent.
    std::optional<tdbg::reduction> compared_reduction;
    /// The largest |b - a| over the step's elements (infinite for a NaN or an infinity against a number; NaN when no
    /// element was compared).
    double max_abs_diff = std::numeric_limits<double>::quiet_NaN();
    /// The largest |b - a| / |a| (see the file comment).
    double max_rel_diff = std::numeric_limits<double>::quiet_NaN();
    /// The element out of tolerance by the most (largest |b - a|), in C order, and as an index per dimension.
    std::optional<std::size_t> flat_index;
    std::vector<std::size_t> index;
    /// How many elements are out of tolerance.
    std::size_t mismatched = 0;
    /// How many steps of this tensor diverge in all (the table's count).
    std::size_t diverging_steps = 1;
    /// Why, in words: "values differ", "shape [2, 3] in run A, [3, 2] in run B", "only in run A", ...
    std::string reason;
};

/// How much a diff compared: the counts of a diff_result, and the "compared" of a diff document
/// (diff_document), which both derive from it.
struct diff_counts {
    /// Tensors compared in both runs.
    std::size_t tensors_compared = 0;
    /// Distinct (mode, mode step) pairs at which something was compared.
    std::size_t steps_compared = 0;
    /// Elements (and reductions) compared.
    std::size_t values_compared = 0;
    /// Of values_compared, the elements of stored reductions (compared where a raw value was missing).
    std::size_t reductions_compared = 0;
    /// Tensor steps (a tensor at a step, of a worker) compared by the reductions stored in both
    /// runs, as neither saved a raw value there.
    std::size_t reduction_only_steps = 0;
};

/// What diff_runs found (with the counts of what it compared, diff_counts).
struct diff_result : diff_counts {
    /// Each diverging tensor's first divergence, ordered by its step (then mode, name and worker).
    std::vector<diff_divergence> divergences;
    /// Tensors (A's names, after the regex) with no counterpart in run B.
    std::vector<std::string> only_in_a;
    /// Tensors of run B with no counterpart in run A.
    std::vector<std::string> only_in_b;
    /// Tensor steps at which neither run holds a raw value, nor a stored reduction both hold.
    std::size_t skipped = 0;
    /// Whether tensors of one run only count against agree() (not diff_options::ignore_missing).
    bool missing_counts = true;
    /// Why nothing was compared, in words, when no value was and no difference was found
    /// (e.g. "the tensor regex 'gradinet' matches no tensor of run A; the nearest names:
    /// gradient/fc1.weight, ..."); empty otherwise. agree() is false when it is set.
    std::string nothing_compared;

    /// True when the runs agree within the tolerances, something was compared, and (unless
    /// ignore_missing) they hold the same tensors.
    [[nodiscard]] bool agree() const noexcept {
        return divergences.empty() && nothing_compared.empty() &&
               (!missing_counts || (only_in_a.empty() && only_in_b.empty()));
    }
    /// True when values were compared, and every one was a stored reduction: no raw value was
    /// saved in both runs at any step compared.
    [[nodiscard]] bool reductions_only() const noexcept {
        return values_compared > 0 && reductions_compared == values_compared;
    }
    /// The first divergence: the earliest step at which a tensor parts.
    [[nodiscard]] const diff_divergence* first_divergence() const noexcept {
        return divergences.empty() ? nullptr : &divergences.front();
    }
};

/// The name a tensor of run A has in run B under `options`' maps.
[[nodiscard]] TDBG_DECL std::string diff_counterpart(const std::string& name_in_a, const diff_options& options);

/// Compares run `b` with the reference run `a`, step by step (see the file
/// comment); a result that compared nothing says why (diff_result::nothing_compared). Throws tdbg::error naming the run, tensor and step when a value
/// cannot be read, config_error for a bad regex.
[[nodiscard]] TDBG_DECL diff_result diff_runs(const trial& a, const trial& b, const diff_options& options = {});

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/diff/impl/diff.ipp"
#endif
