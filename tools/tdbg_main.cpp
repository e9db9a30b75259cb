// `tdbg`: the command line of the training debugger. Dispatches to the
// subcommands registered in cmd_*.cpp (see command_registry.hpp).

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "command_registry.hpp"

namespace {

void print_help(std::ostream& out) {
    out << "usage: tdbg <command> [arguments]\n"
           "       tdbg <command> --help\n"
           "       tdbg --version\n\n"
           "Reads training runs written by tdbg or by smdebug (SageMaker Debugger).\n\n"
           "commands:\n";
    auto commands = tdbg::cli::registry();
    std::sort(commands.begin(), commands.end(),
              [](const tdbg::cli::command& a, const tdbg::cli::command& b) { return a.name < b.name; });
    std::size_t width = 0;
    for (const auto& c : commands) {
        width = std::max(width, c.name.size());
    }
    for (const auto& c : commands) {
        out << "  " << c.name << std::string(width - c.name.size() + 2, ' ') << c.summary << "\n";
    }
}

// A command's exit status, unless its output could not be written (a full disk, /dev/full, a
// file system gone read-only): then an error on stderr and exit status 2, never a truncated
// document that passes for success.
int with_output_checked(std::string_view command, int status) {
    std::cout.flush();
    if (!std::cout) {
        std::cerr << "tdbg " << command << ": error: cannot write to standard output (the output is incomplete)\n";
        return tdbg::cli::exit_bad_input;
    }
    return status;
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_help(std::cerr);
        return tdbg::cli::exit_bad_input;
    }
    const std::string& name = args.front();
    if (name == "--help" || name == "-h" || name == "help") {
        print_help(std::cout);
        return with_output_checked("help", tdbg::cli::exit_ok);
    }
    if (name == "--version") {
        std::cout << "tdbg " << TDBG_VERSION << "\n";
        return with_output_checked("--version", tdbg::cli::exit_ok);
    }
    for (const auto& c : tdbg::cli::registry()) {
        if (c.name == name) {
            const std::vector<std::string> rest(args.begin() + 1, args.end());
            return with_output_checked(
                c.name, tdbg::cli::guarded(c.name, std::cerr, [&] { return c.run(rest, std::cout, std::cerr); }));
        }
    }
    std::cerr << "tdbg: unknown command '" << name << "'\n\n";
    print_help(std::cerr);
    return tdbg::cli::exit_bad_input;
}
