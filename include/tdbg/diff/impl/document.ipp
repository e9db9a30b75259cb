#pragma once
/// \file
/// The definitions of tdbg/diff/document.hpp (inline when header-only, compiled once by
/// tdbg/src/whole_runs.hpp under TDBG_SEPARATE_COMPILATION).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/diff/document.hpp"

namespace tdbg {
namespace detail {

/// A difference as the document writes it: a number, or null where it is not a finite one.
inline format::json_value diff_number_json(double v) {
    if (std::isfinite(v)) {
        return v;
    }
    return nullptr;
}

/// The members a diverging tensor has wherever the document lists it.
inline format::json_value diff_entry_json(const diff_divergence& d) {
    auto v = format::json_value::object();
    v["tensor"] = d.tensor;
    v["tensor_b"] = d.tensor_b;
    v["step"] = d.step;
    v["mode"] = mode_name(d.step_mode);
    v["mode_step"] = d.mode_step;
    v["worker"] = d.worker;
    v["max_abs_diff"] = diff_number_json(d.max_abs_diff);
    v["max_rel_diff"] = diff_number_json(d.max_rel_diff);
    v["reason"] = d.reason;
    v["reduction"] =
        d.compared_reduction ? format::json_value(reduction_name(*d.compared_reduction)) : format::json_value(nullptr);
    return v;
}

/// The members of one object of a diff document, each checked: every error is a format_error
/// naming the document's origin and the object (`where`: "the document", "tensors[1]").
class diff_fields {
public:
    diff_fields(const format::json_value& object, std::string_view origin, std::string where)
        : object_(object), origin_(origin), where_(std::move(where)) {
        if (!object.is_object()) {
            fail(fmt::format("{} is a JSON {}, expected an object", where_, object.type_name()));
        }
    }

    [[noreturn]] void fail(std::string_view what) const {
        throw format_error(fmt::format("{}: {}", origin_, what), "", 0);
    }

    /// The member `key`, or nullptr when there is none.
    [[nodiscard]] const format::json_value* find(std::string_view key) const { return object_.find(key); }
    /// The member `key`, which must be there.
    [[nodiscard]] const format::json_value& get(std::string_view key) const {
        const auto* v = find(key);
        if (v == nullptr) {
            fail(fmt::format("{} has no \"{}\"", where_, key));
        }
        return *v;
    }

