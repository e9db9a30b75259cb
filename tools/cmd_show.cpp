// `tdbg show RUN TENSOR_REGEX`: a quick look at values. The values of the tensors whose
// names match, a step at a time, laid out as numpy prints arrays; or, with --reductions
// (and for a tensor saved as reductions only), a table of its reductions over the steps.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::terminal_safe;

// ---- Elements as numpy prints them ----

// numpy's print options: an array of more than `summary_threshold` elements shows only
// `edge_items` at each end of every dimension; a line holds at most `line_width` characters;
// a float shows at most `max_fraction_digits` digits after its point.
constexpr std::size_t summary_threshold = 1000;
constexpr std::size_t edge_items = 3;
constexpr std::size_t line_width = 75;
constexpr int max_fraction_digits = 8;
// Where a dimension's shown items skip the middle ones ("...").
constexpr std::size_t gap = std::numeric_limits<std::size_t>::max();

// A double rounded to an element type (float16 and bfloat16 included).
using rounding = double (*)(double);

template <class T>
double rounded_to(double v) {
    if constexpr (std::is_same_v<T, double>) {
        return v;
    } else if constexpr (std::is_same_v<T, float>) {
        return static_cast<double>(static_cast<float>(v));
    } else {
        return static_cast<double>(T(static_cast<float>(v)).value());
    }
}

// The fewest significant digits that give `v` (finite) back once read and rounded to its
// element type: 0.1 as a float32 is "0.1", not "0.100000001".
int unique_digits(double v, rounding round) {
    constexpr int max_digits = 17;
    for (int digits = 1; digits < max_digits; ++digits) {
        const std::string text = fmt::format("{:.{}e}", v, digits - 1);
        if (round(std::strtod(text.c_str(), nullptr)) == v) {
            return digits;
        }
    }
    return max_digits;
}

// `v` (finite) in positional notation with its unique digits, at most `max_fraction` after the
// point, trailing zeros dropped and the point kept: "1.", "0.5", "-2.25".
std::string positional_text(double v, rounding round, int max_fraction) {
    const int digits = unique_digits(v, round);
    const std::string scientific = fmt::format("{:.{}e}", v, digits - 1);
    const int exponent = std::atoi(scientific.c_str() + scientific.find('e') + 1);
    const int fraction = std::clamp(digits - 1 - exponent, 0, max_fraction);
    std::string text = fmt::format("{:.{}f}", v, fraction);
    if (fraction == 0) {
        return text + ".";
    }
    while (text.back() == '0') {
        text.pop_back();
    }
    return text;
}

// `v` (finite) in scientific notation with `fraction` digits after the point: "1.5e-05",
// and "1.e-05" with none.
std::string scientific_text(double v, int fraction) {
    std::string text = fmt::format("{:.{}e}", v, fraction);
    if (fraction == 0) {
        text.insert(text.find('e'), ".");
    }
    return text;
}

std::string non_finite_text(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    return v > 0 ? "inf" : "-inf";
}

// One number alone (a 0-d value, a reduction), as numpy prints a scalar: positional from 1e-4
// to 1e16 ("1.0", "0.25"), else scientific ("1e-05"), with the digits that give it back.
std::string scalar_float_text(double v, rounding round) {
    if (!std::isfinite(v)) {
        return non_finite_text(v);
    }
    const double magnitude = std::fabs(v);
    if (v == 0 || (magnitude >= 1e-4 && magnitude < 1e16)) {
        std::string text = positional_text(v, round, std::numeric_limits<int>::max());
        return text.back() == '.' ? text + "0" : text;
    }
    return fmt::format("{:.{}e}", v, unique_digits(v, round) - 1);
}

