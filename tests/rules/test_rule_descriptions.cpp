// What rules say of themselves (rules/description.hpp): every built-in rule's
// description, its documented parameters against those its constructor reads and
// their defaults against what it resolves, the registry's describe(), and the
// text `tdbg rules --list` and `--describe` print.

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "rule_run.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/rules/builtin.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

using tdbg::rules::rule_description;

// A resolved parameter (rule_params::resolved()) written as a description writes its default:
// None, True/False, numbers in their shortest form, lists as comma-separated items.
std::string described_value(const tdbg::format::json_value& v) {
    if (v.is_null()) {
        return "None";
    }
    if (v.is_bool()) {
        return v.as_bool() ? "True" : "False";
    }
    if (v.is_integer()) {
        return fmt::format("{}", v.as_int64());
    }
    if (v.is_number()) {
        return fmt::format("{}", v.as_double());
    }
    if (v.is_string()) {
        return v.as_string();
    }
    std::string out;
    for (const auto& item : v.items()) {
        out += (out.empty() ? "" : ", ") + described_value(item);
    }
    return out;
}

// What some rules cannot be built without, as alternatives: a parameter's default is read
// from a build with the first alternative that does not give it.
const std::map<std::string, std::vector<std::map<std::string, std::string>>> description_required_params{
    {"AllZero", {{{"tensor_regex", "w.*"}}, {{"collection_names", "weights"}}}},
    {"TensorVariance", {{{"tensor_regex", "w.*"}}, {{"collection_names", "weights"}}}},
    {"UnchangedTensor", {{{"tensor_regex", "w.*"}}, {{"collection_names", "weights"}}}},
};

// Documented defaults a rule reads as None and then applies itself (the parameter was
// left absent): by rule and parameter.
const std::set<std::pair<std::string, std::string>> defaults_applied_when_absent{
    {"SaturatedActivation", "tensor_regex"},
};

// The parameters to build `rule` with when `parameter` is looked at.
std::map<std::string, std::string> description_params_without(const std::string& rule, const std::string& parameter) {
    const auto it = description_required_params.find(rule);
    if (it == description_required_params.end()) {
        return {};
    }
    for (const auto& alternative : it->second) {
        if (alternative.count(parameter) == 0) {
            return alternative;
        }
    }
    FAIL("no way to build " << rule << " without " << parameter);
    return {};
}

// A run with one step, enough to build any built-in rule over.
void write_description_run(const tdbg::test::rule_run& run) {
    run.collections({{"losses", "^loss$"}, {"weights", "^w$"}});
    run.step(0, {{"loss", tdbg::test::scalar(1.0F), {}}, {"w", tdbg::test::scalar(0.5F), {}}});
    run.end();
}

// A rule of a program's own, with a description.
class described_gradient_rule : public tdbg::rules::rule<described_gradient_rule> {
public:
    described_gradient_rule(tdbg::trial base, const tdbg::rules::rule_params& params)
        : rule(std::move(base), params), limit_(params.get("limit", 2.5)) {}
    static rule_description describe() {
        return {"A loss is above a limit.", "Met at a step when the loss is above limit.",
                {{"limit", "2.5", "the largest loss allowed"}}};
    }
    bool invoke_at_step(std::int64_t step) const { return tdbg::rules::scalar_of(value("loss", step)) > limit_; }

private:
    double limit_;
};

// A rule of a program's own, without one.
class undescribed_gradient_rule : public tdbg::rules::rule<undescribed_gradient_rule> {
public:
    undescribed_gradient_rule(tdbg::trial base, const tdbg::rules::rule_params& params)
        : rule(std::move(base), params) {}
    bool invoke_at_step(std::int64_t /*step*/) const { return false; }
};

} // namespace

TEST_CASE("every built-in rule is described, with each parameter it reads and the default it resolves") {
    tdbg::test::temp_dir dir("rule_descriptions");
    tdbg::test::rule_run run(dir.path());
    write_description_run(run);
    const auto trial = tdbg::create_trial(dir.path().string());
    const auto build = [&](const std::string& rule, std::map<std::string, std::string> params) {
        std::vector<tdbg::trial> others;
        if (tdbg::rules::registry::compares_runs(rule)) {
            others.push_back(trial);
        }
        return tdbg::rules::registry::create(rule, trial, tdbg::rules::rule_params(std::move(params)), others,
                                             tdbg::rules::rule_logger::silent());
    };

    std::size_t builtins = 0;
    tdbg::rules::for_each_builtin_rule([&](std::string_view name_view, auto) {
        const std::string name(name_view);
        INFO(name);
        ++builtins;
        const auto description = tdbg::rules::registry::describe(name);
        REQUIRE(description.has_value());
        CHECK_FALSE(description->summary.empty());
        CHECK(description->summary.find('\n') == std::string::npos);
        CHECK(description->summary.size() <= 80);
        CHECK(description->text.size() > description->summary.size());
        REQUIRE_FALSE(description->parameters.empty());

        // The parameters documented are those the constructor reads or declares, each once.
        std::set<std::string> documented;
        for (const auto& p : description->parameters) {
            CHECK(documented.insert(p.name).second);
            CHECK_FALSE(p.default_text.empty());
            CHECK_FALSE(p.meaning.empty());
        }
        std::set<std::string> read;
        const auto alternatives = description_required_params.find(name);
        if (alternatives == description_required_params.end()) {
            const auto known = build(name, {}).params().known();
            read.insert(known.begin(), known.end());
        } else {
            for (const auto& params : alternatives->second) {
                const auto known = build(name, params).params().known();
                read.insert(known.begin(), known.end());
            }
        }
        CHECK(documented == read);

        // Each documented default is what the rule resolves when not given, and giving it
        // explicitly resolves to the same.
        for (const auto& p : description->parameters) {
            INFO(p.name << "=" << p.default_text);
            auto params = description_params_without(name, p.name);
            const auto resolved = build(name, params).params().resolved();
            const tdbg::format::json_value* value = resolved.find(p.name);
            const bool applied_when_absent = defaults_applied_when_absent.count({name, p.name}) != 0;
            if (value == nullptr) {
                CHECK(p.default_text == "None"); // declared only: one of two spellings, not given
            } else if (applied_when_absent) {
                CHECK(value->is_null());
            } else {
                CHECK(described_value(*value) == p.default_text);
            }
            if (p.default_text != "None") {
                params[p.name] = p.default_text;
                const auto given = build(name, params).params().resolved();
                REQUIRE(given.find(p.name) != nullptr);
                CHECK(described_value(*given.find(p.name)) == p.default_text);
            }
        }
    });
    CHECK(builtins == 20);
}