    [[nodiscard]] std::string text(std::string_view key) const {
        return checked(key, get(key).is_string(), "a string").as_string();
    }
    /// A string that older documents lack: `absent` then.
    [[nodiscard]] std::string text_or(std::string_view key, std::string absent) const {
        return find(key) == nullptr ? std::move(absent) : text(key);
    }
    [[nodiscard]] double number(std::string_view key) const {
        return checked(key, get(key).is_number(), "a number").as_double();
    }
    /// A number, or none for null (a difference that is not a finite number).
    [[nodiscard]] std::optional<double> number_or_null(std::string_view key) const {
        if (get(key).is_null()) {
            return std::nullopt;
        }
        return checked(key, get(key).is_number(), "a number or null").as_double();
    }
    [[nodiscard]] std::int64_t integer(std::string_view key) const {
        const auto& v = checked(key, get(key).is_integer(), "a whole number");
        try {
            return v.as_int64();
        } catch (const error&) {
            fail(fmt::format("{}: \"{}\" is out of range", where_, key));
        }
    }
    /// A count that older documents lack: `absent` then.
    [[nodiscard]] std::size_t count_or(std::string_view key, std::size_t absent) const {
        return find(key) == nullptr ? absent : count(key, get(key));
    }
    /// A count, or none for null or where older documents lack it.
    [[nodiscard]] std::optional<std::size_t> count_or_null(std::string_view key) const {
        const auto* v = find(key);
        if (v == nullptr || v->is_null()) {
            return std::nullopt;
        }
        return count(key, *v);
    }
    [[nodiscard]] bool boolean(std::string_view key) const {
        return checked(key, get(key).is_bool(), "true or false").as_bool();
    }
    /// A boolean that older documents lack: `absent` then.
    [[nodiscard]] bool boolean_or(std::string_view key, bool absent) const {
        return find(key) == nullptr ? absent : boolean(key);
    }
    [[nodiscard]] const format::json_value& array(std::string_view key) const {
        return checked(key, get(key).is_array(), "an array");
    }
    [[nodiscard]] tdbg::mode step_mode(std::string_view key) const {
        const std::string name = text(key);
        for (const tdbg::mode m : all_modes) {
            if (name == mode_name(m)) {
                return m;
            }
        }
        fail(fmt::format("{}: \"{}\" is '{}', expected TRAIN, EVAL, PREDICT or GLOBAL", where_, key, name));
    }
    /// A reduction's name, or none for null or where older documents lack it.
    [[nodiscard]] std::optional<tdbg::reduction> reduction_or_null(std::string_view key) const {
        const auto* v = find(key);
        if (v == nullptr || v->is_null()) {
            return std::nullopt;
        }
        const auto r = parse_reduction(checked(key, v->is_string(), "a reduction's name or null").as_string());
        if (!r) {
            fail(fmt::format("{}: \"{}\" is '{}', not a reduction", where_, key, v->as_string()));
        }
        return r;
    }
    /// The array `key` of strings (tensor names).
    [[nodiscard]] std::vector<std::string> names(std::string_view key) const {
        std::vector<std::string> out;
        const auto& list = array(key);
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (!list.at(i).is_string()) {
                fail(fmt::format("{}: \"{}\"[{}] is a JSON {}, expected a tensor name", where_, key, i,
                                 list.at(i).type_name()));
            }
            out.push_back(list.at(i).as_string());
        }
        return out;
    }
    /// The array `key` of counts (an element index).
    [[nodiscard]] std::vector<std::size_t> counts(std::string_view key) const {
        std::vector<std::size_t> out;
        const auto& list = array(key);
        for (std::size_t i = 0; i < list.size(); ++i) {
            out.push_back(count(fmt::format("{}[{}]", key, i), list.at(i)));
        }
        return out;
    }

private:
    [[nodiscard]] const format::json_value& checked(std::string_view key, bool ok, std::string_view expected) const {
        const auto& v = get(key);
        if (!ok) {
            fail(fmt::format("{}: \"{}\" is a JSON {}, expected {}", where_, key, v.type_name(), expected));
        }
        return v;
    }
    [[nodiscard]] std::size_t count(std::string_view key, const format::json_value& v) const {
        if (!v.is_integer() || (v.type() == format::json_value::kind::integer && v.as_int64() < 0)) {
            fail(fmt::format("{}: \"{}\" is {}, expected a whole number, 0 or more", where_, key,
                             v.is_number() ? format::dump_json(v) : std::string("a JSON ") + v.type_name()));
        }
        return static_cast<std::size_t>(v.as_uint64());
    }

    const format::json_value& object_;
    std::string_view origin_;
    std::string where_;
};

/// The members a diverging tensor has wherever the document lists it; `worker` and `reason`
/// are left empty where an entry of "tensors" of an older document lacks them.
inline diff_document_entry read_diff_entry(const diff_fields& f) {
    diff_document_entry e;
    e.tensor = f.text("tensor");
    e.tensor_b = f.text("tensor_b");
    e.step = f.integer("step");
    e.step_mode = f.step_mode("mode");
    e.mode_step = f.integer("mode_step");
    e.max_abs_diff = f.number_or_null("max_abs_diff");
    e.max_rel_diff = f.number_or_null("max_rel_diff");
    e.compared_reduction = f.reduction_or_null("reduction");
    return e;
}

} // namespace detail

TDBG_DECL std::string diff_reductions_note(const diff_result& result) {
    if (result.reductions_compared == 0) {
        return {};
    }
    if (result.reductions_only()) {
        return "compared reductions only (no raw values saved in both runs)";
    }
    return fmt::format("{} of the values compared are stored reductions ({} tensor steps without raw values)",
                       result.reductions_compared, result.reduction_only_steps);
}