// Floating-point elements as numpy lays them out in an array: all positional with their
// points aligned, or all scientific with as many digits each when their magnitudes call for it
// (one of 1e8 or more, one under 1e-4, or a ratio over 1000); nan and inf right-aligned.
std::vector<std::string> float_texts(const std::vector<double>& values, rounding round) {
    double largest = 0;
    double smallest = std::numeric_limits<double>::infinity();
    bool negative_infinity = false;
    bool non_finite = false;
    for (const double v : values) {
        if (std::isfinite(v) && v != 0) {
            largest = std::max(largest, std::fabs(v));
            smallest = std::min(smallest, std::fabs(v));
        }
        non_finite = non_finite || !std::isfinite(v);
        negative_infinity = negative_infinity || (std::isinf(v) && v < 0);
    }
    const bool scientific = largest > 0 && (largest >= 1e8 || smallest < 1e-4 || largest / smallest > 1e3);
    std::vector<std::string> texts(values.size());
    if (scientific) {
        int fraction = 0;
        for (const double v : values) {
            if (std::isfinite(v)) {
                fraction = std::max(fraction, std::min(unique_digits(v, round) - 1, max_fraction_digits));
            }
        }
        std::size_t exponent_digits = 0;
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (std::isfinite(values[i])) {
                texts[i] = scientific_text(values[i], fraction);
                exponent_digits = std::max(exponent_digits, texts[i].size() - texts[i].find('e') - 2);
            }
        }
        for (std::string& text : texts) { // every exponent with as many digits
            if (!text.empty()) {
                const std::size_t digits_at = text.find('e') + 2;
                text.insert(digits_at, exponent_digits - (text.size() - digits_at), '0');
            }
        }
    } else {
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (std::isfinite(values[i])) {
                texts[i] = positional_text(values[i], round, max_fraction_digits);
            }
        }
    }
    std::size_t before = 0; // the widest part before the point
    std::size_t after = 0;  // and after it
    for (const std::string& text : texts) {
        if (!text.empty()) {
            before = std::max(before, text.find('.'));
            after = std::max(after, text.size() - text.find('.') - 1);
        }
    }
    if (non_finite) { // room for "nan" and "inf" (or "-inf")
        const std::size_t widest = negative_infinity ? 4 : 3;
        before = std::max(before, widest > after + 1 ? widest - (after + 1) : 0);
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::string& text = texts[i];
        if (text.empty()) {
            const std::string word = non_finite_text(values[i]);
            text = std::string(before + after + 1 - word.size(), ' ') + word;
        } else {
            const std::size_t point = text.find('.');
            const std::size_t fill = after - (text.size() - point - 1);
            text.insert(0, before - point, ' ');
            text.append(fill, ' ');
        }
    }
    return texts;
}

// `texts` right-aligned to the widest.
std::vector<std::string> right_aligned(std::vector<std::string> texts) {
    std::size_t width = 0;
    for (const std::string& t : texts) {
        width = std::max(width, t.size());
    }
    for (std::string& t : texts) {
        t.insert(0, width - t.size(), ' ');
    }
    return texts;
}

template <class T>
constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, tdbg::float16> ||
                            std::is_same_v<T, tdbg::bfloat16>;

template <class T>
double element_double(const T& v) {
    if constexpr (std::is_floating_point_v<T>) {
        return static_cast<double>(v);
    } else {
        return static_cast<double>(v.value());
    }
}

// The texts of the elements of `value` at the flat indices `shown`, in an array's layout
// (`alone`: the one element of a scalar, as numpy prints a scalar).
std::vector<std::string> element_texts(const tdbg::tensor_value& value, const std::vector<std::size_t>& shown,
                                       bool alone) {
    if (value.type() == tdbg::dtype::string) {
        std::vector<std::string> texts;
        texts.reserve(shown.size());
        for (const std::size_t i : shown) {
            texts.push_back(alone ? terminal_safe(value.strings()[i]) : "'" + terminal_safe(value.strings()[i]) + "'");
        }
        return texts;
    }
    return tdbg::visit_dtype(value.type(), [&](auto tag) -> std::vector<std::string> {
        using T = typename decltype(tag)::type;
        std::vector<std::string> texts;
        if constexpr (std::is_same_v<T, std::string>) {
            return texts; // handled above
        } else if constexpr (std::is_same_v<T, bool>) {
            for (const std::size_t i : shown) {
                texts.emplace_back(value.bytes()[i] != 0 ? (alone ? "True" : " True") : "False");
            }
            return texts;
        } else if constexpr (is_complex_v<T>) {
            using part = typename T::value_type;
            const auto part_text = [](double v) {
                return std::isfinite(v) ? positional_text(v, &rounded_to<part>, max_fraction_digits) : non_finite_text(v);
            };
            for (const std::size_t i : shown) {
                const T c = value.data_as<T>()[i];
                const auto imag = static_cast<double>(c.imag());
                const std::string text = part_text(static_cast<double>(c.real())) + (std::signbit(imag) ? "-" : "+") +
                                         part_text(std::fabs(imag)) + "j";
                texts.push_back(alone ? "(" + text + ")" : text);
            }
            return alone ? texts : right_aligned(std::move(texts));
        } else if constexpr (is_float_v<T>) {
            std::vector<double> values;
            values.reserve(shown.size());
            for (const std::size_t i : shown) {
                values.push_back(element_double(value.data_as<T>()[i]));
            }
            if (alone) {
                for (const double v : values) {
                    texts.push_back(scalar_float_text(v, &rounded_to<T>));
                }
                return texts;
            }
            return float_texts(values, &rounded_to<T>);
        } else {
            for (const std::size_t i : shown) {
                const T v = value.data_as<T>()[i];
                if constexpr (std::is_signed_v<T>) {
                    texts.push_back(fmt::to_string(static_cast<std::int64_t>(v)));
                } else {
                    texts.push_back(fmt::to_string(static_cast<std::uint64_t>(v)));
                }
            }
            return right_aligned(std::move(texts));
        }
    });
}

