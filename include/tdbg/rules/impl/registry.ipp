#pragma once
/// \file
/// Definitions of tdbg/rules/registry.hpp; the built-in rules are registered
/// here, once, under their SageMaker names.

#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/nearest_name.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/builtin.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/registry.hpp"

namespace tdbg::rules {

namespace detail {

struct registry_entry {
    registry::factory make;
    bool compares_runs = false;
    std::optional<rule_description> description;
};

struct registry_state {
    std::mutex mutex;
    std::map<std::string, registry_entry> factories;
};

// The table as add() sees it: the built-in rules may not be in it yet.
inline registry_state& registry_table() {
    static registry_state state;
    return state;
}

// The table with the built-in rules in it. They are added at the first use that needs them,
// never over a rule a program registered under the same name before (add() replaces a
// built-in rule, whenever it runs), and not by add(): a file that only registers a rule of
// its own then does not compile the twenty built-in rules into itself (header-only).
inline registry_state& registry_with_builtins() {
    registry_state& state = registry_table();
    static const bool builtins_added = [&state] {
        const std::lock_guard<std::mutex> lock(state.mutex);
        for_each_builtin_rule([&state](std::string_view name, auto tag) {
            using rule_class = typename decltype(tag)::type;
            state.factories.try_emplace(std::string(name),
                                        registry_entry{registry::make_factory<rule_class>(),
                                                       registry::takes_other_trials<rule_class>(),
                                                       description_of<rule_class>()});
        });
        return true;
    }();
    (void)builtins_added;
    return state;
}

inline std::string normalize_rule_name(std::string_view name) {
    std::string out;
    for (const char c : name) {
        if (c != '_' && c != '-' && c != ' ') {
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        }
    }
    return out;
}

} // namespace detail

TDBG_DECL void registry::add(const std::string& name, factory make, bool compares_runs,
                             std::optional<rule_description> description) {
    if (name.empty()) {
        throw config_error("registry: a rule needs a name");
    }
    // A name that lookup() would confuse with a built-in rule's is refused: which of the
    // two "vanishing_gradient" finds would depend on the order of the table.
    const std::string normalized = detail::normalize_rule_name(name);
    for_each_builtin_rule([&](std::string_view builtin, auto) {
        if (builtin != name && detail::normalize_rule_name(builtin) == normalized) {
            throw config_error(fmt::format(
                "registry: '{}' differs from the built-in rule '{}' only by case, '_' or '-'; register it as '{}' "
                "to replace the built-in rule, or choose another name",
                name, builtin, builtin));
        }
    });
    auto& s = detail::registry_table();
    const std::lock_guard<std::mutex> lock(s.mutex);
    s.factories[name] = detail::registry_entry{std::move(make), compares_runs, std::move(description)};
}

TDBG_DECL bool registry::compares_runs(std::string_view name) {
    const auto found = lookup(name);
    if (!found) {
        return false;
    }
    auto& s = detail::registry_with_builtins();
    const std::lock_guard<std::mutex> lock(s.mutex);
    return s.factories.at(*found).compares_runs;
}

TDBG_DECL bool registry::remove(const std::string& name) {
    auto& s = detail::registry_with_builtins();
    const std::lock_guard<std::mutex> lock(s.mutex);
    return s.factories.erase(name) != 0;
}

TDBG_DECL std::optional<std::string> registry::lookup(std::string_view name) {
    auto& s = detail::registry_with_builtins();
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (s.factories.count(std::string(name)) != 0) {
        return std::string(name);
    }
    const std::string wanted = detail::normalize_rule_name(name);
    for (const auto& item : s.factories) {
        if (detail::normalize_rule_name(item.first) == wanted) {
            return item.first;
        }
    }
    return std::nullopt;
}

TDBG_DECL std::vector<std::string> registry::names() {
    auto& s = detail::registry_with_builtins();
    const std::lock_guard<std::mutex> lock(s.mutex);
    std::vector<std::string> out;
    for (const auto& item : s.factories) {
        out.push_back(item.first);
    }
    return out;
}

TDBG_DECL config_error registry::unknown_rule(std::string_view name) {
    const auto known = names();
    const auto nearest = tdbg::detail::nearest_name(name, known);
    std::string listed;
    for (const auto& n : known) {
        listed += (listed.empty() ? "" : ", ") + n;
    }
    return config_error(fmt::format("unknown rule '{}'{}; registered rules: {}", name,
                                    nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : std::string(), listed));
}

TDBG_DECL std::optional<rule_description> registry::describe(std::string_view name) {
    const auto found = lookup(name);
    if (!found) {
        throw unknown_rule(name);
    }
    auto& s = detail::registry_with_builtins();
    const std::lock_guard<std::mutex> lock(s.mutex);
    return s.factories.at(*found).description;
}

TDBG_DECL step_dependence registry::dependence(std::string_view name) {
    const auto described = lookup(name) ? describe(name) : std::nullopt;
    return described ? described->dependence : step_dependence::carried_state;
}

TDBG_DECL worker_reads registry::workers_read(std::string_view name) {
    const auto described = lookup(name) ? describe(name) : std::nullopt;
    return described ? described->workers : worker_reads::every_worker;
}

TDBG_DECL any_rule registry::create(std::string_view name, const trial& base, const rule_params& params,
                                    std::vector<trial> others, const rule_logger& logger) {
    const auto found = lookup(name);
    if (!found) {
        throw unknown_rule(name);
    }
    factory make;
    {
        auto& s = detail::registry_with_builtins();
        const std::lock_guard<std::mutex> lock(s.mutex);
        make = s.factories.at(*found).make;
    }
    std::map<std::string, std::string> given = params.items();
    std::optional<std::string> action_str;
    for (const char* reserved : {"rule_to_invoke", "source_s3_uri", "action_str", "action_json_str"}) {
        auto it = given.find(reserved);
        if (it == given.end()) {
            continue;
        }
        if (std::string_view(reserved).substr(0, 6) == "action") {
            action_str = it->second;
        } else if (std::string_view(reserved) == "source_s3_uri") {
            logger.info(fmt::format("rule {}: source_s3_uri (a Python rule source) ignored; running the registered C++ rule",
                                    *found));
        }
        given.erase(it);
    }
    rule_params own(given);
    own.set_context(*found);
    any_rule r = make(base, std::move(others), own);
    own.check_unknown();
    r.set_name(*found);
    r.set_logger(logger);
    if (action_str) {
        add_actions_from_string(r.actions(), *action_str, base.storage(), logger);
    }
    return r;
}

TDBG_DECL any_rule registry::create(const rule_configuration& config, const trial& base, std::vector<trial> others,
                                    const rule_logger& logger) {
    any_rule r = create(config.rule_to_invoke, base, rule_params(config.parameters), std::move(others), logger);
    r.set_configuration_name(config.configuration_name);
    return r;
}

} // namespace tdbg::rules