TEST_CASE("the registry keeps a rule's own description, and lists a rule without one as undescribed") {
    tdbg::rules::registry::add<described_gradient_rule>("DescribedLossRule");
    tdbg::rules::registry::add<undescribed_gradient_rule>("UndescribedLossRule");
    tdbg::rules::registry::add(
        "FactoryLossRule", tdbg::rules::registry::make_factory<undescribed_gradient_rule>(), false,
        rule_description{"Built by a factory.", "Never met.", {}});

    const auto described = tdbg::rules::registry::describe("described_loss_rule"); // spellings lookup() takes
    REQUIRE(described.has_value());
    CHECK(described->summary == "A loss is above a limit.");
    REQUIRE(described->parameters.size() == 1);
    CHECK(described->parameters[0].name == "limit");
    CHECK(described->parameters[0].default_text == "2.5");
    CHECK_FALSE(tdbg::rules::registry::describe("UndescribedLossRule").has_value());
    const auto by_factory = tdbg::rules::registry::describe("FactoryLossRule");
    REQUIRE(by_factory.has_value());
    CHECK(by_factory->summary == "Built by a factory.");

    CHECK(tdbg::rules::format_rule_summary("DescribedLossRule", described) ==
          "DescribedLossRule  A loss is above a limit.\n"
          "  limit=2.5  the largest loss allowed\n");
    CHECK(tdbg::rules::format_rule_summary("UndescribedLossRule", std::nullopt) ==
          "UndescribedLossRule  (no description)\n"
          "  parameters unknown\n");
    CHECK(tdbg::rules::format_rule_summary("FactoryLossRule", by_factory) ==
          "FactoryLossRule  Built by a factory.\n"
          "  (no parameters)\n");
    CHECK(tdbg::rules::format_rule_description("UndescribedLossRule", std::nullopt)
              .rfind("UndescribedLossRule  (no description)\n\n", 0) == 0);

    for (const char* name : {"DescribedLossRule", "UndescribedLossRule", "FactoryLossRule"}) {
        CHECK(tdbg::rules::registry::remove(name));
    }
}

TEST_CASE("describing an unknown rule is a config_error naming the nearest registered rule") {
    try {
        (void)tdbg::rules::registry::describe("VanishingGradiant");
        FAIL("no config_error");
    } catch (const tdbg::config_error& e) {
        const std::string message = e.what();
        CHECK(message.find("unknown rule 'VanishingGradiant' (did you mean 'VanishingGradient'?)") != std::string::npos);
        CHECK(message.find("registered rules: ") != std::string::npos);
    }
    try {
        (void)tdbg::rules::registry::describe("NothingLikeAnyRule");
        FAIL("no config_error");
    } catch (const tdbg::config_error& e) {
        const std::string message = e.what();
        CHECK(message.find("unknown rule 'NothingLikeAnyRule'; registered rules: ") != std::string::npos);
        CHECK(message.find("did you mean") == std::string::npos);
    }
}

TEST_CASE("a rule's description lists its parameters aligned and wraps its text at 80 columns") {
    const rule_description d{
        "Finds a problem.",
        "First paragraph, long enough to need wrapping: " + std::string(30, 'a') + " " + std::string(30, 'b') + " " +
            std::string(30, 'c') + ".\n\nA list:\n- one item\n- another item",
        {{"threshold", "0.5", "how much"}, {"tensor_regex", ".*relu_output", "which tensors"}, {"flag", "False", ""}}};
    CHECK(tdbg::rules::format_rule_summary("Problem", d) == "Problem  Finds a problem.\n"
                                                            "  threshold=0.5               how much\n"
                                                            "  tensor_regex=.*relu_output  which tensors\n"
                                                            "  flag=False\n");
    const std::string text = tdbg::rules::format_rule_description("Problem", d);
    CHECK(text == "Problem  Finds a problem.\n"
                  "\n"
                  "First paragraph, long enough to need wrapping: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n" // 77 columns
                  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccc.\n"
                  "\n"
                  "A list:\n"
                  "- one item\n"
                  "- another item\n"
                  "\n"
                  "Split by steps (--start-step, --end-step): the rule carries state from step to\n"
                  "step; a range is evaluated from the run's first step and reports its own steps\n"
                  "only, so ranges merged (tdbg rules --merge) give the whole run's verdict, each\n"
                  "range reading the run up to its end.\n"
                  "\n"
                  "Parameters:\n"
                  "  threshold=0.5               how much\n"
                  "  tensor_regex=.*relu_output  which tensors\n"
                  "  flag=False\n");
}