// One element alone (a 0-d value, a reduction): "0.5", "3", "True".
std::string scalar_text(const tdbg::tensor_value& value) {
    if (value.size() == 0) {
        return "[]";
    }
    return element_texts(value, {0}, true).front();
}

// ---- Arrays as numpy prints them ----

// The nested brackets of an array numpy prints: along each dimension every item, or the first
// and last edge_items around "..." when the array is summarised; the innermost items on lines
// of at most line_width characters, the rows of a matrix on lines of their own, and
// higher-dimensional blocks apart by as many blank lines as they have dimensions less two.
class array_layout {
public:
    array_layout(tdbg::tensor_value::shape_type shape, bool summarise)
        : shape_(std::move(shape)), strides_(shape_.size(), 1), summarise_(summarise) {
        for (std::size_t d = shape_.size(); d-- > 1;) {
            strides_[d - 1] = strides_[d] * shape_[d];
        }
    }

    // The flat indices of the elements shown, in the order they are printed.
    [[nodiscard]] std::vector<std::size_t> shown() const {
        std::vector<std::size_t> out;
        collect(0, 0, out);
        return out;
    }

    // The array around `texts`, the shown elements' texts in the order of shown().
    [[nodiscard]] std::string text(const std::vector<std::string>& texts) const {
        std::size_t next = 0;
        return render(0, " ", line_width, texts, next);
    }

private:
    // The indices shown along a dimension of `n` items, with `gap` where "..." stands.
    [[nodiscard]] std::vector<std::size_t> items(std::size_t n) const {
        std::vector<std::size_t> out;
        const bool elided = summarise_ && n > 2 * edge_items;
        for (std::size_t i = 0; i < n; ++i) {
            if (elided && i == edge_items) {
                out.push_back(gap);
                i = n - edge_items;
            }
            out.push_back(i);
        }
        return out;
    }

    void collect(std::size_t dim, std::size_t base, std::vector<std::size_t>& out) const {
        if (dim == shape_.size()) {
            out.push_back(base);
            return;
        }
        for (const std::size_t i : items(shape_[dim])) {
            if (i != gap) {
                collect(dim + 1, base + i * strides_[dim], out);
            }
        }
    }

    // Dimension `dim` and those in it; `indent` starts each of its lines, which hold at most
    // `width` characters. The first line's indent is where its '[' goes.
    std::string render(std::size_t dim, const std::string& indent, std::size_t width, const std::vector<std::string>& texts,
                       std::size_t& next) const {
        if (dim == shape_.size()) {
            return texts[next++];
        }
        const std::vector<std::size_t> along = items(shape_[dim]);
        std::string out;
        if (dim + 1 == shape_.size()) {
            const std::size_t room = width - 1; // for the closing ']'
            std::string line = indent;
            for (std::size_t k = 0; k < along.size(); ++k) {
                const std::string& word = along[k] == gap ? ellipsis : texts[next++];
                if (line.size() + word.size() > room && line.size() > indent.size()) {
                    line.erase(line.find_last_not_of(' ') + 1);
                    out += line + "\n";
                    line = indent;
                }
                line += word;
                if (k + 1 < along.size()) {
                    line += ' ';
                }
            }
            out += line;
        } else {
            const std::string between(shape_.size() - dim - 1, '\n');
            for (std::size_t k = 0; k < along.size(); ++k) {
                out += indent;
                out += along[k] == gap ? ellipsis : render(dim + 1, indent + " ", width - 1, texts, next);
                if (k + 1 < along.size()) {
                    out += between;
                }
            }
        }
        return "[" + out.substr(indent.size()) + "]";
    }

