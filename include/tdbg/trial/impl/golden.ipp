#pragma once
/// \file
/// Definitions of tdbg/trial/golden.hpp.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/trial/golden.hpp"
#include "tdbg/trial/tensor.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg {

namespace detail::golden {

using format::json_value;

/// A double as the schema writes it: a number, or "nan", "inf", "-inf".
inline json_value golden_double(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    return v;
}

/// Element `i` of `value` as numpy's tolist() would give it, in JSON.
inline json_value golden_element(const tensor_value& value, std::size_t i) {
    if (value.type() == dtype::string) {
        return std::string(value.string_views()[i]);
    }
    return visit_dtype(value.type(), [&](auto tag) -> json_value {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            return nullptr; // handled above
        } else if constexpr (std::is_same_v<T, bool>) {
            return value.bytes()[i] != 0;
        } else if constexpr (std::is_same_v<T, tdbg::float16> || std::is_same_v<T, tdbg::bfloat16>) {
            return golden_double(static_cast<double>(value.data_as<T>()[i].value()));
        } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
            const T c = value.data_as<T>()[i];
            return json_value::array({golden_double(static_cast<double>(c.real())), golden_double(static_cast<double>(c.imag()))});
        } else if constexpr (std::is_floating_point_v<T>) {
            return golden_double(static_cast<double>(value.data_as<T>()[i]));
        } else {
            return value.data_as<T>()[i];
        }
    });
}

/// The nested list of `value` (C order), a scalar for a 0-d value.
inline json_value golden_nested(const tensor_value& value, std::size_t dim, std::size_t& next) {
    if (dim == value.shape().size()) {
        return golden_element(value, next++);
    }
    json_value list = json_value::array();
    for (std::size_t k = 0; k < value.shape()[dim]; ++k) {
        list.push_back(golden_nested(value, dim + 1, next));
    }
    return list;
}

inline json_value golden_values(const tensor_value& value) {
    std::size_t next = 0;
    return golden_nested(value, 0, next);
}

inline json_value golden_shape(const tensor_value::shape_type& shape) {
    json_value list = json_value::array();
    for (std::size_t d : shape) {
        list.push_back(d);
    }
    return list;
}

/// The hash of the element bytes (strings: their UTF-8 bytes, each followed by NUL).
inline std::string golden_sha256(const tensor_value& value) {
    if (value.type() != dtype::string) {
        return tdbg::detail::sha256_hex(value.bytes());
    }
    // Hashed as read: no copy of the elements joined.
    tdbg::detail::sha256 hash;
    for (const std::string_view s : value.string_views()) {
        hash.update(s);
        hash.update(std::string_view("\0", 1));
    }
    return hash.hex_digest();
}

/// One reduction result: {dtype, shape, source, value}; value is the element when there is one.
inline json_value golden_reduction(const tensor_value& value, const char* source) {
    json_value out;
    out["dtype"] = std::string(dtype_name(value.type()));
    out["shape"] = golden_shape(value.shape());
    out["source"] = source;
    out["value"] = value.size() == 1 ? golden_element(value, 0) : golden_values(value);
    return out;
}

/// What the error `error` says.
inline std::string golden_error_text(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return e.what();
    }
}

inline json_value golden_save_config_mode(const std::optional<save_config_mode>& m) {
    if (!m) {
        return nullptr;
    }
    json_value out;
    out["end_step"] = m->end_step ? json_value(*m->end_step) : json_value();
    out["save_interval"] = m->save_interval;
    out["save_steps"] = json_value::array_of(m->save_steps);
    out["start_step"] = m->start_step;
    return out;
}

inline std::string golden_reductions_string(const std::vector<reduction>& reductions) {
    std::string out;
    for (const reduction r : reductions) {
        fmt::format_to(std::back_inserter(out), "{}{}", out.empty() ? "" : ",", reduction_config_name(r));
    }
    return out;
}

