#pragma once
/// \file
/// Definitions of tdbg/core/array_text.hpp.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tdbg/core/array_text.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/text.hpp"

namespace tdbg {

namespace detail::numpy_print {

// numpy's print options: an array of more than `summary_threshold` elements shows only
// `edge_items` at each end of every dimension; a line holds at most `line_width` characters;
// a float shows at most `max_fraction_digits` digits after its point.
inline constexpr std::size_t summary_threshold = 1000;
inline constexpr std::size_t edge_items = 3;
inline constexpr std::size_t line_width = 75;
inline constexpr int max_fraction_digits = 8;
// Where a dimension's shown items skip the middle ones ("...").
inline constexpr std::size_t gap = std::numeric_limits<std::size_t>::max();

// A double rounded to an element type (float16 and bfloat16 included).
using rounding = double (*)(double);

template <class T>
inline double rounded_to(double v) {
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
inline int unique_digits(double v, rounding round) {
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
inline std::string positional_text(double v, rounding round, int max_fraction) {
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
inline std::string scientific_text(double v, int fraction) {
    std::string text = fmt::format("{:.{}e}", v, fraction);
    if (fraction == 0) {
        text.insert(text.find('e'), ".");
    }
    return text;
}

inline std::string non_finite_text(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    return v > 0 ? "inf" : "-inf";
}

// One number alone (a 0-d value, a reduction), as numpy prints a scalar: positional from 1e-4
// to 1e16 ("1.0", "0.25"), else scientific ("1e-05"), with the digits that give it back.
inline std::string scalar_float_text(double v, rounding round) {
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

// A complex number alone, as numpy prints a complex scalar (Python's complex repr): "(1+2j)",
// "(-0.5-1.25j)", and "2j" when the real part is +0.
template <class C>
std::string complex_scalar_text(const C& c, rounding round) {
    const auto part_text = [&](double v) {
        std::string text = scalar_float_text(v, round);
        if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) {
            text.resize(text.size() - 2); // "1.0" -> "1", as Python writes a complex's parts
        }
        return text;
    };
    const auto re = static_cast<double>(c.real());
    const auto im = static_cast<double>(c.imag());
    const std::string imag = part_text(std::fabs(im)) + "j";
    if (re == 0 && !std::signbit(re)) {
        return (std::signbit(im) ? "-" : "") + imag;
    }
    return "(" + part_text(re) + (std::signbit(im) ? "-" : "+") + imag + ")";
}

// Floating-point elements as numpy lays them out in an array: all positional with their
// points aligned, or all scientific with as many digits each when their magnitudes call for it
// (one of 1e8 or more, one under 1e-4, or a ratio over 1000); nan and inf right-aligned.
inline std::vector<std::string> float_texts(const std::vector<double>& values, rounding round) {
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
inline std::vector<std::string> right_aligned(std::vector<std::string> texts) {
    std::size_t width = 0;
    for (const std::string& t : texts) {
        width = std::max(width, t.size());
    }
    for (std::string& t : texts) {
        t.insert(0, width - t.size(), ' ');
    }
    return texts;
}

// The imaginary parts of an array's complex elements as numpy lays them out: as a float array
// with a sign always written ("+2.", "-1."), right-aligned, then "j" put after the digits and
// before the padding that aligns the points ("+2.j  ", "+0.25j").
inline std::vector<std::string> imaginary_texts(const std::vector<double>& imags, rounding round) {
    std::vector<std::string> texts = float_texts(imags, round);
    for (std::size_t k = 0; k < texts.size(); ++k) {
        const std::size_t first = texts[k].find_first_not_of(' ');
        texts[k].erase(0, first == std::string::npos ? texts[k].size() : first);
        if (!std::signbit(imags[k]) && texts[k].front() != '-') {
            texts[k].insert(0, 1, '+');
        }
    }
    texts = right_aligned(std::move(texts));
    for (std::string& t : texts) {
        const std::size_t end = t.find_last_not_of(' ') + 1;
        t.insert(end, 1, 'j');
    }
    return texts;
}

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                            std::is_same_v<T, bfloat16>;

template <class T>
inline double element_double(const T& v) {
    if constexpr (std::is_floating_point_v<T>) {
        return static_cast<double>(v);
    } else {
        return static_cast<double>(v.value());
    }
}

// The texts of the elements of `value` at the flat indices `shown`, in an array's layout
// (`alone`: the one element of a scalar, as numpy prints a scalar).
inline std::vector<std::string> element_texts(const tensor_value& value, const std::vector<std::size_t>& shown,
                                       bool alone) {
    if (value.type() == dtype::string) {
        // Only the elements shown, each read in place: a tensor of millions of strings costs no
        // std::string for those that are not.
        const string_view_list strings = value.string_views();
        std::vector<std::string> texts;
        texts.reserve(shown.size());
        for (const std::size_t i : shown) {
            texts.push_back(alone ? terminal_safe(strings[i]) : "'" + terminal_safe(strings[i]) + "'");
        }
        return texts;
    }
    return visit_dtype(value.type(), [&](auto tag) -> std::vector<std::string> {
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
            if (alone) {
                texts.push_back(complex_scalar_text(value.data_as<T>()[shown.front()], &rounded_to<part>));
                return texts;
            }
            std::vector<double> reals;
            std::vector<double> imags;
            for (const std::size_t i : shown) {
                const T c = value.data_as<T>()[i];
                reals.push_back(static_cast<double>(c.real()));
                imags.push_back(static_cast<double>(c.imag()));
            }
            texts = float_texts(reals, &rounded_to<part>);
            const std::vector<std::string> imag_texts = imaginary_texts(imags, &rounded_to<part>);
            for (std::size_t k = 0; k < texts.size(); ++k) {
                texts[k] += imag_texts[k];
            }
            return texts;
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

// The nested brackets of an array numpy prints: along each dimension every item, or the first
// and last edge_items around "..." when the array is summarised; the innermost items on lines
// of at most line_width characters, the rows of a matrix on lines of their own, and
// higher-dimensional blocks apart by as many blank lines as they have dimensions less two.
class array_layout {
public:
    array_layout(tensor_value::shape_type shape, bool summarise)
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
    tensor_value::shape_type shape_;
    std::vector<std::size_t> strides_;
    bool summarise_;
};

} // namespace detail::numpy_print

// One element alone (a 0-d value, a reduction): "0.5", "3", "True".
TDBG_DECL std::string scalar_text(const tensor_value& value) {
    if (value.size() == 0) {
        return "[]";
    }
    return detail::numpy_print::element_texts(value, {0}, true).front();
}

// `value` as numpy's str() prints it: a scalar for a 0-d value, "[]" for an empty one, else
// nested brackets, summarised when it has more than detail::numpy_print::summary_threshold elements.
TDBG_DECL std::string array_text(const tensor_value& value) {
    if (value.shape().empty()) {
        return scalar_text(value);
    }
    if (value.size() == 0) {
        return "[]";
    }
    const detail::numpy_print::array_layout layout(value.shape(), value.size() > detail::numpy_print::summary_threshold);
    return layout.text(detail::numpy_print::element_texts(value, layout.shown(), false));
}

} // namespace tdbg