    inline static const std::string ellipsis = "...";
    tdbg::tensor_value::shape_type shape_;
    std::vector<std::size_t> strides_;
    bool summarise_;
};

// `value` as numpy's str() prints it: a scalar for a 0-d value, "[]" for an empty one, else
// nested brackets, summarised when it has more than summary_threshold elements.
std::string array_text(const tdbg::tensor_value& value) {
    if (value.shape().empty()) {
        return scalar_text(value);
    }
    if (value.size() == 0) {
        return "[]";
    }
    const array_layout layout(value.shape(), value.size() > summary_threshold);
    return layout.text(element_texts(value, layout.shown(), false));
}


// ---- The command ----

using tdbg::commands::show_options;

// The entries of `tensor` to show, one per step: those of the options' mode and steps (mode
// steps with a mode, else global steps), of the worker asked for, else of the first (by name)
// that saved the step; by default the last step only.
std::vector<tdbg::tensor_step_info> entries_to_show(const tdbg::tensor& tensor, const show_options& o) {
    tdbg::step_range window;
    if (o.step) {
        window.begin = *o.step;
        window.end = *o.step + 1;
    } else if (o.steps) {
        window = *o.steps;
    }
    std::vector<tdbg::tensor_step_info> picked;
    for (tdbg::tensor_step_info& e : tensor.entries(o.mode)) {
        const std::int64_t at = o.mode == tdbg::mode::global ? e.step : e.mode_step;
        if ((o.worker && e.worker != *o.worker) || !window.contains(at) || (!picked.empty() && picked.back().step == e.step)) {
            continue;
        }
        picked.push_back(std::move(e));
    }
    if (!o.step && !o.steps && picked.size() > 1) {
        picked.erase(picked.begin(), picked.end() - 1);
    }
    return picked;
}

// "step 12 (TRAIN step 5)".
std::string step_text(const tdbg::tensor_step_info& e) {
    return fmt::format("step {} ({} step {})", e.step, tdbg::mode_name(e.step_mode), e.mode_step);
}

// Rows of cells, each column as wide as its widest cell, two spaces apart; the columns in
// `left` aligned left, the others right.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& left) {
    std::vector<std::size_t> widths(left.size(), 0);
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            widths[c] = std::max(widths[c], row[c].size());
        }
    }
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string padding(widths[c] - row[c].size(), ' ');
            line += (c == 0 ? "" : "  ") + (left[c] ? row[c] + padding : padding + row[c]);
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out << line << "\n";
    }
}

// The reductions of `tensor` at `entries`, a row per step: those stored for it (computed from
// the value at a step that has one but not them), else min, max, mean, std and l2 computed
// from the values; "-" where neither is there.
void print_reductions(std::ostream& out, const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& entries,
                      bool several_workers) {
    using tdbg::reduction;
    using tdbg::reduction_kind;
    const tdbg::tensor_summary summary = tensor.summary();
    std::vector<reduction> columns = summary.stored_reductions;
    const bool stored = !columns.empty();
    if (!stored) {
        columns = {reduction{reduction_kind::min, false}, reduction{reduction_kind::max, false},
                   reduction{reduction_kind::mean, false}, reduction{reduction_kind::std, false},
                   reduction{reduction_kind::l2, false}};
    }
    out << terminal_safe(tensor.name()) << "  "
        << (stored ? "stored reductions" : "reductions computed from the values")
        << (summary.has_value ? "" : " (saved as reductions only, no values)") << "\n";

    std::vector<std::vector<std::string>> rows{{"step", "mode", "mode_step"}};
    std::vector<bool> left{false, true, false};
    if (several_workers) {
        rows[0].emplace_back("worker");
        left.push_back(true);
    }
    for (const reduction r : columns) {
        rows[0].push_back(tdbg::reduction_name(r));
        left.push_back(false);
    }
    for (const tdbg::tensor_step_info& e : entries) {
        std::vector<std::string> row{std::to_string(e.step), std::string(tdbg::mode_name(e.step_mode)),
                                     std::to_string(e.mode_step)};
        if (several_workers) {
            row.push_back(terminal_safe(e.worker));
        }
        const auto saved = tensor.reduction_values(e.step, tdbg::mode::global, e.worker);
        std::optional<tdbg::tensor_value> value;
        if (e.has_value) {
            value = tensor.value(e.step, tdbg::mode::global, e.worker);
        }
        for (const reduction r : columns) {
            if (const auto it = saved.find(r); it != saved.end()) {
                row.push_back(scalar_text(it->second));
                continue;
            }
            try {
                row.push_back(value ? scalar_text(tdbg::compute_reduction(*value, r)) : "-");
            } catch (const tdbg::error&) { // a string tensor, the min of an empty one
                row.emplace_back("-");
            }
        }
        rows.push_back(std::move(row));
    }
    print_table(out, rows, left);
}

