#pragma once
/// \file
/// Definitions of tdbg/rules/merge.hpp.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/merge.hpp"

namespace tdbg::rules {

namespace detail {

// A list of steps as step_list_json writes it: steps, and [first, last] for a long run.
inline step_set step_set_from_json(const format::json_value& list) {
    step_set out;
    for (const format::json_value& item : list.items()) {
        if (item.is_array()) {
            out.add(item.at(std::size_t{0}).as_int64(), item.at(std::size_t{1}).as_int64());
        } else {
            out.add(item.as_int64());
        }
    }
    return out;
}

inline std::vector<std::int64_t> steps_from_json(const format::json_value& list) {
    std::vector<std::int64_t> out;
    out.reserve(list.size());
    for (const format::json_value& item : list.items()) {
        out.push_back(item.as_int64());
    }
    return out;
}

inline std::optional<std::int64_t> optional_step(const format::json_value* value) {
    return value == nullptr || value->is_null() ? std::nullopt : std::optional<std::int64_t>(value->as_int64());
}

inline evaluation_end end_from_name(const std::string& name) {
    for (const evaluation_end e :
         {evaluation_end::end_step, evaluation_end::no_more_data, evaluation_end::condition_met,
          evaluation_end::interrupted, evaluation_end::end_of_rule}) {
        if (evaluation_end_name(e) == name) {
            return e;
        }
    }
    throw config_error(fmt::format("unknown \"end\" '{}'", name));
}

// `a` and `b` sorted, merged into one sorted list.
inline std::vector<std::int64_t> merged_steps(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    std::vector<std::int64_t> out;
    out.reserve(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

// "steps 62-112" (or "steps 151-" for a part that went to the run's end): the steps a part evaluated.
inline std::string range_name(const evaluation_result& r) {
    return fmt::format("steps {}-{}", r.first_step.value_or(0),
                       r.next_step ? fmt::format("{}", *r.next_step - 1) : std::string());
}

} // namespace detail

TDBG_DECL evaluation_result result_from_json(const format::json_value& j, std::string_view origin) {
    evaluation_result r;
    try {
        r.rule = j.at("rule").as_string();
        r.configuration_name = j.at("configuration_name").as_string();
        for (const format::json_member& p : j.at("params").members()) {
            r.params[p.key] = p.value.is_string() ? p.value.as_string() : format::dump_json(p.value);
        }
        if (const format::json_value* resolved = j.find("resolved_params")) {
            r.resolved_params = *resolved;
        }
        r.triggered_steps = detail::steps_from_json(j.at("triggered_steps"));
        r.not_triggered_steps = detail::steps_from_json(j.at("not_triggered_steps"));
        for (const format::json_member& skipped : j.at("skipped_steps").members()) {
            r.skipped_steps[skipped.key] = detail::step_set_from_json(skipped.value);
        }
        r.end = detail::end_from_name(j.at("end").as_string());
        if (const format::json_value* error = j.find("error")) {
            r.error = error->as_string();
        }
        if (const format::json_value* reasons = j.find("trigger_reasons")) {
            for (const format::json_value& item : reasons->items()) {
                r.trigger_reasons[item.at("step").as_int64()] = item.at("reason").as_string();
            }
        }
        if (const format::json_value* reason = j.find("nothing_evaluated_reason")) {
            r.nothing_evaluated_reason = reason->as_string();
        }
        const format::json_value& coverage = j.at("coverage");
        if (const format::json_value* compared = coverage.find("compared")) {
            const format::json_value* text = coverage.find("compared_text");
            r.comparisons = comparison_coverage{compared->as_uint64(), text != nullptr ? text->as_string() : ""};
        }
        r.unsaved_steps = detail::step_set_from_json(coverage.at("unsaved_steps"));
        r.first_step = detail::optional_step(coverage.find("first_step"));
        r.next_step = detail::optional_step(coverage.find("next_step"));
        if (const format::json_value* tensors = coverage.find("tensor_coverage")) {
            r.tensor_coverage = tensors->as_string();
        }
    } catch (const tdbg::error& e) {
        throw format_error(fmt::format("{}: not a result of tdbg rules --json: {}", origin, e.what()),
                           std::string(origin), 0);
    }
    return r;
}

TDBG_DECL rules_part read_rules_part(const format::json_value& doc, std::string origin) {
    rules_part part;
    try {
        if (doc.at("format").as_string() != "smdebug-rules/1") {
            throw config_error(fmt::format("its format is '{}'", doc.at("format").as_string()));
        }
        part.trial_name = doc.at("trial_name").as_string();
        const format::json_value& invoke = doc.at("invoke");
        part.invoked.start_step = detail::optional_step(invoke.find("start_step"));
        part.invoked.end_step = detail::optional_step(invoke.find("end_step"));
    } catch (const tdbg::error& e) {
        throw format_error(
            fmt::format("{}: not a document of tdbg rules --json (\"smdebug-rules/1\"): {}", origin, e.what()), origin,
            0);
    }
    for (const format::json_value& result : doc.at("results").items()) {
        part.results.push_back(result_from_json(result, origin));
    }
    part.origin = std::move(origin);
    return part;
}

TDBG_DECL evaluation_result merge_results(std::vector<evaluation_result> parts, step_dependence dependence) {
    if (parts.empty()) {
        throw config_error("merge_results: no evaluation to merge");
    }
    std::stable_sort(parts.begin(), parts.end(), [](const evaluation_result& a, const evaluation_result& b) {
        return a.first_step.value_or(-1) < b.first_step.value_or(-1);
    });
    const bool carried = dependence == step_dependence::carried_state;
    if (!carried && parts.front().comparisons) {
        parts.front().comparisons->text =
            fmt::format("{}: {}", detail::range_name(parts.front()), parts.front().comparisons->text);
    }
    evaluation_result out = std::move(parts.front());
    for (std::size_t i = 1; i < parts.size(); ++i) {
        evaluation_result& p = parts[i];
        if (p.rule != out.rule || p.display_name() != out.display_name() || p.resolved_params != out.resolved_params) {
            throw config_error(fmt::format("cannot merge an evaluation of {} ({}) with one of {} ({}): not one rule "
                                           "with one configuration",
                                           p.display_name(), p.rule, out.display_name(), out.rule));
        }
        // The steps between a range's last step and the next range's first were never saved: the
        // range ended for want of steps (it cannot know that later ranges have some), where one
        // process records them as a run of unsaved steps.
        if (out.error.empty() && out.next_step && p.first_step && *out.next_step < *p.first_step &&
            (out.end == evaluation_end::no_more_data || out.end == evaluation_end::end_step)) {
            out.skipped_steps[std::string(skip_reason::step_unavailable)].add(*out.next_step, *p.first_step - 1);
            out.unsaved_steps.add(*out.next_step, *p.first_step - 1);
        }
        out.triggered_steps = detail::merged_steps(out.triggered_steps, p.triggered_steps);
        out.not_triggered_steps = detail::merged_steps(out.not_triggered_steps, p.not_triggered_steps);
        out.trigger_reasons.insert(p.trigger_reasons.begin(), p.trigger_reasons.end());
        for (const auto& [reason, steps] : p.skipped_steps) {
            out.skipped_steps[reason].add(steps);
        }
        out.unsaved_steps.add(p.unsaved_steps);
        if (p.comparisons) {
            // Added. A rule that carries state counts its text from the run's first step: the last
            // range's is the whole run's. Another's says what each range compared.
            comparison_coverage& c = out.comparisons ? *out.comparisons : out.comparisons.emplace();
            c.compared += p.comparisons->compared;
            if (carried) {
                c.text = p.comparisons->text;
            } else {
                c.text +=
                    fmt::format("{}{}: {}", c.text.empty() ? "" : "; ", detail::range_name(p), p.comparisons->text);
            }
        }
        if (out.tensor_coverage.empty()) {
            out.tensor_coverage = std::move(p.tensor_coverage);
        }
        if (!p.error.empty()) {
            out.error = out.error.empty() ? std::move(p.error) : out.error + "; " + p.error;
        }
        if (out.nothing_evaluated_reason.empty()) {
            out.nothing_evaluated_reason = std::move(p.nothing_evaluated_reason);
        }
        if (!out.first_step) {
            out.first_step = p.first_step;
        }
        // How the whole ended: as its last range did (an interruption anywhere is kept).
        if (out.end != evaluation_end::interrupted) {
            out.end = p.end;
        }
        out.next_step = p.next_step ? p.next_step : out.next_step;
    }
    // A rule that evaluated steps in some range has evaluated the run: a range with nothing says nothing.
    if (out.evaluated_steps() > 0) {
        out.nothing_evaluated_reason.clear();
    }
    return out;
}

TDBG_DECL rules_part merge_parts(std::vector<rules_part> parts,
                                 const std::function<step_dependence(std::string_view rule)>& dependence_of) {
    if (parts.empty()) {
        throw config_error("no part to merge");
    }
    std::stable_sort(parts.begin(), parts.end(), [](const rules_part& a, const rules_part& b) {
        return a.invoked.start_step.value_or(0) < b.invoked.start_step.value_or(0);
    });
    rules_part out;
    out.origin = parts.front().origin;
    out.trial_name = parts.front().trial_name;
    out.invoked.start_step = parts.front().invoked.start_step;
    out.invoked.end_step = parts.back().invoked.end_step;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const rules_part& p = parts[i];
        if (p.trial_name != out.trial_name || p.results.size() != parts.front().results.size()) {
            throw config_error(fmt::format("{} and {} are not parts of one evaluation: trial {} with {} rules, "
                                           "trial {} with {}",
                                           parts.front().origin, p.origin, out.trial_name, parts.front().results.size(),
                                           p.trial_name, p.results.size()));
        }
        if (i > 0) {
            const rules_part& before = parts[i - 1];
            if (!before.invoked.end_step || before.invoked.end_step > p.invoked.start_step.value_or(0)) {
                throw config_error(fmt::format("{} (steps {} to {}) and {} (from step {}) overlap: each step must be "
                                               "evaluated by one part (--start-step, --end-step)",
                                               before.origin, before.invoked.start_step.value_or(0),
                                               before.invoked.end_step ? fmt::format("{}", *before.invoked.end_step - 1)
                                                                       : std::string("the end"),
                                               p.origin, p.invoked.start_step.value_or(0)));
            }
        }
    }
    for (std::size_t rule = 0; rule < parts.front().results.size(); ++rule) {
        std::vector<evaluation_result> each;
        each.reserve(parts.size());
        for (rules_part& p : parts) {
            each.push_back(std::move(p.results[rule]));
        }
        const step_dependence dependence =
            dependence_of ? dependence_of(each.front().rule) : step_dependence::carried_state;
        out.results.push_back(merge_results(std::move(each), dependence));
    }
    return out;
}

} // namespace tdbg::rules