/// Every (kind, abs) pair, as the schema names them.
inline std::vector<reduction> golden_all_reductions() {
    std::vector<reduction> out;
    for (bool abs : {false, true}) {
        for (reduction_kind k : all_reduction_kinds) {
            out.push_back(reduction{k, abs});
        }
    }
    return out;
}

/// What a value read in pieces gives the document: its layout, digest and reductions.
struct piecewise_value {
    value_layout layout;
    std::string sha256;
    std::vector<tensor_value> reductions; // of the ones asked for, in order
};

inline piecewise_value read_piecewise(const tdbg::tensor& t, const tensor_step_info& info,
                                      const std::vector<reduction>& which) {
    tdbg::detail::sha256 digest;
    running_reductions running(which);
    piecewise_value out;
    out.layout = t.read_value_in_pieces(info.step, mode::global, info.worker, running_reductions::piece_elements,
                                        [&](const tensor_value& piece) {
                                            digest.update(piece.bytes());
                                            if (!which.empty()) {
                                                running.add(piece);
                                            }
                                        });
    out.sha256 = digest.hex_digest();
    if (!which.empty()) {
        out.reductions = running.results();
    }
    return out;
}

inline json_value golden_entry(const tdbg::tensor& t, const tensor_step_info& info, const golden_filter& filter) {
    json_value e;
    e["step"] = info.step;
    e["mode"] = std::string(mode_name(info.step_mode));
    e["mode_step"] = info.mode_step;
    e["worker"] = info.worker;
    std::vector<std::string> stored;
    for (const reduction r : info.stored_reductions) {
        stored.push_back(reduction_name(r));
    }
    e["stored_reductions"] = json_value::array_of(stored);

    // A value too large to hold is read in pieces, its digest and every reduction computed
    // as they go past (the same numbers, bit for bit: running_reductions' pieces).
    if (info.has_value && info.value_record_bytes > filter.max_whole_value_bytes) {
        const auto saved = t.reduction_values(info.step, mode::global, info.worker);
        std::vector<reduction> to_compute;
        for (const reduction r : golden_all_reductions()) {
            if (saved.count(r) == 0) {
                to_compute.push_back(r);
            }
        }
        const piecewise_value read = read_piecewise(t, info, to_compute);
        if (read.layout.type != dtype::string) {
            std::size_t size = 1;
            for (const std::size_t d : read.layout.shape) {
                size *= d;
            }
            if (size > golden_max_listed_elements) {
                e["dtype"] = std::string(dtype_name(read.layout.type));
                e["size"] = size;
                e["nbytes"] = size * dtype_size(read.layout.type);
                e["sha256"] = read.sha256;
                if (info.stored_shape) {
                    e["shape"] = golden_shape(*info.stored_shape);
                    e["shape_source"] = "index";
                } else {
                    e["shape"] = golden_shape(read.layout.shape);
                    e["shape_source"] = "value";
                }
                json_value reductions = json_value::object();
                for (const auto& [r, v] : saved) {
                    reductions[reduction_name(r)] = golden_reduction(v, "stored");
                }
                for (std::size_t i = 0; i < to_compute.size(); ++i) {
                    reductions[reduction_name(to_compute[i])] = golden_reduction(read.reductions[i], "computed");
                }
                e["reductions"] = std::move(reductions);
                return e;
            }
        }
        // A string tensor, or a few elements in a large record: read whole below.
    }

    std::optional<tensor_value> value;
    if (info.has_value) {
        value = t.value(info.step, mode::global, info.worker);
        e["dtype"] = std::string(dtype_name(value->type()));
        e["size"] = value->size();
        e["nbytes"] = value->nbytes();
        e["sha256"] = golden_sha256(*value);
        if (value->size() <= golden_max_listed_elements) {
            e["value"] = golden_values(*value);
        }
    } else {
        e["dtype"] = nullptr;
        e["value_unavailable"] = true;
    }
    if (info.stored_shape) {
        e["shape"] = golden_shape(*info.stored_shape);
        e["shape_source"] = "index";
    } else if (value) {
        e["shape"] = golden_shape(value->shape());
        e["shape_source"] = "value";
    } else {
        e["shape"] = nullptr;
        e["shape_source"] = nullptr;
    }

    // Stored reductions as saved; every other one computed from the value read above.
    std::function<tensor_value()> held;
    if (value) {
        held = [&value] { return *value; };
    }
    json_value reductions = json_value::object();
    for (const step_reduction& r : t.reductions(info.step, golden_all_reductions(), mode::global, info.worker, held)) {
        json_value& out = reductions[reduction_name(r.which)];
        if (r.value) {
            out = golden_reduction(*r.value, r.source == reduction_source::stored ? "stored" : "computed");
        } else if (!value) {
            out = json_value::object({{"unavailable", "TensorUnavailableForStep"}});
        } else if (value->type() == dtype::string) {
            out = json_value::object({{"unavailable", "dtype_mismatch"}});
        } else {
            out = json_value::object({{"unavailable", golden_error_text(r.error)}});
        }
    }
    e["reductions"] = std::move(reductions);
    return e;
}

