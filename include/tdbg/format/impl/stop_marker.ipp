#pragma once
/// \file
/// Definitions of tdbg/format/stop_marker.hpp.

#include <string>
#include <string_view>

#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/format/stop_marker.hpp"

namespace tdbg {

TDBG_DECL std::string make_stop_marker(const stop_request& request) {
    std::string out = "{\"rule\":";
    format::append_json_string(out, request.rule, true);
    out += ",\"step\":";
    out += request.step ? std::to_string(*request.step) : std::string("null");
    out += ",\"reason\":";
    format::append_json_string(out, request.reason, true);
    out += "}";
    return out;
}

TDBG_DECL stop_request parse_stop_marker(std::string_view text) {
    stop_request out;
    format::json_value j;
    try {
        j = format::parse_json(text, "tdbg_stop_training.json", "stop marker");
    } catch (const format_error&) {
        j = format::json_value();
    }
    if (!j.is_object()) {
        out.reason = std::string(text.substr(0, 1000));
        return out;
    }
    if (const auto* rule = j.find("rule"); rule != nullptr && rule->is_string()) {
        out.rule = rule->as_string();
    }
    if (const auto* step = j.find("step"); step != nullptr && step->type() == format::json_value::kind::integer) {
        out.step = step->as_int64();
    }
    if (const auto* reason = j.find("reason"); reason != nullptr && reason->is_string()) {
        out.reason = reason->as_string();
    }
    return out;
}

} // namespace tdbg
