#pragma once
/// \file
/// The early-stop marker: a rule process that wants training to stop writes
/// `tdbg_stop_training.json` (format::stop_marker_key) at the root of the run:
///
///     {"rule":"VanishingGradient","step":7,"reason":"mean |gradient| < 1e-07"}
///
/// `rule` names the rule, `step` is the global step at which its condition was
/// met, `reason` is free text for people. All three are optional for a reader;
/// the marker's presence alone means "stop". A hook looks for it once per
/// hook_options::stop_check_interval (0: at every step), on a background thread
/// (hook/detail/stop_watch.hpp), and reports it at the next begin_step() after the look
/// that found it, through hook::should_stop() and hook::stop_request().

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"

namespace tdbg {

/// What the stop marker says.
struct stop_request {
    std::string rule;
    std::optional<std::int64_t> step;
    std::string reason;
};

/// The marker's JSON text for `request` (what a rule process writes).
[[nodiscard]] TDBG_DECL std::string make_stop_marker(const stop_request& request);

/// Reads a marker leniently: fields that are missing or of another type stay
/// empty (a marker that is not JSON still asks to stop; its text becomes the reason).
[[nodiscard]] TDBG_DECL stop_request parse_stop_marker(std::string_view text);

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/stop_marker.ipp"
#endif
