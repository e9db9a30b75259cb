#pragma once
/// \file
/// Definitions of tdbg/rules/evaluation.hpp.

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::rules {

TDBG_DECL void step_set::add(std::int64_t first, std::int64_t last) {
    if (last < first) {
        throw usage_error(fmt::format("step_set::add: the run {}..{} ends before it begins", first, last));
    }
    // The first run that ends at or after first - 1 (it may touch or overlap the new one).
    auto it = std::lower_bound(runs_.begin(), runs_.end(), first, [](const run& r, std::int64_t s) {
        return r.last < s && r.last + 1 < s; // no overflow: r.last < s <= max
    });
    if (it == runs_.end() || (it->first > last && it->first - 1 > last)) {
        runs_.insert(it, run{first, last}); // apart from every run (the append of a walk lands here)
        size_ += run{first, last}.size();
        return;
    }
    // Merge every run that overlaps or touches first..last into *it.
    size_ -= it->size();
    it->first = std::min(it->first, first);
    it->last = std::max(it->last, last);
    auto next = it + 1;
    while (next != runs_.end() && (next->first <= it->last || next->first - 1 == it->last)) {
        size_ -= next->size();
        it->last = std::max(it->last, next->last);
        ++next;
    }
    runs_.erase(it + 1, next);
    size_ += it->size();
}

TDBG_DECL bool step_set::contains(std::int64_t step) const noexcept {
    auto it = std::lower_bound(runs_.begin(), runs_.end(), step, [](const run& r, std::int64_t s) { return r.last < s; });
    return it != runs_.end() && it->first <= step;
}

TDBG_DECL std::vector<std::int64_t> step_set::steps(std::uint64_t limit) const {
    if (size_ > limit) {
        throw usage_error(fmt::format("a set of {} steps ({}) is too many to list one by one (limit {})", size_,
                                      format_steps(*this, 4), limit));
    }
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(size_));
    for (const run& r : runs_) {
        for (std::int64_t s = r.first;; ++s) {
            out.push_back(s);
            if (s == r.last) {
                break;
            }
        }
    }
    return out;
}

TDBG_DECL std::ostream& operator<<(std::ostream& out, const step_set& steps) {
    return out << "{" << format_steps(steps, 100) << "}";
}

TDBG_DECL step_set evaluation_result::all_skipped_steps() const {
    step_set out;
    for (const auto& item : skipped_steps) {
        out.add(item.second);
    }
    return out;
}

namespace detail {

// How many steps `a` and `b` have in common.
inline std::uint64_t common_steps(const step_set& a, const step_set& b) noexcept {
    std::uint64_t out = 0;
    auto i = a.runs().begin();
    auto j = b.runs().begin();
    while (i != a.runs().end() && j != b.runs().end()) {
        const std::int64_t first = std::max(i->first, j->first);
        const std::int64_t last = std::min(i->last, j->last);
        if (first <= last) {
            out += step_set::run{first, last}.size();
        }
        if (i->last < j->last) {
            ++i;
        } else {
            ++j;
        }
    }
    return out;
}

TDBG_DECL format::json_value step_list_json(const step_set& steps) {
    format::json_value list = format::json_value::array();
    for (const step_set::run& run : steps.runs()) {
        if (run.size() > json_step_run_limit) {
            list.push_back(format::json_value::array_of(std::vector<std::int64_t>{run.first, run.last}));
            continue;
        }
        for (std::int64_t s = run.first;; ++s) {
            list.push_back(s);
            if (s == run.last) {
                break;
            }
        }
    }
    return list;
}

} // namespace detail

TDBG_DECL std::vector<std::pair<std::string, std::uint64_t>> counted_skips(const evaluation_result& r) {
    // Most skipped first, ties in the order of their reasons: each goes after those skipped as
    // often (a handful of reasons; no sort of pairs to compile into every rule file).
    std::vector<std::pair<std::string, std::uint64_t>> skips;
    for (const auto& [reason, steps] : r.skipped_steps) {
        const std::uint64_t n = steps.size() - detail::common_steps(steps, r.unsaved_steps);
        if (n > 0) {
            const auto at = std::find_if(skips.begin(), skips.end(), [n](const auto& s) { return s.second < n; });
            skips.emplace(at, reason, n);
        }
    }
    return skips;
}

