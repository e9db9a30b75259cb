#pragma once
// The subcommands of `tdbg`. Each cmd_<name>.cpp parses its arguments into the options of
// a library function (tdbg/cli/commands.hpp), calls it, and registers the subcommand with a
// static `command_registrar`; tdbg_main.cpp dispatches by name.

#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "argument_error.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/text.hpp"

namespace tdbg::cli {

/// Exit statuses (tdbg/cli/commands.hpp): success, and bad input (usage, paths, corrupt runs).
inline constexpr int exit_ok = commands::exit_ok;
/// A check that ran and found something: `tdbg diff`'s runs differ.
inline constexpr int exit_differ = commands::exit_issues;
inline constexpr int exit_bad_input = commands::exit_error;

/// One subcommand.
struct command {
    /// The word after `tdbg`: "ls", "dump", ...
    std::string_view name;
    /// One line for `tdbg --help`.
    std::string_view summary;
    /// Runs the command on its arguments (without the command name); returns the exit status.
    /// It parses them with `arguments` (arguments.hpp), which also writes its --help.
    int (*run)(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
};

/// Every registered subcommand, in registration order.
inline std::vector<command>& registry() {
    static std::vector<command> commands;
    return commands;
}

/// Registers a subcommand at static-initialisation time.
struct command_registrar {
    explicit command_registrar(const command& c) { registry().push_back(c); }
};

/// Runs `body` and turns every error into a message on `err` and exit status 2:
/// bad paths, non-run directories and corrupt files never crash the program.
template <class F>
int guarded(std::string_view name, std::ostream& err, F&& body) {
    try {
        return body();
    } catch (const argument_error& e) {
        err << "tdbg " << name << ": " << tdbg::terminal_safe(e.what()) << "\n(see 'tdbg " << name
            << " --help')\n";
    } catch (const std::bad_alloc&) {
        err << "tdbg " << name << ": error: out of memory\n";
    } catch (const std::exception& e) {
        // Messages name files, tensors and patterns from the run: escaped for the terminal.
        err << "tdbg " << name << ": error: " << tdbg::terminal_safe(e.what()) << "\n";
    }
    return exit_bad_input;
}

} // namespace tdbg::cli
