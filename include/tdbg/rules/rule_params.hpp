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

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::rules {

/// A pair of numbers, as SageMaker's "(min, max)" parameters.
using number_pair = std::pair<double, double>;

namespace detail {

inline std::string_view trim_view(std::string_view text) noexcept {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return text;
}

/// The concatenation of `parts` (strings, string views, C strings) in one allocation.
template <class... Parts>
std::string concat(const Parts&... parts) {
    std::string out;
    out.reserve((std::string_view(parts).size() + ... + 0));
    (out.append(std::string_view(parts)), ...);
    return out;
}

inline std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

/// True for the spellings that mean "no value" for an optional parameter.
inline bool is_none(std::string_view text) {
    const std::string l = lower(trim_view(text));
    return l.empty() || l == "none" || l == "null";
}

/// Python's float(): optional sign, decimal or exponent form, inf, nan.
inline std::optional<double> parse_double(std::string_view text) noexcept {
    text = trim_view(text);
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
    }
    if (text.empty()) {
        return std::nullopt;
    }
    double out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return out;
}

inline std::optional<std::int64_t> parse_int(std::string_view text) noexcept {
    text = trim_view(text);
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
    }
    std::int64_t out = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) {
        return out;
    }
    // "3.0": an integral float, as Python's int(float(x)) would take it.
    const auto d = parse_double(text);
    if (d && std::isfinite(*d) && std::floor(*d) == *d && std::fabs(*d) < 9.0e18) {
        return static_cast<std::int64_t>(*d);
    }
    return std::nullopt;
}

inline std::optional<bool> parse_bool(std::string_view text) {
    const std::string l = lower(trim_view(text));
    if (l == "true" || l == "1" || l == "yes" || l == "on") {
        return true;
    }
    if (l == "false" || l == "0" || l == "no" || l == "off") {
        return false;
    }
    return std::nullopt;
}

/// "a, b", "[a, b]", "['a', \"b\"]", "(a, b)" -> {"a", "b"}; empty items are dropped.
inline std::vector<std::string> parse_list(std::string_view text) {
    text = trim_view(text);
    if (text.size() >= 2 && ((text.front() == '[' && text.back() == ']') || (text.front() == '(' && text.back() == ')'))) {
        text = text.substr(1, text.size() - 2);
    }
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) {
            comma = text.size();
        }
        std::string_view item = trim_view(text.substr(start, comma - start));
        if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"') && item.back() == item.front()) {
            item = item.substr(1, item.size() - 2);
        }
        if (!item.empty()) {
            out.emplace_back(item);
        }
        start = comma + 1;
    }
    return out;
}

/// The trait behind rule_params::get<T>: how a T is parsed, described and reported.
template <class T, class = void>
struct param_traits;

template <class T, class = void>
struct reports_as_given : std::false_type {};
template <class T>
struct reports_as_given<T, std::void_t<decltype(T::report_as_given)>> : std::bool_constant<T::report_as_given> {};

template <>
struct param_traits<double> {
    static constexpr const char* expected = "a number such as 0.5 or 1e-07";
    static std::optional<double> parse(std::string_view text) { return parse_double(text); }
    static format::json_value to_json(double v) { return v; }
};

template <>
struct param_traits<float> {
    static constexpr const char* expected = "a number such as 0.5 or 1e-07";
    static std::optional<float> parse(std::string_view text) {
        auto d = parse_double(text);
        return d ? std::optional<float>(static_cast<float>(*d)) : std::nullopt;
    }
    static format::json_value to_json(float v) { return static_cast<double>(v); }
};

template <class T>
struct param_traits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
    static constexpr const char* expected = "an integer such as 10";
    static std::optional<T> parse(std::string_view text) {
        auto v = parse_int(text);
        if (!v) {
            return std::nullopt;
        }
        if constexpr (std::is_unsigned_v<T>) {
            if (*v < 0) {
                return std::nullopt;
            }
        }
        if (*v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            static_cast<std::uint64_t>(*v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
            return std::nullopt;
        }
        return static_cast<T>(*v);
    }
    static format::json_value to_json(T v) { return v; }
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
    static constexpr const char* expected = "a comma-separated list of numbers such as \"50, 50\"";
    static std::optional<std::vector<double>> parse(std::string_view text) {
        std::vector<double> out;
        for (const std::string& item : parse_list(text)) {
            auto d = parse_double(item);
            if (!d) {
                return std::nullopt;
            }
            out.push_back(*d);
        }
        return out;
    }
    static format::json_value to_json(const std::vector<double>& v) { return format::json_value::array_of(v); }
};

template <>
struct param_traits<number_pair> {
    static constexpr const char* expected = "a pair of numbers such as \"(-9.5, 9.5)\"";
    static std::optional<number_pair> parse(std::string_view text) {
        auto items = param_traits<std::vector<double>>::parse(text);
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
    static std::optional<mode> parse(std::string_view text) {
        std::string upper(trim_view(text));
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        for (std::string_view prefix : {"MODES.", "MODEKEYS."}) {
            if (upper.rfind(prefix, 0) == 0) {
                upper.erase(0, prefix.size());
            }
        }
        for (mode m : all_modes) {
            if (upper == mode_name(m)) {
                return m;
            }
        }
        return std::nullopt;
    }
    static format::json_value to_json(mode v) { return std::string(mode_name(v)); }
};

} // namespace detail

