#pragma once
/// \file
/// The definitions of tdbg/diff/diff.hpp (inline when header-only, compiled
/// once by tdbg/src/whole_runs.hpp under TDBG_SEPARATE_COMPILATION).

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/text.hpp"
#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/diff/diff.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg {
namespace detail {

/// The largest differences over one step's elements, and the element furthest out of tolerance.
class diff_accumulator {
public:
    diff_accumulator(double rtol, double atol) : rtol_(rtol), atol_(atol) {}

    /// Compares one real element of run A (`a`) with run B's (`b`).
    void add(std::size_t i, double a, double b) {
        double abs = 0;
        double rel = 0;
        const bool ok = close(a, b, abs, rel);
        record(i, abs, rel, ok);
    }

    /// Compares a complex element by its real and imaginary parts.
    template <class C>
    void add_complex(std::size_t i, const C& a, const C& b) {
        double abs_re = 0;
        double rel_re = 0;
        double abs_im = 0;
        double rel_im = 0;
        const bool ok_re = close(static_cast<double>(a.real()), static_cast<double>(b.real()), abs_re, rel_re);
        const bool ok_im = close(static_cast<double>(a.imag()), static_cast<double>(b.imag()), abs_im, rel_im);
        record(i, std::max(abs_re, abs_im), std::max(rel_re, rel_im), ok_re && ok_im);
    }

    /// Compares one string element: equal or not.
    void add_string(std::size_t i, std::string_view a, std::string_view b) {
        const bool ok = a == b;
        const double d = ok ? 0.0 : std::numeric_limits<double>::infinity();
        record(i, d, d, ok);
    }

    [[nodiscard]] std::size_t compared() const noexcept { return compared_; }
    [[nodiscard]] std::size_t mismatched() const noexcept { return mismatched_; }
    [[nodiscard]] double max_abs() const noexcept { return max_abs_; }
    [[nodiscard]] double max_rel() const noexcept { return max_rel_; }
    [[nodiscard]] std::optional<std::size_t> worst() const noexcept { return worst_; }

private:
    // numpy.isclose(b, a, rtol, atol, equal_nan=True) with A as the reference.
    bool close(double a, double b, double& abs, double& rel) const noexcept {
        constexpr double inf = std::numeric_limits<double>::infinity();
        if (std::isnan(a) || std::isnan(b)) {
            const bool both = std::isnan(a) && std::isnan(b);
            abs = rel = both ? 0.0 : inf;
            return both;
        }
        if (std::isinf(a) || std::isinf(b)) {
            const bool same = a == b;
            abs = rel = same ? 0.0 : inf;
            return same;
        }
        abs = std::fabs(b - a);
        rel = a != 0.0 ? abs / std::fabs(a) : (abs == 0.0 ? 0.0 : inf);
        return abs <= atol_ + rtol_ * std::fabs(a);
    }

    void record(std::size_t i, double abs, double rel, bool ok) noexcept {
        ++compared_;
        max_abs_ = std::max(max_abs_, abs);
        max_rel_ = std::max(max_rel_, rel);
        if (!ok) {
            ++mismatched_;
            if (!worst_ || abs > worst_abs_) {
                worst_ = i;
                worst_abs_ = abs;
            }
        }
    }

    double rtol_;
    double atol_;
    std::size_t compared_ = 0;
    std::size_t mismatched_ = 0;
    double max_abs_ = 0;
    double max_rel_ = 0;
    std::optional<std::size_t> worst_;
    double worst_abs_ = 0;
};


/// The index per dimension of element `flat` (C order) of `shape`.
inline std::vector<std::size_t> unravel_index(std::size_t flat, const tensor_value::shape_type& shape) {
    std::vector<std::size_t> out(shape.size(), 0);
    for (std::size_t d = shape.size(); d-- > 0;) {
        if (shape[d] != 0) {
            out[d] = flat % shape[d];
            flat /= shape[d];
        }
    }
    return out;
}

/// Compares two values element by element into `out`; returns false when they diverge.
inline bool diff_values(const tensor_value& a, const tensor_value& b, const diff_options& options, diff_divergence& out,
                        std::size_t& values_compared) {
    if (a.type() != b.type()) {
        out.reason = fmt::format("dtype {} in run A, {} in run B", dtype_name(a.type()), dtype_name(b.type()));
        return false;
    }
    if (a.shape() != b.shape()) {
        out.reason =
            fmt::format("shape {} in run A, {} in run B", shape_text(a.shape()), shape_text(b.shape()));
        return false;
    }
    diff_accumulator acc(options.rtol, options.atol);
    visit_dtype(a.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            // Read in place, side by side (the shapes are the same).
            const string_view_list x = a.string_views();
            const string_view_list y = b.string_views();
            auto at_y = y.begin();
            std::size_t i = 0;
            for (auto at_x = x.begin(); at_x != x.end() && at_y != y.end(); ++at_x, ++at_y, ++i) {
                acc.add_string(i, *at_x, *at_y);
            }
        } else {
            const T* x = a.data_as<T>();
            const T* y = b.data_as<T>();
            for (std::size_t i = 0; i < a.size(); ++i) {
                if constexpr (is_complex_element_v<T>) {
                    acc.add_complex(i, x[i], y[i]);
                } else {
                    acc.add(i, as_double(x[i]), as_double(y[i]));
                }
            }
        }
    });
    values_compared += acc.compared();
    out.max_abs_diff = acc.max_abs();
    out.max_rel_diff = acc.max_rel();
    out.mismatched = acc.mismatched();
    if (const auto worst = acc.worst()) {
        out.flat_index = *worst;
        out.index = unravel_index(*worst, a.shape());
        out.reason = fmt::format("{} of {} values differ", acc.mismatched(), acc.compared());
        return false;
    }
    return true;
}

