// A rule program: opens a trial and invokes VanishingGradient.
#include <tdbg/rules/builtin/vanishing_gradient.hpp>
#include <tdbg/rules/invoke.hpp>
#include <tdbg/trial/trial.hpp>

int main(int argc, char** argv) {
    const tdbg::trial trial = tdbg::create_trial(argc > 1 ? argv[1] : "run");
    tdbg::rules::vanishing_gradient rule(trial, {{"threshold", "1e-7"}});
    const auto result = tdbg::rules::invoke_rule(rule);
    return result.triggered_steps.empty() ? 0 : 1;
}
