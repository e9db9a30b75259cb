#pragma once
// The subcommands of `tdbg`. Each cmd_<name>.cpp defines one and registers it
// with a static `command_registrar`; tdbg_main.cpp dispatches by name.

#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"

namespace tdbg::cli {

/// Exit statuses: success, and bad input (usage, paths, corrupt runs).
inline constexpr int exit_ok = 0;
/// A check that ran and found something: `tdbg diff`'s runs differ.
inline constexpr int exit_differ = 1;
inline constexpr int exit_bad_input = 2;

/// One subcommand.
struct command {
    /// The word after `tdbg`: "ls", "dump", ...
    std::string_view name;
    /// One line for `tdbg --help`.
    std::string_view summary;
    /// The full help text for `tdbg <name> --help` (usage line first).
    std::string_view help;
    /// Runs the command on its arguments (without the command name); returns the exit status.
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

/// A usage error: the message goes to stderr with a pointer to --help, exit status 2.
class usage_error : public tdbg::error {
public:
    using tdbg::error::error;
};

/// The value of `flag`, a whole number from `min` to `max`; usage_error otherwise.
inline std::size_t parse_count(const std::string& flag, const std::string& text, std::size_t min, std::size_t max) {
    std::size_t used = 0;
    long long v = -1;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || v < static_cast<long long>(min) || v > static_cast<long long>(max)) {
        throw usage_error(
            fmt::format("{} expects a whole number from {} to {}, got '{}'", flag, min, max, text));
    }
    return static_cast<std::size_t>(v);
}

/// True when `args` asks for help.
inline bool wants_help(const std::vector<std::string>& args) {
    return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

/// Splits `args` into positional arguments and flags (words starting with '-');
/// throws usage_error for a flag not in `known`.
inline std::vector<std::string> positional_args(const std::vector<std::string>& args,
                                                const std::vector<std::string_view>& known,
                                                std::vector<std::string>& flags) {
    std::vector<std::string> out;
    bool only_positional = false;
    for (const std::string& a : args) {
        if (!only_positional && a == "--") {
            only_positional = true;
        } else if (!only_positional && a.size() > 1 && a[0] == '-') {
            if (std::find(known.begin(), known.end(), a) == known.end()) {
                throw usage_error(fmt::format("unknown option '{}'", a));
            }
            flags.push_back(a);
        } else {
            out.push_back(a);
        }
    }
    return out;
}

/// Runs `body` and turns every error into a message on `err` and exit status 2:
/// bad paths, non-run directories and corrupt files never crash the program.
template <class F>
int guarded(std::string_view name, std::ostream& err, F&& body) {
    try {
        return body();
    } catch (const usage_error& e) {
        err << "tdbg " << name << ": " << tdbg::detail::terminal_safe(e.what()) << "\n(see 'tdbg " << name
            << " --help')\n";
    } catch (const std::bad_alloc&) {
        err << "tdbg " << name << ": error: out of memory\n";
    } catch (const std::exception& e) {
        // Messages name files, tensors and patterns from the run: escaped for the terminal.
        err << "tdbg " << name << ": error: " << tdbg::detail::terminal_safe(e.what()) << "\n";
    }
    return exit_bad_input;
}

} // namespace tdbg::cli