/// Runs `read` (a value or a reduction of run `which`), naming the run, tensor and step in its errors.
template <class F>
tensor_value read_for_diff(const trial& t, const char* which, const std::string& name, const tensor_step_info& e,
                           F&& read) {
    try {
        return read();
    } catch (const std::exception& ex) {
        throw error(fmt::format("run {} ({}): tensor '{}' at step {} ({} step {}, {}): {}", which, t.path(), name,
                                e.step, mode_name(e.step_mode), e.mode_step, e.worker, ex.what()));
    }
}

/// The entries of `t` to compare, keyed by (mode, mode step, worker).
using diff_key = std::tuple<int, std::int64_t, std::string>;

inline diff_key key_of(const tensor_step_info& e) { return {static_cast<int>(e.step_mode), e.mode_step, e.worker}; }

/// Orders divergences: step, then mode, tensor and worker.
inline bool diverges_earlier(const diff_divergence& x, const diff_divergence& y) {
    return std::tie(x.step, x.step_mode, x.mode_step, x.tensor, x.worker) <
           std::tie(y.step, y.step_mode, y.mode_step, y.tensor, y.worker);
}

/// What diff_runs counts beside the result: the steps compared, and the tensor steps both runs hold.
struct diff_tally {
    /// (mode, mode step) of every step at which something was compared.
    std::set<std::pair<int, std::int64_t>> steps;
    /// Tensor steps (tensor, step, worker) held by both runs, compared or skipped.
    std::size_t in_both = 0;
};

/// One tensor of both runs, compared step by step, one value at a time.
class tensor_diff {
public:
    tensor_diff(const trial& a, const trial& b, std::string name_a, std::string name_b, const diff_options& options,
                diff_result& result, diff_tally& tally)
        : a_(a), b_(b), name_a_(std::move(name_a)), name_b_(std::move(name_b)), options_(options), result_(result),
          tally_(tally) {}

    /// Compares every step; returns the tensor's first divergence, if any.
    std::optional<diff_divergence> run() {
        const tdbg::tensor ta = a_.tensor(name_a_);
        const tdbg::tensor tb = b_.tensor(name_b_);
        std::map<diff_key, tensor_step_info> in_b;
        for (auto& e : tb.entries(mode::global)) {
            if (wanted(e)) {
                auto key = key_of(e);
                in_b.emplace(std::move(key), std::move(e));
            }
        }
        for (const auto& ea : ta.entries(mode::global)) {
            if (!wanted(ea)) {
                continue;
            }
            const auto found = in_b.find(key_of(ea));
            if (found == in_b.end()) {
                missing(ea, "only in run A");
                continue;
            }
            ++tally_.in_both;
            compare(ta, tb, ea, found->second);
            in_b.erase(found);
        }
        for (const auto& entry : in_b) {
            missing(entry.second, "only in run B");
        }
        if (first_) {
            first_->diverging_steps = diverging_;
        }
        return first_;
    }

private:
    [[nodiscard]] bool wanted(const tensor_step_info& e) const {
        return !options_.only_mode || e.step_mode == *options_.only_mode;
    }

    [[nodiscard]] diff_divergence at(const tensor_step_info& e) const {
        diff_divergence d;
        d.tensor = name_a_;
        d.tensor_b = name_b_;
        d.step = e.step;
        d.step_mode = e.step_mode;
        d.mode_step = e.mode_step;
        d.worker = e.worker;
        return d;
    }

