// libFuzzer target: a DebugRuleConfigurations document (a `tdbg rules --config`
// file) through the parser, the registry (every built-in rule and its
// parameters) and an evaluation over a small run. Bad configurations and
// parameters must end in tdbg::error (config_error naming the entry or the
// parameter); an evaluation may end in status Error, never in another
// exception, a crash or a hang.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "../trial/run_writer.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/builtin.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule_configurations.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

// A small run with the tensors the built-in rules look for (weights, gradients, a
// loss, ReLU outputs, predictions and labels) over three train steps, written with
// the format layer (tests/trial/run_writer.hpp), as a hook would write it.
std::optional<tdbg::trial>& run() {
    static std::optional<tdbg::trial> t;
    return t;
}

tdbg::format::collection_spec spec(const char* name, const char* regex) {
    tdbg::format::collection_spec c;
    c.name = name;
    c.include_regex = {regex};
    return c;
}

void write_run(const std::filesystem::path& dir) {
    const tdbg::test::run_writer w(dir);
    w.collections("worker_0", 1,
                  {spec("weights", ".*weight"), spec("gradients", "^gradient"), spec("losses", "loss"),
                   spec("relu_output", "relu"), spec("all", ".*")});
    for (int step = 0; step < 3; ++step) {
        const float s = static_cast<float>(step);
        w.step(step, "worker_0", tdbg::mode::train, step,
               {{"fc1.weight", tdbg::tensor_value(std::vector<float>{0.5F + s, -0.25F, 0.0F, 1e-9F}), {}, {}},
                {"gradient/fc1.weight", tdbg::tensor_value(std::vector<float>{1e-8F * s, 0.0F, -1e-3F, 2.0F}), {}, {}},
                {"CrossEntropyLoss_output_0", tdbg::tensor_value(std::vector<float>{1.0F / (s + 1.0F)}), {}, {}},
                {"relu_output_0", tdbg::tensor_value(std::vector<float>{0.0F, 0.0F, s, 1.0F}), {}, {}},
                {"predictions", tdbg::tensor_value(std::vector<float>{0.1F, 0.9F, 0.8F, 0.2F}), {}, {}},
                {"labels", tdbg::tensor_value(std::vector<std::int64_t>{1, 0}), {}, {}}});
    }
    w.end();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
    const auto dir = std::filesystem::temp_directory_path() / ("tdbg_fuzz_rules_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    write_run(dir);
    run().emplace(tdbg::create_trial(dir.string()));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<tdbg::rules::rule_configuration> configs;
    try {
        configs = tdbg::rules::parse_rule_configurations(text, "fuzz input");
    } catch (const tdbg::config_error&) {
        return 0;
    }
    const tdbg::trial& t = *run();
    std::size_t evaluated = 0;
    for (const auto& config : configs) {
        if (evaluated++ == 4) {
            break; // a few per input keep each input fast
        }
        try {
            std::vector<tdbg::trial> others;
            if (tdbg::rules::registry::compares_runs(config.rule_to_invoke)) {
                others.push_back(t);
            }
            auto rule = tdbg::rules::registry::create(config, t, std::move(others),
                                                      tdbg::rules::rule_logger::silent());
            tdbg::rules::invoke_options options;
            options.start_step = 0;
            options.end_step = 3;
            options.threads = 1;
            (void)rule.evaluate(options); // an error inside becomes status Error
        } catch (const tdbg::error&) {
            continue; // config_error (unknown rule, a bad or unknown parameter), usage_error
        }
    }
    return 0;
}
