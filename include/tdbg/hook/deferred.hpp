#pragma once
/// \file
/// Deferred saves: what a hook saves of a tensor whose values are computed elsewhere (on a
/// GPU) and arrive later. The training thread never waits for them; a writer thread does.
///
///     if (auto plan = hook.plan_save(name, dtype, shape)) {    // what this step saves of it
///         // launch the reductions of plan->reductions on the device, a non-blocking copy
///         // of the results (and of the value when plan->raw) into host memory, record an event
///         hook.save_deferred(name, dtype, shape, *plan, [=] {
///             event.synchronize();                            // on a writer thread
///             return tdbg::deferred_values{...};              // read from the host memory
///         });
///     }
///
/// The function given to save_deferred runs once, on one of the writer's threads, when the
/// writer reaches the first record it delivers; the step's files are published only after
/// every deferred value of the step has arrived, in the order the training thread saved them
/// (docs/reliability.md). A function that throws (a device error) is a write error: the hook's
/// policy applies (hook_options::on_write_error), training is not taken down.
///
/// tdbg's libtorch integration is one user (tdbg/integrations/libtorch.hpp); a trainer with
/// its own CUDA arrays uses the same two calls with its own event.

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg {

/// What a hook saves of one tensor at the current step (hook::plan_save).
struct save_plan {
    /// Its reductions, each once, in the order smdebug writes them.
    std::vector<reduction> reductions;
    /// The value itself (a raw tensor record).
    bool raw = false;
    /// A TensorBoard histogram of the value (the hook exports to TensorBoard).
    bool histogram = false;

    /// True when nothing is saved but, possibly, the tensor's shape.
    [[nodiscard]] bool empty() const noexcept { return reductions.empty() && !raw && !histogram; }

    friend bool operator==(const save_plan& a, const save_plan& b) noexcept {
        return a.reductions == b.reductions && a.raw == b.raw && a.histogram == b.histogram;
    }
    friend bool operator!=(const save_plan& a, const save_plan& b) noexcept { return !(a == b); }
};

/// A TensorBoard histogram binned elsewhere: counts over the edges of
/// `tdbg::histogram_edges()` (numpy.histogram's rule: [edge_i, edge_i+1), the last bucket
/// closed; values outside the edges and NaN not counted) and the moments of all the values.
struct histogram_counts {
    /// One per bucket: histogram_edges().size() - 1 of them.
    std::vector<double> counts;
    double min = 0; ///< NaN when a value was NaN
    double max = 0; ///< NaN when a value was NaN
    double sum = 0;
    double sum_squares = 0;
    double num = 0; ///< the number of values
};

/// The bucket edges of TensorBoard histograms as smdebug makes them (TensorFlow's default:
/// 0 and ±1e-12 * 1.1^k up to 1e20, as smdebug's _get_default_bins computes them), ascending.
[[nodiscard]] inline const std::vector<double>& histogram_edges() {
    static const std::vector<double> edges = [] {
        std::vector<double> positive;
        for (double v = 1e-12; v < 1e20; v *= 1.1) {
            positive.push_back(v);
        }
        std::vector<double> out;
        out.reserve(positive.size() * 2 + 1);
        for (auto it = positive.rbegin(); it != positive.rend(); ++it) {
            out.push_back(-*it);
        }
        out.push_back(0.0);
        out.insert(out.end(), positive.begin(), positive.end());
        return out;
    }();
    return edges;
}

/// What a deferred save delivers once its values have arrived, for the plan it was given.
struct deferred_values {
    /// The value, when the plan saves it: the dtype and shape announced to save_deferred.
    /// nullopt writes no raw record (a value dropped because host memory was full).
    std::optional<tensor_value> raw;
    /// One per plan reduction, in the plan's order; nullopt where the tensor's dtype has no
    /// such reduction (nothing is written for it).
    std::vector<std::optional<tensor_value>> reductions;
    /// The histogram, when the plan has one; nullopt writes none.
    std::optional<histogram_counts> histogram;
};

/// Runs once on a writer thread: waits for the values (a device event), then returns them;
/// throws when they will never arrive.
using deferred_source = std::function<deferred_values()>;

} // namespace tdbg