    void diverged(diff_divergence d) {
        ++diverging_;
        if (!first_ || diverges_earlier(d, *first_)) {
            first_ = std::move(d);
        }
    }

    void missing(const tensor_step_info& e, const char* reason) {
        if (options_.ignore_missing) {
            return;
        }
        diff_divergence d = at(e);
        d.reason = fmt::format("{} at this step and worker", reason);
        diverged(std::move(d));
    }

    void compare(const tdbg::tensor& ta, const tdbg::tensor& tb, const tensor_step_info& ea,
                 const tensor_step_info& eb) {
        diff_divergence d = at(ea);
        if (ea.has_value && eb.has_value) {
            tally_.steps.emplace(static_cast<int>(ea.step_mode), ea.mode_step);
            const tensor_value va =
                read_for_diff(a_, "A", name_a_, ea, [&] { return ta.value(ea.step, mode::global, ea.worker); });
            const tensor_value vb =
                read_for_diff(b_, "B", name_b_, eb, [&] { return tb.value(eb.step, mode::global, eb.worker); });
            if (!diff_values(va, vb, options_, d, result_.values_compared)) {
                diverged(std::move(d));
            }
            return;
        }
        // A value in one run only is compared by reductions when asked; where neither run
        // holds one, the reductions stored in both always are.
        if (ea.has_value != eb.has_value && !options_.compare_reductions) {
            d.reason = fmt::format("a value in run {} only (compare_reductions, --reductions, compares reductions)",
                                   ea.has_value ? "A" : "B");
            diverged(std::move(d));
            return;
        }
        compare_reductions(ta, tb, ea, eb, std::move(d));
    }

    // The reductions stored where a raw value is missing (on both sides: those stored in both).
    void compare_reductions(const tdbg::tensor& ta, const tdbg::tensor& tb, const tensor_step_info& ea,
                            const tensor_step_info& eb, diff_divergence d) {
        std::vector<reduction> wanted;
        if (!ea.has_value && !eb.has_value) {
            for (const reduction r : ea.stored_reductions) {
                if (std::find(eb.stored_reductions.begin(), eb.stored_reductions.end(), r) !=
                    eb.stored_reductions.end()) {
                    wanted.push_back(r);
                }
            }
        } else {
            wanted = ea.has_value ? eb.stored_reductions : ea.stored_reductions;
        }
        if (wanted.empty()) {
            if (ea.has_value != eb.has_value) {
                d.reason = fmt::format("a value in run {} only, and no reduction in run {}", ea.has_value ? "A" : "B",
                                       ea.has_value ? "B" : "A");
                diverged(std::move(d));
            } else {
                ++result_.skipped;
            }
            return;
        }
        tally_.steps.emplace(static_cast<int>(ea.step_mode), ea.mode_step);
        if (!ea.has_value && !eb.has_value) {
            ++result_.reduction_only_steps;
        }
        std::optional<diff_divergence> worst;
        for (const reduction r : wanted) {
            const tensor_value va = read_for_diff(
                a_, "A", name_a_, ea, [&] { return ta.reduction_value(ea.step, r, mode::global, ea.worker); });
            const tensor_value vb = read_for_diff(
                b_, "B", name_b_, eb, [&] { return tb.reduction_value(eb.step, r, mode::global, eb.worker); });
            diff_divergence candidate = d;
            candidate.compared_reduction = r;
            std::size_t compared = 0;
            const bool same = diff_values(va, vb, options_, candidate, compared);
            result_.values_compared += compared;
            result_.reductions_compared += compared;
            if (!same) {
                candidate.reason = fmt::format("reduction {} differs", reduction_name(r));
                const bool larger = !worst || !(candidate.max_abs_diff <= worst->max_abs_diff);
                if (larger) {
                    worst = std::move(candidate);
                }
            }
        }
        if (worst) {
            diverged(std::move(*worst));
        }
    }

    const trial& a_;
    const trial& b_;
    std::string name_a_;
    std::string name_b_;
    const diff_options& options_;
    diff_result& result_;
    diff_tally& tally_;
    std::optional<diff_divergence> first_;
    std::size_t diverging_ = 0;
};

/// Up to `limit` names, quoted and comma-separated, "..." after them when there are more.
inline std::string diff_name_list(const std::vector<std::string>& names, std::size_t limit = 5) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i) {
        out += fmt::format("{}'{}'", i == 0 ? "" : ", ", names[i]);
    }
    if (names.size() > limit) {
        out += fmt::format(" and {} more", names.size() - limit);
    }
    return out;
}

