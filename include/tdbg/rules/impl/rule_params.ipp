#pragma once
/// \file
/// Definitions of tdbg/rules/rule_params.hpp.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/rule_params.hpp"

namespace tdbg::rules {

namespace detail {

TDBG_DECL std::string_view trim_view(std::string_view text) noexcept {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return text;
}

/// `text` in lower case (ASCII).
inline std::string lower_ascii(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

TDBG_DECL bool is_none(std::string_view text) {
    const std::string l = lower_ascii(trim_view(text));
    return l.empty() || l == "none" || l == "null";
}

TDBG_DECL std::optional<double> parse_double(std::string_view text) noexcept {
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

TDBG_DECL std::optional<double> parse_number(std::string_view text) noexcept {
    const auto d = parse_double(text);
    return d && !std::isnan(*d) ? d : std::nullopt;
}

TDBG_DECL std::optional<std::int64_t> parse_int(std::string_view text) noexcept {
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

TDBG_DECL std::optional<bool> parse_bool(std::string_view text) {
    const std::string l = lower_ascii(trim_view(text));
    if (l == "true" || l == "1" || l == "yes" || l == "on") {
        return true;
    }
    if (l == "false" || l == "0" || l == "no" || l == "off") {
        return false;
    }
    return std::nullopt;
}

TDBG_DECL std::vector<std::string> parse_list(std::string_view text) {
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

TDBG_DECL std::optional<std::vector<double>> parse_numbers(std::string_view text) {
    std::vector<double> out;
    for (const std::string& item : parse_list(text)) {
        const auto d = parse_number(item);
        if (!d) {
            return std::nullopt;
        }
        out.push_back(*d);
    }
    return out;
}

TDBG_DECL std::optional<mode> parse_mode_param(std::string_view text) {
    std::string upper(trim_view(text));
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    for (const std::string_view prefix : {"MODES.", "MODEKEYS."}) {
        if (upper.rfind(prefix, 0) == 0) {
            upper.erase(0, prefix.size());
        }
    }
    for (const mode m : all_modes) {
        if (upper == mode_name(m)) {
            return m;
        }
    }
    return std::nullopt;
}

} // namespace detail

struct rule_params::state {
    std::mutex mutex;
    std::string rule;
    std::map<std::string, std::string> values;
    std::set<std::string> known;
    format::json_value resolved = format::json_value::object();
};

TDBG_DECL rule_params::rule_params() : state_(std::make_shared<state>()) {}

TDBG_DECL rule_params::rule_params(std::initializer_list<std::pair<const std::string, std::string>> items)
    : state_(std::make_shared<state>()) {
    state_->values = std::map<std::string, std::string>(items);
}

TDBG_DECL rule_params::rule_params(std::map<std::string, std::string> items) : state_(std::make_shared<state>()) {
    state_->values = std::move(items);
}

TDBG_DECL rule_params rule_params::clone() const {
    rule_params out(items());
    out.state_->rule = context();
    return out;
}

TDBG_DECL void rule_params::set(const std::string& key, std::string value) {
    std::lock_guard<std::mutex> lock(own().mutex);
    own().values[key] = std::move(value);
}

TDBG_DECL void rule_params::set_context(std::string rule_name) {
    std::lock_guard<std::mutex> lock(own().mutex);
    own().rule = std::move(rule_name);
}

TDBG_DECL std::string rule_params::context() const {
    if (!state_) {
        return {};
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->rule;
}

TDBG_DECL bool rule_params::contains(const std::string& key) const {
    if (!state_) {
        return false;
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->values.count(key) != 0;
}

TDBG_DECL bool rule_params::empty() const { return items().empty(); }

TDBG_DECL std::map<std::string, std::string> rule_params::items() const {
    if (!state_) {
        return {};
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->values;
}

TDBG_DECL std::optional<std::string> rule_params::raw(const std::string& key) const {
    if (!state_) {
        return std::nullopt;
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->known.insert(key);
    const auto it = state_->values.find(key);
    return it == state_->values.end() ? std::nullopt : std::optional<std::string>(it->second);
}

TDBG_DECL void rule_params::declare(const std::string& key) const {
    if (state_) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->known.insert(key);
    }
}

TDBG_DECL std::vector<std::string> rule_params::known() const {
    if (!state_) {
        return {};
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    return {state_->known.begin(), state_->known.end()};
}

TDBG_DECL std::vector<std::string> rule_params::unknown() const {
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

/// "rule NAME: " or "rule parameters: ", the start of a message about parameters of `rule`.
inline std::string params_message_prefix(const std::string& rule) {
    return rule.empty() ? std::string("rule parameters: ") : fmt::format("rule {}: ", rule);
}

TDBG_DECL void rule_params::check_unknown() const {
    const auto bad = unknown();
    if (bad.empty()) {
        return;
    }
    std::string msg = fmt::format("{}unknown parameter{} ", params_message_prefix(context()), bad.size() > 1 ? "s" : "");
    for (std::size_t i = 0; i < bad.size(); ++i) {
        msg += fmt::format("{}'{}'", i == 0 ? "" : ", ", bad[i]);
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    msg += "; this rule takes ";
    if (state_->known.empty()) {
        msg += "no parameters";
    } else {
        bool first = true;
        for (const auto& k : state_->known) {
            msg += fmt::format("{}{}", first ? "" : ", ", k);
            first = false;
        }
    }
    throw config_error(msg);
}

TDBG_DECL format::json_value rule_params::resolved() const {
    if (!state_) {
        return format::json_value::object();
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->resolved;
}

TDBG_DECL rule_params::state& rule_params::own() {
    if (!state_) {
        state_ = std::make_shared<state>();
    }
    return *state_;
}

TDBG_DECL void rule_params::resolve(const std::string& key, format::json_value value) const {
    if (!state_) {
        return; // a default-constructed rule_params has nothing to record into
    }
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->known.insert(key);
    state_->resolved[key] = std::move(value);
}

TDBG_DECL void rule_params::fail_required(const std::string& key, const char* expected) const {
    throw config_error(fmt::format("{}parameter '{}' is required (expected {})", params_message_prefix(context()), key,
                                   expected));
}

TDBG_DECL void rule_params::fail_parse(const std::string& key, const std::string& text, const char* expected) const {
    throw config_error(fmt::format("{}parameter '{}' = '{}' is not {}", params_message_prefix(context()), key,
                                   text.substr(0, 200), expected));
}

TDBG_DECL void rule_params::fail_minimum(const std::string& key, const std::string& text,
                                         const param_minimum& minimum) const {
    throw config_error(fmt::format("{}parameter '{}' = '{}' must be {} {:g}", params_message_prefix(context()), key,
                                   text.substr(0, 200), minimum.inclusive ? "at least" : "more than", minimum.value));
}

} // namespace tdbg::rules
