// Adds the custom rule of ../custom_rule.hpp to a build of the `tdbg` command line.
// This one file is all it takes: CMake's tdbg_add_cli() (cmake/tdbg-cli.cmake) links
// it beside tdbg's own objects, and the registrar makes the rule known by name before
// main runs, so that
//
//     tdbg_custom rules --list
//     tdbg_custom rules RUN_DIR --rule CustomGradientRule --param threshold=20.0
//
// work like the built-in rules, in --config files and --junit reports too.

#include "custom_rule.hpp"
#include "tdbg/rules/registry.hpp"

namespace {
const tdbg::rules::registrar<example::custom_gradient_rule> registration{"CustomGradientRule"};
} // namespace
