#pragma once
// The fixtures' `<run>.rules.json` come from re-implementations of the rules
// (tools/smdebug/doc_rules.py) written from AWS's 2020 descriptions. Where AWS's
// page today, which tdbg follows, defaults differently, the tests pass the
// reference's value explicitly: a fixture entry then runs as it ran in Python.

#include <map>
#include <set>
#include <string>

namespace tdbg::test {

/// By rule: the reference's value of each parameter whose default differs from AWS's.
inline const std::map<std::string, std::map<std::string, std::string>> reference_defaults{
    // AWS: diff_percent 0.1, increase_threshold_percent 5, mode GLOBAL. The reference: the loss
    // must only be lower, no check of a rise, and the mode found as AWS's description says.
    {"LossNotDecreasing", {{"diff_percent", "0.0"}, {"increase_threshold_percent", "None"}, {"mode", "None"}}},
};

/// Adds to `params` the reference defaults of `rule` it does not give; returns the keys added.
inline std::set<std::string> add_reference_defaults(const std::string& rule, std::map<std::string, std::string>& params) {
    std::set<std::string> added;
    const auto it = reference_defaults.find(rule);
    if (it == reference_defaults.end()) {
        return added;
    }
    for (const auto& [key, value] : it->second) {
        if (params.emplace(key, value).second) {
            added.insert(key);
        }
    }
    return added;
}

} // namespace tdbg::test