// The values of `tensor` at `entries`, each under a header line.
void print_values(std::ostream& out, const tdbg::tensor& tensor, const std::vector<tdbg::tensor_step_info>& entries,
                  bool several_workers) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const tdbg::tensor_step_info& e = entries[i];
        const std::string worker = several_workers ? "  worker " + terminal_safe(e.worker) : "";
        out << (i == 0 ? "" : "\n") << terminal_safe(tensor.name()) << "  " << step_text(e) << worker;
        if (!e.has_value) {
            out << (e.stored_reductions.empty() ? "  no value saved at this step\n"
                                                : "  no value saved at this step, only reductions (see --reductions)\n");
            continue;
        }
        const tdbg::tensor_value value = tensor.value(e.step, tdbg::mode::global, e.worker);
        out << "  " << tdbg::dtype_name(value.type()) << " " << tdbg::shape_text(value.shape()) << "\n" << array_text(value) << "\n";
    }
}

// "'a', 'b' or 'c'".
std::string quoted_names(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
    }
    return out;
}

// Why `regex` selects nothing, with the names it may have been meant for.
std::string no_match_message(const tdbg::trial& t, const std::string& regex, tdbg::mode m) {
    std::string message = fmt::format("no tensor matches '{}'", regex);
    if (m != tdbg::mode::global) {
        message += fmt::format(" in mode {}", tdbg::mode_name(m));
        std::vector<std::string> elsewhere = t.tensor_names(std::nullopt, tdbg::mode::global, regex);
        if (!elsewhere.empty()) {
            const std::size_t count = elsewhere.size();
            elsewhere.resize(std::min<std::size_t>(count, 3));
            return message + fmt::format(" (it matches {} saved in other modes: {}{})", count, quoted_names(elsewhere),
                                         count > 3 ? ", ..." : "");
        }
    }
    const std::vector<std::string> names = t.tensor_names(std::nullopt, m);
    const std::vector<std::string> near =
        tdbg::nearest_names(tdbg::regex_literal(regex), names, true);
    if (!near.empty()) {
        return message + "; did you mean " + quoted_names(near) + "?";
    }
    return names.empty() ? message + "; the run holds no tensor" : message;
}

void declare_show_arguments(tdbg::cli::arguments& args, show_options& o) {
    args.option("--step", "N", "only step N (a mode step with --mode, else a global step)",
                [&o](const std::string& opt, const std::string& value) {
                    o.step = tdbg::cli::parse_number<std::int64_t>(opt, value, 0,
                                                                   std::numeric_limits<std::int64_t>::max() - 1);
                });
    args.option("--steps", "A:B",
                "the steps from A up to, not including, B (as Python's A:B; either may be left out, "
                "':' is every step)",
                [&o](const std::string& opt, const std::string& value) {
                    o.steps = tdbg::cli::parse_step_range(opt, value);
                });
    args.option("--mode", "MODE", "only the steps of TRAIN, EVAL or PREDICT (GLOBAL: every mode, the default)",
                [&o](const std::string& opt, const std::string& value) {
                    o.mode = tdbg::cli::parse_mode_option(opt, value);
                });
    args.option("--worker", "W", "the values worker W saved (default: the first worker, by name, that saved the step)",
                [&o](const std::string& opt, const std::string& value) {
                    if (value.empty()) {
                        throw tdbg::cli::usage_error(fmt::format("{} needs a non-empty value", opt));
                    }
                    o.worker = value;
                });
    args.flag("--reductions", "a table of the reductions over the steps instead of the values", o.reductions);
    args.epilog("exit status: 0 the values were shown, 2 an error: no tensor matches, none was saved\n"
                "at the steps asked for, a bad run or argument.\n");
}