/// Why a diff compared nothing (see diff_result::nothing_compared).
inline std::string why_nothing_compared(const trial& a, const trial& b, const diff_options& options,
                                        const std::vector<std::string>& selected, const std::vector<std::string>& compared,
                                        const diff_result& result, const diff_tally& tally) {
    const std::vector<std::string> names_a = a.tensor_names();
    if (names_a.empty()) {
        return fmt::format("run A ({}) holds no tensor", a.path());
    }
    if (selected.empty()) {
        std::string out = fmt::format("the tensor regex '{}' matches none of the {} tensors of run A",
                                      options.tensor_regex.value_or(""), names_a.size());
        return out + fmt::format("; the nearest names: {}",
                                 diff_name_list(tdbg::detail::nearest_names(
                                     options.tensor_regex.value_or(""), names_a, 3, std::numeric_limits<std::size_t>::max(),
                                     [](std::string_view x, std::string_view y) { return tdbg::detail::edit_distance(x, y); })));
    }
    if (compared.empty()) {
        return fmt::format("no tensor of run A{} is in run B ({} holds {} tensors); in run A only: {}",
                           options.tensor_regex ? fmt::format(" matching '{}'", *options.tensor_regex) : "",
                           b.path(), b.tensor_names().size(), diff_name_list(result.only_in_a));
    }
    const std::string which = fmt::format("the {} tensors in both runs ({})", compared.size(), diff_name_list(compared));
    if (tally.in_both == 0) {
        return fmt::format("{} have no step in common{}", which,
                           options.only_mode ? fmt::format(" in mode {}", mode_name(*options.only_mode)) : "");
    }
    if (result.skipped == tally.in_both) {
        return fmt::format("none of {} holds a value in both runs at any step: no raw value saved in both, and "
                           "no stored reduction saved in both",
                           which);
    }
    return fmt::format("{} hold no element at the steps both runs hold", which);
}

} // namespace detail

TDBG_DECL std::string diff_counterpart(const std::string& name_in_a, const diff_options& options) {
    for (const auto& [from, to] : options.name_map) {
        if (from == name_in_a) {
            return to;
        }
    }
    const std::pair<std::string, std::string>* best = nullptr;
    for (const auto& entry : options.prefix_map) {
        if (name_in_a.compare(0, entry.first.size(), entry.first) == 0 &&
            (best == nullptr || entry.first.size() > best->first.size())) {
            best = &entry;
        }
    }
    if (best == nullptr) {
        return name_in_a;
    }
    return best->second + name_in_a.substr(best->first.size());
}

TDBG_DECL diff_result diff_runs(const trial& a, const trial& b, const diff_options& options) {
    if (!(options.rtol >= 0) || !(options.atol >= 0)) {
        throw config_error(fmt::format("diff: tolerances must be non-negative numbers (rtol {}, atol {})", options.rtol,
                                       options.atol));
    }
    std::optional<detail::pattern> regex;
    if (options.tensor_regex) {
        regex.emplace(*options.tensor_regex, "diff's tensor regex");
    }
    const auto selected = [&](const std::string& name) { return !regex || regex->search(name); };

    diff_result result;
    result.missing_counts = !options.ignore_missing;
    detail::diff_tally tally;
    std::set<std::string> matched_in_b;
    std::vector<std::string> selected_in_a;
    std::vector<std::string> compared;
    for (const std::string& name : a.tensor_names()) {
        if (!selected(name)) {
            continue;
        }
        selected_in_a.push_back(name);
        std::string name_b = diff_counterpart(name, options);
        if (!b.has_tensor(name_b)) {
            result.only_in_a.push_back(name);
            continue;
        }
        matched_in_b.insert(name_b);
        compared.push_back(name);
        ++result.tensors_compared;
        if (auto first = detail::tensor_diff(a, b, name, std::move(name_b), options, result, tally).run()) {
            result.divergences.push_back(std::move(*first));
        }
    }
    for (const std::string& name : b.tensor_names()) {
        if (matched_in_b.count(name) == 0 && selected(name)) {
            result.only_in_b.push_back(name);
        }
    }
    result.steps_compared = tally.steps.size();
    std::stable_sort(result.divergences.begin(), result.divergences.end(), detail::diverges_earlier);
    // Nothing compared and nothing found: no agreement either (a tensor of one run only, where
    // it counts, is a difference found).
    const bool missing_found = result.missing_counts && (!result.only_in_a.empty() || !result.only_in_b.empty());
    if (result.values_compared == 0 && result.divergences.empty() && !missing_found) {
        result.nothing_compared =
            detail::why_nothing_compared(a, b, options, selected_in_a, compared, result, tally);
    }
    return result;
}

} // namespace tdbg
