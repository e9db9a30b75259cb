#pragma once
// tdbg's JSON values next to nlohmann's, which the tests use as an independent
// reader of the documents tdbg writes.

#include <nlohmann/json.hpp>

#include "tdbg/format/json.hpp"

namespace tdbg::test {

/// `value` as nlohmann's JSON (through its text), to compare with what nlohmann read.
inline nlohmann::json to_nlohmann(const tdbg::format::json_value& value) {
    return nlohmann::json::parse(tdbg::format::dump_json(value));
}

} // namespace tdbg::test