TDBG_DECL std::string describe_coverage(const evaluation_result& r) {
    const std::vector<std::pair<std::string, std::uint64_t>> skips = counted_skips(r);
    std::uint64_t skipped = 0;
    for (const auto& item : skips) {
        skipped += item.second;
    }
    const std::uint64_t evaluated = r.evaluated_steps();
    std::string out = fmt::format("evaluated {} of {} step{}", evaluated, evaluated + skipped,
                                  evaluated + skipped == 1 ? "" : "s");
    if (skipped > 0) {
        out += fmt::format("; {} skipped:", skipped);
        for (std::size_t i = 0; i < skips.size(); ++i) {
            out += fmt::format("{} {} {}", i == 0 ? "" : ",", skips[i].second,
                               tdbg::detail::terminal_safe(skips[i].first));
        }
    }
    if (r.comparisons && !r.comparisons->text.empty()) {
        out += "; " + tdbg::detail::terminal_safe(r.comparisons->text);
    }
    if (!r.tensor_coverage.empty()) {
        out += "; " + r.tensor_coverage;
    }
    return out;
}

TDBG_DECL std::vector<std::string> trigger_reason_lines(const evaluation_result& r, std::size_t limit) {
    std::vector<std::string> out;
    std::size_t left = 0;
    for (const auto& [step, reason] : r.trigger_reasons) {
        if (out.size() < limit) {
            out.push_back(fmt::format("step {}: {}", step, tdbg::detail::terminal_safe(reason)));
        } else {
            ++left;
        }
    }
    if (left > 0) {
        out.push_back(fmt::format("... and {} more", left));
    }
    return out;
}

TDBG_DECL std::string format_steps(const step_set& steps, std::size_t limit) {
    std::string out;
    std::size_t items = 0;
    for (const step_set::run& r : steps.runs()) {
        if (items >= limit) {
            out += fmt::format(", ... ({} steps)", steps.size());
            break;
        }
        out += out.empty() ? "" : ", ";
        if (r.first == r.last) {
            out += fmt::format("{}", r.first);
            ++items;
        } else if (r.last == r.first + 1) {
            out += fmt::format("{}, {}", r.first, r.last);
            items += 2;
        } else {
            out += fmt::format("{}-{}", r.first, r.last);
            ++items;
        }
    }
    return out;
}

TDBG_DECL format::json_value to_json(const evaluation_result& r) {
    format::json_value j = format::json_value::object();
    j["rule"] = r.rule;
    j["configuration_name"] = r.display_name();
    // The parameters given, with the value the rule read from each (typed, as in
    // smdebug's documents: "threshold": 0.001, not "0.001"); the string as given
    // when the rule did not read it (an error before it got there).
    j["params"] = format::json_value::object();
    for (const auto& [key, text] : r.params) {
        const format::json_value* resolved = r.resolved_params.find(key);
        j["params"][key] = resolved != nullptr ? *resolved : format::json_value(text);
    }
    j["resolved_params"] = r.resolved_params;
    j["triggered_steps"] = format::json_value::array_of(r.triggered_steps);
    j["not_triggered_steps"] = format::json_value::array_of(r.not_triggered_steps);
    j["skipped_steps"] = format::json_value::object();
    for (const auto& [reason, steps] : r.skipped_steps) {
        j["skipped_steps"][reason] = detail::step_list_json(steps);
    }
    j["status"] = std::string(status_name(r.status()));
    j["end"] = std::string(evaluation_end_name(r.end));
    if (!r.error.empty()) {
        j["error"] = r.error;
    }
    // tdbg's additions: why each step triggered, and how much of the run was evaluated.
    j["trigger_reasons"] = format::json_value::array();
    for (const auto& [step, reason] : r.trigger_reasons) {
        format::json_value item = format::json_value::object();
        item["step"] = step;
        item["reason"] = reason;
        j["trigger_reasons"].push_back(std::move(item));
    }
    std::uint64_t skipped = 0;
    for (const auto& item : r.skipped_steps) {
        skipped += item.second.size() - detail::common_steps(item.second, r.unsaved_steps);
    }
    format::json_value& coverage = j["coverage"];
    coverage = format::json_value::object();
    coverage["evaluated"] = static_cast<std::int64_t>(r.evaluated_steps());
    coverage["skipped"] = static_cast<std::int64_t>(skipped);
    coverage["unsaved"] = static_cast<std::int64_t>(r.unsaved_steps.size());
    if (r.comparisons) {
        coverage["compared"] = static_cast<std::int64_t>(r.comparisons->compared);
        coverage["compared_text"] = r.comparisons->text;
    }
    coverage["text"] = describe_coverage(r);
    // What merging evaluations of parts of a run needs (tdbg/rules/merge.hpp) besides the steps.
    coverage["unsaved_steps"] = detail::step_list_json(r.unsaved_steps);
    coverage["first_step"] = r.first_step ? format::json_value(*r.first_step) : format::json_value();
    coverage["next_step"] = r.next_step ? format::json_value(*r.next_step) : format::json_value();
    if (!r.tensor_coverage.empty()) {
        coverage["tensor_coverage"] = r.tensor_coverage;
    }
    if (r.status() == evaluation_status::nothing_evaluated) {
        j["nothing_evaluated_reason"] = r.nothing_evaluated_reason;
    }
    return j;
}

