// A custom rule written in C++, run over a training run through the rule
// registry, the way the `tdbg rules` command line runs rules.
//
//     custom_rule [RUN_DIR] [THRESHOLD]
//
// Without RUN_DIR it first writes a small run with a tdbg hook (gradients
// that grow 3x per step) into a temporary directory. It prints the result
// for a person and as JSON, and exits 0 (no issues), 1 (issues found) or
// 2 (error), as `tdbg rules` does.
//
// The rule (custom_rule.hpp) derives from tdbg::rules::rule<custom_gradient_rule>
// and is registered by name with a registrar at namespace scope, so that it
// can be built from string parameters like any built-in rule:
//
//     const tdbg::rules::registrar<example::custom_gradient_rule> registration{"CustomGradientRule"};
//
// Adding it to the `tdbg` command line: the program must contain the rule, so
// compile a registrar into it. Every tools/cmd_*.cpp file is part of `tdbg`;
// add one, e.g. tools/cmd_rules_custom.cpp, holding
//
//     #include "custom_rule.hpp"   // your rule class (add its directory to tdbg_cli's include path)
//     namespace { const tdbg::rules::registrar<example::custom_gradient_rule> registration{"CustomGradientRule"}; }
//
// rebuild, and then:
//
//     tdbg rules --list                              # CustomGradientRule is listed
//     tdbg rules RUN_DIR --rule CustomGradientRule --param threshold=20.0
//
// or name it as rule_to_invoke in a SageMaker DebugRuleConfigurations file:
//
//     tdbg rules RUN_DIR --config rules.json --junit rules.xml

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "custom_rule.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

// Registered before main runs: the registry can now build it by name.
const tdbg::rules::registrar<example::custom_gradient_rule> registration{"CustomGradientRule"};

// Ten training steps whose gradient's mean |value| is 3^step.
void write_demo_run(const std::filesystem::path& dir) {
    tdbg::hook_options options;
    options.out_dir = dir.string();
    tdbg::save_config_mode every_step;
    every_step.save_interval = 1;
    options.save_config = tdbg::save_config(every_step);
    options.include_collections = {"gradients"};
    tdbg::hook hook(options);
    float scale = 1.0F;
    for (int step = 0; step < 10; ++step) {
        hook.begin_step();
        hook.save_tensor("gradient/fc1.weight", tdbg::tensor_value(std::vector<float>{scale, -scale, scale, -scale}));
        scale *= 3.0F;
    }
    hook.close();
}

} // namespace

int main(int argc, char** argv) {
    try {
        std::filesystem::path run = argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::path();
        if (run.empty()) {
            run = std::filesystem::temp_directory_path() / ("tdbg_custom_rule_" + std::to_string(::getpid()));
            std::filesystem::remove_all(run);
            write_demo_run(run);
        }
        const std::string threshold = argc > 2 ? argv[2] : "20.0";

        auto trial = tdbg::create_trial(run.string());
        // Built by name from string parameters, as from SageMaker's
        // RuleParameters {"rule_to_invoke": "CustomGradientRule", "threshold": "20.0"}.
        auto rule = tdbg::rules::registry::create("CustomGradientRule", trial, {{"threshold", threshold}});
        rule.set_logger(tdbg::rules::rule_logger::silent());
        const auto result = rule.evaluate();

        std::cout << tdbg::rules::to_text(result);
        tdbg::format::json_style style;
        style.indent = 1;
        std::cout << tdbg::format::dump_json(tdbg::rules::rules_document({result}, trial.name()), style) << "\n";
        if (argc <= 1) {
            std::filesystem::remove_all(run);
        }
        switch (result.status()) {
        case tdbg::rules::evaluation_status::no_issues_found: return 0;
        case tdbg::rules::evaluation_status::issues_found: return 1;
        case tdbg::rules::evaluation_status::error:
        case tdbg::rules::evaluation_status::stopped:
        case tdbg::rules::evaluation_status::nothing_evaluated: return 2; // checked nothing: no pass
        }
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "custom_rule: " << e.what() << "\n";
        return 2;
    }
}