int run_show(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    show_options o;
    tdbg::cli::arguments parser(
        "tdbg show RUN TENSOR_REGEX [--step N | --steps A:B] [--mode MODE] [--worker W]\n"
        "                [--reductions]",
        "Prints the values of the tensors of the run in RUN (a directory, or\n"
        "s3://bucket/prefix when built with S3) whose names TENSOR_REGEX matches\n"
        "(searched, as smdebug's tensor regexes), a step at a time, as numpy prints\n"
        "arrays: nested brackets by shape, and only the first and last 3 items of\n"
        "each dimension around '...' when there are more than 1000 elements. A line\n"
        "before each gives the tensor, its global step, mode and mode step, dtype\n"
        "and shape. By default only the last step each tensor was saved at is\n"
        "shown; --steps : shows them all.\n"
        "\n"
        "With --reductions, a table instead, a row per step: the reductions stored\n"
        "for the tensor, else min, max, mean, std and l2 computed from its values.\n"
        "A tensor saved as reductions only is shown that way in any case.\n");
    declare_show_arguments(parser, o);
    const auto positional = parser.parse_or_help(args, out);
    if (!positional) {
        return tdbg::cli::exit_ok;
    }
    if (positional->size() != 2) {
        throw tdbg::cli::usage_error(
            fmt::format("expected the run and a tensor regex, RUN TENSOR_REGEX, got {} arguments", positional->size()));
    }
    if (o.step && o.steps) {
        throw tdbg::cli::usage_error("--step and --steps cannot be given together");
    }
    o.run = (*positional)[0];
    o.tensor_regex = (*positional)[1];
    return tdbg::commands::show(o, out, err);
}

const tdbg::cli::command_registrar register_show{
    tdbg::cli::command{"show", "print tensors' values (numpy's layout) or reductions, step by step", &run_show}};

} // namespace

int tdbg::commands::show(const show_options& o, std::ostream& out, std::ostream& err) {
    return tdbg::cli::guarded("show", err, [&] {
        const std::string& regex = o.tensor_regex;
        const tdbg::trial t = tdbg::cli::open_run(o.run);
        const std::vector<std::string> workers = t.workers();
        if (o.worker && std::find(workers.begin(), workers.end(), *o.worker) == workers.end()) {
            throw tdbg::error(fmt::format("no worker '{}' in the run (its workers: {})", *o.worker, quoted_names(workers)));
        }
        tdbg::tensor_name_query query;
        query.regex = {regex};
        query.mode = o.mode;
        const std::vector<std::string> names = t.tensor_names(query);
        if (names.empty()) {
            throw tdbg::error(no_match_message(t, regex, o.mode));
        }
        const bool several_workers = workers.size() > 1;
        bool shown = false;
        for (std::size_t n = 0; n < names.size(); ++n) {
            const tdbg::tensor tensor = t.tensor(names[n]);
            const std::vector<tdbg::tensor_step_info> entries = entries_to_show(tensor, o);
            out << (n == 0 ? "" : "\n");
            if (entries.empty()) {
                out << terminal_safe(names[n]) << "  nothing saved at the steps asked for\n";
                continue;
            }
            shown = true;
            const tdbg::tensor_summary summary = tensor.summary();
            if (o.reductions || (!summary.has_value && !summary.stored_reductions.empty())) {
                print_reductions(out, tensor, entries, several_workers);
            } else {
                print_values(out, tensor, entries, several_workers);
            }
        }
        out.flush();
        if (!shown) {
            throw tdbg::error(fmt::format("no tensor matching '{}' was saved at the steps asked for", regex));
        }
        return tdbg::cli::exit_ok;
    });
}