/// Of `steps`, steps of mode `m` (global steps for GLOBAL), those `filter` keeps.
inline std::vector<std::int64_t> golden_kept_steps(const trial& t, const golden_filter& filter, mode m,
                                                   std::vector<std::int64_t> steps) {
    if (filter.keeps_everything()) {
        return steps;
    }
    const auto dropped = [&](std::int64_t step) {
        if (m == mode::global) {
            const auto mode_step = t.mode_modestep(step);
            return !(mode_step ? filter.keeps_step(mode_step->first, mode_step->second, step)
                               : filter.keeps_step(mode::global, step, step));
        }
        const auto global = t.global_step(m, step);
        return !global || !filter.keeps_step(m, step, *global);
    };
    steps.erase(std::remove_if(steps.begin(), steps.end(), dropped), steps.end());
    return steps;
}

/// What the golden schema says of the run but its steps and tensors: the document less
/// "steps", "global_step_to_mode" and "tensors" (write_golden_document writes those as it goes).
/// With a filter's tensor regex, the lists of the trial's tensor names hold only those it matches.
inline json_value golden_document_head(const trial& t, const std::string& producer, const golden_filter& filter) {
    using json = json_value;
    json doc;
    doc["format"] = golden_format;
    doc["producer"] = producer;
    doc["trial_name"] = t.name();
    doc["num_workers"] = t.num_workers();
    doc["workers"] = json::array_of(t.workers());

    std::vector<std::string> mode_names;
    for (const mode m : t.modes()) {
        mode_names.emplace_back(mode_name(m));
    }
    std::sort(mode_names.begin(), mode_names.end());
    doc["modes"] = json::array_of(mode_names);

    const std::vector<std::string> names = t.tensor_names(std::nullopt, mode::global, filter.tensor_regex);
    doc["tensor_names"] = json::array_of(names);
    json by_mode = json::object();
    for (const mode m : t.modes()) {
        by_mode[std::string(mode_name(m))] = json::array_of(t.tensor_names(std::nullopt, m, filter.tensor_regex));
    }
    doc["tensor_names_by_mode"] = std::move(by_mode);

    json collections = json::object();
    for (const auto& [name, c] : t.collections()) {
        json item;
        item["include_regex"] = json::array_of(c.include_regex);
        item["reduction_config"] = json::object({{"reductions", golden_reductions_string(c.reduction_config.reductions)},
                                                 {"save_raw_tensor", c.reduction_config.save_raw_tensor},
                                                 {"save_shape", c.reduction_config.save_shape}});
        json save = json::object();
        for (const mode m : all_modes) {
            save[std::string(mode_name(m))] = golden_save_config_mode(c.save_config.get(m));
        }
        item["save_config"] = std::move(save);
        item["save_histogram"] = c.save_histogram;
        std::vector<std::string> listed = c.tensor_names;
        std::sort(listed.begin(), listed.end());
        listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
        item["tensor_names_in_file"] = json::array_of(listed);
        std::vector<std::string> members = t.tensor_names(std::nullopt, mode::global, std::nullopt, name);
        if (filter.tensor_regex) { // both lists are sorted
            std::vector<std::string> matching;
            std::set_intersection(members.begin(), members.end(), names.begin(), names.end(),
                                  std::back_inserter(matching));
            members = std::move(matching);
        }
        item["trial_tensor_names"] = json::array_of(members);
        collections[name] = std::move(item);
    }
    doc["collections"] = std::move(collections);
    return doc;
}