TDBG_DECL format::json_value diff_document_json(const diff_result& result, const std::string& run_a,
                                                const std::string& run_b, const diff_options& options) {
    using format::json_value;
    auto doc = json_value::object();
    doc["format"] = diff_document_format;
    doc["run_a"] = run_a;
    doc["run_b"] = run_b;
    doc["agree"] = result.agree();
    doc["rtol"] = options.rtol;
    doc["atol"] = options.atol;
    if (const auto* first = result.first_divergence()) {
        json_value v = detail::diff_entry_json(*first);
        v["index"] = json_value::array_of(first->index);
        v["flat_index"] = first->flat_index ? json_value(*first->flat_index) : json_value(nullptr);
        v["mismatched"] = first->mismatched;
        doc["first_divergence"] = std::move(v);
    } else {
        doc["first_divergence"] = nullptr;
    }
    auto tensors = json_value::array();
    for (const auto& d : result.divergences) {
        json_value v = detail::diff_entry_json(d);
        v["diverging_steps"] = d.diverging_steps;
        tensors.push_back(std::move(v));
    }
    doc["tensors"] = std::move(tensors);
    doc["only_in_a"] = json_value::array_of(result.only_in_a);
    doc["only_in_b"] = json_value::array_of(result.only_in_b);
    auto compared = json_value::object();
    compared["tensors"] = result.tensors_compared;
    compared["steps"] = result.steps_compared;
    compared["values"] = result.values_compared;
    compared["reductions"] = result.reductions_compared;
    compared["reduction_only_steps"] = result.reduction_only_steps;
    doc["compared"] = std::move(compared);
    doc["reductions_only"] = result.reductions_only();
    if (result.reductions_compared > 0) {
        doc["note"] = diff_reductions_note(result);
    }
    return doc;
}

TDBG_DECL diff_document read_diff_document(std::string_view text, const std::string& origin) {
    const auto json = format::parse_json(text, origin, "tdbg diff output");
    const detail::diff_fields top(json, origin, "the document");
    const auto* named = json.find("format");
    if (named == nullptr || !named->is_string() || named->as_string() != diff_document_format) {
        top.fail(fmt::format(R"(not tdbg diff --json output: "format" is {}, expected "{}")",
                             named != nullptr ? format::dump_json(*named) : "missing", diff_document_format));
    }
    diff_document d;
    d.run_a = top.text("run_a");
    d.run_b = top.text("run_b");
    d.agree = top.boolean("agree");
    d.rtol = top.number("rtol");
    d.atol = top.number("atol");
    if (!top.get("first_divergence").is_null()) {
        const detail::diff_fields f(top.get("first_divergence"), origin, "first_divergence");
        diff_document_entry first = detail::read_diff_entry(f);
        first.worker = f.text("worker");
        first.reason = f.text("reason");
        first.index = f.counts("index");
        first.flat_index = f.count_or_null("flat_index");
        first.mismatched = f.count_or("mismatched", 0);
        d.first_divergence = std::move(first);
    }
    const auto& tensors = top.array("tensors");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const detail::diff_fields f(tensors.at(i), origin, fmt::format("tensors[{}]", i));
        diff_document_entry t = detail::read_diff_entry(f);
        t.worker = f.text_or("worker", "");
        t.reason = f.text_or("reason", "");
        t.diverging_steps = f.count_or("diverging_steps", 1);
        d.tensors.push_back(std::move(t));
    }
    d.only_in_a = top.names("only_in_a");
    d.only_in_b = top.names("only_in_b");
    // Runs that part only by the tensors they hold have no first divergence (null): a tensor of
    // one run only is listed, not compared step by step.
    if (!d.agree && !d.first_divergence && d.only_in_a.empty() && d.only_in_b.empty()) {
        top.fail(R"("agree" is false but "first_divergence" is null and no tensor is in one run only)");
    }
    if (top.find("compared") != nullptr) {
        const detail::diff_fields c(top.get("compared"), origin, "compared");
        d.tensors_compared = c.count_or("tensors", 0);
        d.steps_compared = c.count_or("steps", 0);
        d.values_compared = c.count_or("values", 0);
        d.reductions_compared = c.count_or("reductions", 0);
        d.reduction_only_steps = c.count_or("reduction_only_steps", 0);
    }
    d.reductions_only = top.boolean_or("reductions_only", false);
    d.note = top.text_or("note", "");
    return d;
}

} // namespace tdbg
