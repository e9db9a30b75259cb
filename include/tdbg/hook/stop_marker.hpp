#pragma once
/// \file
/// The early-stop marker: a rule process that wants training to stop writes
/// `tdbg_stop_training.json` (format::stop_marker_key) at the root of the run:
///
///     {"rule": "VanishingGradient", "step": 7, "reason": "mean |gradient| < 1e-07"}
///
/// `rule` names the rule, `step` is the global step at which its condition was
/// met, `reason` is free text for people. All three are optional for a reader;
/// the marker's presence alone means "stop". The hook looks for it at most once
/// per step (and at most once per hook_options::stop_check_interval) and then
/// reports it through hook::should_stop() and hook::stop_request().

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tdbg {

/// What the stop marker says.
struct stop_request {
    std::string rule;
    std::optional<std::int64_t> step;
    std::string reason;
};

/// The marker's JSON text for `request` (what a rule process writes).
[[nodiscard]] inline std::string make_stop_marker(const stop_request& request) {
    nlohmann::ordered_json j;
    j["rule"] = request.rule;
    j["step"] = request.step ? nlohmann::ordered_json(*request.step) : nlohmann::ordered_json(nullptr);
    j["reason"] = request.reason;
    return j.dump();
}

/// Reads a marker leniently: fields that are missing or of another type stay
/// empty (a marker that is not JSON still asks to stop; its text becomes the reason).
[[nodiscard]] inline stop_request parse_stop_marker(std::string_view text) {
    stop_request out;
    const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_object()) {
        out.reason = std::string(text.substr(0, 1000));
        return out;
    }
    if (auto it = j.find("rule"); it != j.end() && it->is_string()) {
        out.rule = it->get<std::string>();
    }
    if (auto it = j.find("step"); it != j.end() && it->is_number_integer()) {
        out.step = it->get<std::int64_t>();
    }
    if (auto it = j.find("reason"); it != j.end() && it->is_string()) {
        out.reason = it->get<std::string>();
    }
    return out;
}

} // namespace tdbg