// The golden document's text, written as it is made: JSON as json.dumps(indent=1,
// sort_keys=True) lays it out, a piece at a time, into `out` in blocks.
class golden_text_writer {
public:
    explicit golden_text_writer(std::ostream& out) : out_(out) {
        style_.indent = 1; // as json_document_text
        style_.sort_keys = true;
        style_.replace_invalid_utf8 = true;
    }
    golden_text_writer(const golden_text_writer&) = delete;
    golden_text_writer& operator=(const golden_text_writer&) = delete;
    ~golden_text_writer() = default;

    void raw(std::string_view text) {
        buffer_ += text;
        if (buffer_.size() >= block) {
            flush();
        }
    }
    // A line break and the indentation of nesting level `depth`.
    void newline(int depth) {
        buffer_.push_back('\n');
        buffer_.append(static_cast<std::size_t>(depth), ' ');
    }
    // `key` and its separator, as an object member's start.
    void key(std::string_view k) {
        format::append_json_string(buffer_, k, true);
        buffer_ += ": ";
    }
    // `v` as dump_json lays it out at nesting level `depth`: each of its line breaks indented
    // `depth` more (strings hold no raw line break: json.dumps escapes them).
    void value(const json_value& v, int depth) {
        const std::string text = format::dump_json(v, style_);
        std::size_t from = 0;
        for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', from)) {
            buffer_.append(text, from, at - from);
            newline(depth);
            from = at + 1;
        }
        raw(std::string_view(text).substr(from));
    }
    void flush() {
        out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        buffer_.clear();
    }

private:
    static constexpr std::size_t block = std::size_t{1} << 16U;
    std::ostream& out_;
    format::json_style style_;
    std::string buffer_;
};

// A list of integers at nesting level `depth`, as dump_json lays it out.
inline void write_golden_integers(const std::vector<std::int64_t>& list, int depth, golden_text_writer& w) {
    if (list.empty()) {
        w.raw("[]");
        return;
    }
    w.raw("[");
    for (std::size_t i = 0; i < list.size(); ++i) {
        w.raw(i == 0 ? "" : ",");
        w.newline(depth + 1);
        w.raw(std::to_string(list[i]));
    }
    w.newline(depth);
    w.raw("]");
}

// The "steps" member's value at nesting level 1: each mode's steps.
inline void write_golden_steps(const trial& t, const golden_filter& filter, golden_text_writer& w) {
    std::vector<std::string> names;
    names.reserve(std::size(all_modes));
    for (const mode m : all_modes) {
        names.emplace_back(mode_name(m));
    }
    std::sort(names.begin(), names.end());
    w.raw("{");
    for (std::size_t i = 0; i < names.size(); ++i) {
        w.raw(i == 0 ? "" : ",");
        w.newline(2);
        w.key(names[i]);
        const mode m = parse_mode(names[i]);
        write_golden_integers(golden_kept_steps(t, filter, m, t.steps(m)), 2, w);
    }
    w.newline(1);
    w.raw("}");
}