TDBG_DECL format::json_value rules_document(const std::vector<evaluation_result>& results, const std::string& trial_name,
                                           const invoke_record& invoked) {
    format::json_value j = format::json_value::object();
    j["format"] = "smdebug-rules/1";
    j["producer"] = "tdbg rules";
    j["trial_name"] = trial_name;
    format::json_value& invoke = j["invoke"];
    invoke["start_step"] = invoked.start_step ? format::json_value(*invoked.start_step) : format::json_value();
    invoke["end_step"] = invoked.end_step ? format::json_value(*invoked.end_step) : format::json_value();
    invoke["raise_eval_cond"] = invoked.raise_eval_cond;
    j["results"] = format::json_value::array();
    for (const auto& r : results) {
        j["results"].push_back(to_json(r));
    }
    return j;
}

TDBG_DECL std::string to_text(const evaluation_result& r) {
    // For a person: names and messages from the run or the configuration are printed escaped.
    const auto safe = [](std::string_view text) { return tdbg::detail::terminal_safe(text); };
    std::string out = safe(r.display_name());
    if (r.display_name() != r.rule) {
        out += fmt::format(" ({})", safe(r.rule));
    }
    out += fmt::format(": {}", status_name(r.status()));
    if (!r.params.empty()) {
        out += "  [";
        bool first = true;
        for (const auto& [k, v] : r.params) {
            out.append(first ? "" : ", ").append(safe(k)).append("=").append(safe(v));
            first = false;
        }
        out += "]";
    }
    out += "\n";
    if (!r.error.empty()) {
        out += fmt::format("  error: {}\n", safe(r.error));
    }
    if (!r.triggered_steps.empty()) {
        out += fmt::format("  triggered at steps {}\n", format_steps(r.triggered_steps));
        for (const std::string& line : trigger_reason_lines(r)) {
            out += fmt::format("    {}\n", line);
        }
    }
    if (r.status() == evaluation_status::nothing_evaluated) {
        out += fmt::format("  nothing evaluated: {}\n", safe(r.nothing_evaluated_reason.empty()
                                                                 ? std::string("no step was evaluated")
                                                                 : r.nothing_evaluated_reason));
    }
    if (r.end == evaluation_end::end_of_rule && r.next_step) {
        out += fmt::format("  ended by the rule after step {}: later steps were not evaluated\n", *r.next_step - 1);
    }
    if (r.end == evaluation_end::interrupted) {
        out += r.next_step ? fmt::format("  interrupted before step {}: it and later steps were not evaluated\n",
                                         *r.next_step)
                           : std::string("  interrupted before its first step\n");
    }
    // One line a person reads: what was evaluated, and why the rest was not.
    out += fmt::format("  {}\n", describe_coverage(r));
    return out;
}

} // namespace tdbg::rules