/// A rule's parameters: string values by name, read with typed getters.
/// Copies share the record of which parameters were read and what they resolved
/// to, so a rule's base class can report both after the derived constructor ran.
class rule_params {
public:
    /// No parameters.
    rule_params() : state_(std::make_shared<state>()) {}
    /// The parameters `items`, e.g. `{{"threshold", "0.001"}}`.
    rule_params(std::initializer_list<std::pair<const std::string, std::string>> items)
        : state_(std::make_shared<state>()) {
        state_->values = std::map<std::string, std::string>(items);
    }
    /// The parameters `items`.
    explicit rule_params(std::map<std::string, std::string> items) : state_(std::make_shared<state>()) {
        state_->values = std::move(items);
    }

    /// A copy with a fresh record of what was read (for building another rule).
    [[nodiscard]] rule_params clone() const {
        rule_params out(items());
        out.state_->rule = context();
        return out;
    }

    /// Sets (or replaces) `key`.
    void set(const std::string& key, std::string value) {
        std::lock_guard<std::mutex> lock(own().mutex);
        own().values[key] = std::move(value);
    }

    /// The rule these parameters are for, named in error messages.
    void set_context(std::string rule_name) {
        std::lock_guard<std::mutex> lock(own().mutex);
        own().rule = std::move(rule_name);
    }
    /// The rule named in error messages ("" when none was set).
    [[nodiscard]] std::string context() const {
        if (!state_) {
            return {};
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->rule;
    }

    /// True when `key` was given.
    [[nodiscard]] bool contains(const std::string& key) const {
        if (!state_) {
            return false;
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->values.count(key) != 0;
    }
    /// True when no parameter was given.
    [[nodiscard]] bool empty() const { return items().empty(); }
    /// Every parameter as given, by name.
    [[nodiscard]] std::map<std::string, std::string> items() const {
        if (!state_) {
            return {};
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->values;
    }
    /// The raw string of `key`, if given (marks it as known).
    [[nodiscard]] std::optional<std::string> raw(const std::string& key) const {
        if (!state_) {
            return std::nullopt;
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->known.insert(key);
        auto it = state_->values.find(key);
        return it == state_->values.end() ? std::nullopt : std::optional<std::string>(it->second);
    }

    /// `key` as a T, or `fallback` when not given. Throws config_error naming
    /// the parameter and the expected form when the value does not parse.
    template <class T>
    [[nodiscard]] T get(const std::string& key, const T& fallback) const {
        auto v = parse_as<T>(key, false);
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

    /// `key` as a T; throws config_error when it was not given.
    template <class T>
    [[nodiscard]] T get_required(const std::string& key) const {
        auto v = parse_as<T>(key, true);
        if (!v) {
            throw config_error(prefix() + "parameter '" + key + "' is required (expected " +
                               detail::param_traits<T>::expected + ")");
        }
        resolve(key, report<T>(key, *v));
        return std::move(*v);
    }

    /// Records `key` as a parameter the rule understands, without reading it.
    void declare(const std::string& key) const {
        if (state_) {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->known.insert(key);
        }
    }

    /// The given parameters that no getter asked for, sorted.
    [[nodiscard]] std::vector<std::string> unknown() const {
        std::vector<std::string> out;
        if (!state_) {
            return out;
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        for (const auto& item : state_->values) {
            if (state_->known.count(item.first) == 0) {
                out.push_back(item.first);
            }
        }
        return out;
    }

    /// Throws config_error listing the unknown parameters and the known ones.
    void check_unknown() const {
        const auto bad = unknown();
        if (bad.empty()) {
            return;
        }
        std::string msg = prefix() + "unknown parameter" + (bad.size() > 1 ? "s " : " ");
        for (std::size_t i = 0; i < bad.size(); ++i) {
            msg += (i ? ", '" : "'") + bad[i] + "'";
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        msg += "; this rule takes ";
        if (state_->known.empty()) {
            msg += "no parameters";
        } else {
            bool first = true;
            for (const auto& k : state_->known) {
                msg += (first ? "" : ", ") + k;
                first = false;
            }
        }
        throw config_error(msg);
    }

    /// Every parameter a getter resolved, with its value (default included), by name.
    [[nodiscard]] format::json_value resolved() const {
        if (!state_) {
            return format::json_value::object();
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->resolved;
    }

private:
    struct state {
        std::mutex mutex;
        std::string rule;
        std::map<std::string, std::string> values;
        std::set<std::string> known;
        format::json_value resolved = format::json_value::object();
    };

    state& own() {
        if (!state_) {
            state_ = std::make_shared<state>();
        }
        return *state_;
    }

    [[nodiscard]] std::string prefix() const {
        const std::string r = context();
        return r.empty() ? std::string("rule parameters: ") : "rule " + r + ": ";
    }

    template <class T>
    [[nodiscard]] std::optional<T> parse_as(const std::string& key, bool none_is_absent) const {
        auto text = raw(key);
        if (!text) {
            return std::nullopt;
        }
        if (none_is_absent && detail::is_none(*text)) {
            return std::nullopt;
        }
        auto v = detail::param_traits<T>::parse(*text);
        if (!v) {
            throw config_error(prefix() + "parameter '" + key + "' = '" + text->substr(0, 200) + "' is not " +
                               detail::param_traits<T>::expected);
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

    void resolve(const std::string& key, format::json_value value) const {
        if (!state_) {
            return; // a default-constructed rule_params has nothing to record into
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->known.insert(key);
        state_->resolved[key] = std::move(value);
    }

    std::shared_ptr<state> state_;
};

} // namespace tdbg::rules