// The "global_step_to_mode" member's value at nesting level 1, a step at a time, in the
// order of sort_keys: the steps' decimal text sorted as text.
inline void write_golden_step_modes(const trial& t, const golden_filter& filter, golden_text_writer& w) {
    std::vector<std::pair<std::string, std::int64_t>> steps;
    for (const std::int64_t step : golden_kept_steps(t, filter, mode::global, t.steps())) {
        steps.emplace_back(std::to_string(step), step);
    }
    std::sort(steps.begin(), steps.end());
    if (steps.empty()) {
        w.raw("{}");
        return;
    }
    w.raw("{");
    for (std::size_t i = 0; i < steps.size(); ++i) {
        w.raw(i == 0 ? "" : ",");
        w.newline(2);
        w.key(steps[i].first);
        const std::int64_t step = steps[i].second;
        w.value(json_value::object({{"mode", std::string(mode_name(*t.mode(step)))}, {"mode_step", *t.mode_step(step)}}),
                2);
    }
    w.newline(1);
    w.raw("}");
}

// The "tensors" member's value at nesting level 1, a tensor step at a time.
inline void write_golden_tensors(const trial& t, const golden_filter& filter, golden_text_writer& w) {
    std::vector<std::string> names = t.tensor_names(std::nullopt, mode::global, filter.tensor_regex);
    std::sort(names.begin(), names.end()); // as sort_keys orders the object's members
    if (names.empty()) {
        w.raw("{}");
        return;
    }
    w.raw("{");
    for (std::size_t n = 0; n < names.size(); ++n) {
        const auto tensor = t.tensor(names[n]);
        w.raw(n == 0 ? "" : ",");
        w.newline(2);
        w.key(names[n]);
        w.raw("{");
        w.newline(3);
        w.key("entries");
        std::vector<tensor_step_info> entries = tensor.entries();
        if (!filter.keeps_everything()) {
            entries.erase(std::remove_if(entries.begin(), entries.end(),
                                         [&](const tensor_step_info& e) {
                                             return !filter.keeps_step(e.step_mode, e.mode_step, e.step);
                                         }),
                          entries.end());
        }
        if (entries.empty()) {
            w.raw("[]");
        } else {
            w.raw("[");
            for (std::size_t i = 0; i < entries.size(); ++i) {
                w.raw(i == 0 ? "" : ",");
                w.newline(4);
                w.value(golden_entry(tensor, entries[i], filter), 4);
            }
            w.newline(3);
            w.raw("]");
        }
        w.raw(",");
        w.newline(3);
        w.key("steps");
        json_value tensor_steps = json_value::object();
        for (const mode m : all_modes) {
            tensor_steps[std::string(mode_name(m))] = json_value::array_of(golden_kept_steps(t, filter, m, tensor.steps(m)));
        }
        w.value(tensor_steps, 3);
        w.newline(2);
        w.raw("}");
    }
    w.newline(1);
    w.raw("}");
}

} // namespace detail::golden

TDBG_DECL void write_golden_document(const trial& t, const std::string& producer, std::ostream& out,
                                     const golden_filter& filter) {
    detail::golden::golden_text_writer w(out);
    const format::json_value head = detail::golden::golden_document_head(t, producer, filter);
    // Every member, in the order of sort_keys: the head's, and those written as they go.
    std::vector<std::pair<std::string, std::function<void()>>> members;
    for (const format::json_member& m : head.members()) {
        members.emplace_back(m.key, [&w, &m] { w.value(m.value, 1); });
    }
    members.emplace_back("steps", [&] { detail::golden::write_golden_steps(t, filter, w); });
    members.emplace_back("global_step_to_mode", [&] { detail::golden::write_golden_step_modes(t, filter, w); });
    members.emplace_back("tensors", [&] { detail::golden::write_golden_tensors(t, filter, w); });
    std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    w.raw("{");
    for (std::size_t i = 0; i < members.size(); ++i) {
        w.raw(i == 0 ? "" : ",");
        w.newline(1);
        w.key(members[i].first);
        members[i].second();
    }
    w.newline(0);
    w.raw("}\n");
    w.flush();
}

} // namespace tdbg
