#pragma once
/// \file
/// `rule_params`: a rule's parameters as SageMaker passes them, every value a
/// string ("threshold": "1e-07"), with typed getters. A getter records the
/// value it resolved (default included) for reports, and marks its key as
/// known, so that a parameter no getter asked for can be reported as unknown.
///
/// Spellings accepted (Python's, since SageMaker's rule configurations are
/// written for Python rules): floats as Python's float() reads them
/// ("1e-7", " 0.5", "inf"); integers ("3", also "3.0"); booleans
/// ("True"/"true"/"1"/"yes", "False"/"false"/"0"/"no"); lists as comma-separated
/// strings, optionally in brackets and quoted ("a, b" or "['a', 'b']"); pairs
/// as "(-9.5, 9.5)" or "-9.5,9.5"; modes as "TRAIN", "EVAL", "PREDICT", "GLOBAL"
/// (also "modes.TRAIN"). For an optional parameter "None", "null" and "" mean
/// absent.
///
/// A number a rule cannot take below some value (a count, a percentage, a
/// tolerance) is read with that minimum, `params.get("threshold", 1e-07,
/// non_negative)`: a value below it is a config_error naming the parameter,
/// never a rule that silently never (or always) triggers.

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::rules {

/// A pair of numbers, as SageMaker's "(min, max)" parameters.
using number_pair = std::pair<double, double>;

/// The least value a numeric parameter may take (every number, for a list).
struct param_minimum {
    double value = 0.0;
    /// True when `value` itself is allowed.
    bool inclusive = true;
};
/// 0 or more: thresholds of percentages, ratios and magnitudes, tolerances, counts of samples.
inline constexpr param_minimum non_negative{0.0, true};
/// More than 0.
inline constexpr param_minimum positive{0.0, false};
/// `value` or more: at_least(1) for a number of steps or a patience.
[[nodiscard]] constexpr param_minimum at_least(double value) noexcept { return param_minimum{value, true}; }

namespace detail {

/// `text` without leading and trailing white space.
[[nodiscard]] TDBG_DECL std::string_view trim_view(std::string_view text) noexcept;
/// True for an absent optional value: "", "None", "null" (any case, trimmed).
[[nodiscard]] TDBG_DECL bool is_none(std::string_view text);
/// Python's float(text), or nullopt.
[[nodiscard]] TDBG_DECL std::optional<double> parse_double(std::string_view text) noexcept;
/// A parameter's number: parse_double, but NaN is refused (no comparison with it is ever true,
/// so a NaN threshold would silently never trigger).
[[nodiscard]] TDBG_DECL std::optional<double> parse_number(std::string_view text) noexcept;
/// Python's int(text), also of an integral float ("3.0"), or nullopt.
[[nodiscard]] TDBG_DECL std::optional<std::int64_t> parse_int(std::string_view text) noexcept;
/// True/False in the spellings of the file comment, or nullopt.
[[nodiscard]] TDBG_DECL std::optional<bool> parse_bool(std::string_view text);
/// The items of "a, b" or "['a', 'b']" (brackets, quotes and empty items dropped).
[[nodiscard]] TDBG_DECL std::vector<std::string> parse_list(std::string_view text);
/// Numbers as parse_list gives them, or nullopt when one is not a number (parse_number).
[[nodiscard]] TDBG_DECL std::optional<std::vector<double>> parse_numbers(std::string_view text);
/// A mode: "TRAIN", "modes.EVAL", "ModeKeys.PREDICT" (any case), or nullopt.
[[nodiscard]] TDBG_DECL std::optional<mode> parse_mode_param(std::string_view text);

/// How a parameter of type T is parsed and reported.
template <class T, class = void>
struct param_traits;

/// True when a parameter type reports the text as given rather than the parsed value.
template <class T, class = void>
struct reports_as_given : std::false_type {};
template <class T>
struct reports_as_given<T, std::void_t<decltype(T::report_as_given)>> : std::bool_constant<T::report_as_given> {};

/// True when `v` is below `minimum`.
[[nodiscard]] constexpr bool below(double v, const param_minimum& minimum) noexcept {
    return minimum.inclusive ? v < minimum.value : v <= minimum.value;
}

/// True when a parameter type can be read with a param_minimum (its traits have `below`).
template <class T, class = void>
struct takes_minimum : std::false_type {};
template <class T>
struct takes_minimum<T, std::void_t<decltype(param_traits<T>::below(std::declval<const T&>(), param_minimum{}))>>
    : std::true_type {};

template <>
struct param_traits<double> {
    static constexpr const char* expected = "a number such as 0.5 or 1e-07 (not NaN)";
    static std::optional<double> parse(std::string_view text) { return parse_number(text); }
    static format::json_value to_json(double v) { return v; }
    static bool below(double v, const param_minimum& minimum) { return detail::below(v, minimum); }
};

template <>
struct param_traits<float> {
    static constexpr const char* expected = "a number such as 0.5 or 1e-07 (not NaN)";
    static std::optional<float> parse(std::string_view text) {
        const auto d = parse_number(text);
        return d ? std::optional<float>(static_cast<float>(*d)) : std::nullopt;
    }
    static format::json_value to_json(float v) { return static_cast<double>(v); }
    static bool below(float v, const param_minimum& minimum) { return detail::below(v, minimum); }
};

template <class T>
struct param_traits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
    static constexpr const char* expected = "an integer such as 10";
    static std::optional<T> parse(std::string_view text) {
        const auto v = parse_int(text);
        if (!v || (std::is_unsigned_v<T> && *v < 0)) {
            return std::nullopt;
        }
        if (*v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            (*v > 0 && static_cast<std::uint64_t>(*v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
            return std::nullopt;
        }
        return static_cast<T>(*v);
    }
    static format::json_value to_json(T v) { return v; }
    static bool below(T v, const param_minimum& minimum) { return detail::below(static_cast<double>(v), minimum); }
};

template <>
struct param_traits<bool> {
    static constexpr const char* expected = "a boolean: True or False";
    static std::optional<bool> parse(std::string_view text) { return parse_bool(text); }
    static format::json_value to_json(bool v) { return v; }
};

template <>
struct param_traits<std::string> {
    static constexpr const char* expected = "a string";
    static std::optional<std::string> parse(std::string_view text) { return std::string(text); }
    static format::json_value to_json(const std::string& v) { return v; }
};

template <>
struct param_traits<std::vector<std::string>> {
    static constexpr const char* expected = "a comma-separated list such as \"a, b\"";
    static constexpr bool report_as_given = true; // resolved_params shows ".*", not [".*"]
    static std::optional<std::vector<std::string>> parse(std::string_view text) { return parse_list(text); }
    static format::json_value to_json(const std::vector<std::string>& v) { return format::json_value::array_of(v); }
};

template <>
struct param_traits<std::vector<double>> {
    static constexpr const char* expected = "a comma-separated list of numbers such as \"50, 50\" (not NaN)";
    static std::optional<std::vector<double>> parse(std::string_view text) { return parse_numbers(text); }
    static format::json_value to_json(const std::vector<double>& v) { return format::json_value::array_of(v); }
    static bool below(const std::vector<double>& v, const param_minimum& minimum) {
        for (const double x : v) {
            if (detail::below(x, minimum)) {
                return true;
            }
        }
        return false;
    }
};

template <>
struct param_traits<number_pair> {
    static constexpr const char* expected = "a pair of numbers such as \"(-9.5, 9.5)\" (not NaN)";
    static std::optional<number_pair> parse(std::string_view text) {
        const auto items = parse_numbers(text);
        if (!items || items->size() != 2) {
            return std::nullopt;
        }
        return number_pair{(*items)[0], (*items)[1]};
    }
    static format::json_value to_json(const number_pair& v) { return format::json_value::array({v.first, v.second}); }
};

template <>
struct param_traits<mode> {
    static constexpr const char* expected = "a mode: TRAIN, EVAL, PREDICT or GLOBAL";
    static std::optional<mode> parse(std::string_view text) { return parse_mode_param(text); }
    static format::json_value to_json(mode v) { return std::string(mode_name(v)); }
};

} // namespace detail

/// A rule's parameters: string values by name, read with typed getters.
/// Copies share the record of which parameters were read and what they resolved
/// to, so a rule's base class can report both after the derived constructor ran.
class rule_params {
public:
    /// No parameters.
    TDBG_DECL rule_params();
    /// The parameters `items`, e.g. `{{"threshold", "0.001"}}`.
    TDBG_DECL rule_params(std::initializer_list<std::pair<const std::string, std::string>> items);
    /// The parameters `items`.
    TDBG_DECL explicit rule_params(std::map<std::string, std::string> items);

    /// A copy with a fresh record of what was read (for building another rule).
    [[nodiscard]] TDBG_DECL rule_params clone() const;

    /// Sets (or replaces) `key`.
    TDBG_DECL void set(const std::string& key, std::string value);

    /// The rule these parameters are for, named in error messages.
    TDBG_DECL void set_context(std::string rule_name);
    /// The rule named in error messages ("" when none was set).
    [[nodiscard]] TDBG_DECL std::string context() const;

    /// True when `key` was given.
    [[nodiscard]] TDBG_DECL bool contains(const std::string& key) const;
    /// True when no parameter was given.
    [[nodiscard]] TDBG_DECL bool empty() const;
    /// Every parameter as given, by name.
    [[nodiscard]] TDBG_DECL std::map<std::string, std::string> items() const;
    /// The raw string of `key`, if given (marks it as known).
    [[nodiscard]] TDBG_DECL std::optional<std::string> raw(const std::string& key) const;

    /// `key` as a T, or `fallback` when not given. Throws config_error naming
    /// the parameter and the expected form when the value does not parse.
    template <class T>
    [[nodiscard]] T get(const std::string& key, const T& fallback) const {
        auto v = parse_as<T>(key, false);
        T out = v ? std::move(*v) : fallback;
        resolve(key, report<T>(key, out));
        return out;
    }
    /// `get`, and a config_error naming the parameter when the value given is below `minimum`.
    template <class T>
    [[nodiscard]] T get(const std::string& key, const T& fallback, const param_minimum& minimum) const {
        static_assert(detail::takes_minimum<T>::value, "a minimum applies to numbers and lists of numbers");
        auto v = parse_as<T>(key, false, &minimum);
        T out = v ? std::move(*v) : fallback;
        resolve(key, report<T>(key, out));
        return out;
    }
    /// `get` for a string parameter with a literal default.
    [[nodiscard]] std::string get(const std::string& key, const char* fallback) const {
        return get<std::string>(key, std::string(fallback));
    }

    /// `key` as a T; absent, "None", "null" or "" give nullopt.
    template <class T>
    [[nodiscard]] std::optional<T> get_optional(const std::string& key) const {
        auto v = parse_as<T>(key, true);
        resolve(key, v ? report<T>(key, *v) : format::json_value());
        return v;
    }
    /// `get_optional`, and a config_error naming the parameter when the value given is below `minimum`.
    template <class T>
    [[nodiscard]] std::optional<T> get_optional(const std::string& key, const param_minimum& minimum) const {
        static_assert(detail::takes_minimum<T>::value, "a minimum applies to numbers and lists of numbers");
        auto v = parse_as<T>(key, true, &minimum);
        resolve(key, v ? report<T>(key, *v) : format::json_value());
        return v;
    }

    /// `key` as a T; throws config_error when it was not given.
    template <class T>
    [[nodiscard]] T get_required(const std::string& key) const {
        auto v = parse_as<T>(key, true);
        if (!v) {
            fail_required(key, detail::param_traits<T>::expected);
        }
        resolve(key, report<T>(key, *v));
        return std::move(*v);
    }
    /// `get_required`, and a config_error naming the parameter when the value given is below `minimum`.
    template <class T>
    [[nodiscard]] T get_required(const std::string& key, const param_minimum& minimum) const {
        static_assert(detail::takes_minimum<T>::value, "a minimum applies to numbers and lists of numbers");
        auto v = parse_as<T>(key, true, &minimum);
        if (!v) {
            fail_required(key, detail::param_traits<T>::expected);
        }
        resolve(key, report<T>(key, *v));
        return std::move(*v);
    }

    /// Records `key` as a parameter the rule understands, without reading it.
    TDBG_DECL void declare(const std::string& key) const;

    /// Every parameter a getter asked for or declare() named, given or not, sorted: the
    /// parameters the rule takes, as far as its constructor read them.
    [[nodiscard]] TDBG_DECL std::vector<std::string> known() const;

    /// The given parameters that no getter asked for, sorted.
    [[nodiscard]] TDBG_DECL std::vector<std::string> unknown() const;

    /// Throws config_error listing the unknown parameters and the known ones.
    TDBG_DECL void check_unknown() const;

    /// Every parameter a getter resolved, with its value (default included), by name.
    [[nodiscard]] TDBG_DECL format::json_value resolved() const;

private:
    struct state;

    template <class T>
    [[nodiscard]] std::optional<T> parse_as(const std::string& key, bool none_is_absent,
                                            const param_minimum* minimum = nullptr) const {
        const auto text = raw(key);
        if (!text || (none_is_absent && detail::is_none(*text))) {
            return std::nullopt;
        }
        auto v = detail::param_traits<T>::parse(*text);
        if (!v) {
            fail_parse(key, *text, detail::param_traits<T>::expected);
        }
        if constexpr (detail::takes_minimum<T>::value) {
            if (minimum != nullptr && detail::param_traits<T>::below(*v, *minimum)) {
                fail_minimum(key, *text, *minimum);
            }
        }
        return v;
    }

    template <class T>
    [[nodiscard]] format::json_value report(const std::string& key, const T& value) const {
        if constexpr (detail::reports_as_given<detail::param_traits<T>>::value) {
            if (auto text = raw(key)) {
                return std::string(detail::trim_view(*text));
            }
        }
        return detail::param_traits<T>::to_json(value);
    }

    TDBG_DECL state& own();
    TDBG_DECL void resolve(const std::string& key, format::json_value value) const;
    [[noreturn]] TDBG_DECL void fail_required(const std::string& key, const char* expected) const;
    [[noreturn]] TDBG_DECL void fail_parse(const std::string& key, const std::string& text, const char* expected) const;
    [[noreturn]] TDBG_DECL void fail_minimum(const std::string& key, const std::string& text,
                                             const param_minimum& minimum) const;

    std::shared_ptr<state> state_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/rule_params.ipp"
#endif
