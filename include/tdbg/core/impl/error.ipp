#pragma once
/// \file
/// Definitions of tdbg/core/error.hpp.

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"

namespace tdbg {

TDBG_DECL format_error::format_error(const std::string& what, std::string file, std::uint64_t offset)
    : error(file.empty() ? what : fmt::format("{} at byte {}: {}", file, offset, what)), file_(std::move(file)),
      offset_(offset) {}

TDBG_DECL rule_evaluation_condition_met::rule_evaluation_condition_met(const std::string& rule, std::int64_t step,
                                                                      bool end_of_rule)
    : error(fmt::format("rule {} met its evaluation condition at step {}", rule, step)), rule_(rule), step_(step),
      end_of_rule_(end_of_rule) {}

} // namespace tdbg
